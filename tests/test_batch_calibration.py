"""The calibration stage decided on the batch's arrays gives what the candidate-by-candidate stage gives: the same
candidates in the same order, scores, probabilities, evidence, backoff and NIL decisions."""

from __future__ import annotations

import numpy as np
import pytest

from medlink.linking.batch_calibration import ordered_keys, run_numbers, tie_counts
from medlink.linking.calibration import calibration_stage
from medlink.linking.index import build_index
from medlink.linking.probability import BASE_FEATURES, ProbabilityModel, feature_names
from tests.test_calibration import organ_kb  # noqa: F401 - the fixture

MENTIONS = [
    "kidney cyst",
    "renal cysts",
    "kidny cyst",
    "cyst",
    "hepatic failure of the liver",
    "failure",
    "of the",
    "ALL",
    "with",
    "liver",
    "cardiac tumour",
    "heart tumor",
    "pulmonary fibrosis",
    "brain abscess",
    "zzzq",
]


@pytest.fixture(scope="module")
def linker(organ_kb, tmp_path_factory):  # noqa: F811 - the fixture imported above
    return build_index(organ_kb, tmp_path_factory.mktemp("batched") / "index")


def described(results) -> list:
    return [
        (
            r.mention.text,
            r.nil,
            r.probability,
            r.nil_threshold,
            r.error,
            [
                (c.concept_id, c.score, c.probability, c.matched_name, c.name, c.scores_by_stage, c.evidence, c.alt_ids)
                for c in r.candidates
            ],
        )
        for r in results
    ]


def same(batched, reference) -> None:
    assert len(batched) == len(reference)
    for got, want in zip(described(batched), described(reference)):
        assert got[:5] == want[:5] or (got[0], got[1], got[4]) == (want[0], want[1], want[4]) and abs(got[2] - want[2]) < 1e-9
        assert [c[0] for c in got[5]] == [c[0] for c in want[5]], got[0]
        for mine, theirs in zip(got[5], want[5]):
            assert mine[1] == theirs[1] and abs(mine[2] - theirs[2]) < 1e-9 and mine[3:] == theirs[3:], got[0]


@pytest.mark.parametrize("k", [1, 5, 30])
def test_batched_and_reference_paths_agree(linker, k):
    assert calibration_stage(linker) is not None
    same(linker.link(MENTIONS, k=k), linker.link(MENTIONS, k=k, batched=False))


@pytest.mark.parametrize("settings", [{"order": "probability"}, {"backoff_below": 0.9, "backoff_top": 5}, {"nil_threshold": 0.99}])
def test_every_decision_setting_agrees(linker, settings):
    stage = calibration_stage(linker).with_settings(**settings)
    variant = linker.with_last_stage(stage)
    batched, reference = variant.link(MENTIONS, k=10), variant.link(MENTIONS, k=10, batched=False)
    same(batched, reference)
    if "backoff_below" in settings:  # the setting was exercised, not only allowed
        assert any("backoff" in e for r in batched for c in r.candidates for e in c.evidence)


def contrary_model(stage, weights: dict[str, float]) -> dict:
    """A probability model that disagrees with the scores: it likes what ``weights`` say (feature name -> weight)."""
    names = feature_names(stage.probability_model.stages)
    coef = np.array([weights.get(name, 0.0) for name in names])
    return ProbabilityModel(stage.probability_model.stages, np.zeros(len(names)), np.ones(len(names)), coef, -1.0).to_dict()


@pytest.mark.parametrize("order", ["probability", "score"])
def test_a_model_that_reorders_the_candidates_reorders_both_paths_alike(linker, order):
    """Lower-ranked candidates and names unlike the mention made likelier: "probability" order turns the lists round,
    and "score" order reorders each run of tied candidates by them."""
    stage = calibration_stage(linker)
    model = contrary_model(stage, {"log_rank": 2.0, "name_similarity": -4.0, "score": -1.0})
    # rivals kept apart: shared, a contrary model's mass goes to the first runs and the later runs' ties stay unordered
    variant = linker.with_last_stage(stage.with_settings(model=model, order=order, nil_threshold=0.5, rivals="none"))
    batched, reference = variant.link(MENTIONS, k=30), variant.link(MENTIONS, k=30, batched=False)
    same(batched, reference)
    plain = linker.link(MENTIONS, k=30)
    moved = [r.mention.text for r, p in zip(batched, plain) if [c.concept_id for c in r.candidates] != [c.concept_id for c in p.candidates]]
    assert len(moved) >= 3, moved  # the model did reorder: the comparison above tested an order, not a copy
    assert len(BASE_FEATURES) < len(feature_names(stage.probability_model.stages))  # the stages' own columns were read too


def test_ties_and_runs_follow_the_reference_definitions():
    query = np.array([0, 0, 0, 0, 1, 1])
    scores = np.array([1.0, 1.0, 0.9999995, 0.5, 0.7, 0.7], np.float32)
    order = ordered_keys(query, scores)
    assert tie_counts(order).tolist() == [3, 3, 3, 1, 2, 2]
    # a run lasts while a score is within TIE of the run's first: 1.0, 1.0, 0.9999995 | 0.5 | 0.7, 0.7
    assert run_numbers(query, scores).tolist() == [0, 0, 0, 1, 2, 2]


@pytest.mark.parametrize("rerank", [True, False])
def test_a_text_given_twice_gets_candidates_of_its_own_each_time(linker, rerank):
    first, second = linker.link(["renal cysts", "renal cysts"], k=5, rerank=rerank)
    assert [c.concept_id for c in first.candidates] == [c.concept_id for c in second.candidates]
    assert all(a is not b and a.evidence is not b.evidence for a, b in zip(first.candidates, second.candidates))
    first.candidates[0].evidence.append({"note": "mine"})
    assert {"note": "mine"} not in second.candidates[0].evidence
    once, again = linker.link(["kidny cyst", "kidny cyst"], k=5, rerank=rerank)  # a spelling read: said once each
    assert once.candidates[0].evidence == again.candidates[0].evidence
    assert all(len(c.evidence) == len({str(e) for e in c.evidence}) for r in (once, again) for c in r.candidates)
    assert any("spelling" in entry for entry in once.candidates[0].evidence)


def test_linking_leaves_the_garbage_collector_as_it_found_it(linker):
    import gc

    assert gc.isenabled()
    linker.link(MENTIONS, k=5)
    assert gc.isenabled()
    gc.disable()
    try:
        linker.link(MENTIONS, k=5)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("rerank", [True, False])
def test_a_batch_searched_in_chunks_links_as_one_search(linker, rerank, monkeypatch):
    """Keys searched chunk by chunk, each next chunk in the background while the calibration decides (``search_ahead``),
    link as one search does."""
    from medlink.linking import search_ahead

    whole = linker.link(MENTIONS, k=10, rerank=rerank)
    monkeypatch.setattr(search_ahead, "CHUNK", 4)
    chunks = []
    real_search = linker.search
    monkeypatch.setattr(linker, "search", lambda keys, names: chunks.append(len(keys)) or real_search(keys, names))
    assert described(linker.link(MENTIONS, k=10, rerank=rerank)) == described(whole)
    # the calibration's decision overlaps the next chunk's search; without it (or with a dense stage) one search
    assert chunks == ([5, 5, 5] if rerank else [len(MENTIONS)])

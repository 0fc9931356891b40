"""A small custom KB (too few names to fit probabilities on) gets a fallback calibration, so NIL can happen (issue 52
item 2)."""

from __future__ import annotations

import pytest

from medlink.linking.calibration import calibration_stage
from medlink.linking.calibration_fallback import FALLBACK_NIL_THRESHOLD, fallback_model, is_fallback
from medlink.linking.probability import BASE_FEATURES, ProbabilityModel

NAMES = "id\tname\nC1\tMyocardial infarction\nC1\tHeart attack\nC2\tType 2 diabetes mellitus\nC2\tT2DM\nC3\tChest pain\nC4\tDyspnea\n"


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    from medlink.kb.build import build_kb
    from medlink.linking.index import build_index

    folder = tmp_path_factory.mktemp("small-kb")
    (folder / "mine.tsv").write_text(NAMES, encoding="utf-8")
    kb = build_kb(folder / "mine.sqlite", [f"tsv:{folder / 'mine.tsv'}"], progress=False).path
    return build_index(kb, folder / "index")


def test_a_small_kb_gets_the_fallback_and_nil_happens(small_index):
    stage = calibration_stage(small_index)
    assert stage is not None and is_fallback(stage.settings) and stage.settings["nil_threshold"] == FALLBACK_NIL_THRESHOLD
    named, unrelated = small_index.link(["heart attack", "broken leg"], k=3)
    assert named.best.concept_id == "C1" and not named.nil and named.probability > 0.9
    assert unrelated.nil and unrelated.probability < 0.05


def test_a_name_a_synonym_spells_is_likely_but_less_than_the_mentions_own(small_index):
    lay, own = small_index.link(["shortness of breath", "dyspnea"], k=3)  # HPO: Dyspnea, "Shortness of breath" (layperson)
    assert lay.best.concept_id == own.best.concept_id == "C4" and not lay.nil
    assert 0.7 < lay.probability < own.probability
    assert {"synonym": "thesaurus read 'shortness of breath' as a synonym of 'Dyspnea'"} in lay.best.evidence  # what --explain shows


def test_the_fallback_reads_spelling_only_and_round_trips():
    model = fallback_model()
    assert ProbabilityModel.from_dict(model.to_dict()).to_dict() == model.to_dict()
    exact = {"alias_similarity": 1.0, "mention_words_covered": 1.0, "alias_words_covered": 1.0, "is_top": 1.0}
    slip = {"alias_similarity": 0.95, "mention_words_covered": 0.5, "alias_words_covered": 0.5, "is_top": 1.0}
    rows = [[features.get(name, 0.0) for name in BASE_FEATURES] for features in (exact, slip, {})]
    p = model.predict(__import__("numpy").array(rows))
    assert p[0] > 0.9 > p[1] > FALLBACK_NIL_THRESHOLD > 0.01 > p[2]

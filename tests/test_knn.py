import re

import numpy as np
import pytest

from medlink.core import Candidate
from medlink.rerank.base import LinkerParts
from medlink.rerank.knn import KnnReranker

pytestmark = pytest.mark.dense


def unit(*rows):
    array = np.asarray(rows, dtype=np.float32)
    return array / np.linalg.norm(array, axis=1, keepdims=True)


@pytest.fixture
def datastore():
    # three training mentions: two of C2 near the query direction, one of C3 far away
    vectors = unit([1.0, 0.1], [1.0, 0.0], [0.0, 1.0])
    return KnnReranker(vectors, ["C2", "C2", "C3"], ["heart attack", "heart attacks", "insomnia"], {"k": 2, "lambda_": 0.5, "beta1": 0.1, "beta2": 0.1})


def test_neighbours_can_overturn_the_model_ranking(datastore):
    candidates = [[Candidate("C1", 0.90, "mi"), Candidate("C2", 0.85, "heart attack")]]
    reranked = datastore.rerank_vectors(unit([1.0, 0.05]), candidates)[0]
    assert [c.concept_id for c in reranked] == ["C2", "C1"]
    assert sum(c.score for c in reranked) == pytest.approx(1.0)  # a distribution over the candidates
    voters = [e for e in reranked[0].evidence if "neighbour" in e]
    assert {v["neighbour"] for v in voters} == {"heart attack", "heart attacks"}
    assert reranked[0].scores_by_stage["knn"] == pytest.approx(1.0)


def test_lambda_zero_keeps_the_model_order_and_probabilities(datastore):
    candidates = [[Candidate("C1", 0.90), Candidate("C2", 0.85)]]
    reranked = datastore.with_settings(lambda_=0.0).rerank_vectors(unit([1.0, 0.05]), candidates)[0]
    assert [c.concept_id for c in reranked] == ["C1", "C2"]
    expected = np.exp(0.9 / 0.1) / (np.exp(0.9 / 0.1) + np.exp(0.85 / 0.1))
    assert reranked[0].score == pytest.approx(expected, rel=1e-5)


def test_neighbour_concepts_missing_from_candidates_are_added(datastore, tmp_path):
    datastore.parts = LinkerParts({}, lambda concept: Candidate(concept, 0.0, name={"C3": "Insomnia"}.get(concept), alt_ids=["X3"]))
    reranked = datastore.rerank_vectors(unit([0.0, 1.0]), [[Candidate("C1", 0.5)]])[0]
    # lambda 0.5: C1 keeps p_model = 1 (0.5), C3 gets p_kNN ~ 1 (just under 0.5), C2 a little
    assert [c.concept_id for c in reranked] == ["C1", "C3", "C2"] and (reranked[1].name, reranked[1].alt_ids) == ("Insomnia", ["X3"])
    assert reranked[1].score == pytest.approx(0.5, abs=1e-3) and reranked[1].scores_by_stage["knn"] > 0.99
    datastore.save(tmp_path)
    loaded = KnnReranker.load(tmp_path, parts=datastore.parts)
    again = loaded.rerank_vectors(unit([0.0, 1.0]), [[Candidate("C1", 0.5)]])[0]
    assert [c.concept_id for c in again] == [c.concept_id for c in reranked]
    assert loaded.settings == datastore.settings


def test_a_tie_keeps_the_linker_order_not_the_id_order():
    # one training text labelled D2 and C1 alike; the linker put D2 first (its name means D2 more often)
    store = KnnReranker(unit([1.0, 0.0], [1.0, 0.0]), ["D2", "C1"], ["boc", "boc"], {"k": 2, "lambda_": 0.5, "beta1": 0.1, "beta2": 0.1})
    reranked = store.rerank_vectors(unit([1.0, 0.0]), [[Candidate("D2", 0.9, "boc"), Candidate("C1", 0.9, "boc")]])[0]
    assert reranked[0].score == reranked[1].score
    assert [c.concept_id for c in reranked] == ["D2", "C1"]


@pytest.mark.parametrize("settings, message", [
    ({"lambda": 0.9}, "unknown key 'lambda'; known: type, generator, k, lambda_, beta1, beta2"),  # was silently dropped
    ({"lambda_": 1.7}, "'lambda_' must be a number >= 0 and <= 1, not 1.7"),
    ({"beta1": 0}, "'beta1' must be a number > 0, not 0"),  # was a ZeroDivisionError while linking
    ({"k": "eight"}, "'k' must be an integer >= 1, not 'eight'"),
])
def test_a_knn_config_that_cannot_work_is_refused_when_read(settings, message):
    from medlink.errors import MedlinkError
    from medlink.linking.config import LinkerConfig

    config = {"generators": [{"name": "dense", "type": "dense"}], "reranker": {"type": "knn", "generator": "dense", **settings}}
    with pytest.raises(MedlinkError, match=re.escape(f"hybrid.json: reranker (knn): {message}")):
        LinkerConfig.from_dict(config, "hybrid.json")

import math

import pytest

from medlink.core import Candidate
from medlink.errors import MedlinkError
from medlink.eval import LabeledMention, compute_metrics, equivalent_ids_from_kb, evaluate, evaluate_rankings, mention_rank, part_rank


def lm(text, *gold, parts=None):
    return LabeledMention(text, tuple(parts or (text,)), frozenset(gold))


MENTIONS = [
    lm("a", "A"),
    lm("b", "B"),
    lm("c", "C"),
    lm("d|e", "D", "E", parts=("d", "e")),
    lm("f", "F1", "F2"),
]
RANKINGS = {
    "a": ["A", "B", "C"],  # rank 1
    "b": ["X", "X", "Y", "B"],  # rank 3: a repeated id does not push the gold down
    "c": ["X", "Y"],  # never found
    "d": ["D", "X"],  # part rank 1
    "e": ["X", "Y", "Z", "W", "Q", "E"],  # part rank 6 -> the composite's rank is 6
    "f": ["X", "F2"],  # rank 2: any gold alternative counts
}


def fake_predict(calls):
    def predict(texts):
        calls.append(list(texts))
        return [[Candidate(cid, score=1.0 / (i + 1), matched_name=cid.lower()) for i, cid in enumerate(RANKINGS[t])] for t in texts]

    return predict


def test_hand_computed_metrics_with_one_batched_call():
    calls = []
    report = evaluate(fake_predict(calls), MENTIONS)
    assert calls == [["a", "b", "c", "d", "e", "f"]]  # every part of every mention, in one call
    m = report.metrics
    assert m["n"] == 5 and m["found"] == 4
    assert m["acc@1"] == pytest.approx(1 / 5)
    assert m["acc@5"] == pytest.approx(3 / 5)
    assert m["mrr"] == pytest.approx((1 + 1 / 3 + 0 + 1 / 6 + 1 / 2) / 5)
    assert [m[f"recall@{k}"] for k in (1, 2, 4, 8, 16, 25, 32, 64)] == pytest.approx([0.2, 0.4, 0.6, 0.8, 0.8, 0.8, 0.8, 0.8])
    assert [m[f"nrecall@{k}"] for k in (1, 2, 4, 8)] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert m["hits@1"] == 1 and m["hits@5"] == 3
    assert [r["rank"] for r in report.records] == [1, 3, None, 6, 2]
    composite = report.records[3]
    assert [p["rank"] for p in composite["parts"]] == [1, 6]
    assert len(composite["parts"][1]["top"]) == 5 and composite["parts"][1]["top"][0] == {
        "id": "X", "alt_ids": [], "name": None, "matched_name": "x", "score": 1.0, "correct": False,
    }
    assert report.timing["predict_seconds"] >= 0


def test_composite_needs_every_part_and_a_part_may_match_any_gold_id():
    gold = frozenset({"D", "E"})
    assert mention_rank([["D"], ["X", "Y"]], gold) == math.inf  # one part never right: the mention is wrong
    assert mention_rank([["E"], ["X", "D"]], gold) == 2  # BioSyn check: a part matches any of the mention's ids
    assert mention_rank([], gold) == math.inf


def test_metrics_pool_from_counts_and_empty_sets_give_none():
    metrics = compute_metrics([1, 2, math.inf], ks=(1, 5))
    assert metrics.to_dict(acc_ks=(1, 5), recall_ks=(1,))["acc@5"] == pytest.approx(2 / 3)
    empty = compute_metrics([], ks=(1, 5)).to_dict(acc_ks=(1, 5), recall_ks=(1,))
    assert empty["n"] == 0 and empty["acc@1"] is None and empty["mrr"] is None


def test_wrong_number_of_rankings_is_reported():
    with pytest.raises(MedlinkError, match="6 mention parts"):
        evaluate_rankings([["A"]], MENTIONS)


def test_alt_ids_make_ids_equivalent(kb):
    equivalent = equivalent_ids_from_kb(kb)
    assert equivalent["D001260"] == {"D001260", "208900"}
    assert "208900" not in equivalent  # one direction only: predicting an alias id is not predicting the concept
    assert "D001943" not in equivalent  # no alt ids: matched by identity alone
    gold_omim = frozenset({"208900"})
    assert part_rank(["D001260"], gold_omim) == math.inf
    assert part_rank(["D001260"], gold_omim, equivalent) == 1
    assert part_rank(["X", "D011125"], frozenset({"175100"}), equivalent) == 2
    assert part_rank(["X", "175100"], frozenset({"D011125"}), equivalent) == math.inf
    report = evaluate_rankings([["D001260"]], [lm("at", "208900")], equivalent_ids=equivalent, kb=kb)
    assert report["acc@1"] == 1.0
    record = report.records[0]
    assert record["parts"][0]["top"][0]["name"] == "ataxia telangiectasia"
    assert record["gold_names"] == {"208900": "ataxia telangiectasia"}  # alt ids resolve to the concept's name


def test_an_alt_id_counts_as_written_not_through_its_own_equivalences():
    from medlink.core import Candidate
    from medlink.eval.metrics import candidate_matches

    # BioSyn: "612371|125480||bipolar affective disorder" and "D001714|125480||bipolar disorder": 125480 names both
    equivalent = {"612371": frozenset({"612371", "125480"}), "125480": frozenset({"125480", "D001714"})}
    predicted = Candidate("612371", 1.0, alt_ids=["125480"])
    assert not candidate_matches(predicted, frozenset({"D001714"}), equivalent)
    assert candidate_matches(predicted, frozenset({"125480"}), equivalent) and candidate_matches(predicted, frozenset({"612371"}), equivalent)
    assert candidate_matches(Candidate("D1", 1.0), frozenset({"X"}), {"D1": frozenset({"D1", "X"})})

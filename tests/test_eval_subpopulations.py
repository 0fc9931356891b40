import pytest

from medlink.eval import LabeledMention, evaluate_rankings, subpopulation_masks


def lm(text, *gold, parts=None):
    return LabeledMention(text, tuple(parts or (text,)), frozenset(gold))


TRAIN = [lm("Breast cancer", "D001943"), lm("breast-cancer", "D001943"), lm("ovarian cancer", "D010051"), lm("tumour", "D009369"), lm("tumour", "D009369")]
TEST = [
    lm("breast cancer", "D001943"),  # seen text (after normalisation), seen concept, direct match
    lm("mammary carcinoma", "D001943"),  # unseen text, seen concept, no direct match
    lm("renal", "D007674"),  # unseen text and concept, single word, direct match
    lm("tumour", "D001943"),  # seen text that training links elsewhere: unpopular
    lm("breast cancer|renal", "D001943", "D007674", parts=("breast cancer", "renal")),  # every part a direct match
]


def members(masks, name):
    return [i for i, inside in enumerate(masks[name]) if inside]


def test_membership_on_a_tiny_training_set(kb):
    masks = subpopulation_masks(TEST, train=TRAIN, kb=kb)
    assert members(masks, "single-word") == [2, 3]
    assert members(masks, "multi-word") == [0, 1, 4]
    assert members(masks, "composite") == [4]
    assert members(masks, "seen mention") == [0, 3]
    assert members(masks, "unseen mention") == [1, 2, 4]
    assert members(masks, "seen concept") == [0, 1, 3, 4]
    assert members(masks, "unseen concept") == [2]
    assert members(masks, "direct match") == [0, 2, 4]
    assert members(masks, "not direct match") == [1, 3]
    assert members(masks, "top-100 concepts") == [0, 1, 3, 4]
    assert members(masks, "rare concepts (<5)") == [0, 1, 2, 3, 4]
    assert members(masks, "unpopular") == [3]


def test_thresholds_and_what_is_computed_without_train_or_kb():
    masks = subpopulation_masks(TEST, train=TRAIN, top_n=1, rare_below=2)
    assert members(masks, "top-1 concepts") == [0, 1, 3, 4]  # D001943 and D009369 tie at 2; most_common keeps the first seen
    assert members(masks, "rare concepts (<2)") == [2]
    assert "direct match" not in masks
    assert set(subpopulation_masks(TEST)) == {"single-word", "multi-word", "composite"}


def test_metrics_per_subpopulation(kb):
    rankings = [["D001943"], ["X", "D001943"], ["X"], ["D009369", "D001943"], ["D001943"], ["D007674"]]
    report = evaluate_rankings(rankings, TEST, train=TRAIN, kb=kb)
    assert report["acc@1"] == pytest.approx(2 / 5)
    assert report.subpopulations["direct match"]["n"] == 3 and report.subpopulations["direct match"]["acc@1"] == pytest.approx(2 / 3)
    assert report.subpopulations["unpopular"]["acc@1"] == 0.0 and report.subpopulations["unpopular"]["mrr"] == 0.5
    assert report.records[3]["subpopulations"] == ["single-word", "seen mention", "seen concept", "top-100 concepts", "rare concepts (<5)", "unpopular", "not direct match"]

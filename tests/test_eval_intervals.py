"""Bootstrap intervals (medlink.eval.intervals): the draws, the statistics, and where the reports carry them."""

from __future__ import annotations

import numpy as np
import pytest

from medlink.align.metrics import mapping_intervals, mapping_prf, mapping_rank_intervals
from medlink.eval import LabeledMention, evaluate_rankings
from medlink.eval.calibration import expected_calibration_error
from medlink.eval.documents import Score
from medlink.eval.intervals import (calibration_error, draw_weights, f1, harmonic_mean, interval, paired_difference, rate,
                                    ratio)
from medlink.eval.nil import NilOutcome, nil_metrics


def test_weights_redraw_whole_clusters_and_repeat_with_the_seed():
    clusters = ["d1", "d1", "d2", None, None, "d3", "d3", "d3"]
    weights = draw_weights(clusters, replicates=200, seed=3)
    assert weights.shape == (200, 8)
    assert (weights[:, 0] == weights[:, 1]).all() and (weights[:, 5] == weights[:, 7]).all()  # one document, one draw
    assert not (weights[:, 3] == weights[:, 4]).all()  # None: each item a cluster of its own
    # every replicate draws as many clusters as there are (5): d1, d2, two singletons, d3
    per_cluster = weights[:, [0, 2, 3, 4, 5]]
    assert (per_cluster.sum(axis=1) == 5).all()
    assert np.array_equal(weights, draw_weights(clusters, replicates=200, seed=3))
    assert not np.array_equal(weights, draw_weights(clusters, replicates=200, seed=4))


def test_a_rate_interval_has_the_binomial_width_and_holds_the_rate():
    hits = [1.0] * 200 + [0.0] * 200
    low, high = interval(rate(hits), [None] * 400)
    assert low < 0.5 < high
    assert 0.08 < high - low < 0.12  # 2 x 1.96 x sqrt(0.25 / 400) = 0.098
    assert interval(rate([1.0] * 50), [None] * 50) == (1.0, 1.0)
    assert interval(rate([]), []) is None


def test_documents_whose_mentions_agree_widen_the_interval():
    # 40 documents of 10 mentions, each document all right or all wrong: 40 independent answers, not 400
    hits = [float(d % 2) for d in range(40) for _ in range(10)]
    by_mention = interval(rate(hits), [None] * 400)
    by_document = interval(rate(hits), [d for d in range(40) for _ in range(10)])
    assert (by_document[1] - by_document[0]) > 2.5 * (by_mention[1] - by_mention[0])


def test_statistics_at_unit_weights_are_the_reports_figures():
    ones = np.ones((1, 4))
    tp, fp, fn = [2, 0, 1, 3], [1, 1, 0, 0], [0, 2, 1, 1]
    assert f1(tp, fp, fn)(ones)[0] == pytest.approx(Score(6, 2, 4).f1)
    assert ratio([1, 0, 1, 1], [2, 1, 1, 1])(ones)[0] == pytest.approx(3 / 5)
    assert harmonic_mean(rate([1, 0, 1, 1]), ratio([1, 0, 1, 1], [2, 1, 1, 1]))(ones)[0] == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    probabilities = [0.05, 0.15, 0.72, 0.75, 0.93, 0.97, 0.99, 0.55]
    right = [False, True, True, False, True, True, True, False]
    assert calibration_error(probabilities, right)(np.ones((1, 8)))[0] == pytest.approx(expected_calibration_error(probabilities, right))


def test_a_paired_difference_cancels_what_the_systems_share():
    rng = np.random.default_rng(0)
    first = (rng.random(300) < 0.8).astype(float)
    second = first.copy()
    second[:6] = 1 - second[:6]  # the two disagree on 6 of 300 mentions
    clusters = [None] * 300
    paired = paired_difference(rate(first), rate(second), clusters)
    assert paired[1] - paired[0] < 0.04  # apart, each rate's interval alone is about 0.09 wide
    assert paired_difference(rate(first), rate(first), clusters) == (0.0, 0.0)
    with pytest.raises(ValueError, match="level"):
        interval(rate(first), clusters, level=1.5)


def test_the_ranking_report_carries_intervals_by_document():
    mentions = [LabeledMention(f"m{i}", (f"m{i}",), frozenset({"A"}), doc_id=f"d{i // 3}") for i in range(30)]
    rankings = [["A"] if i % 4 else ["B", "A"] for i in range(30)]
    report = evaluate_rankings(rankings, mentions)
    assert report.intervals["resampled"] == "documents"
    low, high = report.intervals["acc@1"]
    assert low < report["acc@1"] < high and 0 <= low and high <= 1
    assert report.to_dict()["intervals"]["mrr"] == report.intervals["mrr"]
    assert "95% intervals (whole documents resampled, 1,000 times): acc@1 " in report.to_markdown()
    loose = evaluate_rankings(rankings, [LabeledMention(m.text, m.parts, m.gold) for m in mentions])
    assert loose.intervals["resampled"] == "mentions" and "(mentions resampled" in loose.to_markdown()


def test_alignment_and_nil_intervals_hold_their_figures():
    ranks = {f"s{i}": (1 if i % 5 else 3) if i % 7 else None for i in range(100)}
    bounds = mapping_rank_intervals(ranks, ks=(1, 4))
    assert bounds["recall@1"][0] < 68 / 100 < bounds["recall@1"][1] and bounds["recall@4"][1] <= 1
    gold = {f"s{i}": {"t"} for i in range(100)}
    kept = {f"s{i}": ["t" if i % 3 else "u"] for i in range(80)}
    figures, spread = mapping_prf(kept, gold), mapping_intervals(kept, gold)
    for name in ("precision", "recall", "f1"):
        assert spread[name][0] < figures[name] < spread[name][1]
    outcomes = [NilOutcome(gold_nil=i % 5 == 0, said_nil=i % 4 == 0, right_at_1=i % 5 != 0 and i % 3 != 0, rank_with_nil=1.0)
                for i in range(200)]
    measured = nil_metrics(outcomes, clusters=[i // 4 for i in range(200)])
    for name in ("nil_f1", "nil_precision", "in_kb_linked_right"):
        low, high = measured["intervals"][name]
        assert low < measured[name] < high
    cost = measured["in_kb_acc@1"] - measured["in_kb_linked_right"]
    assert measured["intervals"]["in_kb_nil_cost"][0] <= cost <= measured["intervals"]["in_kb_nil_cost"][1]
    assert "intervals" not in nil_metrics(outcomes)


def test_large_evaluations_are_drawn_in_chunks_with_the_same_result(monkeypatch):
    from medlink.eval import intervals

    clusters = [i // 3 for i in range(300)]
    hits = [float(i % 4 == 0) for i in range(300)]
    whole = interval(rate(hits), clusters)
    monkeypatch.setattr(intervals, "CHUNK_CELLS", 50)  # a few replicates at a time
    assert interval(rate(hits), clusters) == whole
    assert interval(ratio([0, 0], [0, 0]), [None, None]) is None  # a precision where nothing was claimed: no interval


def test_rank_differences_count_what_changed_and_pair_the_draws():
    from medlink.eval.compare import rank_differences

    mentions = [LabeledMention(f"m{i}", (f"m{i}",), frozenset({"A"}), doc_id=f"d{i // 4}") for i in range(200)]
    before = [1.0 if i % 5 else 2.0 for i in range(200)]  # 160 right at 1
    after = [1.0 if i % 5 or i % 10 == 0 else 2.0 for i in range(200)]  # 20 more right, none lost
    versus = rank_differences(after, before, mentions, (1, 5))
    assert (versus["better"], versus["worse"]) == (20, 0) and versus["resampled"] == "documents"
    assert versus["acc@1"]["difference"] == pytest.approx(0.1) and versus["acc@5"]["difference"] == 0.0
    low, high = versus["acc@1"]["interval"]
    assert 0 < low < 0.1 < high  # every draw gains: the interval stays above 0

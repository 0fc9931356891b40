"""The measures every alignment row reports, from ranked lists: recall@k, MRR and normalised recall on dev and
test, the confidence threshold chosen on dev (mapping F1) and the OAEI P / R / F1 at it on test, each test figure with
its 95% interval (the test sources resampled)."""

from __future__ import annotations

from medlink.align.metrics import best_threshold, gold_ranks, mapping_intervals, mapping_prf, mapping_rank_intervals, ranking_measures


def evaluate_lists(ranked: dict[str, list[str]], top: dict[str, tuple[str, float]], gold: dict, splits: dict) -> dict:
    """``ranked``: source -> target ids best first; ``top``: source -> (best target, its confidence)."""
    out: dict = {}
    for split in ("dev", "test"):
        g = {s: gold[s] for s in splits[split]}
        ranks = gold_ranks(ranked, g)
        out[split] = {k: round(v, 4) for k, v in ranking_measures(ranks).items()}
        out[split]["intervals"] = mapping_rank_intervals(ranks)
    threshold, dev_prf = best_threshold({s: top[s] for s in splits["dev"] if s in top}, {s: gold[s] for s in splits["dev"]})
    out["threshold"] = round(float(threshold), 4)
    out["dev"]["mapping"] = {k: round(v, 4) for k, v in dev_prf.items()}
    kept = {s: [top[s][0]] for s in splits["test"] if s in top and top[s][1] >= threshold}
    test_gold = {s: gold[s] for s in splits["test"]}
    out["test"]["mapping"] = {k: round(v, 4) for k, v in mapping_prf(kept, test_gold).items()}
    out["test"]["mapping"]["intervals"] = mapping_intervals(kept, test_gold)
    return out

"""The measures every alignment row reports, from ranked lists: recall@k, MRR and normalised recall on dev and
test, the confidence threshold chosen on dev (mapping F1) and the OAEI P / R / F1 at it on test."""

from __future__ import annotations

from medlink.align.metrics import best_threshold, gold_ranks, mapping_prf, ranking_measures


def evaluate_lists(ranked: dict[str, list[str]], top: dict[str, tuple[str, float]], gold: dict, splits: dict) -> dict:
    """``ranked``: source -> target ids best first; ``top``: source -> (best target, its confidence)."""
    out: dict = {}
    for split in ("dev", "test"):
        g = {s: gold[s] for s in splits[split]}
        out[split] = {k: round(v, 4) for k, v in ranking_measures(gold_ranks(ranked, g)).items()}
    threshold, dev_prf = best_threshold({s: top[s] for s in splits["dev"] if s in top}, {s: gold[s] for s in splits["dev"]})
    out["threshold"] = round(float(threshold), 4)
    out["dev"]["mapping"] = {k: round(v, 4) for k, v in dev_prf.items()}
    kept = {s: [top[s][0]] for s in splits["test"] if s in top and top[s][1] >= threshold}
    out["test"]["mapping"] = {k: round(v, 4) for k, v in mapping_prf(kept, {s: gold[s] for s in splits["test"]}).items()}
    return out

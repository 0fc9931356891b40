"""BENCHMARKS.md's table for paper 001's pairwise ranker (benchmarks/rerank/pairwise_ranker.py); ``report.py`` calls
``ranker`` (kept apart so report.py stays one screen per task)."""

from __future__ import annotations

KINDS = {"pairwise_ranker": lambda d: "ranker_results" in d}


def _row(dataset: str, base: dict, row: dict) -> list[str]:
    test, chosen = row["test"], row.get("chosen_on_dev")
    gain = f"{100 * (test['acc@1'] - base['test']['acc@1']):+.1f}" if row is not base else "-"
    train = f"{row['train_seconds']:.0f} s" if "train_seconds" in row else "-"
    setting = f"top {chosen['top']}, weight {chosen['weight']}" if chosen else "-"
    return [dataset, row["variant"], f"{row['dev']['acc@1']:.4f}", f"{test['acc@1']:.4f}", gain, f"{test['mrr']:.4f}", setting,
            f"{row['ms_per_mention']:.3f}", train]


def ranker(runs, *, table, provenance) -> list[str]:
    """The latest run: per dataset, retrieval alone, each ranker variant and the cross-encoder (test; settings from dev)."""
    lines = []
    for _, run in runs[-1:]:
        rows = [_row(r["dataset"], r["rows"][0], row) for r in run["ranker_results"] for row in r["rows"]]
        lines += [f"**Pairwise neural ranker (paper 001) over lexical retrieval** (test; epoch, top and weight chosen on dev; ms per "
                  f"mention: reranking alone (retrieval rows: retrieving), median of {run['repeats']}, {run['threads']} torch thread(s); training: "
                  f"with synonym pre-training where named; peak RSS of the whole run {run['peak_rss_mb']:,.0f} MB; "
                  + ", ".join(provenance(run)) + "):", "",
                  *table(["dataset", "reranker", "dev Acc@1", "test Acc@1", "Δ Acc@1 (points)", "test MRR", "dev choice", "ms / mention",
                          "training"], rows)]
    return lines

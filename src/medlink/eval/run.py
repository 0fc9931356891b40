"""``medlink eval`` as a library call: an index scored on labelled mentions, with what a reader must be told.

Why here: the command only parses its options and prints; loading the data, linking, the baseline comparison and the
NIL figures are the evaluation itself, and other front ends (a service, a notebook) run the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from medlink.corpora.datasets import load_dataset
from medlink.corpora.mentions import split_unlinked
from medlink.eval.harness import cuiless_records, evaluate, gold_outside_kb
from medlink.eval.metrics import equivalent_ids_from_kb
from medlink.eval.nil import annotated_nil
from medlink.eval.report import EvalReport
from medlink.linking.index import index_with_kb


@dataclass
class Evaluation:
    """The report, and the warnings and notes (one line each) a reader must see beside it."""

    report: EvalReport
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def evaluate_index(
    directory: Path,
    dataset: str,
    *,
    kb: str | None = None,
    train: Sequence[str] = (),
    k: int = 64,
    generators: Sequence[str] | None = None,
    baseline: Path | None = None,
) -> Evaluation:
    """Score the index at ``directory`` on ``dataset`` (FORMAT:PATH): Acc@k, MRR, subpopulations (seen / unseen in
    ``train``), differences from an earlier ``eval --out`` folder (``baseline``), and NIL figures for mentions
    annotated without a concept."""
    store, linker = index_with_kb(directory, kb)
    mentions, cuiless = split_unlinked(load_dataset(dataset, keep_unlinked=True))
    earlier = None
    if baseline is not None:
        from medlink.eval.compare import baseline_ranks

        earlier = baseline_ranks(baseline, mentions)  # before the linking: a wrong folder is said at once
    warnings: list[str] = []
    notes: list[str] = []
    outside = gold_outside_kb(mentions, store)
    if outside:
        warnings.append(f"--dataset {dataset}: {outside}")
    train_mentions = [m for spec in train for m in load_dataset(spec)] or None
    selected = list(generators) if generators else None
    kept: list = []  # the link results evaluate scores, for the NIL figures

    def link(texts: list[str]) -> list:
        kept.extend(linker.link(texts, k=k, generators=selected))
        return kept[-len(texts) :]

    equivalent_ids = equivalent_ids_from_kb(store)
    report = evaluate(link, mentions, equivalent_ids=equivalent_ids, train=train_mentions, kb=store)
    if earlier is not None:
        from medlink.eval.compare import rank_differences

        ranks = [float("inf") if r["rank"] is None else float(r["rank"]) for r in report.records[: len(mentions)]]
        report.against_baseline = rank_differences(ranks, earlier, mentions, (1, 5))
    if cuiless:
        in_kb_results = list(kept)
        cuiless_results = link([m.text for m in cuiless])
        report.nil_all = annotated_nil(mentions, in_kb_results, cuiless_results, equivalent_ids)
        report.records += cuiless_records(cuiless, cuiless_results, store)  # correct@1: said NIL
        if report.nil_all is None:
            notes.append(
                f"{len(cuiless):,} mentions annotated without a concept (-1) are not scored: this index has no NIL "
                "threshold (fit one: medlink tune --calibrate)"
            )
    report.meta.update(
        {
            "index": str(directory),
            "dataset": dataset,
            "train": list(train),
            "kb": str(store.path),
            "k": k,
            "generators": selected or list(linker.generators),
            "precision": linker.precisions(),
        }
    )
    return Evaluation(report, warnings, notes)

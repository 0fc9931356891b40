"""``medlink tune`` as a library call: the request checked before any retrieval, the index tuned, what to tell the user.

Why here: the command only parses and prints. Every refusal comes before the long part (retrieval over dev, one index
build per cross-fit fold), so a wrong option costs seconds; the summary lines are the same for every front end.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from medlink.corpora.datasets import load_dataset
from medlink.corpora.mentions import split_unlinked
from medlink.errors import MedlinkError
from medlink.eval.harness import gold_outside_kb
from medlink.eval.metrics import equivalent_ids_from_kb
from medlink.kb.store import KB
from medlink.linking.calibration_fit import check_nil_target
from medlink.linking.config import LinkerConfig
from medlink.linking.cross_fit import MIN_MENTIONS, memory_mentions, too_few_mentions
from medlink.linking.index import index_with_kb
from medlink.tuning import TuneReport, tune

FEW_DEV_MENTIONS = 50  # under this, the fitted probabilities are called rough (the KB's own fit wants 200)
CALIBRATION = "calibration"


@dataclass(frozen=True)
class TuneRequest:
    """What to search, in order, and how a calibration fitted here decides."""

    searches: tuple[str, ...]
    nil_target: str = "f1"
    backoff: bool = True
    cross_fit: int = 0

    @classmethod
    def parse(cls, search: str, calibrate: bool = False, nil_target: str = "f1", backoff: bool = True, cross_fit: int = 0) -> TuneRequest:
        """The request ``--search`` and the calibration options make, refused when it cannot be run as asked."""
        searches = [s.strip() for s in search.split(",") if s.strip()]
        if calibrate and CALIBRATION not in searches:
            searches.append(CALIBRATION)
        if not searches:
            raise MedlinkError("--search names nothing to tune: fusion, rerankers or a reranker type")
        if cross_fit < 0 or cross_fit == 1:
            raise MedlinkError(f"--cross-fit takes a number of folds, at least 2 (or 0 for dev alone), not {cross_fit}")
        if cross_fit and CALIBRATION not in searches:
            raise MedlinkError("--cross-fit adds data to the probabilities fitted here: add --calibrate")
        if CALIBRATION in searches:
            check_nil_target(nil_target)
        else:
            given = [name for name, default in (("--nil-target", nil_target == "f1"), ("--no-backoff", backoff)) if not default]
            if given:  # they shape a fit this run would not make: refused, as --cross-fit is, rather than ignored
                raise MedlinkError(
                    f"{' and '.join(given)} choose{'s' if len(given) == 1 else ''} how probabilities fitted here decide: add --calibrate "
                    "(without it the index's probabilities are kept, or re-fitted with their own settings)"
                )
        return cls(tuple(searches), nil_target, backoff, cross_fit)


@dataclass
class Tuned:
    """The chosen config, the report, and the warnings and notes (one line each) a reader must see."""

    config: LinkerConfig
    report: TuneReport
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def memory_holds_dev(store: KB, memory, mentions: Sequence) -> bool:
    """Was the index's ``memory`` built from these dev mentions (every single-part one's text and concept among its entries)?"""
    from medlink.training.ranker_data import memory_holds

    pairs = [
        (store.normalize(m.text), concept)
        for m in mentions
        if len(m.parts) == 1
        for concept in sorted({store.resolve(gold) for gold in m.gold} - {None})
    ]
    return memory_holds(store, memory, pairs)


def tune_index(directory: Path, dev: Sequence[str], request: TuneRequest, kb: str | None = None) -> Tuned:
    """Tune the index at ``directory`` on the ``dev`` mentions (FORMAT:PATH each): ``tuning.tune`` over the index
    loaded against its KB, after the checks the memory needs."""
    store, linker = index_with_kb(directory, kb)
    memory = linker.memory_entries() if (linker.manifest.get("memory") or {}).get("entries") else None  # read once, for both checks
    if request.cross_fit:  # refused before retrieval and fitting, not after them
        if memory is None:
            raise MedlinkError(
                f"--cross-fit fits on the index memory's mentions, and {directory} was built without --memory: leave out --cross-fit, "
                "or rebuild it with --memory FORMAT:PATH"
            )
        count = len(memory_mentions(memory))
        if count < MIN_MENTIONS:
            raise MedlinkError(
                f"--cross-fit: {too_few_mentions(count)}: leave out --cross-fit, or rebuild the index with more annotated mentions "
                "(medlink index build --memory FORMAT:PATH)"
            )
    mentions = [m for spec in dev for m in load_dataset(spec, keep_unlinked=True)]  # CUI-less ones: NIL examples for the calibration
    warnings, notes = [], []
    if memory is not None and memory_holds_dev(store, memory, mentions):
        notes.append(
            "the index's memory holds the --dev mentions, so dev accuracy and the fitted probabilities flatter it: "
            "tune on mentions it was not built with"
        )
    outside = gold_outside_kb(split_unlinked(mentions)[0], store)
    if outside:
        warnings.append(f"--dev: {outside}")
    calibration = {"nil_target": request.nil_target, "backoff": request.backoff, "cross_fit": request.cross_fit}
    config, report = tune(
        linker, mentions, request.searches, equivalent_ids_from_kb(store), ",".join(dev), calibration=calibration, kb=store
    )
    return Tuned(config, report, warnings, notes)


def tune_summary(tuned: Tuned, cross_fit: int = 0) -> list[str]:
    """The lines that say what was chosen and how it did on dev, with the notes a calibration's figures call for."""
    report, config = tuned.report, tuned.config
    before, after = report.before, report.after
    lines = [
        f"dev Acc@1 {before['acc@1']:.4f} -> {after['acc@1']:.4f}, MRR {before['mrr']:.4f} -> {after['mrr']:.4f} "
        f"({len(report.trials)} settings tried in {report.seconds:.0f}s)",
        f"fusion: {json.dumps(config.to_dict()['fusion'])}",
    ]
    for settings in config.rerankers:
        shown = {k: v for k, v in settings.items() if k != "model"} if settings["type"] == CALIBRATION else settings
        lines.append(f"reranker: {json.dumps(shown)}")
    calibration = report.calibration
    if calibration:
        oof = calibration["dev_out_of_fold"]
        at = oof["at_threshold"]
        nil_f1 = f", NIL F1 {at['nil_f1']:.3f}" if calibration["in_kb"] < calibration["mentions"] else ""
        extra = calibration.get("extra_mentions", 0)
        also = f" and {extra:,} memory mentions cross-fitted ({cross_fit} folds)" if extra else ""
        lines.append(
            f"probabilities: fitted on {calibration['mentions']:,} dev mention parts{also}; out of fold: Acc@1 {oof['acc@1']:.4f}; "
            f"at NIL threshold {at['threshold']:.2f}: linking precision {at['precision']:.3f}, recall {at['recall']:.3f}{nil_f1}"
        )
        if calibration["mentions"] < FEW_DEV_MENTIONS:
            lines.append(
                f"note: probabilities fitted on {calibration['mentions']} dev mention parts: expect them to be rough and the "
                "NIL threshold to move with a few mentions more (a few hundred give steady ones)"
            )
        if calibration["chosen"]["nil_threshold"] == 0:
            lines.append(
                "note: NIL threshold 0: on these dev mentions any threshold cost linking F1, so every mention is linked; "
                "--nil-target precision=P (or nil-f1, with dev mentions of concepts the KB lacks) sets one"
            )
    if report.calibration_note:
        lines.append(report.calibration_note)
    return lines

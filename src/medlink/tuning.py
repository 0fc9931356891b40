"""Choosing an index's fusion weights and reranker settings on dev data: retrieve once, search over the cache.

Why a library: every grid search over "which weights / which kNN or cross-encoder settings" needs the
same three things: each generator's hits for the dev mentions retrieved once (the slow part), a cheap
way to re-fuse and re-rerank them under other settings, and one scoring rule (Acc@1, ties broken by
MRR, the figure papers report). ``Tuner`` holds the cache; ``search_fusion`` and ``search_reranker``
try settings over it; ``tuned_config`` writes the winner with the dev figures that chose it, and
``medlink tune`` is the command. Never give it test data.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from medlink.core import LinkResult, Mention
from medlink.corpora.mentions import is_unlinked
from medlink.errors import MedlinkError
from medlink.eval.harness import evaluate_rankings
from medlink.eval.metrics import EquivalentIds, candidate_matches
from medlink.linking.calibration import TYPE as CALIBRATION
from medlink.linking.calibration import index_fingerprint, memory_tag
from medlink.linking.calibration_fit import fit_calibration, labelled_items
from medlink.linking.config import LinkerConfig
from medlink.linking.linker import Linker
from medlink.retrieval.fusion import Fusion

log = logging.getLogger(__name__)
FUSION_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)  # tried for each generator in turn (weights relative to each other)
SEARCHES = ("fusion", "rerankers", "calibration")  # calibration: probabilities, backoff and NIL threshold, fitted last
DEPTH = 64  # candidates kept per mention: what rerankers see and what Recall@64 needs


@dataclass
class Trial:
    """One setting tried and what dev said of it."""

    search: str
    settings: dict
    figures: dict

    @property
    def key(self) -> tuple[float, float]:
        return self.figures["acc@1"], self.figures["mrr"]


@dataclass
class TuneReport:
    """What a tuning run chose and why: the figures before and after, every trial."""

    dev: str
    before: dict
    after: dict = field(default_factory=dict)
    trials: list[Trial] = field(default_factory=list)
    seconds: float = 0.0
    calibration: dict | None = None  # what fitting the calibration stage chose, on out-of-fold dev probabilities
    calibration_note: str | None = None  # what became of the index's probabilities when not asked to fit them

    def to_dict(self) -> dict:
        payload = {
            "dev": self.dev,
            "before": self.before,
            "after": self.after,
            "seconds": round(self.seconds, 1),
            "trials": len(self.trials),
            "best_by_search": {
                search: max((t for t in self.trials if t.search == search), key=lambda t: t.key).__dict__
                for search in dict.fromkeys(t.search for t in self.trials)
            },
        }
        if self.calibration:
            payload["calibration"] = {key: value for key, value in self.calibration.items() if key != "trials"}
        return payload


class Tuner:
    """A linker's per-stage hits for the dev mentions, retrieved once; fusion and rerankers re-run over them."""

    def __init__(
        self,
        linker: Linker,
        mentions: Sequence[Any],
        equivalent_ids: EquivalentIds | None = None,
        depth: int = DEPTH,
        dev_name: str = "dev",
    ):
        """``mentions``: labelled dev mentions (``LabeledMention``: their parts are linked, their gold ids score)."""
        # as linking with k = depth: rerankers, when there are any, see max(k, k_per_generator) candidates
        self.linker, self.mentions, self.equivalent_ids, self.dev_name = linker, list(mentions), equivalent_ids, dev_name
        self.depth = max(depth, linker.config.k_per_generator) if linker.rerankers else depth
        self.parts = [part for m in self.mentions for part in m.parts]
        # Acc@1 and MRR count mentions annotated with a concept: a CUI-less one (id -1) has no right candidate to rank, it
        # only teaches the calibration NIL
        self.scored = [m for m in self.mentions if not is_unlinked(m.gold)]
        self.scored_parts = [i for i, m in enumerate(m for m in self.mentions for _ in m.parts) if not is_unlinked(m.gold)]
        if not self.scored:
            raise MedlinkError(
                "tuning needs dev mentions annotated with a concept; "
                + (
                    f"the {len(self.mentions)} given are all CUI-less (id -1): they can teach NIL, not choose settings"
                    if self.mentions
                    else "none were given"
                )
            )
        part_keys = [linker.key(text) for text in self.parts]
        self.keys = sorted({key for key in part_keys if key})
        position = {key: i for i, key in enumerate(self.keys)}
        self.part_rows = [position.get(key) for key in part_keys]
        self.queries = [Mention(key) for key in self.keys]
        self.stages = list(linker.generators)
        started = time.perf_counter()
        self.per_stage = linker.search(self.keys, self.stages)
        parts = f", {len(self.parts)} once composite mentions are split into their parts," if len(self.parts) != len(self.mentions) else ""
        log.info(
            "retrieved %d dev mentions%s as %d distinct texts from %d stages in %.1fs",
            len(self.mentions),
            parts,
            len(self.keys),
            len(self.stages),
            time.perf_counter() - started,
        )

    # -- re-running stages over the cache ----------------------------------------------------
    def active(self, fusion: Fusion) -> list[str]:
        """The stages linking under ``fusion`` would run: those it weighs at zero are left out."""
        return [n for n in self.stages if len(self.stages) == 1 or fusion.weights.get(n, 1.0) != 0] or self.stages[:1]

    def fused(self, fusion: Fusion) -> list[LinkResult]:
        """Each dev mention's candidates under ``fusion``, as linking would give them."""
        candidates = self.linker.fuse(self.per_stage, self.depth, fusion, self.active(fusion))
        return [LinkResult(query, ranked) for query, ranked in zip(self.queries, candidates)]

    def reranked(self, results: list[LinkResult], rerankers: Sequence[Any], fusion: Fusion) -> list[LinkResult]:
        """``rerankers`` in turn; one that needs a generator ``fusion`` leaves out is skipped, as linking skips it."""
        stages = self.active(fusion)
        for reranker in rerankers:
            if reranker.requires_generator is None or reranker.requires_generator in stages:
                results = reranker.rerank(self.queries, results)
        return results

    def rankings(self, results: list[LinkResult]) -> list[list]:
        """Per-key results as one candidate list per dev mention part (what ``evaluate_rankings`` scores)."""
        return [results[row].candidates if row is not None else [] for row in self.part_rows]

    def score(self, results: list[LinkResult]) -> dict:
        """Acc@1/5, MRR and recall of per-key results over the dev mentions annotated with a concept (``scored``)."""
        rankings = self.rankings(results)
        report = evaluate_rankings(
            [rankings[i] for i in self.scored_parts],
            self.scored,
            equivalent_ids=self.equivalent_ids,
            recall_ks=(1, 5, 25, 64),
            records=False,
            subpopulations=False,
        )
        return {name: report[name] for name in ("acc@1", "acc@5", "mrr", "recall@25", "recall@64")}

    def evaluate(self, fusion: Fusion, rerankers: Sequence[Any]) -> dict:
        return self.score(self.reranked(self.fused(fusion), rerankers, fusion))

    def calibrate(
        self, fusion: Fusion, rerankers: Sequence[Any], fingerprint: str, extra: Sequence[Any] = (), folds: int = 0, **options: Any
    ) -> tuple[dict, dict]:
        """Calibration settings fitted on the dev mentions' final candidate lists (one item per mention part; a part whose
        gold concept is not in the index is a NIL example); ``extra``: the memory's mentions cross-fitted in ``folds``
        (``linking.cross_fit``), fitted on too."""
        results = self.reranked(self.fused(fusion), rerankers, fusion)
        known = set(self.linker.concept_ids) | {alt for alts in self.linker.alt_ids.values() for alt in alts}
        parts = [(mention, row) for mention, row in zip((m for m in self.mentions for _ in m.parts), self.part_rows) if row is not None]
        items = labelled_items(
            [results[row] for _, row in parts],
            [m.gold for m, _ in parts],
            [any(gold in known for gold in m.gold) for m, _ in parts],
            lambda candidate, gold: candidate_matches(candidate, gold, self.equivalent_ids),
            [f"{self.dev_name}#{m.doc_id}" if m.doc_id is not None else None for m, _ in parts],
        )
        fitted_on = {"source": self.dev_name, "mentions": len(self.mentions)}
        if extra:
            from medlink.linking.cross_fit import cross_fit_summary

            fitted_on["cross_fit"] = cross_fit_summary(extra, folds)
        return fit_calibration(
            items,
            self.linker.normalize,
            fingerprint,
            fitted_on=fitted_on,
            memory=memory_tag(self.linker.manifest.get("memory")),
            extra=extra,
            **options,
        )

    # -- searches ------------------------------------------------------------------------------
    def search_fusions(self, fusions: Sequence[Fusion], rerankers: Sequence[Any] = ()) -> tuple[Fusion, list[Trial]]:
        """The best of an explicit list of fusions (the first of equals)."""
        trials = [Trial("fusion", _fusion_settings(fusion), self.evaluate(fusion, rerankers)) for fusion in fusions]
        return Fusion(**max(trials, key=lambda t: t.key).settings), trials

    def search_fusion(
        self, rerankers: Sequence[Any] = (), weights: Sequence[float] = FUSION_WEIGHTS, passes: int = 2
    ) -> tuple[Fusion, list[Trial]]:
        """Weighted fusion by coordinate ascent over ``weights`` (each generator in turn, ``passes`` rounds), then RRF with the
        same weights; a single-generator index has nothing to weigh."""
        current = self.linker.config.fusion
        trials = [Trial("fusion", _fusion_settings(current), self.evaluate(current, rerankers))]
        if len(self.stages) < 2:
            return current, trials
        best = trials[0]
        chosen = replace(current, method="weighted", weights={n: current.weights.get(n, 1.0) for n in self.stages})
        for _ in range(passes):
            improved = False
            for name in self.stages:
                for weight in weights:
                    candidate = replace(chosen, weights={**chosen.weights, name: float(weight)})
                    if not any(candidate.weights.values()) or candidate.weights == chosen.weights:
                        continue
                    trial = Trial("fusion", _fusion_settings(candidate), self.evaluate(candidate, rerankers))
                    trials.append(trial)
                    if trial.key > best.key:
                        best, chosen, improved = trial, candidate, True
            if not improved:
                break
        rrf = replace(chosen, method="rrf")
        trials.append(Trial("fusion", _fusion_settings(rrf), self.evaluate(rrf, rerankers)))
        winner = max(trials, key=lambda t: t.key)  # the first of equals: the config's own fusion when nothing beats it
        return Fusion(**winner.settings), trials

    def search_reranker(
        self, position: int, fusion: Fusion, rerankers: Sequence[Any] | None = None, grid: dict[str, Sequence] | None = None
    ) -> tuple[dict, list[Trial]]:
        """Settings of the ``position``-th of ``rerankers`` (default: the linker's) by its own ``TUNING_GRID`` unless
        ``grid``, the others as they are."""
        rerankers = list(self.linker.rerankers if rerankers is None else rerankers)
        reranker = rerankers[position]
        grid = grid or getattr(reranker, "TUNING_GRID", None)
        if not grid:
            raise MedlinkError(f"the {reranker.type} reranker declares nothing to tune")
        base = self.fused(fusion)
        before, after = rerankers[:position], rerankers[position + 1 :]
        base = self.reranked(base, before, fusion)
        label = f"rerankers[{position}] {reranker.type}"
        trials = [Trial(label, _tuned(reranker.settings, grid), self.score(self.reranked(base, [reranker, *after], fusion)))]
        for values in itertools.product(*grid.values()):
            changes = dict(zip(grid, values))
            variant = reranker.with_settings(**changes)
            trials.append(Trial(label, changes, self.score(self.reranked(base, [variant, *after], fusion))))
        winner = max(trials, key=lambda t: t.key)
        return {**reranker.settings, **winner.settings}, trials


def _fusion_settings(fusion: Fusion) -> dict:
    return {"method": fusion.method, "weights": dict(fusion.weights), "rrf_k": fusion.rrf_k}


def _tuned(settings: dict, grid: dict) -> dict:
    return {key: settings[key] for key in grid}


def tune(
    linker: Linker,
    mentions: Sequence[Any],
    searches: Sequence[str],
    equivalent_ids: EquivalentIds | None = None,
    dev_name: str = "dev",
    calibration: dict | None = None,
    kb: Any = None,
) -> tuple[LinkerConfig, TuneReport]:
    """Search ``searches`` ("fusion", "rerankers", or a reranker type) in that order, each over the previous one's choice,
    then fit the calibration stage when ``searches`` holds "calibration" (``calibration``: ``fit_calibration``'s options,
    and ``cross_fit``: that many folds of the index's memory as extra fitting data, which needs ``kb``);
    returns the index's config with the choices in it, and the report. An index's old calibration stage is set aside
    first (fitted for the stages as they were): kept when the choices leave those stages as they were, else re-fitted on
    the dev mentions, so an index with probabilities keeps them (the report's ``calibration_note`` says which)."""
    unknown = [s for s in searches if s not in SEARCHES and s not in {r.type for r in linker.rerankers}]
    if unknown:
        kinds = ", ".join(dict.fromkeys([*SEARCHES, *(r.type for r in linker.rerankers)]))  # a calibration stage is a search too: once
        raise MedlinkError(f"unknown search {', '.join(map(repr, unknown))}; this index can tune: {kinds}")
    started = time.perf_counter()
    old_stage = next((r for r in linker.rerankers if r.type == CALIBRATION), None)
    rerankers = [
        r for r in linker.rerankers if r.type != CALIBRATION
    ]  # the old stage was fitted for the old stages: kept or re-fitted below
    tuner = Tuner(linker.with_rerankers(rerankers), mentions, equivalent_ids, dev_name=dev_name)
    config = linker.config
    report = TuneReport(dev_name, tuner.evaluate(config.fusion, rerankers))
    fusion = config.fusion
    for search in searches:
        if search == "fusion":
            fusion, trials = tuner.search_fusion(rerankers)
            report.trials += trials
            continue
        for position, reranker in enumerate(rerankers):
            if search in ("rerankers", reranker.type) and getattr(reranker, "TUNING_GRID", None):
                settings, trials = tuner.search_reranker(position, fusion, rerankers)  # over the choices so far
                rerankers[position] = reranker.with_settings(**{k: v for k, v in settings.items() if k != "type"})
                report.trials += trials
    report.after = tuner.evaluate(fusion, rerankers)
    chosen = LinkerConfig(config.generators, fusion, config.k_per_generator, [dict(r.settings) for r in rerankers])
    fingerprint = index_fingerprint(linker.manifest["kb"]["checksum"], chosen.to_dict(), len(rerankers))
    if "calibration" not in searches and old_stage is not None and old_stage.settings["fitted_for"] == fingerprint:
        chosen.rerankers.append(dict(old_stage.settings))
        report.calibration_note = "probabilities kept: the choices leave the stages they were fitted for as they were"
    elif "calibration" in searches or old_stage is not None:
        try:
            options = dict(calibration or {})
            folds = options.pop("cross_fit", 0) or 0
            if "calibration" not in searches:  # not asked to fit: a re-fit keeps the NIL target the old model was fitted for
                options["nil_target"] = (old_stage.probability_model.fitted_on or {}).get("nil_target", options.get("nil_target", "f1"))
            extra = []
            if folds:
                from medlink.linking.cross_fit import memory_cross_fit

                extra = memory_cross_fit(linker, kb, chosen, folds)
            settings, report.calibration = tuner.calibrate(fusion, rerankers, fingerprint, extra, folds, **options)
            chosen.rerankers.append(settings)
            if "calibration" not in searches:
                report.calibration_note = "probabilities re-fitted on the dev mentions: the new choices change the scores the old ones read"
        except MedlinkError as error:
            if "calibration" in searches:
                raise
            report.calibration_note = (
                f"probabilities dropped: the new choices change the scores they read, and re-fitting them failed ({error})"
            )
    report.seconds = time.perf_counter() - started
    chosen.tuned = report.to_dict()
    return chosen, report

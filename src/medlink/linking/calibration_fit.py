"""Fitting the calibration stage on labelled candidate lists, and choosing its NIL threshold, backoff and order.

Why apart from the stage: fitting needs scikit-learn and labelled data; linking needs neither. The data is what any
index gives for labelled mentions: each mention's final candidate list (after fusion and the rerankers) and whether
each candidate is right. A mention whose concept is not in the KB (gold NIL) adds only wrong candidates: exactly
what a NIL threshold must learn to refuse.

Thresholds are chosen on out-of-fold probabilities (5 folds over documents, or mentions where no document is known):
the model that picks a threshold never saw the mentions it is picked on, nor their document's other mentions, so the dev
figures that choose it are not flattered by the fit. The final model is then fitted on all of them. The folds, the
out-of-fold fit, the threshold search and the summaries are ``calibration_core``'s, which the aligner's fit uses too.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from medlink.calibration_core import (
    calibration_summary,
    choose_threshold,
    choose_variant,
    fold_numbers,
    out_of_fold,
    precision_goal,
    probability_grid,
)
from medlink.core import Candidate, LinkResult, Mention
from medlink.errors import MedlinkError
from medlink.eval.calibration import expected_calibration_error
from medlink.linking.calibration import ORDERS, RIVALS, TYPE, CalibrationStage, index_fingerprint, memory_tag
from medlink.linking.probability import ProbabilityModel, candidate_features, stages_of

FIT_TOP = 10  # candidates per mention the model is fitted on: the ones a threshold or backoff ever looks at
FOLDS = 5
BACKOFF_GRID = (None, 0.1, 0.2, 0.3, 0.4, 0.5)


@dataclass
class Labelled:
    """One labelled mention as the index ranks it: normalised text, final candidates, which are right, in the KB or not."""

    key: str
    candidates: list[Candidate]
    right: list[bool]
    in_kb: bool
    group: str | None = None  # its document, where known: out-of-fold figures hold a document's mentions out together


def fit_rows(
    items: Sequence[Labelled], stages: Sequence[str], normalize: Callable[[str], str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels and mention number of each of the first ``FIT_TOP`` candidates of every mention."""
    blocks, labels, groups = [], [], []
    for number, item in enumerate(items):
        top = item.candidates[:FIT_TOP]
        blocks.append(candidate_features(item.key, top, stages, normalize))
        labels.extend(item.right[: len(top)])
        groups.extend([number] * len(top))
    width = blocks[0].shape[1] if blocks else 0
    return (np.vstack(blocks) if blocks else np.zeros((0, width), np.float32)), np.array(labels, np.int8), np.array(groups, dtype=np.int64)


def nil_threshold(top_probability: np.ndarray, top_right: np.ndarray, in_kb: np.ndarray, target: str = "f1") -> tuple[float, dict]:
    """The NIL threshold for ``target``: best linking F1 ("f1"), best F1 of the NIL decisions themselves ("nil-f1", for data
    with NIL mentions), or the lowest threshold reaching a linking precision ("precision=P").

    Linking precision: right links / links made; recall: right links / mentions whose concept is in the KB.
    """
    if target == "nil-f1" and in_kb.all():
        raise MedlinkError(
            "--nil-target nil-f1 chooses the threshold by the F1 of NIL decisions, and every dev mention's concept is "
            "in the KB: give mentions annotated with id -1 (CUI-less) or of concepts the KB lacks, or use --nil-target f1"
        )
    in_kb_total = max(int(in_kb.sum()), 1)
    gold_nil = ~in_kb

    def figures(threshold: float) -> dict:
        linked = top_probability >= threshold
        made, right = int(linked.sum()), int((linked & top_right).sum())
        precision = right / made if made else 1.0
        recall = right / in_kb_total
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        said_nil = ~linked
        nil_p = (said_nil & gold_nil).sum() / max(said_nil.sum(), 1)
        nil_r = (said_nil & gold_nil).sum() / max(gold_nil.sum(), 1)
        nil_f1 = float(2 * nil_p * nil_r / (nil_p + nil_r)) if nil_p + nil_r else 0.0
        return {"threshold": threshold, "precision": precision, "recall": recall, "f1": f1, "nil_f1": nil_f1}

    chosen = choose_threshold(probability_grid(), figures, target, tolerance=1e-12)
    if chosen is None:
        raise MedlinkError(f"no NIL threshold reaches linking precision {precision_goal(target)} on the dev data (best at threshold 1.0)")
    return chosen


def check_nil_target(target: str) -> None:
    """Refuse a ``--nil-target`` that is not f1, nil-f1 or precision=P (P in (0, 1])."""
    precision_goal(target)


def _decided(stage: CalibrationStage, items: Sequence[Labelled], probabilities: Sequence[np.ndarray]) -> list[tuple[int | None, float]]:
    """Each mention's rank of its first right candidate under ``stage`` (None: not listed) and its first candidate's probability."""
    out = []
    for item, p in zip(items, probabilities):
        right = {c.concept_id for c, r in zip(item.candidates, item.right) if r}
        decided = stage.decide(item.key, LinkResult(Mention(item.key), item.candidates), p)
        rank = next((i for i, c in enumerate(decided.candidates, 1) if c.concept_id in right), None)
        out.append((rank, decided.probability or 0.0))
    return out


class LogisticOnce:
    """``ProbabilityModel.fit`` that fits the logistic regression of given rows once: the variants (isotonic steps or
    not) differ only after it, so each fold's regression serves both, and the final model too."""

    def __init__(self) -> None:
        self._fitted: dict[bytes, tuple] = {}

    def __call__(self, features: np.ndarray, labels: np.ndarray, stages: Sequence[str], isotonic: bool, fitted_on: dict | None = None):
        digest = hashlib.blake2b(np.ascontiguousarray(features).tobytes(), digest_size=16)
        digest.update(np.asarray(labels, np.int8).tobytes())
        key = digest.digest() + repr(features.shape).encode()
        fitted = self._fitted.get(key)
        model = ProbabilityModel.fit(features, labels, stages, isotonic, fitted_on, logistic=fitted)
        self._fitted[key] = (model.mean, model.scale, model.coef, model.intercept)
        return model


def fit_calibration(
    items: Sequence[Labelled],
    normalize: Callable[[str], str],
    fingerprint: str,
    *,
    nil_target: str = "f1",
    backoff: bool = True,
    isotonic: bool | None = None,
    fitted_on: dict | None = None,
    choose_order: bool = True,
    memory: str | None = None,
    extra: Sequence[Labelled] = (),
) -> tuple[dict, dict]:
    """The calibration stage's settings fitted on ``items``, and the dev figures that chose them: isotonic steps over the
    logistic output or not (``isotonic=None``: whichever gives the lower first-candidate ECE), the order (score or
    probability) and backoff by Acc@1 (then MRR; ``choose_order=False`` keeps the ranking as it is), whether rivals
    share one distribution by the NIL target's figure, then the first candidates' ECE (``choose_order=False``: they do), then the NIL
    threshold for ``nil_target``, all on out-of-fold probabilities; ``memory``: the index's ``memory_tag``, checked where the
    model is applied. ``extra``: more labelled lists (``linking.cross_fit``: the memory's own mentions) that join ``items``
    in the fit and in every choice but the NIL threshold: they are all of concepts in the KB, and the threshold must
    see the share of mentions the KB lacks that ``items`` has."""
    if not items:
        raise MedlinkError("calibration needs labelled mentions; none were given")
    given = len(items)
    items = [
        replace(i, candidates=i.candidates[:FIT_TOP], right=i.right[:FIT_TOP]) for i in items if i.candidates
    ]  # none: NIL whatever the model
    extra = [replace(i, candidates=i.candidates[:FIT_TOP], right=i.right[:FIT_TOP]) for i in extra if i.candidates]
    every = [*items, *extra]
    if len(every) < 2:  # out of fold, one mention leaves nothing to fit the others on
        raise MedlinkError(
            f"calibration chooses its settings out of fold, so it needs at least 2 dev mentions with candidates; "
            f"{len(every)} of the {given} given had any: give more dev mentions (a few hundred give steady probabilities)"
        )
    stages = stages_of([item.candidates for item in every])
    fitted_on = {**(fitted_on or {}), "nil_target": nil_target}  # a later re-fit (medlink tune without --calibrate) keeps it
    features, labels, mention_of_row = fit_rows(every, stages, normalize)
    fold = fold_numbers([item.group for item in every], FOLDS)[mention_of_row]
    firsts = np.cumsum([0] + [len(item.candidates) for item in every])[:-1]  # each mention's first candidate's row
    fits = LogisticOnce()
    isotonic, variants = choose_variant(  # None: whichever calibrates the first candidates better out of fold
        (False, True) if isotonic is None else (isotonic,),
        lambda steps: out_of_fold(lambda x, y: fits(x, y, stages, steps).predict, features, labels, fold),
        lambda oof: expected_calibration_error(oof[firsts], labels[firsts]),
        lower_is_better=True,
    )
    oof = variants[isotonic][1]
    model = fits(features, labels, stages, isotonic, fitted_on)
    per_mention = np.split(oof, firsts[1:])
    base = {"type": TYPE, "model": model.to_dict(), "fitted_for": fingerprint} | ({"fitted_memory": memory} if memory else {})
    trials = []
    for order in ORDERS if choose_order else ("score",):
        for below in BACKOFF_GRID if backoff and choose_order else (None,):
            stage = CalibrationStage(base | {"order": order, "backoff_below": below}, normalize)
            trials.append({"order": order, "backoff_below": below, **_ranking(_decided(stage, every, per_mention), every)})
    best = max(trials, key=lambda t: (t["acc@1"], t["mrr"]))
    chosen = {"order": best["order"], "backoff_below": best["backoff_below"]}
    # rivals sharing one distribution, or not, on dev data out of fold: whichever reaches the NIL target's figure at its
    # threshold, then the lower first-candidate ECE (a model fitted on real mentions may have learnt what a tie means);
    # pseudo-mentions cannot judge it: shared
    in_kb = np.array([item.in_kb for item in items])
    measure = "nil_f1" if nil_target == "nil-f1" else "f1"
    rivals_trials = {}
    for rivals in RIVALS if choose_order else ("share",):
        decided = _decided(CalibrationStage(base | chosen | {"rivals": rivals}, normalize), items, per_mention[: len(items)])
        top_right = np.array([rank == 1 for rank, _ in decided])
        top_probability = np.array([p for _, p in decided])
        threshold, at_threshold = nil_threshold(top_probability, top_right, in_kb, nil_target)
        ece = expected_calibration_error(top_probability, top_right)
        rivals_trials[rivals] = (round(at_threshold[measure], 9), ece, threshold, at_threshold, top_right, top_probability)
    chosen["rivals"] = max(rivals_trials, key=lambda rivals: (rivals_trials[rivals][0], -rivals_trials[rivals][1]))  # a tie: share
    _, _, threshold, at_threshold, top_right, top_probability = rivals_trials[chosen["rivals"]]
    settings = base | chosen | {"nil_threshold": threshold}
    report = {
        "mentions": len(items),
        "in_kb": int(in_kb.sum()),
        "extra_mentions": len(extra),
        "candidates": int(len(labels)),
        "right": int(labels.sum()),
        "stages": stages,
        "chosen": chosen | {"nil_threshold": threshold, "nil_target": nil_target, "isotonic": isotonic},
        "out_of_fold_ece": {("isotonic" if steps else "logistic"): value for steps, (value, _) in variants.items()},
        "rivals_trials": {rivals: {measure: trial[0], "ece": trial[1]} for rivals, trial in rivals_trials.items()},
        "dev_out_of_fold": _ranking(decided, items) | calibration_summary(top_probability, top_right) | {"at_threshold": at_threshold},
        "trials": trials,
    }
    return settings, report


def _ranking(decided: Sequence[tuple[int | None, float]], items: Sequence[Labelled]) -> dict:
    """Acc@1 and MRR over the mentions with a concept to find (as eval counts them)."""
    annotated = max(sum(item.in_kb for item in items), 1)
    ranks = [rank for rank, _ in decided]
    return {"acc@1": sum(r == 1 for r in ranks) / annotated, "mrr": sum(1 / r for r in ranks if r) / annotated}


def labelled_items(
    results: Sequence[LinkResult],
    golds: Sequence[frozenset[str]],
    in_kb: Sequence[bool],
    matches: Callable[[Candidate, frozenset[str]], bool],
    groups: Sequence[str | None],
) -> list[Labelled]:
    """Link results of labelled mentions (the result's mention text: the normalised key) as fitting data; ``groups``:
    each mention's document, None where unknown."""
    return [
        Labelled(result.mention.text, list(result.candidates), [matches(c, gold) for c in result.candidates], known, group)
        for result, gold, known, group in zip(results, golds, in_kb, groups)
    ]


def fingerprint_for(linker) -> str:
    """The fingerprint a calibration stage appended to ``linker``'s rerankers (after any existing one is removed) must carry."""
    config = linker.config.to_dict()
    rerankers = [r for r in config["rerankers"] if r["type"] != TYPE]
    return index_fingerprint(linker.manifest["kb"]["checksum"], {**config, "rerankers": rerankers}, len(rerankers))


KB_FIT_SOURCE = "pseudo-mentions from the KB"  # ``fitted_on["source"]`` of probabilities an index fitted on its KB
MIN_PSEUDO_MENTIONS = 200  # fewer than this (a toy KB): no model rather than a model fitted on noise
# Fewer held-out synonyms than this (a KB of one name per concept): the model would see only exact names and absent
# concepts, and put any other wording near 0: worse calibrated than the plain score.
MIN_HELD_OUT_SYNONYMS = 100


def uncalibrated(config, kb) -> tuple:
    """``config`` without its calibration stage (what a fit reads), and the fingerprint a stage fitted over it carries."""
    base = replace(config, rerankers=[r for r in config.rerankers if r["type"] != TYPE], tuned=None)
    return base, index_fingerprint(kb.checksum, base.to_dict(), len(base.rerankers))


def concepts_by_wording(kb, keys: set[str]) -> dict[str, set[str]]:
    """For each normalised mention in ``keys``, the KB's concepts with a name of the same words (``retrieval.exact.word_key``:
    order, inflection and function words aside): a mention that is a name several concepts share ("Heart failure":
    ICD-10-CM's I50 and HPO's HP:0001635), or words one of them puts in another order ("Pain in chest"), is as right
    linked to any of them as a linker can tell."""
    from medlink.retrieval.exact import word_key, word_stemmer

    stem = word_stemmer()
    wanted: dict[str, list[str]] = {}
    for key in keys:
        wanted.setdefault(word_key(key, stem), []).append(key)
    wanted.pop("", None)
    concepts: dict[str, set[str]] = {}
    for concept_id, text, _kind in kb.iter_names():
        words = word_key(kb.normalize(text), stem)
        if words in wanted:
            concepts.setdefault(words, set()).add(concept_id)
    return {key: found for words, found in concepts.items() for key in wanted[words]}


def fit_on_kb(kb, config, memory=None, *, nil_target: str = "f1", seed: int = 0) -> tuple[dict, dict] | None:
    """Calibration settings for an index of ``kb`` built with ``config``, fitted on pseudo-mentions drawn from ``kb``
    (``linking.pseudo_mentions``); None when the KB has too few synonyms to draw them from."""
    from medlink.linking.linker import Linker
    from medlink.linking.pseudo_mentions import DRAW_VERSION, draw_pseudo_mentions
    from medlink.progress import phase

    mentions, held_out_kb = draw_pseudo_mentions(kb, seed=seed)
    if len(mentions) < MIN_PSEUDO_MENTIONS or len(held_out_kb.held_names) < MIN_HELD_OUT_SYNONYMS:
        logging.getLogger("medlink").warning(
            "no probabilities fitted from the KB: the KB gave %d pseudo-mentions (%d needed) from %d synonyms it could hold out (%d needed; a concept "
            "keeps one name in the index); a fixed fallback model stands in: fit them on dev data with medlink tune --calibrate",
            len(mentions),
            MIN_PSEUDO_MENTIONS,
            len(held_out_kb.held_names),
            MIN_HELD_OUT_SYNONYMS,
        )
        return None
    base, fingerprint = uncalibrated(config, kb)
    kept = memory.subset(n for n, (_, cid) in enumerate(memory.pairs) if cid not in held_out_kb.removed) if memory is not None else None
    with phase(
        f"index: probabilities fitted on {len(mentions):,} pseudo-mentions held out of the KB (first an index over the rest of the "
        "KB, whose work the final index then reuses)"
    ):
        linker = Linker.build(held_out_kb, base, kept, dictionary=False)
        results = linker.link([m.text for m in mentions], k=FIT_TOP)
        worded = concepts_by_wording(kb, {linker.key(m.named or m.text) for m in mentions})
        items = []
        for m, r in zip(mentions, results):
            twins = worded.get(linker.key(m.named or m.text), set()) - held_out_kb.removed  # in the index, named in the mention's words
            if r.candidates:
                items.append(
                    Labelled(
                        linker.key(m.text),
                        r.candidates,
                        [c.concept_id == m.concept_id or m.concept_id in c.alt_ids or c.concept_id in twins for c in r.candidates],
                        not m.nil or bool(twins),
                    )
                )
        fitted_on = {
            "source": KB_FIT_SOURCE,
            "mentions": len(items),
            "nil": sum(m.nil for m in mentions),
            "seed": seed,
            "draw_version": DRAW_VERSION,
        }
        try:
            # the order and backoff stay as the index ranks: pseudo-mentions are not real enough to choose a ranking by
            return fit_calibration(
                items,
                kb.normalize,
                fingerprint,
                nil_target=nil_target,
                fitted_on=fitted_on,
                choose_order=False,
                memory=memory_tag(memory.summary() if memory is not None else None),
            )
        except MedlinkError:  # no right or no wrong candidate at all: nothing to learn a probability from
            return None


def fallback_on_kb(kb, config, memory=None) -> tuple[dict, None]:
    """The fallback calibration (``calibration_fallback``) for an index of ``kb`` built with ``config``."""
    from medlink.linking.calibration_fallback import FALLBACK_NIL_THRESHOLD, fallback_settings

    _base, fingerprint = uncalibrated(config, kb)
    logging.getLogger("medlink").warning(
        "no probabilities fitted: a fixed fallback model gives them instead (NIL under %.2f); fit them on dev data for "
        "figures you can trust: medlink tune --calibrate",
        FALLBACK_NIL_THRESHOLD,
    )
    thesaurus_stages = [g.name for g in config.generators if g.type == "thesaurus"]
    return fallback_settings(fingerprint, memory.summary() if memory is not None else None, thesaurus_stages)


def kb_fit_is_current(config_dict: dict) -> bool:
    """False when the config's probabilities were fitted on pseudo-mentions an older medlink drew (another recipe)."""
    from medlink.linking.pseudo_mentions import DRAW_VERSION

    for settings in config_dict.get("rerankers", []):
        fitted_on = (settings.get("model") or {}).get("fitted_on") or {}
        if settings.get("type") == TYPE and fitted_on.get("source") == KB_FIT_SOURCE and fitted_on.get("draw_version") != DRAW_VERSION:
            return False
    return True


def calibrated(linker, settings: dict, report: dict | None = None):
    """The linker with ``settings`` as its calibration stage (replacing any), in its config and manifest too; ``report``'s
    out-of-fold figures are kept with the model, so an index says how its probabilities were chosen."""
    if report is not None:
        settings = {
            **settings,
            "model": {
                **settings["model"],
                "fitted_on": {**(settings["model"].get("fitted_on") or {}), "dev_out_of_fold": report["dev_out_of_fold"]},
            },
        }
    return linker.with_last_stage(CalibrationStage(settings, linker.normalize))

"""The calibration fit shared by linking and alignment: out-of-fold predictions over a feature matrix, a choice between
model variants judged on them, a threshold searched for a target, and the ECE / Brier summaries of probabilities.

Why one module: a threshold or a model chosen on predictions from a model that saw the same rows is flattered by the
fit, so both fits choose on out-of-fold predictions, and "out of fold", "the best threshold for f1 / nil-f1 /
precision=P" and "the better variant" should mean one thing. Each caller keeps its own model (linking: a standardised
logistic regression with optional isotonic steps, ``linking.probability``; alignment: a logistic regression or boosted
trees over its evidence, ``align.scoring``), its own folds' unit and its own measure; this module holds what they share.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

import numpy as np

from medlink.errors import MedlinkError

TARGETS = ("f1", "nil-f1")  # or "precision=P": the lowest threshold whose precision reaches P
Predictor = Callable[[np.ndarray], np.ndarray]  # feature rows -> one number per row (a probability or log-odds)
Variant = TypeVar("Variant", bound=Hashable)


# -- folds ----------------------------------------------------------------------------------------
def fold_numbers(groups: Sequence[str | None], folds: int, seed: int = 0) -> np.ndarray:
    """Each item's fold (scikit-learn's GroupKFold, groups shuffled with ``seed``): whole groups (documents) to a fold; no
    group: the item's own. Fewer than two groups per fold (a dev file of one or two documents) would leave folds empty
    or all of one kind: then each item is its own group."""
    from sklearn.model_selection import GroupKFold

    if len({group for group in groups if group}) < 2 * folds:
        groups = [None] * len(groups)
    keys = [group or f"\0{number}" for number, group in enumerate(groups)]
    fold = np.zeros(len(keys), dtype=np.int64)
    splits = min(folds, len(set(keys)))
    if splits < 2:
        return fold
    for number, (_, held) in enumerate(GroupKFold(splits, shuffle=True, random_state=seed).split(keys, groups=keys)):
        fold[held] = number
    return fold


def shuffled_folds(groups: np.ndarray, folds: int, seed: int = 0) -> np.ndarray:
    """Each row's fold, whole groups (non-negative integers: an aligner's source concepts) dealt to the folds in turn
    after a seeded shuffle, so the folds differ in size by at most one group."""
    distinct = np.unique(groups)
    fold_of = np.zeros(int(distinct.max()) + 1 if len(distinct) else 0, np.int64)
    fold_of[np.random.default_rng(seed).permutation(distinct)] = np.arange(len(distinct)) % folds
    return fold_of[groups]


# -- out of fold ----------------------------------------------------------------------------------
def out_of_fold(
    fit: Callable[[np.ndarray, np.ndarray], Predictor],
    features: np.ndarray,
    labels: np.ndarray,
    fold: np.ndarray,
    *,
    skip_one_class: bool = False,
    fill: float = 0.0,
) -> np.ndarray:
    """Each row's prediction from a model ``fit`` on the other folds' rows (``fold``: each row's fold). A fold whose
    other rows are all right or all wrong leaves its rows at ``fill`` with ``skip_one_class``; without it, ``fit``
    is asked anyway (and says what data lacked a kind)."""
    predicted = np.full(len(labels), fill, dtype=np.float64)
    for f in np.unique(fold).tolist():
        held = fold == f
        kept = ~held
        if skip_one_class and (labels[kept].all() or not labels[kept].any()):
            continue
        predicted[held] = fit(features[kept], labels[kept])(features[held])
    return predicted


def choose_variant(
    variants: Sequence[Variant],
    predict: Callable[[Variant], np.ndarray],
    judge: Callable[[np.ndarray], float],
    *,
    lower_is_better: bool = False,
) -> tuple[Variant, dict[Variant, tuple[float, np.ndarray]]]:
    """The variant whose out-of-fold predictions (``predict(variant)``) ``judge`` rates best, a tie going to the one
    listed first (list the simpler first), and each variant's (rating, predictions)."""
    judged = {}
    for variant in variants:
        predictions = predict(variant)
        judged[variant] = (judge(predictions), predictions)
    best = variants[0]
    for variant in variants[1:]:
        rating, best_rating = judged[variant][0], judged[best][0]
        if (rating < best_rating) if lower_is_better else (rating > best_rating):
            best = variant
    return best, judged


# -- thresholds -----------------------------------------------------------------------------------
def precision_goal(target: str, option: str = "--nil-target") -> float | None:
    """The precision a ``precision=P`` target asks for; None for f1 / nil-f1; an error naming ``option`` otherwise."""
    if target in TARGETS:
        return None
    name, _, value = target.partition("=")
    try:
        goal = float(value)
    except ValueError:
        goal = -1.0
    if name != "precision" or not 0.0 < goal <= 1.0:
        raise MedlinkError(f"{option} must be 'f1', 'nil-f1' or 'precision=P' with P in (0, 1], not {target!r}")
    return goal


def probability_grid(step: float = 0.01) -> list[float]:
    """Thresholds 0, ``step``, ..., 1 (two decimals): where a probability threshold is searched."""
    return [float(t) for t in np.round(np.arange(0.0, 1.0 + step / 100, step), 2)]


def score_thresholds(scores: Iterable[float], most: int = 400) -> list[float]:
    """Thresholds between the distinct ``scores``: -inf (keep everything), then the scores ascending, every n-th of them
    when there are more than about ``most``, always the highest."""
    candidates = [-np.inf] + [float(s) for s in sorted(set(scores))]
    return candidates[:: max(1, len(candidates) // most)] + [candidates[-1]]


def choose_threshold(
    thresholds: Iterable[float],
    figures_at: Callable[[float], dict],
    target: str = "f1",
    *,
    tolerance: float = 0.0,
    option: str = "--nil-target",
) -> tuple[float, dict] | None:
    """The threshold for ``target`` among ``thresholds`` (tried in order) and ``figures_at`` it: for "f1" / "nil-f1" the
    first with the highest ``figures["f1"]`` / ``figures["nil_f1"]`` (a later one must beat it by more than ``tolerance``);
    for "precision=P" the first whose ``figures["precision"]`` reaches P, None when none does."""
    goal = precision_goal(target, option)
    measure = "nil_f1" if target == "nil-f1" else "f1"
    best: tuple[float, dict] | None = None
    for threshold in thresholds:
        figures = figures_at(threshold)
        if goal is not None:
            if figures["precision"] >= goal:
                return threshold, figures
        elif best is None or figures[measure] > best[1][measure] + tolerance:
            best = (threshold, figures)
    return None if goal is not None else best


# -- summaries ------------------------------------------------------------------------------------
def brier_score(probabilities: Sequence[float], right: Sequence[bool]) -> float:
    """Mean squared distance between each probability and its outcome (1 right, 0 wrong); 0 for no prediction."""
    p, y = np.asarray(probabilities, np.float64), np.asarray(right, np.float64)
    return float(np.mean((p - y) ** 2)) if len(p) else 0.0


def calibration_summary(probabilities: Sequence[float], right: Sequence[bool]) -> dict[str, float]:
    """How far probabilities are from frequencies: expected calibration error (``eval.calibration``) and Brier score."""
    from medlink.eval.calibration import expected_calibration_error  # medlink.eval's package imports are not the aligner's

    return {"ece": expected_calibration_error(probabilities, right), "brier": brier_score(probabilities, right)}

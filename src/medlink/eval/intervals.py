"""95% bootstrap intervals for evaluation figures, resampling whole documents (or whatever the items cluster in).

Why: a figure measured on a thousand mentions moves by a point or two from one sample of the same kind to the next,
and a target or a rival is often nearer than that. The mentions of one abstract are not independent (a string repeated
in it is right or wrong every time), so resampling mentions one by one would understate the spread: each replicate
draws the clusters (documents; every item its own cluster when none is known) with replacement, seeded, and computes
the figure again from how many times each item was drawn (its weight). The interval is the replicates' 2.5th and 97.5th
percentiles (Efron's percentile interval). A difference between two systems scored on the same items is one more
statistic (``paired_difference``): both are computed from the same draws, so what the items share cancels out.

A statistic takes the weights as an array of shape (replicates, items) and returns one value per replicate; the
helpers below build the usual ones (a rate, F1 from counts, ECE).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np

REPLICATES = 1000
LEVEL = 0.95
SEED = 0
CHUNK_CELLS = 2_000_000  # weights held at once (16 MB): a chunk's replicates x items

Statistic = Callable[[np.ndarray], np.ndarray]


def draw_weights(clusters: Sequence[Hashable | None], replicates: int = REPLICATES, seed: int = SEED) -> np.ndarray:
    """(replicates, items) counts: how often each item's cluster was drawn in each replicate (None: a cluster of its own)."""
    return np.concatenate(list(_weight_chunks(clusters, replicates, seed)) or [np.zeros((replicates, 0))])


def _weight_chunks(clusters: Sequence[Hashable | None], replicates: int, seed: int):
    """``draw_weights``' rows a few at a time (about CHUNK_CELLS numbers each), so a large evaluation stays small in
    memory; one generator draws them all, in order."""
    keys: dict[Hashable, int] = {}
    owner = np.array([keys.setdefault(("item", i) if c is None else ("cluster", c), len(keys)) for i, c in enumerate(clusters)], np.int64)
    k = len(keys)
    if not k:
        return
    rng = np.random.default_rng(seed)
    rows = max(1, CHUNK_CELLS // max(k, len(owner)))
    for first in range(0, replicates, rows):
        n = min(rows, replicates - first)
        drawn = rng.integers(0, k, size=(n, k))
        counts = np.bincount((drawn + np.arange(n)[:, None] * k).ravel(), minlength=n * k).reshape(n, k)
        yield counts[:, owner].astype(np.float64)


def interval(
    statistic: Statistic, clusters: Sequence[Hashable | None], *, replicates: int = REPLICATES, level: float = LEVEL, seed: int = SEED
) -> tuple[float, float] | None:
    """The percentile interval of ``statistic`` over ``replicates`` cluster resamples (None: no items, or a figure no
    resample defines, such as a precision where nothing was claimed)."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, not {level}")
    if not len(clusters):
        return None
    values = np.concatenate([np.asarray(statistic(weights), np.float64) for weights in _weight_chunks(clusters, replicates, seed)])
    if not np.isfinite(values).any():
        return None
    tail = (1 - level) / 2
    low, high = np.nanquantile(values, [tail, 1 - tail])
    return float(low), float(high)


def paired_difference(first: Statistic, second: Statistic, clusters: Sequence[Hashable | None], **options) -> tuple[float, float] | None:
    """The interval of ``first - second``, two systems scored on the same items (``interval``'s options)."""
    return interval(lambda weights: first(weights) - second(weights), clusters, **options)


def rate(values: Sequence[float]) -> Statistic:
    """The weighted mean of per-item values (1/0 for a hit: Acc@k, recall@k; 1/rank: MRR)."""
    v = np.asarray(values, np.float64)
    return lambda weights: _divide(weights @ v, weights.sum(axis=1))


def ratio(numerators: Sequence[float], denominators: Sequence[float]) -> Statistic:
    """A ratio of weighted sums (precision over the items that claim, normalised recall over those found)."""
    top, bottom = np.asarray(numerators, np.float64), np.asarray(denominators, np.float64)
    return lambda weights: _divide(weights @ top, weights @ bottom)


def f1(tp: Sequence[float], fp: Sequence[float], fn: Sequence[float]) -> Statistic:
    """F1 from per-item counts (per document: its true positives, false positives, false negatives)."""
    t, p, n = (np.asarray(x, np.float64) for x in (tp, fp, fn))
    return lambda weights: _divide(2 * (weights @ t), 2 * (weights @ t) + weights @ p + weights @ n)


def harmonic_mean(first: Statistic, second: Statistic) -> Statistic:
    """F1 of two rates computed apart (a precision and a recall with different denominators)."""

    def statistic(weights: np.ndarray) -> np.ndarray:
        a, b = first(weights), second(weights)
        return _divide(2 * a * b, a + b)

    return statistic


def calibration_error(probabilities: Sequence[float], right: Sequence[bool], bins: int = 10) -> Statistic:
    """ECE over equal-width bins (``eval.calibration``'s measure), from weighted counts."""
    p, y = np.asarray(probabilities, np.float64), np.asarray(right, np.float64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(p, edges[1:-1], right=True), 0, bins - 1)
    members = np.eye(bins)[which]  # (items, bins)

    def statistic(weights: np.ndarray) -> np.ndarray:
        gap = np.abs(weights @ (members * p[:, None]) - weights @ (members * y[:, None])).sum(axis=1)
        return _divide(gap, weights.sum(axis=1))

    return statistic


def prf_intervals(
    tp: Sequence[float], fp: Sequence[float], fn: Sequence[float], clusters: Sequence[Hashable | None], **options
) -> dict[str, tuple[float, float] | None]:
    """Precision, recall and F1 intervals from per-item counts, every figure from the same draws."""
    t, p, n = (np.asarray(x, np.float64) for x in (tp, fp, fn))
    return {
        "precision": interval(ratio(t, t + p), clusters, **options),
        "recall": interval(ratio(t, t + n), clusters, **options),
        "f1": interval(f1(t, p, n), clusters, **options),
    }


def rank_intervals(
    ranks: Sequence[float | None], clusters: Sequence[Hashable | None], ks: Sequence[int], name: str = "acc"
) -> dict[str, list[float] | None]:
    """Intervals of ``name@k`` (the share ranked k or better) and MRR from 1-based ranks (None / inf: not found)."""
    values = np.array([np.inf if r is None else r for r in ranks], np.float64)
    out = {f"{name}@{k}": rounded(interval(rate(values <= k), clusters)) for k in ks}
    out["mrr"] = rounded(interval(rate(1.0 / values), clusters))
    return out


def resampled_unit(clusters: Sequence[Hashable | None]) -> str:
    """What a report says was resampled: "documents" when the items name theirs, else "mentions" (each its own)."""
    return "documents" if any(c is not None for c in clusters) else "mentions"


def percent_range(bounds: Sequence[float]) -> str:
    """An interval of rates as people read it: ``84.9-91.3``."""
    return f"{100 * bounds[0]:.1f}-{100 * bounds[1]:.1f}"


def signed_points(bounds: Sequence[float] | None) -> str:
    """An interval of a difference in points, `` [-0.3 to +3.4]`` (nothing without one)."""
    return f" [{100 * bounds[0]:+.1f} to {100 * bounds[1]:+.1f}]" if bounds else ""


def rounded(bounds: tuple[float, float] | None, digits: int = 4) -> list[float] | None:
    """An interval as a JSON-friendly pair."""
    return None if bounds is None else [round(bounds[0], digits), round(bounds[1], digits)]


def _divide(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    return np.divide(top, bottom, out=np.full(np.shape(top), np.nan), where=np.asarray(bottom) > 0)

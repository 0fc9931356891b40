"""The pairwise ranker's features (Schumacher et al. (2020)'s "pairwise features"): what retrieval said about each candidate and how
its names overlap the mention, made comparable across mentions. Kept apart from the model so that reading them needs
numpy only."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from medlink.core import Candidate

TEXT_CACHE = 200_000  # tokenised texts kept for reuse (names recur across mentions)
WORD = re.compile(r"\w+")


def feature_names(stages: Sequence[str]) -> list[str]:
    """The pairwise features, in input order: per retrieval stage (seen, log score, score / the mention's best), then
    the fused score relative to the best, the reciprocal rank, top-1, a memory match, exact and word-overlap matches."""
    per_stage = [f"{stage}:{what}" for stage in stages for what in ("seen", "log", "relative")]
    return per_stage + [
        "fused_relative",
        "reciprocal_rank",
        "first",
        "memory",
        "exact_name",
        "exact_matched",
        "jaccard_name",
        "jaccard_matched",
    ]


@lru_cache(maxsize=TEXT_CACHE)
def _words(text: str | None) -> frozenset[str]:
    """A text's lower-cased words (cached: candidate names recur across mentions)."""
    return frozenset(WORD.findall((text or "").lower()))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def pair_features(mention: str, candidates: Sequence[Candidate], stages: Sequence[str], top: int | None = None) -> np.ndarray:
    """(rows, len(feature_names(stages))) float32 for the first ``top`` candidates (all when None): what retrieval said
    about each, and how its names overlap the mention. Scores are made comparable across mentions by dividing by the
    mention's best over the whole list."""
    rows = candidates[:top]
    out = np.zeros((len(rows), len(feature_names(stages))), dtype=np.float32)
    if not rows:
        return out
    for s, stage in enumerate(stages):
        values = np.array([c.scores_by_stage.get(stage, np.nan) for c in candidates], dtype=np.float64)
        seen = ~np.isnan(values)
        values = np.where(seen, values, 0.0)
        best = values.max() if seen.any() else 0.0
        values, seen = values[: len(rows)], seen[: len(rows)]
        out[:, 3 * s] = seen
        out[:, 3 * s + 1] = np.sign(values) * np.log1p(np.abs(values))
        out[:, 3 * s + 2] = values / best if best > 0 else 0.0
    words, first = _words(mention), candidates[0].score
    table = []
    for i, candidate in enumerate(rows):
        name, matched = _words(candidate.name), _words(candidate.matched_name or candidate.name)
        table.append(
            (
                candidate.score / first if first > 0 else 0.0,
                1.0 / (1 + i),
                float(i == 0),
                float(any(e.get("origin") == "memory" for e in candidate.evidence)),
                float(name == words),
                float(matched == words),
                _jaccard(words, name),
                _jaccard(words, matched),
            )
        )
    out[:, 3 * len(stages) :] = table
    return out

"""Fusion of several generators' rankings into one: normalised weighted sum or reciprocal-rank fusion.

Weighted sum: each generator's scores for a mention are divided by that generator's best score
for the mention (so BM25's unbounded scores and cosines mix), multiplied by the generator's
weight and summed; a concept a generator did not return contributes 0 from it. Reciprocal rank
fusion: sum of ``weight / (rrf_k + rank)``. The matched alias kept for a fused concept is the
one from the stage that contributed most. Works on whole batches of ``Hits`` at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from medlink.params import Param
from medlink.retrieval.compiled import compiled_fusion, wanted
from medlink.retrieval.hits import Hits, ranked

METHODS = ("weighted", "rrf")
PARAMS = {
    "method": Param(str, choices=METHODS, default="weighted"),
    "weights": Param(dict, items=float, minimum=0.0, default={}),  # generator name -> weight (default 1; 0 leaves it out)
    "rrf_k": Param(int, minimum=1, default=60),
}


@dataclass
class Fusion:
    """How to merge rankings: ``method`` is "weighted" or "rrf"; ``weights`` by generator name (default 1)."""

    method: str = "weighted"
    weights: dict[str, float] = field(default_factory=dict)
    rrf_k: int = 60

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown fusion method {self.method!r}; known: {', '.join(METHODS)}")

    def contributions(self, stage: str, hits: Hits) -> np.ndarray:
        """Each hit's share of the fused score."""
        weight = self.weights.get(stage, 1.0)
        query = hits.query_index()
        if self.method == "rrf":
            rank = np.arange(len(query)) - hits.indptr[query] + 1
            return weight / (self.rrf_k + rank)
        best = hits.scores[hits.indptr[query]]  # hits are sorted best first within each query
        return weight * np.divide(hits.scores, best, out=np.zeros(len(best), np.float32), where=best > 0)

    def fuse(self, hits_by_stage: dict[str, Hits], k: int) -> Hits:
        """Merge per-stage hits (same queries, same order) into one ranking per query."""
        stages = [s for s in hits_by_stage if self.weights.get(s, 1.0) != 0]
        n_queries = next(iter(hits_by_stage.values())).n_queries
        if not stages:
            return Hits.empty(n_queries)
        if wanted(n_queries):
            return compiled_fusion([hits_by_stage[s] for s in stages], [self.contributions(s, hits_by_stage[s]) for s in stages], k)
        query = np.concatenate([hits_by_stage[s].query_index() for s in stages])
        concept = np.concatenate([hits_by_stage[s].concepts for s in stages])
        value = np.concatenate([self.contributions(s, hits_by_stage[s]) for s in stages]).astype(np.float64)
        key = np.concatenate([hits_by_stage[s].keys for s in stages])
        stage = np.concatenate([hits_by_stage[s].stages for s in stages])
        prior = np.concatenate([hits_by_stage[s].priors for s in stages])
        if len(query) == 0:
            return Hits.empty(n_queries)
        # group (query, concept); the first of each group after this sort is its largest contribution
        order = np.lexsort((-value, concept, query))
        query, concept, value, key, stage, prior = query[order], concept[order], value[order], key[order], stage[order], prior[order]
        first = np.ones(len(query), dtype=bool)
        first[1:] = (query[1:] != query[:-1]) | (concept[1:] != concept[:-1])
        starts = np.flatnonzero(first)
        total = np.add.reduceat(value, starts)
        best_prior = np.maximum.reduceat(prior, starts)
        return ranked(query[starts], concept[starts], total.astype(np.float32), key[starts], stage[starts], best_prior, n_queries, k)

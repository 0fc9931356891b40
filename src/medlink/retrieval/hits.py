"""Ranked hits for a whole batch of queries as flat numpy arrays (CSR-style), so that alias ->
concept aggregation, fusion and top-k never loop over candidates in Python.

Query ``i`` owns the slice ``indptr[i]:indptr[i+1]`` of every array, best first. ``concepts``
are positions in the linker's concept list, ``keys`` the alias-table row that earned the score
``stages`` which generator produced it (after fusion: the stage that contributed most) and
``priors`` how often that alias meant that concept, then how many names the concept has
(NameTable.priors; they break ties between equal scores).
``Candidate`` objects are only made for the final top-k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Hits:
    indptr: np.ndarray  # int64, n_queries + 1
    concepts: np.ndarray  # int32
    scores: np.ndarray  # float32
    keys: np.ndarray  # int32
    stages: np.ndarray  # int8
    priors: np.ndarray  # float64: an integer count plus a fraction (NameTable.priors)

    @property
    def n_queries(self) -> int:
        return len(self.indptr) - 1

    def query_index(self) -> np.ndarray:
        """The query each hit belongs to."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.indptr))

    def row(self, i: int) -> slice:
        return slice(int(self.indptr[i]), int(self.indptr[i + 1]))

    @classmethod
    def empty(cls, n_queries: int) -> Hits:
        nothing = np.zeros(0)
        return cls(
            np.zeros(n_queries + 1, np.int64),
            nothing.astype(np.int32),
            nothing.astype(np.float32),
            nothing.astype(np.int32),
            nothing.astype(np.int8),
            nothing.astype(np.float64),
        )


def ranked(
    query: np.ndarray, concept: np.ndarray, score: np.ndarray, key: np.ndarray, stage: np.ndarray, prior: np.ndarray, n_queries: int, k: int
) -> Hits:
    """Keep each (query, concept)'s best hit (max over aliases), then the top ``k`` per query.

    Equal scores rank by prior (how often the alias meant the concept, then how many names the
    concept has), then by concept position, which follows concept id order: results are deterministic.
    """
    if len(query) == 0:
        return Hits.empty(n_queries)
    # best hit per (query, concept): sort by query, concept, -score, -prior and keep the first of each run (query and
    # concept as one int64 key: a sort pass fewer over millions of hits)
    pair = query.astype(np.int64) * (int(concept.max()) + 1) + concept
    order = np.lexsort((-prior, -score, pair))
    pair, query, concept, score, key, stage, prior = (
        pair[order],
        query[order],
        concept[order],
        score[order],
        key[order],
        stage[order],
        prior[order],
    )
    first = np.ones(len(query), dtype=bool)
    first[1:] = pair[1:] != pair[:-1]
    query, concept, score, key, stage, prior = query[first], concept[first], score[first], key[first], stage[first], prior[first]
    # rank within each query: by -score, -prior, then concept position; keep k
    order = np.lexsort((concept, -prior, -score, query))
    query, concept, score, key, stage, prior = query[order], concept[order], score[order], key[order], stage[order], prior[order]
    starts = np.searchsorted(query, np.arange(n_queries))
    rank = np.arange(len(query)) - starts[query]
    keep = rank < k
    query = query[keep]
    indptr = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount(query, minlength=n_queries), out=indptr[1:])
    return Hits(
        indptr,
        concept[keep].astype(np.int32),
        score[keep].astype(np.float32),
        key[keep].astype(np.int32),
        stage[keep].astype(np.int8),
        prior[keep].astype(np.float64),
    )


def runs(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``starts[i], starts[i] + 1, ..., starts[i] + counts[i] - 1`` for every i, concatenated: the positions of CSR rows."""
    counts = np.asarray(counts, dtype=np.int64)
    return (
        np.repeat(np.asarray(starts, dtype=np.int64), counts) + np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    )


def from_key_hits(
    query: np.ndarray,
    key: np.ndarray,
    score: np.ndarray,
    table_indptr: np.ndarray,
    table_concepts: np.ndarray,
    table_priors: np.ndarray,
    stage: int,
    n_queries: int,
    k: int,
) -> Hits:
    """Alias-level hits -> concept-level hits: each key expands to the concepts it names (max per concept)."""
    counts = table_indptr[key + 1] - table_indptr[key]
    expanded_query = np.repeat(query, counts)
    expanded_key = np.repeat(key, counts)
    expanded_score = np.repeat(score, counts)
    position = runs(table_indptr[key], counts)  # each key's concepts in table_concepts
    return ranked(
        expanded_query,
        table_concepts[position],
        expanded_score,
        expanded_key,
        np.full(len(position), stage, np.int8),
        table_priors[position].astype(np.float64),
        n_queries,
        k,
    )


def top_k(hits: Hits, k: int) -> Hits:
    """The first ``k`` hits of each query (hits are already ranked)."""
    query = hits.query_index()
    keep = (np.arange(len(query)) - hits.indptr[query]) < k
    indptr = np.zeros(hits.n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount(query[keep], minlength=hits.n_queries), out=indptr[1:])
    return Hits(indptr, hits.concepts[keep], hits.scores[keep], hits.keys[keep], hits.stages[keep], hits.priors[keep])


def concatenate_hits(parts: list[Hits]) -> Hits:
    """The hits of consecutive query batches as one batch."""
    indptr = [np.zeros(1, np.int64)]
    offset = 0
    for part in parts:
        indptr.append(part.indptr[1:] + offset)
        offset += int(part.indptr[-1])
    return Hits(
        np.concatenate(indptr),
        *(np.concatenate([getattr(p, name) for p in parts]) for name in ("concepts", "scores", "keys", "stages", "priors")),
    )


def merged(first: Hits, second: Hits) -> Hits:
    """The hits of two searches of the same queries, each query's from one of them (the other has none for it)."""
    query = np.concatenate((first.query_index(), second.query_index()))
    order = np.argsort(query, kind="stable")
    indptr = np.zeros(first.n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount(query, minlength=first.n_queries), out=indptr[1:])
    return Hits(
        indptr,
        *(
            np.concatenate((getattr(first, name), getattr(second, name)))[order]
            for name in ("concepts", "scores", "keys", "stages", "priors")
        ),
    )

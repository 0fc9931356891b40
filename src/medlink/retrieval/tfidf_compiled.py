"""The TF-IDF search's two stages compiled with numba, for a large batch: the shortlists ``TfidfGenerator``'s numpy
path gives, the same rows and the same float32 sums.

Why: the numpy path makes a sparse product, a row gather and a product per mention, and holds the GIL throughout;
compiled, a mention's partial scores gather into one array, its shortlist's exact cosines read the names' rows in
place, and the batch splits over the CPU's cores. Sums run in scipy's order (the mention's n-grams as stored, then
each posting list; each name row as stored), and a cut among equal scores keeps the lowest rows, as ``best`` does.
numba is imported only for a batch of at least ``COMPILED_FROM`` mentions (its import and the cached machine code
cost about half a second; the first call on a machine compiles for some seconds and caches the result). The kernels
are in ``tfidf_kernels``.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from medlink.retrieval.hits import Hits
from medlink.retrieval.names import NameTable

COMPILED_FROM = 64  # distinct mentions in one search from which the compiled path pays for itself


def best(rows: np.ndarray, scores: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` highest-scoring (row, score) pairs, by row (all of them when there are fewer); of equal scores at the
    cut, the lowest rows, so that the compiled path's choice is the same."""
    if len(rows) > n:
        cut = -np.partition(-scores, n - 1)[n - 1]
        above = np.flatnonzero(scores > cut)
        tied = np.flatnonzero(scores == cut)
        tied = tied[np.argsort(rows[tied], kind="stable")[: n - len(above)]]
        keep = np.concatenate((above, tied))
        rows, scores = rows[keep], scores[keep]
    order = np.argsort(rows, kind="stable")
    return rows[order], scores[order]


_POOL: tuple[int, ThreadPoolExecutor] | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """One pool of a thread per usable core, per process (a forked child makes its own: threads do not survive a fork)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            _POOL = (os.getpid(), ThreadPoolExecutor(len(os.sched_getaffinity(0)), thread_name_prefix="medlink-tfidf"))
        return _POOL[1]


def _csr(matrix: sp.csr_matrix, data_type=np.float32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return matrix.indptr.astype(np.int64), matrix.indices.astype(np.int32), matrix.data.astype(data_type)


def compiled_shortlists(
    queries: sp.csr_matrix,
    postings: sp.csr_matrix,
    common: sp.csr_matrix,
    common_columns: np.ndarray,
    table: NameTable,
    n_concepts: int,
    rescored: int,
    shortlist: int,
    k: int,
    stage: int,
) -> tuple[Hits, np.ndarray]:
    """Each query's ``k`` best concepts from its shortlist of ``table``'s names, as ``from_key_hits`` gives them, and
    the queries that have known n-grams but no selective one (no hits here: shortlisted from the impact postings)."""
    from medlink.retrieval.tfidf_kernels import shortlists as kernel

    common_position = np.full(queries.shape[1], -1, np.int32)  # n-gram -> its column in ``common`` (-1: selective)
    common_position[common_columns] = np.arange(len(common_columns), dtype=np.int32)
    arguments = (
        _csr(queries),
        _csr(postings),
        _csr(common),
        (table.indptr.astype(np.int64), table.concept_index.astype(np.int32), table.priors.astype(np.float64), n_concepts),
        common_position,
        len(common_columns),
        postings.shape[1],
    )
    n = queries.shape[0]
    threads = min(len(os.sched_getaffinity(0)), max(1, n // COMPILED_FROM))
    bounds = np.linspace(0, n, threads + 1).astype(int).tolist()
    parts = list(_pool().map(lambda span: kernel(*arguments, rescored, shortlist, k, span[0], span[1]), zip(bounds[:-1], bounds[1:])))
    counts, concepts, scores, rows, priors, unselective = (np.concatenate([part[i] for part in parts]) for i in range(6))
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    return Hits(indptr, concepts, scores, rows, np.full(len(rows), stage, np.int8), priors), unselective

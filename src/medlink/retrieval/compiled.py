"""The TF-IDF and BM25 searches compiled with numba, for a large batch: the hits their numpy paths give, the same
names, the same float32 sums, the same concepts.

Why: the numpy paths make a sparse product, a row gather and a product per mention, and hold the GIL throughout;
compiled, a mention's scores gather into one array, TF-IDF's shortlist reads the names' rows in place, and the batch
splits over the CPU's cores. Sums run in scipy's order (the mention's n-grams or words as stored, then each posting
list; each name row as stored), and a cut among equal scores keeps the lowest rows, as ``best`` does. Loading numba
and the cached machine code is a start-up cost a short call would not earn back (and the first call of an installation
compiles, then caches the result): a process loads them for a call of ``LOAD_FROM`` distinct mentions, and once loaded uses
them from ``COMPILED_FROM``. The kernels are in ``kernels``.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from medlink.progress import phase
from medlink.retrieval.hits import Hits
from medlink.retrieval.names import NameTable

if TYPE_CHECKING:
    import scipy.sparse as sp

COMPILED_FROM = 64  # distinct mentions in one search from which the compiled path, once loaded, pays for itself
LOAD_FROM = 1_000  # distinct mentions in one search that pay for loading it
_loaded = False
NUMBA_IMPORT = threading.Lock()  # held while numba is imported, or kept out of another library's import (bm25s_without_numba)


def wanted(n: int) -> bool:
    """Should a search of ``n`` distinct mentions take the compiled path?"""
    return n >= COMPILED_FROM and (_loaded or n >= LOAD_FROM)


def load() -> None:
    """Load numba and the kernels' code now, so that a long run's searches of ``COMPILED_FROM`` mentions or more take the
    compiled path from the first (each kernel reads its cached code on its first call)."""
    global _loaded
    with NUMBA_IMPORT:
        import medlink.retrieval.kernels  # noqa: F401
    _loaded = True


def bm25s_without_numba():
    """bm25s, imported without its numba backend where numba is not loaded yet: medlink scores BM25 itself, and numba's
    import would slow the start of every process that loads a BM25 stage."""
    with NUMBA_IMPORT:
        if "bm25s" in sys.modules or "numba" in sys.modules:
            import bm25s

            return bm25s
        sys.modules["numba"] = None  # type: ignore[assignment]  # bm25s then takes its own path without numba
        try:
            import bm25s
        finally:
            del sys.modules["numba"]
        return bm25s


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
    return matrix.indptr.astype(np.int64), matrix.indices.astype(np.int32, copy=False), matrix.data.astype(data_type, copy=False)


def _table(table: NameTable, n_concepts: int) -> tuple:
    return (
        table.indptr.astype(np.int64, copy=False),
        table.concept_index.astype(np.int32, copy=False),
        table.priors.astype(np.float64, copy=False),
        n_concepts,
    )


def _compiles(kernel) -> bool:
    """Will ``kernel``'s first call compile it? Yes when numba's cache (beside the installed package, or under
    ``NUMBA_CACHE_DIR``) holds no index file for it yet."""
    if kernel.signatures:
        return False
    place = Path(os.environ.get("NUMBA_CACHE_DIR") or Path(__file__).parent / "__pycache__")  # numba reads one or the other
    return not any(place.rglob(f"kernels.{kernel.__name__}-*.nbi"))


def _over_cores(kernel, arguments: tuple, n: int, stage: int) -> tuple[Hits, tuple[np.ndarray, ...]]:
    """``kernel(*arguments, start, end)`` over the ``n`` queries split among the cores, its concept hits as ``Hits``
    (the kernel returns each query's count, then concepts, scores, name rows and priors), and what else it returns."""
    load()
    threads = min(len(os.sched_getaffinity(0)), max(1, n // COMPILED_FROM))
    bounds = np.linspace(0, n, threads + 1).astype(int).tolist()
    first = phase(f"compiling the fast path ({kernel.__name__}), once per installation") if _compiles(kernel) else nullcontext()
    with first:
        parts = list(_pool().map(lambda span: kernel(*arguments, span[0], span[1]), zip(bounds[:-1], bounds[1:])))
    joined = [np.concatenate([part[i] for part in parts]) for i in range(len(parts[0]))]
    counts, concepts, scores, rows, priors = joined[:5]
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    return Hits(indptr, concepts, scores, rows, np.full(len(rows), stage, np.int8), priors), tuple(joined[5:])


def compiled_shortlists(
    queries: sp.csr_matrix,
    postings: sp.csr_matrix,
    common: sp.csr_matrix,
    common_position: np.ndarray,
    table: NameTable,
    n_concepts: int,
    rescored: int,
    shortlist: int,
    k: int,
    stage: int,
) -> tuple[Hits, np.ndarray]:
    """Each query's ``k`` best concepts from its TF-IDF shortlist of ``table``'s names, as ``from_key_hits`` gives
    them (``common_position``: each n-gram's column in ``common``, -1 for a selective one), and the queries that have
    known n-grams but no selective one (no hits here: shortlisted from the impact postings)."""
    from medlink.retrieval.kernels import shortlists

    arguments = (_csr(queries), _csr(postings), _csr(common), _table(table, n_concepts), common_position, common.shape[1])
    hits, (unselective,) = _over_cores(shortlists, (*arguments, postings.shape[1], rescored, shortlist, k), queries.shape[0], stage)
    return hits, unselective


def compiled_word_hits(
    word_ids: Sequence[Sequence[int]], words_by_name: sp.csr_matrix, table: NameTable, n_concepts: int, fetch: int, k: int, stage: int
) -> Hits:
    """Each query's ``k`` best concepts from its ``fetch`` best names by BM25, as ``BM25Generator``'s numpy path gives
    them (``word_ids``: each query's word ids, a word as often as said; ``words_by_name``: word -> name scores)."""
    from medlink.retrieval.kernels import word_hits

    counts = np.fromiter((len(words) for words in word_ids), np.int64, len(word_ids))
    words = np.fromiter((w for ids in word_ids for w in ids), np.int32, int(counts.sum()))
    queries = (np.concatenate(([0], np.cumsum(counts))), words, np.ones(len(words), np.float32))  # as batch_scores' product
    arguments = (queries, _csr(words_by_name), _table(table, n_concepts), fetch, k)
    return _over_cores(word_hits, arguments, len(word_ids), stage)[0]


def compiled_fusion(stage_hits: Sequence[Hits], values: Sequence[np.ndarray], k: int) -> Hits:
    """``Fusion.fuse``'s hits from each stage's hits (in fusion order) and their contributions (``values``)."""
    from medlink.retrieval.kernels import fused_hits

    sizes = np.cumsum([0] + [len(hits.concepts) for hits in stage_hits[:-1]])
    indptr = np.stack([hits.indptr + offset for hits, offset in zip(stage_hits, sizes)])
    concepts = np.concatenate([hits.concepts for hits in stage_hits]).astype(np.int32, copy=False)
    columns = (
        concepts,
        np.concatenate(values).astype(np.float64, copy=False),
        np.concatenate([hits.keys for hits in stage_hits]).astype(np.int32, copy=False),
        np.concatenate([hits.stages for hits in stage_hits]).astype(np.int8, copy=False),
        np.concatenate([hits.priors for hits in stage_hits]).astype(np.float64, copy=False),
    )
    arguments = (indptr.astype(np.int64, copy=False), *columns, int(concepts.max(initial=0)) + 1, k)
    hits, (stages,) = _over_cores(fused_hits, arguments, stage_hits[0].n_queries, 0)
    hits.stages = stages
    return hits

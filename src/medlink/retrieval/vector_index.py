"""FAISS in one place: the inner-product indexes that dense retrieval, the kNN memory and hard-negative mining search.

Encoders give unit vectors, so inner product is cosine. ``flat_index`` is exact search over vectors held in memory
(the kNN datastore, the KB names a trainer mines negatives from); ``configured_index`` is the dense generator's
choice of ``flat``, ``hnsw`` or ``ivfpq`` (optionally fp16), with ``tune`` setting its search-time knobs. faiss is
imported when an index is made or read, not when this module is: the kNN reranker's module is imported by configs
that never build one.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import numpy as np

from medlink.errors import MedlinkError

# FAISS searches an exact index query by query while (queries x dimensions) is under its
# distance_compute_blas_threshold, else by one BLAS matrix product. faiss-cpu 1.15 puts that at 128,000, tuned for many
# threads: with few threads the query-by-query scan is far slower than BLAS on an annotator's batch of mentions, and
# BLAS wins from a few queries at 384 or 768 dimensions (benchmarks/scale/faiss_blas_probe.py; docs/benchmark-history.md,
# FAISS's switch to BLAS). 800 per thread is what faiss itself later chose, and matches that crossover.
BLAS_WORK_PER_THREAD = 800


@cache
def _faiss():
    import faiss

    faiss.cvar.distance_compute_blas_threshold = BLAS_WORK_PER_THREAD * faiss.omp_get_max_threads()
    return faiss


def flat_index(vectors: np.ndarray) -> faiss.Index:  # noqa: F821
    """An exact inner-product index holding ``vectors`` (n, d)."""
    index = _faiss().IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    return index


def configured_index(params: dict, d: int, vectors: np.ndarray) -> faiss.Index:  # noqa: F821
    """An empty (trained, for ivfpq) index of the kind a dense generator's ``params`` configure."""
    faiss = _faiss()
    ip = faiss.METRIC_INNER_PRODUCT
    if params["index"] == "flat":
        return faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_fp16, ip) if params["fp16"] else faiss.IndexFlatIP(d)
    if params["index"] == "hnsw":
        m = int(params["hnsw_m"])
        index = faiss.IndexHNSWSQ(d, faiss.ScalarQuantizer.QT_fp16, m, ip) if params["fp16"] else faiss.IndexHNSWFlat(d, m, ip)
        index.hnsw.efConstruction = int(params["ef_construction"])
        return index
    n = len(vectors)
    nlist = int(params["nlist"] or max(1, round(4 * math.sqrt(n))))
    nlist = max(1, min(nlist, n // 39 or 1))  # k-means wants ~39 points per list
    pq_m = int(params["pq_m"] or max(1, d // 8))
    if d % pq_m:
        raise MedlinkError(f"dense generator: pq_m ({pq_m}) must divide the dimension ({d})")
    nbits = max(1, min(8, int(math.log2(max(n, 2)))))  # a tiny table cannot train 256 centroids per sub-quantizer
    index = faiss.IndexIVFPQ(faiss.IndexFlatIP(d), d, nlist, pq_m, nbits, ip)
    sample = max(64 * nlist, 256 * 64)
    rows = np.sort(np.random.default_rng(0).choice(n, size=min(n, sample), replace=False))
    index.train(np.ascontiguousarray(vectors[rows], dtype=np.float32))
    return index


def add_in_chunks(index: faiss.Index, vectors: np.ndarray, rows: int) -> None:  # noqa: F821
    """Add ``vectors`` (a memmap may be larger than memory) ``rows`` at a time, as contiguous float32."""
    for start in range(0, len(vectors), rows):
        index.add(np.ascontiguousarray(vectors[start : start + rows], dtype=np.float32))


def tune(index: faiss.Index, params: dict) -> None:  # noqa: F821
    """Search-time knobs (not stored in the FAISS file)."""
    if params["index"] == "hnsw":
        index.hnsw.efSearch = int(params["ef_search"])
    elif params["index"] == "ivfpq":
        index.nprobe = int(params["nprobe"])


def use_threads(threads: int) -> None:
    """FAISS's OpenMP threads (dense search shares the cores torch uses)."""
    faiss = _faiss()
    faiss.omp_set_num_threads(threads)
    faiss.cvar.distance_compute_blas_threshold = BLAS_WORK_PER_THREAD * threads  # the scan's speed grows with its threads


def write_index(index: faiss.Index, path: Path) -> None:  # noqa: F821
    _faiss().write_index(index, str(path))


def read_index(path: Path) -> faiss.Index:  # noqa: F821
    return _faiss().read_index(str(path))

"""Impact-ordered postings for the common n-grams of a TF-IDF table.

A mention made only of common n-grams ("chronic pain", "the") has no selective n-gram to
shortlist names with, and scoring it against every name's common part costs a scan of the
whole table (what made linking slow on a 5M-name table: BENCHMARKS.md, KB building and scale). So the common n-grams get postings
too, in two tiers: the least common of them (in at most ``full_df`` names) keep their whole
posting lists, which shortlist long mentions by their rarest n-grams exactly; the very common
ones keep, as in impact-ordered inverted indices, only their ``depth`` highest-weighted names
(short names made of them, the best matches of a short generic mention). A sum over those
lists gives the shortlist, and the exact cosine is then computed as for any other mention.

The per-n-gram weight threshold that keeps about ``depth`` names is estimated on a row sample,
so the table is read once, chunk by chunk, never transposed whole.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from medlink.retrieval.tfidf_hashed import stacked_transpose

SAMPLE_ROWS = 200_000
CHUNK_ROWS = 200_000


def _thresholds(common: sp.csr_matrix, depth: int, full_df: int, rng: np.random.Generator) -> np.ndarray:
    """Per column, a weight above which roughly ``depth`` names of the whole table lie (0: keep all)."""
    n = common.shape[0]
    rows = np.sort(rng.choice(n, SAMPLE_ROWS, replace=False)) if n > SAMPLE_ROWS else np.arange(n)
    sample = common[rows].tocsc()
    rank = max(1, int(np.ceil(depth * len(rows) / n)))  # depth names in the table ~ rank names in the sample
    thresholds = np.zeros(common.shape[1], np.float32)
    for column in range(common.shape[1]):
        values = sample.data[sample.indptr[column] : sample.indptr[column + 1]]
        if len(values) > rank:
            thresholds[column] = np.partition(values, len(values) - rank)[len(values) - rank]
    document_frequency = np.zeros(common.shape[1], np.int64)
    for start in range(0, common.nnz, 1 << 24):  # bincount copies its input to int64: a slice at a time, not 300M entries
        document_frequency += np.bincount(common.indices[start : start + (1 << 24)], minlength=common.shape[1])
    thresholds[document_frequency <= full_df] = 0
    return thresholds


def impact_postings(common: sp.csr_matrix, depth: int = 1024, full_df: int = 20_000, seed: int = 0) -> sp.csr_matrix:
    """common n-gram -> all its names (if at most ``full_df``) or about its ``depth`` highest-weighted ones.

    Columns x names, CSR, float32.
    """
    thresholds = _thresholds(common, depth, full_df, np.random.default_rng(seed))
    kept_parts = []
    for start in range(0, common.shape[0], CHUNK_ROWS):
        chunk = common[start : start + CHUNK_ROWS].copy()
        chunk.data[chunk.data < thresholds[chunk.indices]] = 0
        chunk.eliminate_zeros()
        kept_parts.append(chunk)
    return stacked_transpose(kept_parts, common.shape[1])  # filled in place: the kept entries never exist twice

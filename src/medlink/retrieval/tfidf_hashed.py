"""TF-IDF for UMLS-sized name tables: hashed n-gram features, fitted chunk by chunk.

scikit-learn's ``TfidfVectorizer`` needs the whole corpus at once and peaks at about three
times the final matrix, too much for millions of names. ``HashingVectorizer`` is stateless, so
names are vectorised in chunks; document frequencies accumulate over the chunks, then each chunk
is weighted (sublinear tf x smoothed idf, as scikit-learn computes it), L2-normalised and split
into its selective / common halves before the next one, and only the halves are kept. 2^22
hashed features keep collisions rare for character n-grams.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize
from tqdm import tqdm

CHUNK = 200_000


class HashedTfidf:
    """``transform(texts)`` like a fitted TfidfVectorizer, over hashed n-gram features."""

    def __init__(self, params: dict, idf: np.ndarray):
        self.params = params
        self.idf_ = idf.astype(np.float32)
        self.hasher = HashingVectorizer(
            analyzer=params["analyzer"], ngram_range=tuple(params["ngram_range"]), n_features=int(params["n_features"]),
            alternate_sign=False, norm=None, lowercase=False, dtype=np.float32,
        )

    def counts(self, texts) -> sp.csr_matrix:
        matrix = self.hasher.transform(texts).tocsr()
        matrix.sum_duplicates()
        return matrix

    def weigh(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        """Counts -> L2-normalised tf-idf, in place."""
        if self.params["sublinear_tf"]:
            np.log(counts.data, out=counts.data)
            counts.data += 1
        counts.data *= self.idf_[counts.indices]
        counts.eliminate_zeros()
        return normalize(counts, copy=False)

    def transform(self, texts) -> sp.csr_matrix:
        return self.weigh(self.counts(texts))


def fit_halves(keys: list[str], params: dict, progress: bool = True) -> tuple[HashedTfidf, sp.csr_matrix, np.ndarray, np.ndarray, sp.csr_matrix]:
    """Vectorise ``keys`` chunk by chunk; returns (vectorizer, selective half, selective columns, common columns, common half).

    The selective half is names x selective n-grams (CSR); the caller transposes it into postings.
    """
    n_features = int(params["n_features"])
    vectorizer = HashedTfidf(params, np.ones(n_features, np.float32))
    chunks, document_frequency = [], np.zeros(n_features, np.int64)
    for start in tqdm(range(0, len(keys), CHUNK), desc="tf-idf counts", unit="chunk", disable=not progress, leave=False):
        counts = vectorizer.counts(keys[start : start + CHUNK])
        document_frequency += np.bincount(counts.indices, minlength=n_features)
        chunks.append(counts)
    n = len(keys)
    present = document_frequency > 0
    # n-grams no name has get weight 0, so they drop out of a mention's norm as an unknown term does in scikit-learn
    vectorizer.idf_ = np.where(present, np.log((1 + n) / (1 + document_frequency)) + 1, 0).astype(np.float32)
    selective = present & (document_frequency <= max(1.0, params["common_df"] * n))
    selective_columns, common_columns = np.flatnonzero(selective), np.flatnonzero(present & ~selective)
    selective_parts, common_parts = [], []
    while chunks:  # weigh and split the oldest chunk, then let it go
        weighted = vectorizer.weigh(chunks.pop(0))
        selective_parts.append(weighted[:, selective_columns].tocsr())
        common_parts.append(weighted[:, common_columns].tocsr())
        del weighted
    common = sp.vstack(common_parts, format="csr")
    del common_parts
    selective_half = sp.vstack(selective_parts, format="csr")
    return vectorizer, selective_half, selective_columns, common_columns, common

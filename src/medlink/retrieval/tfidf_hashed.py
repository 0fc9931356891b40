"""TF-IDF for UMLS-sized name tables: hashed n-gram features, fitted chunk by chunk.

scikit-learn's ``TfidfVectorizer`` needs the whole corpus at once and peaks well above
the final matrix, too much for millions of names. ``HashingVectorizer`` is stateless, so
names are vectorised in chunks (counts held as bytes); document frequencies accumulate over the
chunks, then each chunk is weighted (sublinear tf x smoothed idf, as scikit-learn computes it), L2-normalised and split
into its selective / common halves before the next one, and only the halves are kept. 2^22
hashed features keep collisions rare for character n-grams.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from medlink.progress import bar as progress_bar
from medlink.retrieval.ngrams import weigh

CHUNK = 200_000
BY_WORD_FROM = 1_000  # texts from which counting word by word beats hashing each text whole


def selective_threshold(params: dict, names: int) -> float:
    """n-grams in at most this many names are selective: a share of the table, capped so postings stay short."""
    return max(1.0, min(params["common_df"] * names, params.get("max_postings", float("inf"))))


class HashedTfidf:
    """``transform(texts)`` like a fitted TfidfVectorizer, over hashed n-gram features."""

    def __init__(self, params: dict, idf: np.ndarray):
        from sklearn.feature_extraction.text import HashingVectorizer  # hashed features: UMLS-sized tables only

        self.params = params
        self.idf_ = idf.astype(np.float32)
        self.hasher = HashingVectorizer(
            analyzer=params["analyzer"],
            ngram_range=tuple(params["ngram_range"]),
            n_features=int(params["n_features"]),
            alternate_sign=False,
            norm=None,
            lowercase=False,
            dtype=np.float32,
        )

    def counts(self, texts: Sequence[str]) -> sp.csr_matrix:
        """The hashed n-gram counts of ``texts``, as ``HashingVectorizer`` gives them; a large batch's char_wb n-grams
        are counted word by word (``counts_by_word``), the same numbers."""
        if self.params["analyzer"] == "char_wb" and len(texts) >= BY_WORD_FROM:
            matrix = self.counts_by_word(texts)
        else:
            matrix = self.hasher.transform(texts).tocsr()
        matrix.sum_duplicates()  # sorted columns, as scikit-learn's
        return matrix

    def counts_by_word(self, texts: Sequence[str]) -> sp.csr_matrix:
        """char_wb n-grams never cross a word's edge, so a text's counts are the sum of its words' counts: each distinct
        word is hashed once (a batch of names repeats its words many times over), then texts x words @ words x
        n-grams sums them."""
        word_ids: dict[str, int] = {}
        rows, words = array("q"), array("q")
        for row, text in enumerate(texts):
            for word in text.split():  # scikit-learn's char_wb words: whitespace runs split them
                rows.append(row)
                words.append(word_ids.setdefault(word, len(word_ids)))
        if not word_ids:
            return sp.csr_matrix((len(texts), self.hasher.n_features), dtype=np.float32)
        texts_by_words = sp.csr_matrix(
            (np.ones(len(rows), np.float32), (np.frombuffer(rows, np.int64), np.frombuffer(words, np.int64))),
            shape=(len(texts), len(word_ids)),
        )
        return (texts_by_words @ self.hasher.transform(list(word_ids)).tocsr()).tocsr()

    def weigh(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        """Counts -> L2-normalised tf-idf, in place."""
        return weigh(counts, self.idf_, self.params["sublinear_tf"])

    def transform(self, texts) -> sp.csr_matrix:
        return self.weigh(self.counts(texts))


def stacked_transpose(parts: list[sp.csr_matrix], width: int) -> sp.csr_matrix:
    """The transpose of the row-wise stack of ``parts`` (each rows x ``width``), built part by part.

    Equivalent to ``sp.vstack(parts).T.tocsr()`` without ever holding the stack and its transpose
    together: each part is transposed, scattered into the preallocated result, and released.
    """
    counts = np.zeros(width, np.int64)
    for part in parts:
        counts += np.bincount(part.indices, minlength=width)
    indptr = np.zeros(width + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    total = int(indptr[-1])
    indices = np.empty(total, np.int32)
    data = np.empty(total, np.float32)
    filled = indptr[:-1].copy()  # next free slot of every output row
    row_offset = 0
    while parts:
        part = parts.pop(0).tocsc()  # columns of this part = rows of the result, rows already sorted
        per_column = np.diff(part.indptr)
        starts = np.repeat(filled - part.indptr[:-1], per_column)  # where each column's run goes, minus its own offset
        positions = starts + np.arange(part.nnz)
        indices[positions] = part.indices + row_offset
        data[positions] = part.data
        filled += per_column
        row_offset += part.shape[0]
        del part
    return sp.csr_matrix((data, indices, indptr), shape=(width, row_offset))


def fit_halves(keys: list[str], params: dict, progress: bool = True) -> tuple[HashedTfidf, sp.csr_matrix, np.ndarray, sp.csr_matrix]:
    """Vectorise ``keys`` chunk by chunk; returns (vectorizer, postings, common columns, common half).

    ``postings`` is n-gram -> names over the selective n-grams (full feature width); ``common`` is
    names x common n-grams.
    """
    n_features = int(params["n_features"])
    vectorizer = HashedTfidf(params, np.ones(n_features, np.float32))
    chunks, document_frequency = [], np.zeros(n_features, np.int64)
    for start in progress_bar(progress, iterable=range(0, len(keys), CHUNK), desc="tf-idf counts", unit="chunk", leave=False):
        counts = vectorizer.counts(keys[start : start + CHUNK])
        document_frequency += np.bincount(counts.indices, minlength=n_features)
        # held until the idf is known: one byte per count instead of a float (a name repeats an n-gram < 256 times)
        chunks.append(sp.csr_matrix((np.minimum(counts.data, 255).astype(np.uint8), counts.indices, counts.indptr), shape=counts.shape))
        del counts
    n = len(keys)
    present = document_frequency > 0
    # n-grams no name has get weight 0, so they drop out of a mention's norm as an unknown term does in scikit-learn
    vectorizer.idf_ = np.where(present, np.log((1 + n) / (1 + document_frequency)) + 1, 0).astype(np.float32)
    selective = present & (document_frequency <= selective_threshold(params, n))
    selective_columns, common_columns = np.flatnonzero(selective), np.flatnonzero(present & ~selective)
    selective_mask = np.zeros(n_features, np.float32)
    selective_mask[selective_columns] = 1
    # the common half is filled into arrays sized up front, so it never exists twice (no vstack)
    total = int(document_frequency[common_columns].sum())  # one entry per (name, common n-gram)
    data, indices = np.empty(total, np.float32), np.empty(total, np.int32)
    indptr, filled, rows = [np.zeros(1, np.int64)], 0, 0
    selective_parts = []
    while chunks:  # weigh and split the oldest chunk, then let it go
        weighted = vectorizer.weigh(chunks.pop(0).astype(np.float32))
        common_part = weighted[:, common_columns].tocsr()
        data[filled : filled + common_part.nnz] = common_part.data
        indices[filled : filled + common_part.nnz] = common_part.indices
        indptr.append(common_part.indptr[1:] + filled)
        filled += common_part.nnz
        rows += common_part.shape[0]
        del common_part
        weighted.data *= selective_mask[weighted.indices]  # keep the selective n-grams, at full feature width
        weighted.eliminate_zeros()
        selective_parts.append(weighted)
        del weighted
    common = sp.csr_matrix((data[:filled], indices[:filled], np.concatenate(indptr)), shape=(rows, len(common_columns)))
    return vectorizer, stacked_transpose(selective_parts, n_features), common_columns, common

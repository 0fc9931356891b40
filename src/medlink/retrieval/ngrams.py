"""Mentions to TF-IDF vectors over a fitted character n-gram vocabulary, without importing scikit-learn.

scikit-learn fits the vocabulary and idf when an index is built; linking only has to turn a few
mentions into vectors, and importing scikit-learn for that costs most of a second of every
``medlink link`` call. ``VocabularyTfidf.transform`` gives what ``TfidfVectorizer.transform`` gives
for the ``char`` and ``char_wb`` analyzers (tests compare the two on random strings); the ``word``
analyzer keeps scikit-learn's vectorizer.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

ANALYZERS = ("char", "char_wb")  # what VocabularyTfidf reproduces
_RUNS_OF_SPACE = re.compile(r"\s\s+")


def char_ngrams(text: str, low: int, high: int, word_bounded: bool) -> list[str]:
    """The n-grams (``low`` <= n <= ``high``) of ``text`` as scikit-learn's analyzers count them: whitespace runs
    collapsed to one space; ``word_bounded`` (char_wb): within each space-padded word, a word shorter than n giving
    itself once."""
    text = _RUNS_OF_SPACE.sub(" ", text)
    grams: list[str] = []
    if word_bounded:
        for word in text.split():
            padded = f" {word} "
            for n in range(low, high + 1):
                if len(padded) <= n:
                    grams.append(padded)
                    break
                grams.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
        return grams
    for n in range(low, min(high, len(text)) + 1):
        grams.extend(text[i : i + n] for i in range(len(text) - n + 1))
    return grams


def weigh(counts: sp.csr_matrix, idf: np.ndarray, sublinear: bool) -> sp.csr_matrix:
    """Term counts -> L2-normalised TF-IDF rows, in place (1 + log tf when ``sublinear``)."""
    if sublinear:
        np.log(counts.data, out=counts.data)
        counts.data += 1
    counts.data *= idf[counts.indices]
    counts.eliminate_zeros()
    lengths = np.diff(counts.indptr)
    rows = np.repeat(np.arange(counts.shape[0]), lengths)
    norms = np.sqrt(np.bincount(rows, weights=counts.data.astype(np.float64) ** 2, minlength=counts.shape[0]))
    counts.data /= np.repeat(np.where(norms > 0, norms, 1.0), lengths).astype(counts.data.dtype)
    return counts


class VocabularyTfidf:
    """A fitted character n-gram TF-IDF model: ``vocabulary_`` (n-gram -> column) and ``idf_``, as scikit-learn names them."""

    def __init__(self, vocabulary: dict[str, int], idf: np.ndarray, analyzer: str, ngram_range: Sequence[int], sublinear_tf: bool):
        if analyzer not in ANALYZERS:
            raise ValueError(f"VocabularyTfidf reproduces the {' and '.join(ANALYZERS)} analyzers, not {analyzer!r}")
        self.vocabulary_ = vocabulary
        self.idf_ = np.asarray(idf, dtype=np.float32)
        self.word_bounded = analyzer == "char_wb"
        self.low, self.high = (int(n) for n in ngram_range)
        self.sublinear_tf = sublinear_tf

    def transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        lookup = self.vocabulary_.get
        rows: list[int] = []
        columns: list[int] = []
        n = 0
        for n, text in enumerate(texts, 1):
            found = [c for c in map(lookup, char_ngrams(text, self.low, self.high, self.word_bounded)) if c is not None]
            columns.extend(found)
            rows.extend([n - 1] * len(found))
        counts = sp.coo_matrix((np.ones(len(columns), np.float32), (np.asarray(rows, np.int64), np.asarray(columns, np.int64))),
                               shape=(n, len(self.idf_))).tocsr()  # duplicates summed: term counts
        counts.sort_indices()
        return weigh(counts, self.idf_, self.sublinear_tf)

"""Mentions to TF-IDF vectors over a fitted character n-gram vocabulary, without importing scikit-learn.

scikit-learn fits the vocabulary and idf when an index is built; linking only has to turn a few
mentions into vectors, and importing scikit-learn for that would slow the start of every
``medlink link`` call. ``VocabularyTfidf.transform`` gives what ``TfidfVectorizer.transform`` gives
for the ``char`` and ``char_wb`` analyzers (tests compare the two on random strings); the ``word``
analyzer keeps scikit-learn's vectorizer. ``fit_word_bounded`` fits what scikit-learn fits for char_wb, word by word
(an index build's TF-IDF faster; tests compare the two).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from medlink.retrieval.csr_files import CsrArrays

if TYPE_CHECKING:
    import scipy.sparse as sp

ANALYZERS = ("char", "char_wb")  # what VocabularyTfidf reproduces
WORDS_KEPT = 200_000  # words whose n-gram columns a char_wb model remembers (a long run's memory stays bounded)
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
    counts.eliminate_zeros()
    weighed = weigh_arrays(CsrArrays(counts.data, counts.indices, counts.indptr, counts.shape), idf, sublinear)
    counts.data, counts.indices, counts.indptr = weighed.data, weighed.indices, weighed.indptr
    return counts


def weigh_arrays(counts: CsrArrays, idf: np.ndarray, sublinear: bool) -> CsrArrays:
    """``weigh`` on a matrix's arrays (the counts' data weighed in place; entries weighing 0 dropped)."""
    data = counts.data
    if sublinear:
        np.log(data, out=data)
        data += 1
    data *= idf[counts.indices]
    indices, indptr = counts.indices, counts.indptr
    if not data.all():  # what scipy's eliminate_zeros does
        kept = data != 0
        rows = np.repeat(np.arange(counts.shape[0]), np.diff(indptr))
        indptr = np.concatenate(([0], np.cumsum(np.bincount(rows[kept], minlength=counts.shape[0])))).astype(indptr.dtype)
        data, indices = data[kept], indices[kept]
    lengths = np.diff(indptr)
    rows = np.repeat(np.arange(counts.shape[0]), lengths)
    norms = np.sqrt(np.bincount(rows, weights=data.astype(np.float64) ** 2, minlength=counts.shape[0]))
    data /= np.repeat(np.where(norms > 0, norms, 1.0), lengths).astype(data.dtype)
    return CsrArrays(data, indices, indptr, counts.shape)


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
        self._word_columns: dict[str, list[int]] = {}  # char_wb: a word's known n-grams' columns, each word analysed once

    def _columns(self, text: str) -> list[int]:
        """The columns of ``text``'s known n-grams, one per occurrence: for char_wb, its words' (an n-gram never crosses a
        word), each word's read from memory after its first time."""
        lookup = self.vocabulary_.get
        if not self.word_bounded:
            return [c for c in map(lookup, char_ngrams(text, self.low, self.high, False)) if c is not None]
        columns: list[int] = []
        for word in text.split():
            known = self._word_columns.get(word)
            if known is None:
                if len(self._word_columns) >= WORDS_KEPT:
                    self._word_columns.clear()
                known = self._word_columns[word] = [c for c in map(lookup, char_ngrams(word, self.low, self.high, True)) if c is not None]
            columns.extend(known)
        return columns

    def forget_words(self) -> None:
        """Forget the words analysed so far: a benchmark of distinct mentions pays for each word again."""
        self._word_columns.clear()

    def transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        return self.transform_arrays(texts).sparse()

    def transform_arrays(self, texts: Iterable[str]) -> CsrArrays:
        """``transform``'s matrix as its arrays, made without scipy: a short call's search needs no scipy import."""
        rows: list[int] = []
        columns: list[int] = []
        n = 0
        for n, text in enumerate(texts, 1):
            found = self._columns(text)
            columns.extend(found)
            rows.extend([n - 1] * len(found))
        width = len(self.idf_)
        entries, counts = np.unique(np.asarray(rows, np.int64) * width + np.asarray(columns, np.int64), return_counts=True)
        indptr = np.searchsorted(entries, np.arange(n + 1, dtype=np.int64) * width).astype(np.int32)  # as scipy's CSR: summed, sorted
        counts = CsrArrays(counts.astype(np.float32), (entries % width).astype(np.int32), indptr, (n, width))
        return weigh_arrays(counts, self.idf_, self.sublinear_tf)


def fit_word_bounded(
    texts: Sequence[str], ngram_range: Sequence[int], sublinear_tf: bool, min_df: int
) -> tuple[VocabularyTfidf, sp.csr_matrix] | None:
    """What scikit-learn's ``TfidfVectorizer(analyzer="char_wb", lowercase=False).fit_transform`` gives (vocabulary in its
    sorted order, smoothed idf, L2-normalised rows), faster on KB names: a char_wb n-gram never crosses a
    word, so each distinct word is analysed once and a name's counts are its words' counts summed, a sparse product
    (names x words) @ (words x n-grams). None when no n-gram is kept (scikit-learn then raises its own error)."""
    low, high = (int(n) for n in ngram_range)
    word_ids: dict[str, int] = {}
    name_rows, name_words = array("q"), array("q")  # 8 bytes an entry, not a Python int's ~36
    for row, text in enumerate(texts):
        for word in _RUNS_OF_SPACE.sub(" ", text).split():
            name_rows.append(row)
            name_words.append(word_ids.setdefault(word, len(word_ids)))
    gram_ids: dict[str, int] = {}
    word_rows, word_grams = array("q"), array("q")
    for word, row in word_ids.items():
        for gram in char_ngrams(word, low, high, True):
            word_rows.append(row)
            word_grams.append(gram_ids.setdefault(gram, len(gram_ids)))
    if not gram_ids:
        return None
    import scipy.sparse as sp  # build time only

    names_by_words = sp.csr_matrix(
        (np.ones(len(name_rows), np.float32), (np.frombuffer(name_rows, np.int64), np.frombuffer(name_words, np.int64))),
        shape=(len(texts), len(word_ids)),
    )
    words_by_grams = sp.csr_matrix(
        (np.ones(len(word_rows), np.float32), (np.frombuffer(word_rows, np.int64), np.frombuffer(word_grams, np.int64))),
        shape=(len(word_ids), len(gram_ids)),
    )
    counts = (names_by_words @ words_by_grams).tocsr()  # duplicates summed by both constructors: term counts
    del names_by_words, words_by_grams
    document_frequency = np.bincount(counts.indices, minlength=len(gram_ids))
    terms = sorted((gram for gram, column in gram_ids.items() if document_frequency[column] >= min_df))
    if not terms:
        return None
    order = np.asarray([gram_ids[gram] for gram in terms], dtype=np.int64)
    if len(order) == len(gram_ids):  # min_df 1: every n-gram kept, columns renumbered in place (no copy of the matrix)
        position = np.empty(len(order), dtype=counts.indices.dtype)
        position[order] = np.arange(len(order), dtype=counts.indices.dtype)
        np.take(position, counts.indices, out=counts.indices, mode="clip")  # element by element: safe in place, unbuffered
        counts.has_sorted_indices = False
    else:
        counts = counts[:, order].tocsr()
    counts.sort_indices()
    idf = np.log((1 + len(texts)) / (1 + document_frequency[order])) + 1  # scikit-learn's smooth_idf
    vectorizer = VocabularyTfidf({gram: i for i, gram in enumerate(terms)}, idf, "char_wb", (low, high), sublinear_tf)
    if sublinear_tf:  # weighed in place, as scikit-learn's TfidfTransformer does (``weigh`` makes temporaries the size of the matrix)
        np.log(counts.data, out=counts.data)
        counts.data += 1
    for start in range(0, counts.nnz, 1 << 22):  # in slices: no temporary the size of the matrix
        counts.data[start : start + (1 << 22)] *= vectorizer.idf_[counts.indices[start : start + (1 << 22)]]
    from sklearn.preprocessing import normalize  # build time only

    return vectorizer, normalize(counts, copy=False)

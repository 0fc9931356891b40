"""Word-level BM25 over names (``bm25s``), on the same normalised text as every other generator.

Tokens are the normalised name split on spaces: single characters are kept ("type 1", "b
cell"), unlike bm25s's default token pattern. With ``stem`` (default), tokens are reduced by the
Snowball English stemmer (PyStemmer), so "lymphomas" meets "lymphoma". Query words absent
from the vocabulary are dropped. With ``spelling``, a query word that no name has is first read as
the most frequent name word one edit away (``medlink.text.spelling``): stemming alone conflates
"migrane" with "migrans" (both "migran") and sends it to Erythema migrans, not Migraine. A word
whose stem the names have is left to stemming when the stemmer took a suffix off it ("aching":
"ach", as "ache"; not "acting") and corrected only when it took a final "e" or nothing ("migrane")
and the word one edit away is more frequent than the names' words of that stem together.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from medlink.errors import SHAPE_ERRORS, reading
from medlink.params import BM25_PARAMS, defaults, read_params
from medlink.retrieval.base import GeneratorBase
from medlink.retrieval.compiled import best, bm25s_without_numba, compiled_word_hits, wanted
from medlink.retrieval.csr_files import CsrArrays
from medlink.retrieval.hits import Hits
from medlink.retrieval.names import NameTable, NameWords, read_json
from medlink.retrieval.sparse_sums import sums_for
from medlink.text.spelling import SpellingIndex, query_speller

if TYPE_CHECKING:
    import bm25s

DEFAULTS = defaults(BM25_PARAMS)
CORRECTIONS_KEPT = 200_000  # spelling corrections remembered, by query word
NONOCCURRENCE_METHODS = ("bm25l", "bm25+")  # bm25s's variants whose scores reach names without the word


@dataclass
class SavedScores:
    """What searching needs of a saved ``bm25s`` index (its vocabulary and word -> name scores), read from bm25s's files
    without importing bm25s: that import, with tqdm's and its utilities', was a tenth of a warm ``medlink link``."""

    vocab_dict: dict[str, int]
    scores: dict = field(repr=False)
    nonoccurrence_array: None = None

    @classmethod
    def read(cls, directory: Path) -> SavedScores | None:
        """The saved index in ``directory``; None for a variant bm25s must load itself (BM25L, BM25+)."""
        params = read_json(directory / "params.index.json")
        if params.get("method") in NONOCCURRENCE_METHODS:
            return None
        scores = {part: np.load(directory / f"{part}.csc.index.npy", allow_pickle=False) for part in ("data", "indices", "indptr")}
        return cls(read_json(directory / "vocab.index.json"), {**scores, "num_docs": params["num_docs"]})


def _tokenizer(stem: bool):
    """normalised text -> tokens; one shared function for names and mentions."""
    if not stem:
        return str.split
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    return lambda text: stemmer.stemWords(text.split())


class BM25Generator(GeneratorBase):
    """BM25 scores of a mention's words against each name's words."""

    def __init__(self, table: NameTable, concept_ids: Sequence[str], retriever: bm25s.BM25 | SavedScores, params: dict, name: str):
        super().__init__(table, concept_ids, name)
        self.retriever = retriever
        self.params = params
        self.vocabulary: dict[str, int] = retriever.vocab_dict
        self.tokens = _tokenizer(params.get("stem", False))
        self._speller: SpellingIndex | None = None  # built from the names' words on the first query that needs it
        self.name_words = NameWords(table.keys)  # a loaded index's saved ones (``load``)
        self._stem_frequencies: dict[str, int] = {}  # stem -> how often the names' words of that stem occur
        self._corrections: dict[str, str] = {}

    @classmethod
    def build(cls, table: NameTable, concept_ids: Sequence[str], name: str = "bm25", **params) -> BM25Generator:
        params = read_params(f"bm25 generator {name!r}", params, BM25_PARAMS)
        bm25s = bm25s_without_numba()
        retriever = bm25s.BM25(k1=params["k1"], b=params["b"], method=params["method"])
        vocabulary: dict[str, int] = {}
        tokens = _tokenizer(params["stem"])
        ids = [[vocabulary.setdefault(token, len(vocabulary)) for token in tokens(key)] for key in table.keys]
        retriever.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocabulary), show_progress=False)
        return cls(table, concept_ids, retriever, params, name)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.retriever.save(directory, show_progress=False)
        (directory / "medlink_params.json").write_text(json.dumps(self.params))
        if self.params.get("spelling"):
            self.name_words.save(directory)

    @classmethod
    def load(cls, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> BM25Generator:
        with reading(directory, SHAPE_ERRORS):  # bm25s's JSON and arrays, read by key
            retriever = SavedScores.read(directory) or bm25s_without_numba().BM25.load(directory, show_progress=False)
        params = read_json(directory / "medlink_params.json")
        loaded = cls(table, concept_ids, retriever, params, name)
        loaded.name_words = NameWords.in_directory(table.keys, directory)
        return loaded

    @property
    def speller(self) -> SpellingIndex:
        """The spelling index over the names' words, built when a query first has a word no name has."""
        if self._speller is None:
            speller = query_speller(self.name_words.counts)
            words, stems = list(speller.frequencies), {}
            for word, stem in zip(words, self.tokens(" ".join(words))):
                stems[stem] = stems.get(stem, 0) + speller.frequencies[word]
            self._speller, self._stem_frequencies = speller, stems
        return self._speller

    def prepare(self) -> None:
        """Gather now what a query with an unknown word would (``speller``): a long run's first batch does not pay for it."""
        if self.params.get("spelling"):
            _ = self.speller

    def corrected(self, mention: str) -> str:
        """``mention`` with each word no name has replaced by its spelling correction (where there is one)."""
        words = mention.split()
        for position, word in enumerate(words):
            if word not in self._corrections:
                if len(self._corrections) >= CORRECTIONS_KEPT:  # a long run's memory stays bounded
                    self._corrections.clear()
                self._corrections[word] = self._correction(word)
            words[position] = self._corrections[word]
        return " ".join(words)

    def forget_words(self) -> None:
        """Forget the words corrected so far: a benchmark of distinct mentions pays for each word's correction again."""
        self._corrections.clear()

    def reading(self, mention: str) -> str | None:
        """What this stage searched instead of ``mention`` (its words corrected), or None: what an explanation shows."""
        if not self.params.get("spelling"):
            return None
        read = self.corrected(mention)
        return read if read != mention else None

    def _correction(self, word: str) -> str:
        if word in self.name_words.counts:
            return word  # what the speller would say of a word the names have, without building it
        fixed = self.speller.correct(word)
        if not fixed or fixed == word:
            return word
        [stem] = self.tokens(word) or [word]
        if stem in self.vocabulary and (
            word[len(stem) :] not in ("", "e") or self.speller.frequencies[fixed] <= self._stem_frequencies.get(stem, 0)
        ):
            return word  # an inflection of words the names have ("aching"), or as likely as the misspelling
        return fixed

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        """Each mention's ``2 k`` best names by BM25 (the names sharing a word with it), concept by concept.

        The whole batch is scored by one sparse product of its word counts with the index's word -> name scores (what
        ``bm25s`` sums one query at a time); a variant whose scores reach names without the word (BM25L, BM25+) is
        scored one query at a time by ``bm25s`` itself."""
        vocabulary = self.vocabulary
        spelling = self.params.get("spelling")
        ids = [[vocabulary[t] for t in self.tokens(self.corrected(m) if spelling else m) if t in vocabulary] for m in mentions]
        fetch = min(2 * k, len(self.table))
        if wanted(len(mentions)) and self.retriever.nonoccurrence_array is None:
            return compiled_word_hits(ids, self.words_by_name, self.table, len(self.concept_ids), fetch, k, stage)
        scores = self.batch_scores(ids) if self.retriever.nonoccurrence_array is None else None
        query_parts, row_parts, score_parts = [], [], []
        for i, words in enumerate(ids):
            if not words:
                continue
            if scores is None:
                row = self.retriever.get_scores(words)
                top = np.flatnonzero(row > 0)
                values = row[top]
            else:
                start, end = scores.indptr[i], scores.indptr[i + 1]
                top, values = scores.indices[start:end], scores.data[start:end]
                positive = values > 0
                top, values = top[positive], values[positive]
            top, values = best(top, values, fetch)
            query_parts.append(np.full(len(top), i))
            row_parts.append(top)
            score_parts.append(values)
        if not query_parts:
            return Hits.empty(len(mentions))
        return self._concept_hits(
            np.concatenate(query_parts), np.concatenate(row_parts), np.concatenate(score_parts).astype(np.float32), stage, len(mentions), k
        )

    @cached_property
    def words_by_name(self) -> CsrArrays:
        """The index's word -> name scores as a matrix's arrays."""
        index = self.retriever.scores
        return CsrArrays(index["data"], index["indices"], index["indptr"], (len(index["indptr"]) - 1, int(index["num_docs"])))

    @cached_property
    def words_by_name_sparse(self):
        """``words_by_name`` as scipy's matrix (made on the first call that takes scipy's products)."""
        return self.words_by_name.sparse()

    def batch_scores(self, ids: Sequence[Sequence[int]]):
        """Mentions x names BM25 scores (CSR): each mention's word ids, counted as often as they occur, times the index's
        word -> name score matrix (``sparse_sums``: scipy's product, or numpy alone for a short call)."""
        counts = np.fromiter((len(words) for words in ids), np.int64, len(ids))
        indptr = np.concatenate(([0], np.cumsum(counts)))
        columns = np.fromiter((w for words in ids for w in words), np.int64, int(counts.sum()))
        queries = CsrArrays(np.ones(len(columns), np.float32), columns, indptr, (len(ids), self.words_by_name.shape[0]))
        sums = sums_for(len(ids))
        return sums.partials(queries, self.words_by_name_sparse if sums.sparse else self.words_by_name)

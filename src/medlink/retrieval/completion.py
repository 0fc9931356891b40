"""Completion: the names that hold every word of the mention, ranked by how expected their other words are.

Why: people name a condition by its head word ("diabetes", "lupus") where a terminology always adds more ("Diabetes
mellitus", "Lupus erythematosus"). No name spells the mention, so character n-grams and BM25 prefer the shortest name
around it ("Type I diabetes", "Latent diabetes") and the probabilities rightly doubt it. What the KB itself says is
which words come with the mention's: of the 747 default-KB names with "diabetes", 96% also say "mellitus", 0.5%
"latent". So a name is scored by P(its other word stems | the mention's stems), each extra stem's share of the names
that hold all of the mention's (a product over the extra stems): the most expected completion comes first, and a
name with exactly the mention's stems scores 1, and so does one that adds only a generic head ("disease", "disorder",
"syndrome": "celiac" is *Celiac disease*, though the KB's many *Injury of celiac artery* codes make "artery" the more
frequent companion). Stems and function words as the ``words`` stage reads them
(``medlink.retrieval.exact.word_key``). A mention with a word no name spells gets nothing: stems conflate a misspelling
with another word ("migrane" and "migrans" are both "migran"), which BM25's spelling correction reads better.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np

from medlink.errors import DamagedFileError
from medlink.params import COMPLETION_PARAMS, read_params
from medlink.retrieval.base import GeneratorBase
from medlink.retrieval.exact import FUNCTION_WORDS, word_key, word_stemmer
from medlink.retrieval.hits import Hits, runs
from medlink.retrieval.names import NameTable, read_json, read_lines, write_lines

PARAMS_FILE = "medlink_params.json"
STEMS_FILE = "stems.txt"  # the stems, in column order
WORDS_FILE = "words.txt"  # every word the names spell (a mention with another word is not completed)
GENERIC_HEADS = ("disease", "disorder", "syndrome")  # what an eponym or a head word leaves unsaid: they cost nothing
MATRIX_FILE = "stems_by_name.npz"  # each name's stem columns (CSR: indptr, indices): rebuilt from 150k names at every load it cost 1 s


class CompletionGenerator(GeneratorBase):
    """Names holding all of a mention's word stems, scored by P(their other stems | the mention's)."""

    def __init__(self, table: NameTable, concept_ids: Sequence[str], name: str = "completion",
                 stems: list[str] | None = None, indptr: np.ndarray | None = None, indices: np.ndarray | None = None,
                 function_words: frozenset[str] | None = None, words: list[str] | None = None):
        super().__init__(table, concept_ids, name)
        self.function_words = FUNCTION_WORDS if function_words is None else function_words
        self.stem = word_stemmer()
        if stems is None or indptr is None or indices is None:
            stems, indptr, indices = stem_matrix([word_key(key, self.stem, self.function_words) for key in table.keys])
        self.stems = stems
        self.words = frozenset(words if words is not None else (word for key in table.keys for word in key.split()))
        self.column = {stem: i for i, stem in enumerate(stems)}
        self.generic = [self.column[stem] for stem in self.stem(list(GENERIC_HEADS)) if stem in self.column]
        self.indptr, self.indices = indptr, indices  # name -> its stem columns
        self.lengths = np.diff(indptr)
        order = np.argsort(indices, kind="stable")  # the transpose: stem -> the names holding it
        self.names_of = np.repeat(np.arange(len(indptr) - 1, dtype=np.int32), np.diff(indptr))[order]
        self.names_indptr = np.zeros(len(stems) + 1, np.int64)
        np.cumsum(np.bincount(indices, minlength=len(stems)), out=self.names_indptr[1:])

    @classmethod
    def build(cls, table: NameTable, concept_ids: Sequence[str], name: str = "completion", **params) -> "CompletionGenerator":
        read_params(f"completion generator {name!r}", params, COMPLETION_PARAMS)
        return cls(table, concept_ids, name)

    @classmethod
    def load(cls, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> "CompletionGenerator":
        function_words = saved_function_words(directory)
        stems = read_lines(directory / STEMS_FILE)
        try:
            with np.load(directory / MATRIX_FILE) as data:
                indptr, indices = data["indptr"], data["indices"]
        except Exception as error:  # a cut or overwritten zip fails in zipfile's own ways
            raise DamagedFileError(directory / MATRIX_FILE, error) from error
        if (indptr.ndim != 1 or len(indptr) != len(table.keys) + 1 or indptr[0] != 0 or indptr[-1] != len(indices)
                or np.any(np.diff(indptr) < 0) or (len(indices) and not 0 <= int(indices.min()) <= int(indices.max()) < len(stems))):
            raise DamagedFileError(directory / MATRIX_FILE, ValueError(f"does not fit {len(table.keys)} names and {len(stems)} stems"))
        return cls(table, concept_ids, name, stems, indptr, indices, function_words, read_lines(directory / WORDS_FILE))

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / PARAMS_FILE).write_text(json.dumps({"function_words": sorted(self.function_words)}), encoding="utf-8")
        write_lines(directory / STEMS_FILE, self.stems)
        write_lines(directory / WORDS_FILE, sorted(self.words))
        np.savez(directory / MATRIX_FILE, indptr=self.indptr, indices=self.indices)

    def completions(self, mention: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` most expected names (table rows) holding every stem of the normalised ``mention``, and their
        P(other stems | mention's stems)."""
        if not all(word in self.words for word in mention.split() if word not in self.function_words):
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        columns = [self.column.get(stem) for stem in word_key(mention, self.stem, self.function_words).split()]
        if not columns or None in columns:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        postings = sorted((self.names_of[self.names_indptr[c]:self.names_indptr[c + 1]] for c in columns), key=len)
        rows = postings[0]
        for other in postings[1:]:  # each posting is sorted: look the fewer rows up in the longer list
            at = np.minimum(np.searchsorted(other, rows), len(other) - 1)
            rows = rows[other[at] == rows]
        if not len(rows):
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        counts = self.lengths[rows]
        stems = self.indices[runs(self.indptr[rows], counts)]
        share = np.bincount(stems, minlength=len(self.stems)).astype(np.float64) / len(rows)  # of the names holding the mention's stems
        share[columns] = 1.0
        share[self.generic] = 1.0
        log_p = np.log(share[stems])
        scores = np.add.reduceat(log_p, np.cumsum(counts) - counts)  # every row holds the mention's stems: none is empty
        top = np.argpartition(-scores, k)[:k] if len(scores) > k else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return rows[top].astype(np.int64), np.exp(scores[top]).astype(np.float32)

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        found = [self.completions(mention, k) for mention in mentions]
        query = np.repeat(np.arange(len(mentions), dtype=np.int64), [len(rows) for rows, _ in found])
        key = np.concatenate([rows for rows, _ in found]) if found else np.zeros(0, np.int64)
        score = np.concatenate([scores for _, scores in found]) if found else np.zeros(0, np.float32)
        return self._concept_hits(query, key, score, stage, len(mentions), k)


def stem_matrix(word_keys: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The distinct stems of ``word_keys`` (one per name, space-separated stems) and each name's stem columns (CSR)."""
    split = [key.split() for key in word_keys]
    counts = np.fromiter((len(stems) for stems in split), np.int64, len(split))
    vocabulary, indices = np.unique(np.array([stem for stems in split for stem in stems], dtype=object), return_inverse=True)
    indptr = np.zeros(len(split) + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    return [str(stem) for stem in vocabulary], indptr, indices.astype(np.int32)


def saved_function_words(directory: Path) -> frozenset[str]:
    path = directory / PARAMS_FILE
    settings = read_json(path)
    words = settings.get("function_words") if isinstance(settings, dict) else None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise DamagedFileError(path, ValueError("expected {\"function_words\": a list of words}"))
    return frozenset(words)


def is_current(directory: Path) -> bool:
    """Were this generator's files all written, its stems with today's function words? (Not: a default index is rebuilt.)"""
    try:
        return saved_function_words(directory) == FUNCTION_WORDS and all((directory / f).is_file() for f in (STEMS_FILE, MATRIX_FILE, WORDS_FILE))
    except (DamagedFileError, OSError):
        return False

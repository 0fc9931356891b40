"""Completion: the names that hold every word of the mention, ranked by how expected their other words are.

Why: people name a condition by its head word ("diabetes", "lupus") where a terminology always adds more ("Diabetes
mellitus", "Lupus erythematosus"). No name spells the mention, so character n-grams and BM25 prefer the shortest name
around it ("Type I diabetes", "Latent diabetes") and the probabilities rightly doubt it. What the KB itself says is
which words come with the mention's: nearly every default-KB name with "diabetes" also says "mellitus", almost none
"latent". So a name is scored by P(its other word stems | the mention's stems), each extra stem's share of the names
that hold all of the mention's (a product over the extra stems): the most expected completion comes first. A name
that adds only a generic head ("disease", "disorder", "syndrome") scores 1: "celiac" is *Celiac disease*, though the
KB's many *Injury of celiac artery* codes make "artery" the more frequent companion. A mention whose stems a name has
exactly is left to the ``words`` stage: completion is for what no name spells (in running text, where most spans are
names, that spares most of them). Stems and function words as the ``words`` stage reads them
(``medlink.retrieval.exact.word_key``). A mention with a word no name spells gets nothing: stems conflate a misspelling
with another word ("migrane" and "migrans" are both "migran"), which BM25's spelling correction reads better.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from medlink.errors import DamagedFileError
from medlink.params import COMPLETION_PARAMS, read_params
from medlink.retrieval.base import GeneratorBase
from medlink.retrieval.exact import FUNCTION_WORDS, word_key, word_stemmer
from medlink.retrieval.hits import Hits, runs
from medlink.retrieval.names import NameTable, read_json, read_lines, write_lines
from medlink.text.normalize import GENERIC_HEADS  # they cost nothing

PARAMS_FILE = "medlink_params.json"
STEMS_FILE = "stems.txt"  # the stems, in column order
WORDS_FILE = "words.txt"  # every word the names spell (a mention with another word is not completed)
MATRIX_FILE = "stems_by_name.npz"  # ARRAYS, saved: making them again from the default KB's names would slow every load


class CompletionGenerator(GeneratorBase):
    """Names holding all of a mention's word stems, scored by P(their other stems | the mention's)."""

    def __init__(
        self,
        table: NameTable,
        concept_ids: Sequence[str],
        name: str = "completion",
        stems: list[str] | None = None,
        arrays: dict[str, np.ndarray] | None = None,
        function_words: frozenset[str] | None = None,
        words: list[str] | None = None,
    ):
        """``stems`` and ``arrays`` (``stem_arrays``') as saved, or None: made from the table's names."""
        super().__init__(table, concept_ids, name)
        self.function_words = FUNCTION_WORDS if function_words is None else function_words
        self.stem = word_stemmer()
        if stems is None or arrays is None:
            stems, arrays = stem_arrays([word_key(key, self.stem, self.function_words) for key in table.keys])
        self.stems, self.arrays = stems, arrays
        self.words = frozenset(words if words is not None else (word for key in table.keys for word in key.split()))
        self.column = {stem: i for i, stem in enumerate(stems)}
        self.generic = [self.column[stem] for stem in self.stem(list(GENERIC_HEADS)) if stem in self.column]
        self.indptr, self.indices = arrays["indptr"], arrays["indices"]  # name -> its stem columns
        self.names_indptr, self.names_of = arrays["names_indptr"], arrays["names_of"]  # stem -> the names holding it, in order
        self.lengths = np.diff(self.indptr)
        self.codes = stem_codes(len(stems))
        self.stem_sets = frozenset(arrays["set_codes"][self.lengths > 0].tolist())

    @classmethod
    def build(cls, table: NameTable, concept_ids: Sequence[str], name: str = "completion", **params) -> CompletionGenerator:
        read_params(f"completion generator {name!r}", params, COMPLETION_PARAMS)
        return cls(table, concept_ids, name)

    @classmethod
    def load(cls, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> CompletionGenerator:
        settings, function_words = saved_settings(directory)
        stems, words = read_lines(directory / STEMS_FILE), read_lines(directory / WORDS_FILE)
        for file, lines in ((STEMS_FILE, stems), (WORDS_FILE, words)):  # emptied, cut or reordered lines would pass silently
            recorded = settings.get(f"{file}_sha256")
            if recorded != lines_digest(lines):
                reason = (
                    "its lines are not the ones the index was built with"
                    if recorded
                    else "written by a medlink that recorded no digest of it"
                )
                raise DamagedFileError(directory / file, ValueError(reason))
        try:
            with np.load(directory / MATRIX_FILE) as data:
                arrays = {key: data[key] for key in ARRAYS}
        except Exception as error:  # a cut or overwritten zip fails in zipfile's own ways
            raise DamagedFileError(directory / MATRIX_FILE, error) from error
        if not arrays_fit(arrays, len(table.keys), len(stems)):
            raise DamagedFileError(directory / MATRIX_FILE, ValueError(f"does not fit {len(table.keys)} names and {len(stems)} stems"))
        return cls(table, concept_ids, name, stems, arrays, function_words, words)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        words = sorted(self.words)
        digests = {f"{STEMS_FILE}_sha256": lines_digest(self.stems), f"{WORDS_FILE}_sha256": lines_digest(words)}
        (directory / PARAMS_FILE).write_text(json.dumps({"function_words": sorted(self.function_words), **digests}), encoding="utf-8")
        write_lines(directory / STEMS_FILE, self.stems)
        write_lines(directory / WORDS_FILE, words)
        np.savez(directory / MATRIX_FILE, **self.arrays)

    def completions(self, mention: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` most expected names (table rows) holding every stem of the normalised ``mention``, and their
        P(other stems | mention's stems)."""
        if not all(word in self.words for word in mention.split() if word not in self.function_words):
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        columns = [self.column.get(stem) for stem in word_key(mention, self.stem, self.function_words).split()]
        if not columns or None in columns or int(self.codes[columns].sum()) in self.stem_sets:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        postings = sorted((self.names_of[self.names_indptr[c] : self.names_indptr[c + 1]] for c in columns), key=len)
        rows = postings[0]
        for other in postings[1:]:  # each posting is sorted: look the fewer rows up in the longer list
            at = np.minimum(np.searchsorted(other, rows), len(other) - 1)
            rows = rows[other[at] == rows]
        if not len(rows):
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        counts = self.lengths[rows]
        their_stems = self.indices[runs(self.indptr[rows], counts)]
        share = np.bincount(their_stems, minlength=len(self.stems)).astype(np.float64) / len(
            rows
        )  # of the names holding the mention's stems
        share[columns] = 1.0
        share[self.generic] = 1.0
        log_p = np.log(share[their_stems])
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


ARRAYS = ("indptr", "indices", "names_indptr", "names_of", "set_codes")  # what MATRIX_FILE holds


def lines_digest(lines: Sequence[str]) -> str:
    """sha256 of a saved list of lines, kept beside them: a file of other lines is refused, not read as another vocabulary."""
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def stem_codes(n: int) -> np.ndarray:
    """A random 64-bit code per stem (seeded: the saved set codes are sums of them): a stem set's code is their sum."""
    return np.random.default_rng(0).integers(1, 2**63, n, dtype=np.int64)


def stem_arrays(word_keys: Sequence[str]) -> tuple[list[str], dict[str, np.ndarray]]:
    """The distinct stems of ``word_keys`` (one per name, space-separated stems), each name's stem columns (CSR:
    indptr, indices), the transpose (names_indptr, names_of: each stem's names in order) and each name's set code."""
    split = [key.split() for key in word_keys]
    counts = np.fromiter((len(stems) for stems in split), np.int64, len(split))
    vocabulary, indices = np.unique(np.array([stem for stems in split for stem in stems], dtype=object), return_inverse=True)
    indices = indices.astype(np.int32)
    indptr = np.zeros(len(split) + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    names_of = np.repeat(np.arange(len(split), dtype=np.int32), counts)[np.argsort(indices, kind="stable")]
    names_indptr = np.zeros(len(vocabulary) + 1, np.int64)
    np.cumsum(np.bincount(indices, minlength=len(vocabulary)), out=names_indptr[1:])
    codes = stem_codes(len(vocabulary))[indices]
    # a name without stems (function words only) gets 0; reduceat reads a start at the very end as out of range
    set_codes = (
        np.add.reduceat(codes, np.minimum(indptr[:-1], len(codes) - 1)) * (counts > 0) if len(indices) else np.zeros(len(split), np.int64)
    )
    return [str(stem) for stem in vocabulary], {
        "indptr": indptr,
        "indices": indices,
        "names_indptr": names_indptr,
        "names_of": names_of,
        "set_codes": set_codes.astype(np.int64),
    }


def arrays_fit(arrays: dict[str, np.ndarray], names: int, stems: int) -> bool:
    """Do saved arrays describe ``names`` names over ``stems`` stems (not cut, edited or another index's)?"""
    indptr, indices, names_indptr, names_of = (arrays[key] for key in ARRAYS[:4])
    if (
        any(a.ndim != 1 for a in arrays.values())
        or len(indptr) != names + 1
        or len(names_indptr) != stems + 1
        or len(arrays["set_codes"]) != names
    ):
        return False
    sizes_fit = indptr[0] == 0 == names_indptr[0] and indptr[-1] == len(indices) == len(names_of) == names_indptr[-1]
    ordered = not (np.any(np.diff(indptr) < 0) or np.any(np.diff(names_indptr) < 0))
    in_range = not len(indices) or (
        0 <= int(indices.min()) <= int(indices.max()) < stems and 0 <= int(names_of.min()) <= int(names_of.max()) < names
    )
    return bool(sizes_fit and ordered and in_range)


def saved_settings(directory: Path) -> tuple[dict, frozenset[str]]:
    """The saved settings and the function words the stems were made without (a damaged settings file is named)."""
    path = directory / PARAMS_FILE
    settings = read_json(path)
    words = settings.get("function_words") if isinstance(settings, dict) else None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise DamagedFileError(path, ValueError('expected {"function_words": a list of words}'))
    return settings, frozenset(words)


def is_current(directory: Path) -> bool:
    """Were this generator's files all written, in today's form, its stems with today's function words? (Not: a default
    index is rebuilt.)"""
    try:
        settings, function_words = saved_settings(directory)
        if function_words != FUNCTION_WORDS or not all(
            (directory / f).is_file() and f"{f}_sha256" in settings for f in (STEMS_FILE, WORDS_FILE)
        ):
            return False
        with np.load(directory / MATRIX_FILE) as data:  # reads the zip's directory only
            return set(ARRAYS) <= set(data.files)
    except Exception:  # missing, damaged (zipfile's own errors) or unreadable: rebuild
        return False

"""Exact match on the normalised name: score 1 for every concept the mention's key names.

With ``words``, the match is on the set of word stems instead, function words left out ("fracture of hip", "hip
fractures" and "Fracture of hip NOS" all read {fractur, hip}): terminologies phrase a concept one way ("Fracture of
hip", "Heart failure") and people another ("hip fracture", "heart failures"); a character n-gram or BM25 score sees a
near miss there, and may rank a different concept spelt closer ("Hip contractures") above it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from medlink.errors import DamagedFileError
from medlink.params import EXACT_PARAMS, read_params
from medlink.retrieval.base import GeneratorBase
from medlink.retrieval.hits import Hits
from medlink.retrieval.names import NameTable, read_json, read_lines, write_lines

PARAMS_FILE = "medlink_params.json"
WORD_KEYS_FILE = "word_keys.txt"  # each table row's word key, in row order: stemming 150k names again at every load costs 0.8 s
# words that change neither what a name means nor how it is ordered; "NOS" (not otherwise specified) and "unspecified" are
# ICD's "unqualified": "kidney failure" is ICD-10-CM's "Unspecified kidney failure"
FUNCTION_WORDS = frozenset({"a", "an", "the", "of", "in", "on", "at", "nos", "unspecified"})
EARLIER_FUNCTION_WORDS = frozenset({"a", "an", "the", "of", "in", "on", "at", "nos"})  # an index whose params file names none


def word_stemmer() -> Callable[[list[str]], list[str]]:
    import Stemmer

    return Stemmer.Stemmer("english").stemWords


def word_key(key: str, stem: Callable[[list[str]], list[str]], function_words: frozenset[str] | None = None) -> str:
    """The sorted distinct stems of a normalised name's words, function words (default: ``FUNCTION_WORDS``) left out
    ("" when none is left)."""
    leave_out = FUNCTION_WORDS if function_words is None else function_words
    return " ".join(sorted(set(stem([w for w in key.split() if w not in leave_out]))))


def saved_settings(directory: Path) -> tuple[bool, frozenset[str]]:
    """The words setting and function words of the exact generator saved at ``directory`` (no params file: an index
    from before the words form, whole names; no function words: an index from before they were saved)."""
    path = directory / PARAMS_FILE
    settings = read_json(path) if path.is_file() else {}
    if not isinstance(settings, dict) or not isinstance(settings.get("words", False), bool):
        raise DamagedFileError(path, ValueError("expected {\"words\": true or false}"))
    function_words = settings.get("function_words", sorted(EARLIER_FUNCTION_WORDS))
    if not isinstance(function_words, list) or not all(isinstance(w, str) for w in function_words):
        raise DamagedFileError(path, ValueError("expected \"function_words\": a list of words"))
    return settings.get("words", False), frozenset(function_words)


def word_keys_are_current(directory: Path) -> bool:
    """Were the word keys of the exact generator saved at ``directory`` made with today's function words? (Not, or no
    words form: a default index is rebuilt, so it links as this version does.)"""
    try:
        words, function_words = saved_settings(directory)
    except DamagedFileError:
        return False
    return not words or function_words == FUNCTION_WORDS


class ExactGenerator(GeneratorBase):
    """Dictionary lookup of normalised mentions (or their word sets) among the table's keys."""

    def __init__(self, table: NameTable, concept_ids: Sequence[str], name: str = "exact", words: bool = False,
                 word_keys: list[str] | None = None, function_words: frozenset[str] | None = None):
        super().__init__(table, concept_ids, name)
        self.words = words
        self.function_words = FUNCTION_WORDS if function_words is None else function_words  # an index keeps those its keys were made with
        if words:
            self.stem = word_stemmer()
            self.word_keys = word_keys if word_keys is not None else [word_key(key, self.stem, self.function_words) for key in table.keys]
            rows: dict[str, list[int]] = defaultdict(list)
            for row, key in enumerate(self.word_keys):
                rows[key].append(row)
            rows.pop("", None)
            self.rows_of = dict(rows)
        else:
            self.row_of = {key: row for row, key in enumerate(table.keys)}

    @classmethod
    def build(cls, table: NameTable, concept_ids: Sequence[str], name: str = "exact", **params) -> "ExactGenerator":
        settings = read_params(f"exact generator {name!r}", params, EXACT_PARAMS)
        return cls(table, concept_ids, name, settings["words"])

    @classmethod
    def load(cls, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> "ExactGenerator":
        words, function_words = saved_settings(directory)
        word_keys = None
        if words and (directory / WORD_KEYS_FILE).is_file():  # none: computed again
            word_keys = read_lines(directory / WORD_KEYS_FILE) or [""] * (len(table.keys) == 1)
            if len(word_keys) != len(table.keys):
                raise DamagedFileError(directory / WORD_KEYS_FILE, ValueError(f"{len(word_keys)} word keys for {len(table.keys)} names"))
        return cls(table, concept_ids, name, words, word_keys, function_words)

    def save(self, directory: Path) -> None:
        """Its setting and, in the words form, each name's word key (the names come from the shared name table)."""
        directory.mkdir(parents=True, exist_ok=True)
        (directory / PARAMS_FILE).write_text(json.dumps({"words": self.words, "function_words": sorted(self.function_words)}), encoding="utf-8")
        if self.words:
            write_lines(directory / WORD_KEYS_FILE, self.word_keys)

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        if self.words:
            found = [(i, row) for i, m in enumerate(mentions) for row in self.rows_of.get(word_key(m, self.stem, self.function_words), ())]
        else:
            found = [(i, self.row_of[m]) for i, m in enumerate(mentions) if m in self.row_of]
        query = np.array([i for i, _ in found], dtype=np.int64)
        key = np.array([row for _, row in found], dtype=np.int64)
        return self._concept_hits(query, key, np.ones(len(found), np.float32), stage, len(mentions), k)

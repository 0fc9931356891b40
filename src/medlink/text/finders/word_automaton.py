"""An Aho-Corasick automaton over words rather than letters (pyahocorasick underneath), and its compact saved form.

Each distinct word gets an integer id, written as three characters of a 256-letter alphabet
(U+0100..U+01FF), so a name of n words is a key of 3n characters: the trie needs three nodes per
distinct word prefix instead of one per letter prefix, and pyahocorasick, which scans a node's
children in turn, never meets a node with more than 256 of them. A match is kept only when it
starts on a word (a multiple of three), so it begins and ends on word boundaries.

A key's value packs its word count (8 bits) with flags the caller chooses (``EXACT``,
``LOOSE``, ``SHORT_FORM``; the entity types of its names from ``TYPE_SHIFT`` on): one automaton serves the exact and the loose word forms of the same
names. Saved, it is the vocabulary (words.tsv) and the keys as bytes with their values (keys.npz):
rebuilding from these is faster than pyahocorasick's own load, and a damaged file cannot crash
the process (it is checked before the automaton is touched).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import ahocorasick
import numpy as np

from medlink.errors import READ_ERRORS, DamagedFileError, MedlinkError

_BASE = 0x100
_WIDTH = 3
_CAPACITY = 256**_WIDTH  # distinct words
LENGTH_BITS = 8
MAX_WORDS = (1 << LENGTH_BITS) - 1
EXACT, LOOSE, SHORT_FORM, CAPITALISED = 1 << 8, 1 << 9, 1 << 10, 1 << 11  # CAPITALISED: only where text capitalises its first letter
# a key only the "Y X" reading of a name "X of Y" gives, exact or loose: found only where nothing but spaces parts its words
TURNED_EXACT, TURNED_LOOSE = 1 << 12, 1 << 13
DERIVED = 1 << 14  # a word no name spells, derived from one (``text.derived_names``): found exactly, read as that name
TYPE_SHIFT = 16  # the bits from here on: the entity types of the names a key stands for (``add``'s ``types``)
_TO_CODE = {byte: _BASE + byte for byte in range(256)}  # str.translate table: a latin-1 byte -> its code character


def _code_of(word_id: int) -> str:
    return "".join(chr(_BASE + (word_id >> (8 * position)) % 256) for position in range(_WIDTH))


class WordAutomaton:
    """Word sequences with flags; ``spans`` finds them among a text's words."""

    def __init__(self, words: Sequence[str] = (), frequencies: Sequence[int] = ()):
        self.words = list(words)
        self.ids = {word: position + 1 for position, word in enumerate(self.words)}  # 0: a word no key has
        self.frequencies = dict(zip(self.words, frequencies)) if frequencies else {}  # names per word, for spelling
        self._codes = [_code_of(i) for i in range(len(self.words) + 1)]
        self._values: dict[str, int] = {}
        self.automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)

    def __len__(self) -> int:
        return len(self._values)

    def _id(self, word: str) -> int:
        found = self.ids.get(word)
        if found is None:
            if len(self.words) + 1 >= _CAPACITY:
                raise MedlinkError(f"dictionary finder: more than {_CAPACITY - 1:,} distinct words in the KB's names")
            self.words.append(word)
            found = self.ids[word] = len(self.words)
            self._codes.append(_code_of(found))
        return found

    def add(self, words: Sequence[str], flags: int, types: int = 0) -> None:
        """Add a name (its words) with ``flags`` and ``types`` (a mask of entity type bits); adding one again merges both."""
        if not 0 < len(words) <= MAX_WORDS:
            raise ValueError(f"a key has 1 to {MAX_WORDS} words")
        ids, codes = self.ids, self._codes
        code = "".join([codes[ids.get(word) or self._id(word)] for word in words])  # a known word without a call
        self._values[code] = self._values.get(code, 0) | flags | len(words) | types << TYPE_SHIFT

    @staticmethod
    def types_of(value: int) -> int:
        """The mask of entity type bits a key's value holds (``add``'s ``types``)."""
        return value >> TYPE_SHIFT

    def finish(self) -> WordAutomaton:
        """Build the automaton (after the last ``add``)."""
        for code, value in self._values.items():
            self.automaton.add_word(code, value)
        self.automaton.make_automaton()
        return self

    def spans(self, words: Sequence[str], flag: int) -> Iterable[tuple[int, int, int]]:
        """(first word, last word + 1, value) of every key carrying ``flag`` among ``words``."""
        if not words or not self._values:
            return
        codes, ids = self._codes, self.ids
        text = "".join(codes[ids.get(word, 0)] for word in words)
        for end, value in self.automaton.iter(text):
            if value & flag:
                start = end + 1 - _WIDTH * (value & MAX_WORDS)
                if start % _WIDTH == 0:
                    yield start // _WIDTH, start // _WIDTH + (value & MAX_WORDS), value

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        rows = (f"{word}\t{self.frequencies.get(word, 0)}" for word in self.words)
        (directory / "words.tsv").write_text("\n".join(rows), encoding="utf-8")
        keys = "".join(self._values).encode("utf-16-le")[::2]  # each code character's low byte (its high byte is 1)
        np.savez(
            directory / "keys.npz", keys=np.frombuffer(keys, dtype=np.uint8), values=np.fromiter(self._values.values(), dtype=np.int64)
        )

    @classmethod
    def load(cls, directory: Path) -> WordAutomaton:
        """A saved automaton, checked (every key's length against its value, every word id against the vocabulary)."""
        try:
            text = (directory / "words.tsv").read_text(encoding="utf-8")
            rows = [line.split("\t") for line in text.split("\n")] if text else []
            loaded = cls([word for word, _count in rows], [int(count) for _word, count in rows])
        except (*READ_ERRORS, KeyError) as error:
            raise DamagedFileError(directory / "words.tsv", error) from error
        path = directory / "keys.npz"
        try:
            with np.load(path, allow_pickle=False) as arrays:
                keys, values = arrays["keys"], arrays["values"]
            lengths = (values & MAX_WORDS).astype(np.int64) * _WIDTH
            if keys.dtype != np.uint8 or values.ndim != 1 or int(lengths.sum()) != len(keys) or (lengths == 0).any():
                raise ValueError("keys and their word counts disagree")
            if len(keys) and int(_word_ids(keys).max()) > len(loaded.words):
                raise ValueError("a key uses a word the vocabulary does not have")
        except (*READ_ERRORS, KeyError) as error:
            raise DamagedFileError(path, error) from error
        codes = keys.tobytes().decode("latin-1").translate(_TO_CODE)
        at = 0
        for length, value in zip(lengths.tolist(), values.tolist()):
            loaded._values[codes[at : at + length]] = value
            at += length
        return loaded.finish()


def _word_ids(keys: np.ndarray) -> np.ndarray:
    """The word id each group of three key bytes codes (low byte first)."""
    triples = keys.reshape(-1, _WIDTH).astype(np.int64)
    return triples[:, 0] | (triples[:, 1] << 8) | (triples[:, 2] << 16)

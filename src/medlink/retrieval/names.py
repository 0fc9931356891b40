"""The alias table a generator searches: unique normalised names, each pointing at its concepts.

Names come from the KB, from a mention memory (annotated training mentions with their concept
ids), or both. Keys are unique normalised strings, so "Heart attack" and "heart-attack" are one
row; a key may name several concepts. Searching happens over keys; ``concepts_of`` turns a key
hit into concept hits (aggregated later by max). Each (key, concept) pair counts how often it
was seen (KB names + training mentions): when a key names several concepts ("pain" in a
social-media memory), the most frequently meant concept ranks first (a pair only an acronym in
capitals gives, "COMA", half a count behind a worded name's, "Coma"); when that is equal too
(one KB name shared by two concepts), the concept with more names in the table does: a cheap
prior that broad, often-named concepts are the likelier meaning (it helped the tuned TF-IDF on
NCBI dev). Origins are kept per key so evidence can say whether a KB name or a
training mention matched.
"""

from __future__ import annotations

import json
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from medlink.errors import DamagedFileError, reading
from medlink.retrieval.lines import Lines
from medlink.text.normalize import Normalizer

NAME_TABLES = 2  # how the tables count a (key, concept) pair (2: an acronym's half a count behind): a default index of another is rebuilt
KB_ORIGIN = 1  # bit flags in NameTable.origins
MEMORY_ORIGIN = 2


@dataclass
class NameTable:
    """Unique normalised names (keys) -> concept indices, with one display text per key."""

    keys: Sequence[str]  # a list, or a loaded index's ``Lines``
    display: Sequence[str]
    indptr: np.ndarray  # key i names concepts concept_index[indptr[i]:indptr[i+1]]
    concept_index: np.ndarray
    counts: np.ndarray  # int32, parallel to concept_index: twice the (key, concept) pair's occurrences, less 1 if only capitals
    origins: np.ndarray  # uint8 bit flags per key: KB_ORIGIN | MEMORY_ORIGIN

    @classmethod
    def build(cls, entries: Iterable[tuple[str, str, int]], concept_position: dict[str, int], normalize: Normalizer) -> NameTable:
        """From (text, concept id, origin) triples; every id must be in ``concept_position``.

        Memory stays near the size of the keys themselves (a UMLS-sized KB has millions): pairs
        go into flat integer arrays and are counted with numpy, not into a container per key.
        """
        position: dict[str, int] = {}
        display: list[str] = []
        origins, capitals = array("B"), array("B")
        rows, concepts = array("q"), array("q")
        for text, concept_id, origin in entries:
            key = normalize(text)
            if not key:
                continue
            row = position.get(key)
            if row is None:
                row = position[key] = len(display)
                display.append(text)
                origins.append(0)
            origins[row] |= origin
            rows.append(row)
            concepts.append(concept_position[concept_id])
            capitals.append(text.isupper())
        n_concepts = max(len(concept_position), 1)
        codes, inverse, counts = np.unique(
            np.frombuffer(rows, dtype=np.int64) * n_concepts + np.frombuffer(concepts, dtype=np.int64),
            return_inverse=True,
            return_counts=True,
        )
        # a pair only a name in capitals gives ("COMA", an acronym of Cogan's oculomotor apraxia) counts a half less than
        # one a worded name gives ("Coma"): where the counts tie, the word's concept is the likelier meaning
        worded = np.bincount(inverse, weights=1 - np.frombuffer(capitals, dtype=np.uint8), minlength=len(codes)) > 0
        counts = 2 * counts - ~worded
        indptr = np.zeros(len(display) + 1, dtype=np.int64)
        np.cumsum(np.bincount(codes // n_concepts, minlength=len(display)), out=indptr[1:])
        concept_index = (codes % n_concepts).astype(np.int32)
        return cls(list(position), display, indptr, concept_index, counts.astype(np.int32), np.frombuffer(origins, dtype=np.uint8).copy())

    def __len__(self) -> int:
        return len(self.keys)

    @cached_property
    def priors(self) -> np.ndarray:
        """Tie-break value per (key, concept): its count, then (as a fraction below 1) how many names the concept has."""
        names_per_concept = np.bincount(self.concept_index) if len(self.concept_index) else np.zeros(1, np.int64)
        return self.counts + names_per_concept[self.concept_index] / (names_per_concept.max() + 1.0)

    def concepts_of(self, row: int) -> np.ndarray:
        return self.concept_index[self.indptr[row] : self.indptr[row + 1]]

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        write_lines(directory / "keys.txt", self.keys)
        write_lines(directory / "display.txt", self.display)
        np.savez(directory / "table.npz", indptr=self.indptr, concept_index=self.concept_index, counts=self.counts, origins=self.origins)

    @classmethod
    def load(cls, directory: Path, n_concepts: int | None = None) -> NameTable:
        """A saved table; every file is checked against the others (and ``n_concepts``), so damage is named here, not at link time."""
        with reading(directory / "table.npz", (KeyError,)):  # an array missing from the archive
            with np.load(directory / "table.npz") as arrays:
                indptr, concept_index, counts, origins = (np.asarray(arrays[k]) for k in ("indptr", "concept_index", "counts", "origins"))
        keys, display = (Lines.read(directory / name) for name in ("keys.txt", "display.txt"))
        consistent = (
            len(keys) == len(display) == len(origins) == len(indptr) - 1
            and len(concept_index) == len(counts)
            and indptr[0] == 0
            and indptr[-1] == len(concept_index)
            and np.all(np.diff(indptr) >= 0)
            and (n_concepts is None or not len(concept_index) or 0 <= concept_index.min() <= concept_index.max() < n_concepts)
        )
        if not consistent:
            raise DamagedFileError(directory, ValueError("keys.txt, display.txt and table.npz do not describe the same names"))
        return cls(keys, display, indptr, concept_index, counts, origins)


def write_lines(path: Path, lines: list[str]) -> None:
    """One string per line; line breaks inside a string are flattened to spaces (names never need them)."""
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write("\n".join(s.replace("\n", " ").replace("\r", " ") for s in lines))


def read_lines(path: Path) -> list[str]:
    """What ``write_lines`` wrote (a missing or undecodable file is a DamagedFileError naming it)."""
    with reading(path):
        text = path.read_text(encoding="utf-8")
    return text.split("\n") if text else []


def read_json(path: Path):
    """A JSON file medlink wrote (damage named as for ``read_lines``)."""
    with reading(path):
        return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, payload) -> None:
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")


SPELLING_WORDS = "spelling_words.json"  # a spelling stage's names' words and their counts, saved with the index


class NameWords:
    """The names' words and how often each occurs (normalised, unstemmed, in order of first occurrence): what a spelling
    correction reads a misspelt word as. Saved with a stage that corrects spelling (``SPELLING_WORDS``), so a query
    reads them, not gathers them from every name again; an index saved before has none and gathers them."""

    def __init__(self, keys: Sequence[str], saved: Path | None = None):
        self.keys = keys
        self.saved = saved
        self._counts: dict[str, int] | None = None

    @classmethod
    def in_directory(cls, keys: Sequence[str], directory: Path) -> NameWords:
        """The words a stage saved in ``directory`` (gathered from ``keys`` if it saved none)."""
        path = directory / SPELLING_WORDS
        return cls(keys, path if path.is_file() else None)

    @property
    def counts(self) -> dict[str, int]:
        if self._counts is None:
            self._counts = read_json(self.saved) if self.saved is not None else self.gathered()
        return self._counts

    def gathered(self) -> dict[str, int]:
        """The counts read off the names themselves."""
        return dict(Counter(word for key in self.keys for word in key.split()))

    def save(self, directory: Path) -> None:
        (directory / SPELLING_WORDS).write_text(json.dumps(self.counts, ensure_ascii=False), encoding="utf-8")

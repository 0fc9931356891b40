"""The words that tell apart concepts whose names otherwise read alike: numbers, roman numerals, single letters, sides.

Why: a character n-gram similarity scores "Hepatitis B" against "Hepatitis C" at 0.94, "Vitamin B12 deficiency"
against "Vitamin D deficiency" at 0.96, "Type 1 diabetes mellitus" against "Diabetes mellitus type 2" near 1, and
"Left knee pain" against "Right knee pain" as high: the one word that differs is a few n-grams among many. A
terminology uses exactly these words to split one concept into several (ICD-10-CM's laterality, vitamin and hepatitis
letters, diabetes types), so two names whose sets of them differ do not name the same concept however alike they
spell. Without a trained aligner, ``medlink align`` ranks such a candidate below those that agree and halves its
confidence (``MISMATCH_FACTOR``); a trained aligner's calibration and cross-encoder read the names themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6", "vii": "7", "viii": "8", "ix": "9", "x": "10"}
SIDES = frozenset({"left", "right", "bilateral", "unilateral"})
NOT_LETTERS = frozenset({"a", "s", "t"})  # an article, and what normalisation leaves of "Crohn's" and "can't"
MISMATCH_FACTOR = 0.5  # a lexical confidence's share kept when the identifying words differ: under any usual threshold


def identifying_words(key: str) -> frozenset[str]:
    """The identifying words of a normalised name: a word with a digit, a roman numeral (read as its number, so "type
    II" meets "type 2"), a single letter, or a side."""
    found = set()
    for word in key.split():
        if word in ROMAN:
            found.add(ROMAN[word])
        elif word in SIDES or any(ch.isdigit() for ch in word) or (len(word) == 1 and word.isalpha() and word not in NOT_LETTERS):
            found.add(word)
    return frozenset(found)


class IdentifierSets:
    """Each concept's distinct sets of identifying words over its names, numbered so pairs compare as small int sets."""

    def __init__(self) -> None:
        self._numbers: dict[frozenset[str], int] = {}

    def sets(self, names_per_concept: Iterable[Iterable[str]]) -> list[frozenset[int]]:
        """Per concept, the numbers of its names' identifying-word sets (normalised names in)."""
        number = self._numbers.setdefault
        return [frozenset(number(identifying_words(key), len(self._numbers)) for key in names) for names in names_per_concept]


def mismatched(source_sets: Sequence[frozenset[int]], target_sets: Sequence[frozenset[int]], sources: np.ndarray,
               targets: np.ndarray) -> np.ndarray:
    """For each (source, target) pair of positions: does no source name carry the same identifying words as some
    target name? (A concept with no names counts as agreeing.)"""
    out = np.zeros(len(sources), bool)
    for i, (s, t) in enumerate(zip(sources.tolist(), targets.tolist())):
        mine, theirs = source_sets[s], target_sets[t]
        out[i] = bool(mine) and bool(theirs) and mine.isdisjoint(theirs)
    return out

"""The words that tell apart concepts whose names otherwise read alike: numbers, roman numerals, single letters, sides.

Why: a character n-gram similarity scores "Hepatitis B" against "Hepatitis C" at 0.94, "Vitamin B12 deficiency"
against "Vitamin D deficiency" at 0.96, "Type 1 diabetes mellitus" against "Diabetes mellitus type 2" near 1, and
"Left knee pain" against "Right knee pain" as high: the one word that differs is a few n-grams among many. A
terminology uses exactly these words to split one concept into several (ICD-10-CM's laterality, vitamin and hepatitis
letters, diabetes types), so a target whose names carry such a word that none of the source's names has ("Right knee
pain" for "Knee pain", "Hepatitis C" for "Hepatitis B") is not the source's concept however alike they spell. The other
way round is allowed: a target terminology's broader category need not repeat the source's identifying words ("Other
deletions of part of a chromosome" for "chromosome 13q14 deletion syndrome" is how DO maps to ICD-10-CM). Without a
trained aligner, ``medlink align`` halves such a candidate's fused score (so it ranks below an agreeing one that matches
about as well, not below every weak one) and its confidence (``MISMATCH_FACTOR``).

One name of the target without such a word is enough to agree ("T2DM" for "Type 2 diabetes mellitus"): counting every
name's words together, as one concept, took DO -> MEDIC dev R@1 from 0.945 to 0.849 (MeSH concepts list numbered OMIM
names as synonyms), so a near miss with such a synonym still needs a trained aligner to be told apart. A trained aligner
decides from its own evidence: given this one as well, its calibration chose no better on DO -> ICD-10-CM dev over three
training seeds (docs/benchmark-history.md, session 19).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6", "vii": "7", "viii": "8", "ix": "9", "x": "10"}
SIDES = frozenset({"left", "right", "bilateral", "unilateral"})
SHORT = 3  # letters and digits mixed up to this length identify ("b12"); longer ones are symbols
MARKER = 4  # a word up to this length before "positive" / "negative" names what is positive ("her2 negative", "rh negative":
# what the normaliser reads "HER2-" and "Rh-" as), so "Rh-" is not "HER2-" because both are negative
NOT_LETTERS = frozenset({"a", "s", "t"})  # an article, and what normalisation leaves of "Crohn's" and "can't"
MISMATCH_FACTOR = 0.5  # a lexical confidence's share kept when the identifying words differ: under any usual threshold
_CODE = re.compile(r"[a-z]\d\d[a-z0-9]*$")  # an ICD-style code: two in a row are a block's range ("Diabetes mellitus (E08-E13)")


def identifying_words(key: str) -> frozenset[str]:
    """The identifying words of a normalised name: a number, a short word with a digit ("b12", "2a"; not a gene or
    locus symbol such as "atpaf2" or "13q14", which a broader name leaves out), a roman numeral (read as its number, so
    "type II" meets "type 2"), a single letter, a side, or a marker's short name before its sign ("her2 negative")."""
    found = set()
    words = key.split()
    codes = {i for i in range(len(words) - 1) if _CODE.match(words[i]) and _CODE.match(words[i + 1])}  # "e08 e13": a code range
    for i, word in enumerate(words):
        if i in codes or i - 1 in codes:
            continue
        if word in ROMAN:
            found.add(ROMAN[word])
        elif (
            word in SIDES
            or word.isdigit()
            or (len(word) <= SHORT and any(ch.isdigit() for ch in word))
            or (len(word) == 1 and word.isalpha() and word not in NOT_LETTERS)
            or (len(word) <= MARKER and words[i + 1 : i + 2] in (["positive"], ["negative"]))
        ):
            found.add(word)
    return frozenset(found)


def identifying_sets(names_per_concept: Iterable[Iterable[str]]) -> list[set[frozenset[str]]]:
    """Per concept, the distinct sets of identifying words of its (normalised) names."""
    return [{identifying_words(key) for key in names} for names in names_per_concept]


def mismatched(
    source_sets: Sequence[set[frozenset[str]]], target_sets: Sequence[set[frozenset[str]]], sources: np.ndarray, targets: np.ndarray
) -> np.ndarray:
    """For each (source, target) pair of positions: does every target name carry an identifying word that no single
    source name has all of? (A concept with no names counts as agreeing.)"""
    out = np.zeros(len(sources), bool)
    for i, (s, t) in enumerate(zip(sources.tolist(), targets.tolist())):
        mine, theirs = source_sets[s], target_sets[t]
        out[i] = bool(mine) and bool(theirs) and not any(words <= own for words in theirs for own in mine)
    return out

"""Correcting a misspelt word to a vocabulary word one edit away (a deletion index, as SymSpell does).

Why: a dictionary matcher misses "diabetis mellitus" and "alzheimers" although the KB names are
one keystroke away. Indexing each vocabulary word's one-character deletions finds every word one
insertion, deletion, substitution or adjacent swap away with a handful of dictionary lookups, so
correcting costs nothing like comparing against the whole vocabulary. Only words of
``min_length`` characters or more are corrected: short words are one edit from too many others; and a common English
word is left as it is, though a name's word is one edit away ("month", not "mouth"); so is a word's first letter.
Over a very large vocabulary (a UMLS-size KB's words) the deletion index grows tenfold past the
words; ``deletions=False`` keeps the words only and looks up a misspelling's one-edit variants
instead (a few hundred lookups per corrected word, the same answers). ``deletions=None`` starts that way and builds
the deletions once the words corrected have cost as much as building them would (a long run of misspellings), unless
the vocabulary is too large for them. ``two_edits_from`` (the linking stages' speller: eight letters) reads a long word
with no vocabulary word one edit away as one two edits away ("diabeetus": "diabetes").
"""

from __future__ import annotations

from collections.abc import Iterable

from rapidfuzz.distance import OSA

from medlink.text.english import is_common_english

LOOKUPS_PER_WORD_INDEXED = 40  # one word corrected by its variants costs about as much as indexing this many words
DELETIONS_AT_MOST = 250_000  # vocabulary words: beyond, the adaptive index keeps to variants (memory)


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def one_edit_apart(a: str, b: str) -> bool:
    """True when ``b`` is ``a`` with one character inserted, deleted, substituted, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) < len(b):
        return a[i:] == b[i + 1 :]
    if a[i + 1 :] == b[i + 1 :]:
        return True
    return i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]


# the optimal string alignment distance (insertions, deletions, substitutions and swaps of neighbours), rapidfuzz's
edits_apart = OSA.distance


def _same_start(word: str, correction: str) -> bool:
    """Does the correction keep the word's first letter (or swap its first two)? A slip seldom falls on the first
    letter, and a word that differs there is most often another word ("drash" is no "crash", "nites" no "sites")."""
    return correction[0] == word[0] or correction[:2] == word[1::-1]


QUERY_WORDS_FROM = 4  # letters from which a query word is corrected (``query_speller``; the dictionary finder's rule asks more)
# a shorter word is corrected only by a letter it lacks, and only if it reads as a word (letters, a vowel, no plural "s"):
# "fevr" is "fever", but "men2" is no "men1", "PTCA" no "pica", "mets" no "meats", "sats" no "sacs"
SHORT_WORD_UNDER = 5
TWO_EDITS_FROM = 8  # letters from which a query word with no word one edit away is read as one two edits away
TWO_EDIT_ANSWERS_KEPT = 100_000  # words whose two-edit neighbours are remembered (a long run's memory stays bounded)
VOWELS = frozenset("aeiouy")


class SpellingIndex:
    """Vocabulary words (with their frequencies) and the one-character deletions of the long ones."""

    def __init__(
        self,
        frequencies: dict[str, int],
        min_length: int = 5,
        max_length: int = 30,
        deletions: bool | None = True,
        two_edits_from: int | None = None,
    ):
        self.frequencies = frequencies
        self.min_length = min_length
        self.max_length = max_length
        self.two_edits_from = two_edits_from
        self._two_edit_answers: dict[str, list[str]] = {}  # a word's two-edit neighbours: the exact stages ask each call
        self._by_deletion: dict[str, list[str]] | None = None
        self._adaptive = deletions is None and len(frequencies) <= DELETIONS_AT_MOST
        self._corrected_by_variants = 0
        self._alphabet = "".join(sorted({c for word in frequencies for c in word}))
        if deletions:
            self._index_deletions()

    def _index_deletions(self) -> None:
        by_deletion: dict[str, list[str]] = {}
        for word in self.frequencies:
            if self.min_length - 1 <= len(word) <= self.max_length:
                for deleted in _deletions(word):
                    by_deletion.setdefault(deleted, []).append(word)
        self._by_deletion = by_deletion

    @classmethod
    def from_words(cls, words: Iterable[str], **options) -> SpellingIndex:
        frequencies: dict[str, int] = {}
        for word in words:
            frequencies[word] = frequencies.get(word, 0) + 1
        return cls(frequencies, **options)

    def __len__(self) -> int:
        return len(self._by_deletion) if self._by_deletion is not None else len(self.frequencies)

    def correct(self, word: str) -> str | None:
        """The most frequent vocabulary word one edit from ``word`` (``word`` itself if known); None if there is none,
        the word is too short or too long, a common English word (``medlink.text.english``), or two candidates are
        equally frequent (no guess between them)."""
        if word in self.frequencies:
            return word
        if not self.min_length <= len(word) <= self.max_length or is_common_english(word):
            return None  # "month" is no misspelt "mouth"
        short = len(word) < SHORT_WORD_UNDER
        if short and (not word.isalpha() or word.endswith("s") or not VOWELS & set(word)):
            return None
        if self._by_deletion is None and self._adaptive:
            self._corrected_by_variants += 1
            if self._corrected_by_variants * LOOKUPS_PER_WORD_INDEXED >= len(self.frequencies):
                self._index_deletions()
        if self._by_deletion is None:
            candidates = {c for c in self._edits(word) if c in self.frequencies}
        else:
            candidates = set(self._by_deletion.get(word, ()))  # word lacks a character
            for deleted in _deletions(word):
                if deleted in self.frequencies and len(deleted) >= self.min_length:
                    candidates.add(deleted)  # word has one too many
                candidates.update(self._by_deletion.get(deleted, ()))  # substitution or swap (or two edits: checked below)
        candidates = [c for c in candidates if len(c) >= self.min_length and one_edit_apart(word, c) and _same_start(word, c)]
        if short:
            candidates = [c for c in candidates if len(c) == len(word) + 1]
        if not candidates and self.two_edits_from is not None and len(word) >= self.two_edits_from:
            candidates = self._two_edits(word)
        if not candidates:
            return None
        ranked = sorted(candidates, key=lambda c: (-self.frequencies[c], c))
        if len(ranked) > 1 and self.frequencies[ranked[0]] == self.frequencies[ranked[1]]:
            return None
        return ranked[0]

    def _two_edits(self, word: str) -> list[str]:
        """Long vocabulary words two edits from ``word`` that keep its first letter ("diabeetus": "diabetes"): those a
        deletion or two of ``word`` meets, as a word or one of its deletions (a long word has few such neighbours).
        Two substitutions are not found; a vocabulary too large for the deletion index gets none."""
        if word in self._two_edit_answers:
            return self._two_edit_answers[word]
        if self._by_deletion is None:
            if not self._adaptive:
                return []
            self._index_deletions()
        assert self._by_deletion is not None
        once = _deletions(word)
        found: set[str] = set()
        for deleted in once | {twice for d in once for twice in _deletions(d)}:
            if deleted in self.frequencies:
                found.add(deleted)
            found.update(self._by_deletion.get(deleted, ()))
        floor = max(self.min_length, self.two_edits_from or 0) - 1
        if len(self._two_edit_answers) >= TWO_EDIT_ANSWERS_KEPT:
            self._two_edit_answers.clear()
        answer = self._two_edit_answers[word] = [c for c in found if len(c) >= floor and _same_start(word, c) and edits_apart(word, c) == 2]
        return answer

    def _edits(self, word: str) -> set[str]:
        """Every string one insertion, deletion, substitution (over the vocabulary's characters) or swap from ``word``."""
        splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
        edits = {left + right[1:] for left, right in splits if right}
        edits.update(left + right[1] + right[0] + right[2:] for left, right in splits if len(right) > 1)
        for c in self._alphabet:
            edits.update(left + c + right[1:] for left, right in splits if right)
            edits.update(left + c + right for left, right in splits)
        return edits


def query_speller(frequencies: dict[str, int]) -> SpellingIndex:
    """The spelling index a linking stage corrects a mention's words with: from four letters ("fevr" is "fever"), two
    edits away from eight ("diabeetus" is "diabetes"), its deletions indexed once it has corrected enough words to pay
    for them."""
    return SpellingIndex(frequencies, min_length=QUERY_WORDS_FROM, deletions=None, two_edits_from=TWO_EDITS_FROM)

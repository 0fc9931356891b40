"""The dictionary finder: every run of words in a text that is a KB name, found with one Aho-Corasick pass.

Names and text are compared as sequences of normalised words (``medlink.text.tokens``). Each
distinct word gets an integer id, written as three characters of a 256-letter alphabet, so the
automaton (pyahocorasick) walks words rather than letters: a 5M-name KB needs three nodes per
distinct word prefix, not one per character prefix, and a match can only start and end on word
boundaries (a match starting off a multiple of three straddles two words and is dropped).

Rules a plain string matcher gets wrong, and what this one does:

- **Short forms are case-sensitive.** A name of at most ``short_form_max`` characters that the KB
  only writes in capitals ("MI", "ALL", "T2DM") matches only text with no lower-case letter: "an MI"
  matches, "mi" and "all" do not.
- **Too short, or only stop words.** Names under ``min_length`` characters, and names made only of
  English stop words ("All", "Was", "Other"), are left out unless they are capitalised short forms;
  ``stop_names`` leaves out more.
- **Approximate matches** (``approximate``): a second automaton over loose word forms finds
  inflection and spelling variants: plurals reduced (Harman's S-stemmer: "tumors" -> "tumor",
  "deficiencies" -> "deficiency"), a possessive "'s" ignored ("Alzheimer's disease" meets
  "Alzheimer disease"), and an unknown word of five letters or more corrected to the vocabulary
  word one edit away ("diabetis" -> "diabetes") where at least as many words of the span are spelt
  right (alone, "found" would become "wound"). Such spans say so (``infons["match"] = "approximate"``).
- **Overlaps**: ``longest`` keeps the longest of overlapping spans (exact before approximate at
  equal length); ``all`` keeps every span as an alternative.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import ahocorasick

from medlink.core import Annotation, Document
from medlink.errors import DamagedFileError, MedlinkError
from medlink.text.finders.base import OVERLAP_POLICIES, resolve_overlaps
from medlink.text.normalize import Normalizer
from medlink.text.spelling import SpellingIndex
from medlink.text.tokens import Token, tokenize

SIGNATURE = "medlink-dictionary-finder"
FORMAT = 2  # 2: three-character word codes
_BASE = 0x100  # a word id is written as _WIDTH characters from [_BASE, _BASE + _RADIX): no ASCII, no surrogates
_RADIX = 256  # few children per trie node: pyahocorasick scans a node's children in turn, so a wide alphabet is slow
_WIDTH = 3  # 256 ** 3 = 16.7M distinct words
_LENGTH_BITS = 8  # an automaton value: word count | short-form flag << 8
_SHORT_FORM = 1 << _LENGTH_BITS
MAX_WORDS = (1 << _LENGTH_BITS) - 1
CORRECTIONS_KEPT = 200_000  # remembered spelling corrections (a long run's memory stays bounded)
POSSESSIVE = "s"  # what "'s" leaves after normalisation: ignored by approximate matching


@dataclass(frozen=True)
class DictionaryOptions:
    """How names are matched (see the module docstring)."""

    min_length: int = 3
    short_form_max: int = 6
    stop_words: bool = True
    stop_names: tuple[str, ...] = ()
    approximate: bool = True
    overlap: str = "longest"

    def __post_init__(self) -> None:
        if self.overlap not in OVERLAP_POLICIES:
            raise MedlinkError(f"dictionary finder: unknown overlap policy {self.overlap!r}; known: {', '.join(OVERLAP_POLICIES)}")
        if self.min_length < 1 or self.short_form_max < 0:
            raise MedlinkError("dictionary finder: min_length must be >= 1 and short_form_max >= 0")


def loose_word(word: str) -> str:
    """Harman's S-stemmer: a plural reduced to its singular, nothing else touched."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


def _english_stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # build time only: linking does not import sklearn

    return frozenset(ENGLISH_STOP_WORDS)


class _Codes:
    """Word id -> its characters, computed once per id."""

    def __init__(self):
        self.cache: list[str] = []

    def __getitem__(self, word_id: int) -> str:
        while word_id >= len(self.cache):
            i = len(self.cache)
            self.cache.append("".join(chr(_BASE + (i >> (8 * position)) % _RADIX) for position in range(_WIDTH)))
        return self.cache[word_id]


_CODES = _Codes()


class _Vocabulary:
    """Word -> id (1-based; 0 is every word the KB does not have) and the two-character code of a word sequence."""

    def __init__(self, words: Sequence[str] = ()):
        self.words = list(words)
        self.ids = {word: position + 1 for position, word in enumerate(self.words)}

    def add(self, word: str) -> int:
        found = self.ids.get(word)
        if found is None:
            if len(self.words) + 1 >= _RADIX ** _WIDTH:
                raise MedlinkError(f"dictionary finder: more than {_RADIX ** _WIDTH - 1:,} distinct words in the KB's names")
            self.words.append(word)
            found = self.ids[word] = len(self.words)
        return found

    def code(self, word_ids: Iterable[int]) -> str:
        return "".join(map(_CODES.__getitem__, word_ids))

    def encode(self, words: Iterable[str]) -> str:
        return self.code(self.ids.get(word, 0) for word in words)


@dataclass
class _Matcher:
    """One automaton over word codes, and the vocabulary that codes its words."""

    vocabulary: _Vocabulary = field(default_factory=_Vocabulary)
    automaton: ahocorasick.Automaton = field(default_factory=lambda: ahocorasick.Automaton(ahocorasick.STORE_INTS))
    frequencies: dict[str, int] = field(default_factory=dict)  # names per word (exact matcher, saved for spelling)

    def add(self, words: Sequence[str], flags: int) -> None:
        code = self.vocabulary.code(self.vocabulary.add(word) for word in words)
        previous = self.automaton.get(code, 0)
        self.automaton.add_word(code, len(words) | flags | (previous & _SHORT_FORM))

    def spans(self, words: Sequence[str]) -> Iterable[tuple[int, int, bool]]:
        """(first word, last word + 1, is a short form) of every name among ``words``."""
        if not words or not len(self.automaton):
            return
        for end, value in self.automaton.iter(self.vocabulary.encode(words)):
            length = value & MAX_WORDS
            start = end + 1 - _WIDTH * length
            if start % _WIDTH == 0:
                yield start // _WIDTH, start // _WIDTH + length, bool(value & _SHORT_FORM)


class DictionaryFinder:
    """Finds KB names in text (``name = "dictionary"``); build it from names, or load it from an index folder."""

    name = "dictionary"

    def __init__(self, normalize: Normalizer, options: DictionaryOptions, exact: _Matcher, loose: _Matcher | None,
                 spelling: SpellingIndex | None, names: int):
        self.normalize = normalize
        self.options = options
        self.exact = exact
        self.loose = loose
        self.spelling = spelling
        self.names = names
        self.excluded: frozenset[str] = frozenset()  # normalised names not to report (``exclusions.rarely_annotated``)
        self._corrections: dict[str, str | None] = {}  # words repeat from document to document: correct each once

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def build(cls, names: Iterable[str], normalize: Normalizer, options: DictionaryOptions | None = None) -> "DictionaryFinder":
        """From the KB's names as written (their case decides which are short forms)."""
        options = options or DictionaryOptions()
        stop = (_english_stop_words() if options.stop_words else frozenset()) | {normalize(n) for n in options.stop_names}
        short_forms: dict[str, bool] = {}
        for name in names:
            key = normalize(name)
            if key and len(key.split()) <= MAX_WORDS:
                written_in_capitals = len(key) <= options.short_form_max and name.upper() == name and name.lower() != name
                short_forms[key] = short_forms.get(key, True) and written_in_capitals
        exact = _Matcher()
        loose = _Matcher() if options.approximate else None
        kept = 0
        frequencies: dict[str, int] = {}
        for key, short_form in short_forms.items():
            words = key.split()
            if not short_form and (len(key) < options.min_length or all(w in stop for w in words) or key in stop):
                continue
            if short_form and len(key) < 2:
                continue
            kept += 1
            exact.add(words, _SHORT_FORM if short_form else 0)
            for word in words:
                frequencies[word] = frequencies.get(word, 0) + 1
            if loose is not None and not short_form:
                loose_words = [loose_word(w) for w in words if w != POSSESSIVE]
                if loose_words:
                    loose.add(loose_words, 0)
        for matcher in (exact, loose):
            if matcher is not None:
                matcher.automaton.make_automaton()
        spelling = SpellingIndex(frequencies) if options.approximate else None
        return cls(normalize, options, exact, loose, spelling, kept)

    # -- finding ------------------------------------------------------------------------------
    def find(self, document: Document) -> list[Annotation]:
        text = document.text
        tokens = tokenize(text, self.normalize)
        spans = []
        for first, last, short_form in self.exact.spans([t.norm for t in tokens]):
            start, end = tokens[first].start, tokens[last - 1].end
            if short_form and any(c.islower() for c in text[start:end]):
                continue
            spans.append(Annotation(start, end, text[start:end], source=self.name))
        if self.loose is not None:
            spans.extend(self._approximate(text, tokens))
        if self.excluded:
            spans = [span for span in spans if self.normalize(span.text) not in self.excluded]
        return resolve_overlaps(spans, self.options.overlap)

    def _approximate(self, text: str, tokens: list[Token]) -> Iterable[Annotation]:
        """Spans of loose word forms; a span with a spelling-corrected word needs as many words spelt right as
        corrected ("diabetis mellitus" yes; "found" -> "wound" or "structure" -> "stricture" alone, no)."""
        kept = [i for i, t in enumerate(tokens) if t.norm != POSSESSIVE]
        corrected = [self._corrected(tokens[i].norm) for i in kept]
        words = [loose_word(word or tokens[i].norm) for word, i in zip(corrected, kept)]
        for first, last, _short in self.loose.spans(words):
            fixes = sum(corrected[j] is not None for j in range(first, last))
            if 2 * fixes > last - first:
                continue
            start, end = tokens[kept[first]].start, tokens[kept[last - 1]].end
            yield Annotation(start, end, text[start:end], source=self.name, infons={"match": "approximate"})

    def _corrected(self, word: str) -> str | None:
        """The vocabulary word a misspelt ``word`` stands for; None for a known word or one with no correction."""
        if word in self.exact.vocabulary.ids:
            return None
        if word not in self._corrections:
            if len(self._corrections) > CORRECTIONS_KEPT:
                self._corrections.clear()
            known = loose_word(word) in self.loose.vocabulary.ids  # the plural of a known word
            self._corrections[word] = None if known else self.spelling.correct(word)
        return self._corrections[word]

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        """Into ``directory`` (created): the automata, their vocabularies, and a description with checksums."""
        directory.mkdir(parents=True, exist_ok=True)
        files = {}
        for label, matcher in (("exact", self.exact), ("loose", self.loose)):
            if matcher is None:
                continue
            counts = self.spelling.frequencies if self.spelling is not None and label == "exact" else {}
            rows = (f"{word}\t{counts.get(word, 0)}" for word in matcher.vocabulary.words)
            (directory / f"{label}.words").write_text("\n".join(rows), encoding="utf-8")
            matcher.automaton.save(str(directory / f"{label}.automaton"))
            files[f"{label}.automaton"] = _sha256(directory / f"{label}.automaton")
        description = {"signature": SIGNATURE, "format": FORMAT, "options": asdict(self.options), "names": self.names,
                       "normalizer": self.normalize.signature, "checksums": files}
        (directory / "dictionary.json").write_text(json.dumps(description, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> "DictionaryFinder":
        """A saved finder; an automaton whose checksum changed is refused (a damaged one could crash the reader)."""
        described = directory / "dictionary.json"
        try:
            description = json.loads(described.read_text(encoding="utf-8"))
            if description.get("signature") != SIGNATURE or description.get("format") != FORMAT:
                raise ValueError(f"not a medlink dictionary finder of format {FORMAT}")
            options = DictionaryOptions(**{**description["options"], "stop_names": tuple(description["options"]["stop_names"])})
            normalize = Normalizer.from_signature(description["normalizer"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise DamagedFileError(described, error) from error
        matchers = {label: _load_matcher(directory, label, description["checksums"]) for label in ("exact", "loose")
                    if f"{label}.automaton" in description["checksums"]}
        if "exact" not in matchers:
            raise DamagedFileError(described, ValueError("no exact automaton listed"))
        loose = matchers.get("loose")
        spelling = SpellingIndex(matchers["exact"].frequencies) if loose is not None else None
        return cls(normalize, options, matchers["exact"], loose, spelling, int(description.get("names", 0)))


def is_current(directory: Path) -> bool:
    """Is there a finder of this version in ``directory``? (An index whose finder is older gets rebuilt.)"""
    try:
        description = json.loads((directory / "dictionary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(description, dict) and description.get("signature") == SIGNATURE and description.get("format") == FORMAT


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _load_matcher(directory: Path, label: str, checksums: dict[str, str]) -> _Matcher:
    path = directory / f"{label}.automaton"
    try:
        if _sha256(path) != checksums[f"{label}.automaton"]:
            raise ValueError("checksum differs from dictionary.json: the file was changed or damaged")
        text = (directory / f"{label}.words").read_text(encoding="utf-8")
        rows = [line.split("\t") for line in text.split("\n")] if text else []
        frequencies = {word: int(count) for word, count in rows}
        automaton = ahocorasick.load(str(path), _no_values)
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise DamagedFileError(path, error) from error
    matcher = _Matcher(_Vocabulary([word for word, _count in rows]), automaton)
    matcher.frequencies = {w: c for w, c in frequencies.items() if c}
    return matcher


def _no_values(_raw: bytes) -> int:
    """pyahocorasick asks for a deserializer; integer automata store no objects, so it is never called."""
    return 0

"""The dictionary finder: every run of words in a text that is a KB name, found with one Aho-Corasick pass.

Names and text are compared as sequences of normalised words (``medlink.text.tokens``), in one
pass of a word automaton (``word_automaton``) that holds every name twice: as written, and in
its loose form for approximate matching.

Rules a plain string matcher gets wrong, and what this one does:

- **Short forms are case-sensitive.** A name of at most ``short_form_max`` characters that the KB
  only writes in capitals ("MI", "ALL", "T2DM") matches only text with no lower-case letter: "an MI"
  matches, "mi" and "all" do not.
- **A sign is a name's meaning.** The normaliser reads a sign closing a word as a word ("HER2-" is "her2 negative"),
  and so do the text's tokens: "HER2-" and "HER2 negative" find the name "HER2-", "HR 88" does not find "HR+". A KB
  normalised before that (signs dropped) has its names with a sign left out: "HR 88" would be found as "HR+".
- **Too short, or only stop words.** Names under ``min_length`` characters, and names made only of
  English stop words ("All", "Was", "Other"), are left out unless they are capitalised short forms;
  ``stop_names`` leaves out more.
- **Approximate matches** (``approximate``): a second automaton over loose word forms finds inflection and spelling
  variants: plurals reduced (Harman's S-stemmer: "tumors" -> "tumor", "deficiencies" -> "deficiency"; a Latin or Greek
  plural the names never use to the singular they spell, "metastases" -> "metastasis", and a British spelling to the
  American one the names use, "anaemia" -> "anemia", "tumours" -> "tumors": the span's ``infons["read_as"]`` then the
  reading the linker sees), a possessive "'s" ignored ("Alzheimer's disease" meets "Alzheimer disease"), and an
  unknown word of five letters or more corrected to the vocabulary word one edit away ("diabetis" -> "diabetes") where
  at least as many words of the span are spelt right (alone, "found" would become "wound"), or alone where the slip is
  a letter dropped, doubled or two swapped in a disease's Greek or Latin name of seven letters or more ("pnuemonia",
  ``slip``). Such spans say so (``infons["match"] = "approximate"``).
- **A contraction without its apostrophe**: "cant sleep" finds the name "can't sleep" (whose words are "can t sleep"),
  "dont", "doesnt", "isnt" ... alike (``CONTRACTIONS``), where the names use the contraction and not the word; the span
  reads with the apostrophe (``infons["read_as"]``).
- **A note's shortened words** (``shorthand``) and **people's words** (``lay_words``): "breast ca", "hip fx", "my hip
  hurts" are also matched written out (``word_shorthand``), the written-out text the span's ``read_as``.
- **What text leaves unsaid.** A classification names the plain condition "X NOS" or "X, unspecified" ("Botulism
  NOS", "Heart disease, unspecified") and puts nonessential words in parentheses ("systolic (congestive) heart
  failure"), and text says "X"; a note says "Parkinson's" for "Parkinson's disease". Such names are also matched
  without the qualifier or the head (``plain_form``; the possessive form exactly and capitalised only, so "Down's"
  never becomes "down" nor "a hunter's cabin" Hunter's syndrome), unless what stays is too short or only stop words.
  "X of Y" or "X due to Y" is also matched as "Y X" ("COVID-19 pneumonia"; ``inverted_form``) where only spaces (or a
  word's hyphen) part its words. **Section headers** ("ONCOLOGY:", "Oncology" as a line) are no mentions (``headers``).
- **Overlaps**: ``longest`` keeps the longest of overlapping spans (exact before approximate at
  equal length); ``all`` keeps every span as an alternative.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from medlink.core import READ_AS, Annotation, Document
from medlink.corpora.entity_types import ENTITY_TYPES, type_bit, type_of_mask
from medlink.errors import DamagedFileError, MedlinkError
from medlink.text.derived_names import DERIVED_MATCH, derived_names, qualifiers_dropped
from medlink.text.finders.base import (
    OVERLAP_POLICIES,
    crosses_boundary,
    english_stop_words,
    follows_title,
    in_chemical_name,
    resolve_overlaps,
)
from medlink.text.finders.dictionary_files import DESCRIPTION, read_description, write_description
from medlink.text.finders.headers import is_section_header
from medlink.text.finders.word_automaton import (
    CAPITALISED,
    DERIVED,
    EXACT,
    LOOSE,
    MAX_WORDS,
    SHORT_FORM,
    TURNED_EXACT,
    TURNED_LOOSE,
    WordAutomaton,
)
from medlink.text.finders.word_forms import (
    american_spelling,
    classical_singular,
    contractions_split,
    loose_word,
    prefixes_split,
    slip,
    spaced,
)
from medlink.text.finders.word_shorthand import LAY, SHORTHAND, expanded, shorthand_span
from medlink.text.normalize import SIGNED, Normalizer
from medlink.text.plain_forms import POSSESSIVES, name_forms
from medlink.text.spelling import SpellingIndex
from medlink.text.tokens import Token, passage_tokens, respelt, tokenize

CORRECTIONS_KEPT = 200_000  # remembered word readings, spelling corrections among them (a long run's memory stays bounded)
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
    shorthand: bool = True  # also match with a note's shortened words written out ("breast ca"; ``word_shorthand``)
    lay_words: bool = True  # and with people's words read as names say them ("my hip hurts"; ``word_shorthand.LAY``)
    derived: bool = True  # words derived from names, read as them ("hypertensive": Hypertension; ``text.derived_names``)

    def __post_init__(self) -> None:
        if self.overlap not in OVERLAP_POLICIES:
            raise MedlinkError(f"dictionary finder: unknown overlap policy {self.overlap!r}; known: {', '.join(OVERLAP_POLICIES)}")
        if self.min_length < 1 or self.short_form_max < 0:
            raise MedlinkError("dictionary finder: min_length must be >= 1 and short_form_max >= 0")


def _apostrophes(text: str, tokens: list[Token], joints: set[int]) -> dict[int, str]:
    """The spellings that give a contraction written without its apostrophe one in a span's reading: "can" (of "cant")
    as "can'", before the "t" (by position among ``tokens``)."""
    if not joints:
        return {}
    return {i: text[token.start : token.end] + "'" for i, token in enumerate(tokens[:-1]) if token.end in joints}


def _read_as(span: Annotation, reading: str) -> Annotation:
    """``span``, with ``reading`` as what the linker sees (``infons["read_as"]``) where it differs from the text."""
    if reading != span.text:
        span.infons[READ_AS] = reading
    return span


class DictionaryFinder:
    """Finds KB names in text (``name = "dictionary"``); build it from names, or load it from an index folder."""

    name = "dictionary"
    resolves_overlaps = True  # ``find`` takes the overlap policy of whoever merges its spans (``base.found_by``)

    def __init__(
        self,
        normalize: Normalizer,
        options: DictionaryOptions,
        automaton: WordAutomaton,
        names: int,
        types: tuple[str, ...] = (),
        derived: dict[str, str] | None = None,
    ):
        self.normalize = normalize
        self.derived = derived or {}  # a derived word's key -> the name it is read as
        self.options = options
        self.automaton = automaton
        self.names = names
        self.types = types  # the entity types its keys' type bits stand for, in bit order (none: a finder built without types)
        self._spelling: SpellingIndex | None = None
        self.excluded: frozenset[str] = frozenset()  # normalised names not to report (``exclusions.rarely_annotated``)
        self._readings: dict[str, tuple[str, str | None, str | None]] = {}  # words repeat from document to document: read each once

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        names: Iterable[str],
        normalize: Normalizer,
        options: DictionaryOptions | None = None,
        types: Iterable[str | None] | None = None,
    ) -> DictionaryFinder:
        """From the KB's names as written (their case decides which are short forms); ``types``, one per name, the entity
        type of its concept (``corpora.entity_types``): a span found takes its name's, or none where names of several
        types share its words."""
        options = options or DictionaryOptions()
        masks: dict[str, int] = {}  # key -> the type bits of the names it stands for
        stop = (english_stop_words() if options.stop_words else frozenset()) | {normalize(n) for n in options.stop_names}
        short_forms: dict[str, bool] = {}
        plain_forms: dict[str, bool] = {}  # names as text says them (``plain_form``; a name spelt so keeps its own case rule)
        possessives: set[str] = set()  # plain forms matched exactly and capitalised only: "Hunter's" but not "a hunter's cabin"
        turned, said = set(), set()  # keys of inverted forms ("hip fracture"), and of names and plain forms as written
        for name, kind in zip(names, types) if types is not None else ((name, None) for name in names):
            if not normalize.signs_as_words and SIGNED.search(name):
                continue  # its sign is its meaning ("HER2-" is not "HER2+"), and this normaliser drops it
            forms, inverted = name_forms(name)
            for spelling, found in ((name, short_forms), *((form, plain_forms) for form in forms)):
                key = normalize(spelling)
                if key and len(key.split()) <= MAX_WORDS:
                    masks[key] = masks.get(key, 0) | type_bit(kind)
                    (turned if spelling in inverted else said).add(key)
                    written_in_capitals = (
                        len(key) <= options.short_form_max
                        and normalize.in_capitals(spelling)  # "MI"; "DOESs" as the
                        and any(c.isupper() for c in spelling)
                    )  # normaliser reads it
                    found[key] = found.get(key, True) and written_in_capitals
                    if found is plain_forms and spelling.endswith(POSSESSIVES):
                        possessives.add(key)
        exact_only = possessives - short_forms.keys()
        turned_only = turned - said
        short_forms.update((key, short) for key, short in plain_forms.items() if key not in short_forms)
        automaton = WordAutomaton()
        kept = 0
        frequencies = automaton.frequencies
        for key, short_form in short_forms.items():
            words = key.split()
            if not short_form and (len(key) < options.min_length or all(w in stop for w in words) or key in stop):
                continue
            if short_form and len(key) < 2:
                continue
            kept += 1
            automaton.add(
                words,
                (TURNED_EXACT if key in turned_only else EXACT)
                | (SHORT_FORM if short_form else 0)
                | (CAPITALISED if key in exact_only else 0),
                masks.get(key, 0),
            )
            for word in words:
                frequencies[word] = frequencies.get(word, 0) + 1
            loose_words = [loose_word(w) for w in words if w != POSSESSIVE]
            if options.approximate and not short_form and loose_words and key not in exact_only:
                automaton.add(loose_words, TURNED_LOOSE if key in turned_only else LOOSE, masks.get(key, 0))
        derived = derived_names(short_forms) if options.derived else {}  # keys of names and their forms
        for key, name in derived.items():
            automaton.add(key.split(), DERIVED, masks.get(name, 0))
        return cls(normalize, options, automaton.finish(), kept, ENTITY_TYPES if types is not None else (), derived)

    def type_of(self, value: int) -> str | None:
        """The entity type a key's value says (``build``'s ``types``), or None."""
        return type_of_mask(WordAutomaton.types_of(value), self.types) if self.types else None

    # -- finding ------------------------------------------------------------------------------
    def find(self, document: Document, overlap: str | None = None) -> list[Annotation]:
        """Names in ``document.text``, in text order; overlaps resolved by ``overlap`` (None: the finder's own option)."""
        text = document.text
        spans = []
        for words in passage_tokens(document, self.normalize):  # a passage ends a word and a name, even where the next one touches it
            tokens, inside = prefixes_split(words, self.automaton.frequencies)
            tokens, joints = contractions_split(tokens, self.automaton.frequencies)
            for first, last, value in self.automaton.spans([t.norm for t in tokens], EXACT | TURNED_EXACT | DERIVED):
                start, end = tokens[first].start, tokens[last - 1].end
                if start in inside or end in inside or start in joints or end in joints:
                    continue  # a part of a word: "eclampsia" in "preeclampsia", "can" in "cant"
                if (
                    value & SHORT_FORM
                    and (not self.normalize.in_capitals(text[start:end]) or in_chemical_name(text, start, end))
                    or value & CAPITALISED
                    and not self._eponym_at(text, start)
                    or crosses_boundary(text, start, end)
                    or not value & EXACT
                    and not spaced(text, tokens[first:last])
                ):
                    continue
                if value & DERIVED:
                    reading = self.derived[" ".join(t.norm for t in tokens[first:last])]
                    found = Annotation(start, end, text[start:end], self.type_of(value), source=self.name, infons={"match": DERIVED_MATCH})
                else:
                    reading = respelt(text, tokens[first:last], _apostrophes(text, tokens[first:last], joints), cuts=inside)
                    found = Annotation(start, end, text[start:end], self.type_of(value), source=self.name)
                spans.append(_read_as(found, reading))
            looser = [
                *(self._approximate(text, tokens, inside, joints) if self.options.approximate else ()),
                *(self._shorthand(text, tokens, inside) if self.options.shorthand else ()),
            ]
            spans.extend(span for span in looser if not {span.start, span.end} & (inside | joints))  # whole words only
        if self.derived:
            spans = qualifiers_dropped(text, spans)
        if self.excluded:
            spans = [span for span in spans if self.normalize(span.text) not in self.excluded]
        spans = [span for span in spans if not is_section_header(text, span.start, span.end)]
        return resolve_overlaps(spans, overlap or self.options.overlap)

    @staticmethod
    def _eponym_at(text: str, start: int) -> bool:
        """Whether a possessive plain form ("Parkinson's") found at ``start`` reads as the eponym: capitalised, and not
        after a title ("Mrs. Wilson's chart")."""
        return text[start].isupper() and not follows_title(text, start)

    def is_name(self, text: str) -> bool:
        """Whether ``text`` is, word for word after normalisation, one of the names this finder reports, or (with
        approximate matching) their plural ("breast cancers")."""
        words = [t.norm for t in tokenize(text, self.normalize)]
        return (
            self._spelt_whole(words, EXACT | TURNED_EXACT)
            or self.options.approximate
            and self._spelt_whole(
                [loose_word(classical_singular(w, self.automaton.frequencies) or w) for w in words if w != POSSESSIVE], LOOSE | TURNED_LOOSE
            )
        )

    def _spelt_whole(self, words: list[str], flag: int) -> bool:
        """Whether a key carrying ``flag`` spans all of ``words``."""
        return any(first == 0 and last == len(words) for first, last, _ in self.automaton.spans(words, flag))

    def _approximate(self, text: str, tokens: list[Token], cuts: set[int], joints: set[int]) -> Iterable[Annotation]:
        """Spans of loose word forms; a span with a spelling-corrected word needs as many words spelt right as
        corrected ("diabetis mellitus" yes; "found" -> "wound" or "structure" -> "stricture" alone, no). A span read
        through a Latin singular, a cut prefix (``cuts``) or a contraction's missing apostrophe (``joints``) is read so
        (``infons["read_as"]``). British spellings are read a second time as the American ones the names use
        ("ischaemic heart disease": "ischaemic" is a name's word too, so only that reading finds *Ischemic heart
        disease*)."""
        kept = [i for i, t in enumerate(tokens) if t.norm != POSSESSIVE]
        readings = self._readings
        read = [readings.get(tokens[i].norm) or self._read(tokens[i].norm) for i in kept]
        words, singular, corrected = [r[0] for r in read], [r[1] for r in read], [r[2] for r in read]
        yield from (span for _, _, span in self._loose_spans(text, tokens, kept, words, singular, corrected, cuts, joints))
        american = [american_spelling(word, self.automaton.frequencies) for word in words]
        if any(american):
            words = [loose_word(spelt) if spelt else word for spelt, word in zip(american, words)]
            singular = [spelt or reading for spelt, reading in zip(american, singular)]
            for first, last, span in self._loose_spans(text, tokens, kept, words, singular, corrected, cuts, joints):
                if any(american[first:last]):
                    yield span

    def _loose_spans(
        self,
        text: str,
        tokens: list[Token],
        kept: list[int],
        words: list[str],
        singular: list[str | None],
        corrected: list[str | None],
        cuts: set[int],
        joints: set[int],
    ) -> Iterable[tuple[int, int, Annotation]]:
        """The loose automaton's spans over ``words`` (the loose forms of ``tokens[kept]``), each after the range of
        ``words`` it holds."""
        for first, last, value in self.automaton.spans(words, LOOSE | TURNED_LOOSE):
            fixes = sum(corrected[j] is not None for j in range(first, last))
            if 2 * fixes > last - first and not (last - first == 1 and slip(tokens[kept[first]].norm, corrected[first])):
                continue
            start, end = tokens[kept[first]].start, tokens[kept[last - 1]].end
            if crosses_boundary(text, start, end) or not value & LOOSE and not spaced(text, [tokens[kept[j]] for j in range(first, last)]):
                continue
            words_of_span = [tokens[kept[j]] for j in range(first, last)]
            singulars = {j - first: singular[j] for j in range(first, last) if singular[j]}
            yield (
                first,
                last,
                _read_as(
                    Annotation(start, end, text[start:end], self.type_of(value), source=self.name, infons={"match": "approximate"}),
                    respelt(text, words_of_span, {**_apostrophes(text, words_of_span, joints), **singulars}, cuts),
                ),
            )

    def _shorthand(self, text: str, tokens: list[Token], cuts: set[int]) -> Iterable[Annotation]:
        """Names met once the passage's shortened (or lay) words are written out (``word_shorthand``): each span holds a
        word as written and takes a shortened word whole (``cuts``: where ``prefixes_split`` cut a word)."""
        for table, match in [(SHORTHAND, "shorthand"), (LAY, "lay")][: 2 if self.options.lay_words else 1]:
            written = expanded(text, tokens, self.normalize, table)
            for first, last, value in self.automaton.spans([t.norm for t in written.tokens], EXACT | TURNED_EXACT) if written else ():
                if value & SHORT_FORM or not written.whole(first, last) or all(group < 0 for group in written.group[first:last]):
                    continue
                span = shorthand_span(text, written, first, last, self.name, cuts, match)
                span.type = self.type_of(value)
                if not crosses_boundary(text, span.start, span.end) and (value & EXACT or spaced(text, written.tokens[first:last])):
                    yield span

    def _read(self, word: str) -> tuple[str, str | None, str | None]:
        """``word``'s loose form, and the Latin singular or the spelling correction it was read through (remembered)."""
        if len(self._readings) > CORRECTIONS_KEPT:
            self._readings.clear()
        singular = classical_singular(word, self.automaton.frequencies)
        corrected = None if singular else self._corrected(word)
        reading = self._readings[word] = (loose_word(singular or corrected or word), singular, corrected)
        return reading

    def _corrected(self, word: str) -> str | None:
        """The vocabulary word a misspelt ``word`` stands for; None for a known word or one with no correction."""
        if word in self.automaton.frequencies or loose_word(word) in self.automaton.ids:  # known, or the plural of a known word
            return None
        return self.spelling.correct(word)

    def prepare(self) -> DictionaryFinder:
        """Build now what ``find`` would build on first use (the spelling index), so a long run's first document
        does not pay for it and a load's cost is all counted as load."""
        if self.options.approximate:
            _ = self.spelling
        return self

    @property
    def spelling(self) -> SpellingIndex:
        """The spelling index over the names' words, built when first needed (loading stays quick)."""
        if self._spelling is None:
            self._spelling = SpellingIndex(self.automaton.frequencies)
        return self._spelling

    # -- persistence (``dictionary_files``) ---------------------------------------------------------
    def save(self, directory: Path) -> None:
        """Into ``directory`` (created): the word automaton, and a description (options, normaliser, format)."""
        directory.mkdir(parents=True, exist_ok=True)
        self.automaton.save(directory)
        fields = {"options": asdict(self.options), "names": self.names, "normalizer": self.normalize.signature}
        write_description(directory, {**fields, **({"entity_types": list(self.types)} if self.types else {}), "derived": self.derived})

    @classmethod
    def load(cls, directory: Path) -> DictionaryFinder:
        """A saved finder; damaged files are refused with their name."""
        description = read_description(directory)
        try:
            options = DictionaryOptions(**{**description["options"], "stop_names": tuple(description["options"]["stop_names"])})
            normalize = Normalizer.from_signature(description["normalizer"])
            types = tuple(str(kind) for kind in description.get("entity_types", ()))  # none: built before finders had types
            derived = {str(key): str(name) for key, name in description.get("derived", {}).items()}
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise DamagedFileError(directory / DESCRIPTION, error) from error
        return cls(normalize, options, WordAutomaton.load(directory), int(description.get("names", 0)), types, derived)

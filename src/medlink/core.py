"""The plain data every stage passes along: mentions in, one link result (ranked candidates) per mention out."""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True, slots=True)
class Mention:
    """A span of text to link, with optional document position and context."""

    text: str
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None
    left: str | None = None
    right: str | None = None

    @classmethod
    def of(cls, mention: Mention | str) -> Mention:
        """Plain strings are mentions without a document or context."""
        return mention if isinstance(mention, Mention) else cls(mention)


@dataclass(slots=True)
class Candidate:
    """One ranked concept for a mention.

    ``name`` is the concept's preferred name; ``matched_name`` the alias (or training mention)
    that earned the score;
    ``scores_by_stage`` keeps each generator's / reranker's own score; ``evidence`` says why
    (e.g. the training mentions that voted).
    """

    concept_id: str
    score: float
    matched_name: str | None = None
    scores_by_stage: dict[str, float] = field(default_factory=dict)
    evidence: list[dict] = field(default_factory=list)
    name: str | None = None
    alt_ids: list[str] = field(default_factory=list)  # the concept's other ids (MEDIC: its MeSH id beside an OMIM one)
    probability: float | None = None  # P(this candidate is right), from the index's calibration stage (None: not calibrated)

    @property
    def ids(self) -> list[str]:
        """Every id of the concept, the primary one first."""
        return [self.concept_id, *self.alt_ids]

    def copy(self, **changes) -> Candidate:
        """A candidate of its own (lists and dicts copied), with ``changes`` applied."""
        out = Candidate(
            self.concept_id,
            self.score,
            self.matched_name,
            dict(self.scores_by_stage),
            list(self.evidence),
            self.name,
            list(self.alt_ids),
            self.probability,
        )
        for name, value in changes.items():
            setattr(out, name, value)
        return out

    def with_probability(self, probability: float) -> Candidate:
        """This candidate with ``probability``, sharing its lists and dicts (a stage that changes them replaces them):
        the calibration stage gives every candidate of every mention one, and a full ``copy`` each would cost a
        noticeable share of a calibrated link's time."""
        return Candidate(
            self.concept_id, self.score, self.matched_name, self.scores_by_stage, self.evidence, self.name, self.alt_ids, probability
        )


@dataclass(slots=True)
class LinkResult:
    """What linking one mention gives: the mention, its ranked candidates, and what later stages decide about it.

    ``error`` says why a mention could not be linked (empty, nothing left after normalisation);
    ``nil`` and ``probability`` are left None until a NIL / calibration stage fills them: ``probability`` is then the
    first candidate's, and ``nil`` True when it fell under the NIL threshold (the candidates are still listed).
    """

    mention: Mention
    candidates: list[Candidate] = field(default_factory=list)
    error: str | None = None
    nil: bool | None = None
    probability: float | None = None
    nil_threshold: float | None = None  # the threshold ``nil`` was decided at (what an explanation quotes)
    read_as: str | None = None  # what the stages searched, where not the mention's own words ("breast ca": "breast cancer")

    @property
    def best(self) -> Candidate | None:
        """The top candidate, unless the mention was judged NIL or has none."""
        return None if self.nil or not self.candidates else self.candidates[0]

    def copy(self, mention: Mention | None = None) -> LinkResult:
        return replace(self, mention=mention or self.mention, candidates=[c.copy() for c in self.candidates])


@dataclass(frozen=True, slots=True)
class Passage:
    """A piece of a document (a title, an abstract, a paragraph) at its character offset in the document's text."""

    offset: int
    text: str
    kind: str | None = None  # "title", "abstract", "paragraph", ...; BioC's passage type, PubTator's t / a
    infons: dict[str, str] = field(default_factory=dict)

    @property
    def end(self) -> int:
        return self.offset + len(self.text)


READ_AS = "read_as"  # an annotation infon: the reading the linker sees in place of the span's text


ASSERTION_INFONS = ("assertion", "assertion_cue", "historical", "historical_cue")  # how files carry an Assertion


@dataclass(frozen=True, slots=True)
class Assertion:
    """What the text says of a mention (ConText's categories): ``status`` is present, absent, possible, conditional,
    hypothetical or someone_else; ``historical`` is the temporality apart from it; each cue is the phrase that decided."""

    status: str = "present"
    historical: bool = False
    cue: str | None = None
    historical_cue: str | None = None

    def infons(self) -> dict[str, str]:
        """The infons a document file carries (BioC, JSONL): the status and the past always, cues when there are."""
        out = {"assertion": self.status, "historical": "true" if self.historical else "false"}
        if self.cue:
            out["assertion_cue"] = self.cue
        if self.historical_cue:
            out["historical_cue"] = self.historical_cue
        return out

    @classmethod
    def from_infons(cls, infons: dict[str, str]) -> Assertion | None:
        """The assertion a file's annotation infons carry (its keys removed from ``infons``), or None."""
        found = {key: infons.pop(key) for key in ASSERTION_INFONS if key in infons}
        if "assertion" not in found:
            return None
        return cls(found["assertion"], found.get("historical") == "true", found.get("assertion_cue"), found.get("historical_cue"))


@dataclass(slots=True)
class Annotation:
    """A span of a document's text: a gold mention (``ids`` from the annotators) or one a finder found and linked.

    ``start`` / ``end`` are character offsets into ``Document.text``; ``text`` is that slice. ``ids`` are
    the concept ids it denotes (gold, or the linker's choice); ``result`` the link result behind that
    choice (None for gold); ``source`` who made the span ("gold", "dictionary", "tagger", ...).
    ``short_form_of`` marks an abbreviation's later occurrence: the long form's span it was linked through;
    ``assertion`` what the text says of it (negated, possible, someone else's, historical), when it was read.
    """

    start: int
    end: int
    text: str
    type: str | None = None
    ids: tuple[str, ...] = ()
    source: str | None = None
    result: LinkResult | None = None
    short_form_of: tuple[int, int] | None = None
    infons: dict[str, str] = field(default_factory=dict)
    assertion: Assertion | None = None

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)

    def written_infons(self) -> dict[str, str]:
        """The infons a document file carries for this annotation: its own, then its assertion's."""
        return {**self.infons, **(self.assertion.infons() if self.assertion is not None else {})}

    @property
    def reading(self) -> str:
        """What the span says, as the linker should read it: its text, or the reading a finder or a context rule gave it
        (``infons[READ_AS]``: "nonsmall cell lung cancer" as "non-small cell lung cancer", "c/o CP" as "chest pain")."""
        return self.infons.get(READ_AS, self.text)


@dataclass(slots=True)
class Document:
    """A text to annotate: its passages (one, for plain text) and the annotations found or given in it.

    ``text`` is the passages laid at their offsets, gaps filled with spaces, so every offset a format
    gives (PubTator: title, one space, abstract; BioC: passage offsets) indexes it unchanged.
    """

    doc_id: str
    passages: list[Passage]
    annotations: list[Annotation] = field(default_factory=list)
    infons: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_text(cls, text: str, doc_id: str = "1") -> Document:
        return cls(doc_id, [Passage(0, text)])

    @classmethod
    def from_title_abstract(cls, doc_id: str, title: str, abstract: str) -> Document:
        """PubTator's layout: the abstract starts one character after the title."""
        passages = [Passage(0, title, "title")]
        if abstract:
            passages.append(Passage(len(title) + 1, abstract, "abstract"))
        return cls(doc_id, passages)

    @property
    def text(self) -> str:
        pieces, at = [], 0
        for passage in sorted(self.passages, key=lambda p: p.offset):
            if passage.offset < at:
                raise ValueError(f"document {self.doc_id}: passage at offset {passage.offset} overlaps the one before (ends at {at})")
            pieces.append(" " * (passage.offset - at))
            pieces.append(passage.text)
            at = passage.end
        return "".join(pieces)

    def mention(self, annotation: Annotation, window: int = 0, text: str | None = None) -> Mention:
        """The mention a linker sees for ``annotation``: its ``reading``, position and ``window`` characters each side."""
        text = self.text if text is None else text
        left = text[max(0, annotation.start - window) : annotation.start] if window else None
        right = text[annotation.end : annotation.end + window] if window else None
        return Mention(annotation.reading, self.doc_id, annotation.start, annotation.end, left, right)

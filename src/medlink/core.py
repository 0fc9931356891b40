"""The plain data every stage passes along: mentions in, one link result (ranked candidates) per mention out."""

from __future__ import annotations

from dataclasses import dataclass, field


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
    def of(cls, mention: "Mention | str") -> "Mention":
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

    @property
    def ids(self) -> list[str]:
        """Every id of the concept, the primary one first."""
        return [self.concept_id, *self.alt_ids]

    def copy(self, **changes) -> "Candidate":
        """A candidate of its own (lists and dicts copied), with ``changes`` applied."""
        fields = {"concept_id": self.concept_id, "score": self.score, "matched_name": self.matched_name,
                  "scores_by_stage": dict(self.scores_by_stage), "evidence": list(self.evidence), "name": self.name,
                  "alt_ids": list(self.alt_ids)}
        return Candidate(**{**fields, **changes})


@dataclass(slots=True)
class LinkResult:
    """What linking one mention gives: the mention, its ranked candidates, and what later stages decide about it.

    ``error`` says why a mention could not be linked (empty, nothing left after normalisation);
    ``nil`` and ``probability`` are left None until a NIL / calibration stage fills them.
    """

    mention: Mention
    candidates: list[Candidate] = field(default_factory=list)
    error: str | None = None
    nil: bool | None = None
    probability: float | None = None

    @property
    def best(self) -> Candidate | None:
        """The top candidate, unless the mention was judged NIL or has none."""
        return None if self.nil or not self.candidates else self.candidates[0]

    def copy(self, mention: Mention | None = None) -> "LinkResult":
        return LinkResult(mention or self.mention, [c.copy() for c in self.candidates], self.error, self.nil, self.probability)

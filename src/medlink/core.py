"""The plain data every stage passes along: mentions in, ranked candidates out."""

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

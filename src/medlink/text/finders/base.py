"""The one interface every mention finder has, and the overlap policy that merges what several finders found.

A finder reads a ``Document`` and returns ``Annotation``s (character offsets into ``Document.text``,
``source`` naming the finder, no ids yet); linking them is the annotator's job, not the finder's.
"""

from __future__ import annotations

from typing import Iterable, Protocol, Sequence, runtime_checkable

from medlink.core import Annotation, Document

OVERLAP_POLICIES = ("longest", "all")


@runtime_checkable
class MentionFinder(Protocol):
    """Finds mention spans in a document."""

    name: str

    def find(self, document: Document) -> list[Annotation]:
        """Spans in ``document.text``, in text order."""
        ...


def resolve_overlaps(spans: Iterable[Annotation], policy: str = "longest") -> list[Annotation]:
    """Spans in text order: under ``longest`` no two overlap (the longer wins, then the earlier; one span per
    (start, end), the first given kept); under ``all`` every distinct (start, end) is kept as an alternative."""
    if policy not in OVERLAP_POLICIES:
        raise ValueError(f"unknown overlap policy {policy!r}; known: {', '.join(OVERLAP_POLICIES)}")
    unique: dict[tuple[int, int], Annotation] = {}
    for span in spans:
        unique.setdefault((span.start, span.end), span)
    if policy == "all":
        return sorted(unique.values(), key=lambda a: (a.start, a.end))
    kept: list[Annotation] = []
    taken: list[tuple[int, int]] = []
    for span in sorted(unique.values(), key=lambda a: (-(a.end - a.start), a.start)):
        if not any(span.start < end and start < span.end for start, end in taken):
            kept.append(span)
            taken.append((span.start, span.end))
    return sorted(kept, key=lambda a: a.start)


def find_all(finders: Sequence[MentionFinder], document: Document, policy: str = "longest") -> list[Annotation]:
    """What several finders found together in ``document`` (a span found twice is kept once, the first finder's)."""
    return resolve_overlaps((span for finder in finders for span in finder.find(document)), policy)

"""What an annotation run did, counted for the summary line a batch job owes its user."""

from __future__ import annotations

from dataclasses import dataclass, field

from medlink.core import Document


@dataclass
class AnnotationCounts:
    """What a run did, for the summary line a batch job owes its user."""

    documents: int = 0
    mentions: int = 0
    linked: int = 0
    by_source: dict[str, int] = field(default_factory=dict)

    def add(self, document: Document) -> None:
        self.documents += 1
        for annotation in document.annotations:
            self.mentions += 1
            self.linked += bool(annotation.ids)
            self.by_source[annotation.source or "?"] = self.by_source.get(annotation.source or "?", 0) + 1

"""The spans a document already carries (PubTator, BioC or JSONL annotations), linked as they are (``--finder given``).

Why: a corpus whose mentions someone has already found (an annotation team, another NER tool, a gold standard) needs
linking only. Finding mentions anew would replace those spans with medlink's own; here they stay exactly as given
(overlapping ones too), keep their types, and only their concepts are filled in.
"""

from __future__ import annotations

from medlink.core import Annotation, Document

GIVEN = "given"


class GivenSpans:
    """A mention finder that finds nothing: it hands back the document's own annotations as the spans to link."""

    name = GIVEN

    def find(self, document: Document) -> list[Annotation]:
        """The document's annotations, in text order, stripped of any ids they came with (the linker gives new ones)."""
        return [
            Annotation(a.start, a.end, a.text, type=a.type, source=GIVEN, infons=dict(a.infons))
            for a in sorted(document.annotations, key=lambda a: (a.start, a.end))
        ]

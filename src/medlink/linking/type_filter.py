"""``medlink annotate --types``: an annotator whose documents keep only the spans of some entity types.

Why after annotating, not in a finder: the consistency, abbreviation and composite steps read every span found (a
chemical's short form still defines it), and a span's type is settled only once it is linked. Untyped spans are kept,
as ``medlink score --types`` keeps them (corpora/entity_types.py: nothing says they are of another type).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from medlink.core import Document
from medlink.corpora.entity_types import of_types
from medlink.linking.annotator import Annotator


class TypeFilter(Annotator):
    """``annotator``'s linker, finders and options, its annotated documents restricted to the ``wanted`` types
    (``parse_types``)."""

    def __init__(self, annotator: Annotator, wanted: frozenset[str]):
        super().__init__(annotator.linker, annotator.finders, annotator.options)
        self.wanted = wanted

    def annotate(self, documents: Iterable[Document], progress: bool = False) -> Iterator[Document]:
        for document in super().annotate(documents, progress):
            document.annotations = of_types(document.annotations, self.wanted)
            yield document

"""``medlink.annotate``: the one-call API, an annotator loaded once per process for each index and its settings.

Why apart from the Annotator: a caller with a stream of documents builds its own ``Annotator``; the one-call API only
adds the cache of loaded annotators and the turning of plain texts into documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from medlink.core import Document
from medlink.linking.annotator import AnnotateOptions, Annotator

_LOADED: dict[tuple, Annotator] = {}  # annotate()'s annotators, one per (index, finder, tagger, exclusions, selector, ...)


def annotate(
    texts: str | Document | Sequence[str | Document],
    index: Path | str = "default",
    *,
    finder: str = "dictionary",
    tagger: Path | str | None = None,
    exclude_names: Path | str | None = None,
    selector: Path | str | None = None,
    nil_threshold: float | None = None,
    **options,
) -> Document | list[Document]:
    """The one-call API: a text (or ``Document``) annotated with linked spans (each ``Annotation`` has ``ids`` and the
    ``result`` with ranked candidates); a list of them gives a list. ``index``: a folder, ``default`` or
    ``default-dense``; ``options``: ``AnnotateOptions`` fields (k, context, abbreviations, consistency, ...). The index
    is loaded once per process."""
    from medlink.linking.index import resolve_index

    one = isinstance(texts, (str, Document))
    items = [texts] if one else list(texts) if isinstance(texts, Sequence) else None
    if items is None or not all(isinstance(item, (str, Document)) for item in items):
        raise TypeError(
            f"medlink.annotate takes a text (str), a Document or a list of them, not {type(texts).__name__}; "
            "for a stream of documents, Annotator.load(...).annotate(documents)"
        )
    chosen = AnnotateOptions(**options)
    key = (str(index), finder, str(tagger), str(exclude_names), str(selector), nil_threshold, chosen.combine, chosen.overlap)
    if key not in _LOADED:
        _LOADED[key] = Annotator.load(resolve_index(index), finder, tagger, chosen, exclude_names, selector, nil_threshold)
    loaded = _LOADED[key]
    annotator = Annotator(loaded.linker, loaded.finders, chosen)
    documents = [item if isinstance(item, Document) else Document.from_text(item, str(number)) for number, item in enumerate(items, 1)]
    annotated = list(annotator.annotate(documents))
    return annotated[0] if one else annotated

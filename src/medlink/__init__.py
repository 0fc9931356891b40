"""medlink: link medical mentions to concepts in medical terminologies.

The public API is what ``__all__`` lists: ``link``, ``annotate``, ``load_index`` and the types they take and give.
Everything else may move between releases.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlink.core import Annotation, Assertion, Candidate, Document, LinkResult, Mention, Passage
from medlink.errors import MedlinkError

if TYPE_CHECKING:  # imported on first use: numpy, scipy and the index code are not needed to import medlink
    from medlink.kb.store import KB
    from medlink.linking.annotator import AnnotateOptions, Annotator
    from medlink.linking.linker import Linker

__version__ = "0.1.0"
__all__ = [
    "AnnotateOptions",
    "Annotation",
    "Annotator",
    "Assertion",
    "Candidate",
    "Document",
    "KB",
    "LinkResult",
    "Linker",
    "MedlinkError",
    "Mention",
    "Passage",
    "annotate",
    "link",
    "load_index",
]

_LAZY = {
    "KB": "medlink.kb.store",
    "Linker": "medlink.linking.linker",
    "Annotator": "medlink.linking.annotator",
    "AnnotateOptions": "medlink.linking.annotator",
}
_loaded: dict[str, Linker] = {}
_loading = threading.Lock()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'medlink' has no attribute {name!r}")


def load_index(index: str | Path = "default") -> Linker:
    """A ``Linker`` for an index folder, or ``default`` / ``default-dense`` (built on first use) as the CLI reads them.
    Each call loads it afresh; ``link`` keeps one per index for the process."""
    from medlink.linking.index import resolve_index
    from medlink.linking.linker import Linker

    return Linker.load(resolve_index(index))


def _shared_index(index: str | Path) -> Linker:
    """The process's one loaded Linker for ``index`` (loaded on first use; a Linker is never changed once loaded, so
    threads share it)."""
    key = str(index)
    with _loading:
        if key not in _loaded:
            _loaded[key] = load_index(index)
        return _loaded[key]


def link(
    mentions: str | Mention | Sequence[str | Mention],
    index: str | Path = "default",
    *,
    k: int = 5,
    nil_threshold: float | None = None,
    generators: Sequence[str] | None = None,
    target_namespace: str | None = None,
    mappings: Sequence[str | Path] = (),
) -> list[LinkResult]:
    """Link mention strings (or ``Mention``s with context) to ranked concepts: one ``LinkResult`` per mention, in order,
    each with its ``k`` best candidates, their probabilities and NIL where the index is calibrated.

    ``medlink.link(["heart attack"])[0].best`` is the first candidate (None when NIL). ``index``: a folder, or
    ``default`` / ``default-dense``. ``nil_threshold`` overrides the index's own for this call. A ``Mention``'s
    ``left`` / ``right`` context is read only by an index with a context-trained cross-encoder; the default indexes
    link the text alone.

    ``target_namespace="ICD10CM"`` is coding mode: the candidates are codes of that namespace, matched directly or
    reached through mappings (medlink's own HPO -> ICD-10-CM ones, the KB's xrefs, and ``mappings``: SSSOM files), each
    with its path in ``evidence``; a mention none of whose candidates leads to a code is NIL, its ``error`` says why."""
    from medlink.linking.mentions import checked

    mentions = checked(mentions, k, "medlink.link")
    linker = _shared_index(index)
    if nil_threshold is not None:
        linker = linker.with_decisions(nil_threshold=nil_threshold)
    if target_namespace:
        from medlink.linking.coding import link_coded

        return link_coded(linker, mentions, k, target_namespace, generators, mappings)
    return linker.link(mentions, k=k, generators=generators)


def annotate(texts: str | Document | Sequence[str | Document], index: str | Path = "default", **options: Any) -> Document | list[Document]:
    """Find the medical mentions in a text (or ``Document``) and link each: the ``Document`` with its ``annotations``
    (offsets, ``ids``, ``assertion``, the ranked ``result``); a list of texts gives a list of documents, in order.
    ``options``: finder, tagger, nil_threshold, and ``AnnotateOptions``' fields (k, context, abbreviations,
    consistency, assertion, ...); ``target_namespace="ICD10CM"`` gives each span codes of that namespace, as ``link``
    does, and ``mappings`` (a tuple of SSSOM files) more ways to them."""
    from medlink.linking.one_call import annotate as annotate_texts

    return annotate_texts(texts, index, **options)

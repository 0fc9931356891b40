"""Labelled datasets by format: ``load_dataset("biosyn:PATH")`` picks the format's loader.

Mentions come as ``LabeledMention`` records from mention files (BioSyn, AskAPatient) or from annotated documents
(PubTator, BioC XML or JSON, JSONL), each keeping its type; ``types`` keeps those of some entity types only
(``corpora.entity_types``: BC5CDR's Disease mentions for a disease memory; untyped mentions pass).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from medlink.corpora.askapatient import load_askapatient
from medlink.corpora.biosyn import load_biosyn
from medlink.corpora.entity_types import has_type
from medlink.corpora.mentions import LabeledMention
from medlink.corpora.pubtator import labeled_view, load_pubtator
from medlink.errors import MedlinkError


def _documents(fmt: str) -> Callable[..., list[LabeledMention]]:
    """A loader of the annotated mentions of a document file in ``fmt`` (mentions without a concept left out)."""

    def load(path: Path | str) -> list[LabeledMention]:
        # imported when asked for (BioC's package); not through document_files, whose writers reach the linker
        from medlink.corpora.bioc_format import read_bioc, read_bioc_json
        from medlink.corpora.jsonl_documents import read_jsonl
        from medlink.kb.errors_policy import InvalidLinePolicy
        from medlink.kb.readers.files import not_a_file

        if not Path(path).is_file():
            raise not_a_file(path, "document file")
        reader = {"bioc": read_bioc, "bioc-json": read_bioc_json, "jsonl": read_jsonl}[fmt]
        return [mention for document in reader(path, policy=InvalidLinePolicy()) for mention in labeled_view(document).mentions]

    return load


DATASET_FORMATS: dict[str, tuple[Callable[..., list[LabeledMention]], str]] = {
    "biosyn": (load_biosyn, "BioSyn processed_* directory of *.concept files (or one file): PMID||start|end||type||mention||ids"),
    "askapatient": (load_askapatient, "AskAPatient fold file, latin-1: concept_id<TAB>concept_name<TAB>mention"),
    "pubtator": (load_pubtator, "PubTator corpus: PMID|t|title, PMID|a|abstract, PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids"),
    "bioc": (_documents("bioc"), "BioC XML collection: annotations with a location, type and identifier infons"),
    "bioc-json": (_documents("bioc-json"), "BioC JSON collection (or PubTator3's BioC JSON)"),
    "jsonl": (
        _documents("jsonl"),
        'JSONL documents, one a line: {"id", "text" or "passages", "annotations": [{"start", "end", "type", "ids"}]}',
    ),
}


def load_dataset(spec: str, types: frozenset[str] | None = None, **options) -> list[LabeledMention]:
    """Load ``FORMAT:PATH`` (``biosyn:../shared/data/ncbi-disease/processed_test``) with that format's loader; with
    ``types`` (``entity_types.parse_types``), only the mentions of those entity types and the untyped ones."""
    format_name, sep, path = spec.partition(":")
    if format_name not in DATASET_FORMATS or not sep or not path:
        known = "; ".join(f"{name} ({description})" for name, (_, description) in DATASET_FORMATS.items())
        problem = f"unknown dataset format {format_name!r}" if format_name not in DATASET_FORMATS else "no path given"
        raise MedlinkError(f"{problem} in {spec!r}: write FORMAT:PATH with one of the known formats: {known}")
    loader, _ = DATASET_FORMATS[format_name]
    mentions = loader(path, **options)
    return mentions if types is None else [m for m in mentions if has_type(m.semantic_type, types)]

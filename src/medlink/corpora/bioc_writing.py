"""Writing documents as BioC XML or BioC JSON, one document at a time (``corpora.bioc_format`` reads them)."""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from typing import IO

import bioc
from bioc import biocjson, biocxml

from medlink import core
from medlink.corpora.document_io import document_text, json_text, open_text_target
from medlink.errors import MedlinkError


def to_bioc(document: core.Document) -> bioc.BioCDocument:
    """A medlink document as a bioc one: passages with their offsets and types, one annotation per span."""
    document_text(document)  # refuses annotations that would not read back
    result = bioc.BioCDocument()
    result.id, result.infons = document.doc_id, dict(document.infons)
    holders = []
    for passage in sorted(document.passages, key=lambda p: p.offset):
        container = bioc.BioCPassage()
        container.offset, container.text = passage.offset, passage.text
        container.infons = {**passage.infons, **({"type": passage.kind} if passage.kind else {})}
        result.add_passage(container)
        holders.append((passage, container))
    for number, annotation in enumerate(document.annotations, 1):
        holder = next((c for p, c in holders if p.offset <= annotation.start and annotation.end <= p.end), result)
        holder.add_annotation(_bioc_annotation(annotation, str(number)))
    return result


def _bioc_annotation(annotation: core.Annotation, annotation_id: str) -> bioc.BioCAnnotation:
    result = bioc.BioCAnnotation()
    result.id, result.text, result.infons = annotation_id, annotation.text, annotation_infons(annotation)
    result.add_location(bioc.BioCLocation(annotation.start, annotation.end - annotation.start))
    return result


def annotation_infons(annotation: core.Annotation) -> dict[str, str]:
    """The infons written for an annotation: its own, then type, identifier, source and the link result's figures."""
    infons = annotation.written_infons()
    given = (("type", annotation.type), ("identifier", ";".join(annotation.ids)), ("source", annotation.source))
    infons.update({key: value for key, value in given if value})
    result = annotation.result
    if result is not None:
        figures = (("score", result.candidates[0].score if result.candidates else None), ("probability", result.probability))
        infons.update({key: str(round(value, 6)) for key, value in figures if value is not None})
        if result.nil is not None:
            infons["nil"] = str(result.nil).lower()
    return infons


def _collection() -> bioc.BioCCollection:
    collection = bioc.BioCCollection()
    collection.source, collection.key = "medlink", ""
    return collection


class _TextSink:
    """lxml writes bytes; the target is a text stream (stdout, an atomic file): decode as it comes."""

    def __init__(self, out: IO[str]):
        self.out, self.decoder = out, codecs.getincrementaldecoder("utf-8")()

    def write(self, data: bytes) -> None:
        self.out.write(self.decoder.decode(data))


def write_bioc(documents: Iterable[core.Document], target) -> None:
    """A BioC XML collection, one document at a time (a file is written atomically)."""
    with open_text_target(target) as out:
        with biocxml.iterwrite(_TextSink(out), encoding="utf-8") as writer:
            writer.write_collection_info(_collection())
            for document in documents:
                try:
                    writer.write_document(to_bioc(document))
                except ValueError as error:  # lxml: a control character or a lone surrogate that XML cannot hold
                    raise MedlinkError(f"document {document.doc_id}: cannot be written as XML ({error})") from None
        out.write("\n")  # a text file ends with a newline (lxml's writer stops at </collection>)


def write_bioc_json(documents: Iterable[core.Document], target) -> None:
    """A BioC JSON collection, one document per line inside it (streamed; a file is written atomically)."""
    head = {key: value for key, value in biocjson.toJSON(_collection()).items() if key not in ("bioctype", "documents")}
    with open_text_target(target) as out:
        out.write(json_text(head)[:-1] + ', "documents": [')
        for number, document in enumerate(documents):
            out.write(("," if number else "") + "\n" + json_text(biocjson.toJSON(to_bioc(document))))
        out.write("\n]}\n")

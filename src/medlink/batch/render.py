"""An output format one document at a time: its head, each document's text, the separator between two, its tail.

Why: the Ray engine renders documents in its actors and the driver appends them in order, and a resumed run appends
to what a killed one wrote; both need a document's bytes on their own. Joined, the pieces are byte for byte what the
format's writer (``corpora.document_files.write_documents``, or the text lines) writes for the same documents.
"""

from __future__ import annotations

import io

from medlink.core import Document
from medlink.errors import MedlinkError

BIOC_TAIL = "</collection>\n"
BIOC_JSON_TAIL = "\n]}\n"


class Renderer:
    """The pieces of output format ``fmt`` (``text`` or a written document format)."""

    def __init__(self, fmt: str):
        self.format = fmt
        self.separator = "," if fmt == "bioc-json" else ""  # written before every document but the first

    def head(self) -> str:
        """What comes before the first document (the collection's opening for BioC; its date is today's)."""
        if self.format not in ("bioc", "bioc-json"):
            return ""
        empty = written([], self.format)
        tail = self.tail()
        if not empty.endswith(tail):
            raise MedlinkError(f"the {self.format} writer's empty collection does not end as expected ({empty[-40:]!r})")
        return empty[: len(empty) - len(tail)]

    def tail(self) -> str:
        return BIOC_TAIL if self.format == "bioc" else BIOC_JSON_TAIL if self.format == "bioc-json" else ""

    def document(self, document: Document) -> str:
        """One annotated document's output (a MedlinkError says why one cannot be written in this format)."""
        if self.format == "text":
            from medlink.linking.output import annotation_lines

            return "".join(line + "\n" for line in annotation_lines(document))
        if self.format == "jsonl":
            from medlink.corpora.document_files import write_document_line

            out = io.StringIO()
            write_document_line(document, out)
            return out.getvalue()
        if self.format == "pubtator":
            from medlink.corpora.pubtator import pubtator_record

            return pubtator_record(document)
        if self.format == "bioc-json":
            from bioc import biocjson

            from medlink.corpora.bioc_writing import to_bioc
            from medlink.corpora.document_io import json_text

            return "\n" + json_text(biocjson.toJSON(to_bioc(document)))
        if self.format == "bioc":
            from bioc.biocxml.encoder import encode_document
            from lxml import etree

            from medlink.corpora.bioc_writing import to_bioc

            try:
                return etree.tostring(encode_document(to_bioc(document)), encoding="unicode") + "\n"
            except ValueError as error:  # lxml: a control character or a lone surrogate that XML cannot hold
                raise MedlinkError(f"document {document.doc_id}: cannot be written as XML ({error})") from None
        raise MedlinkError(f"unknown output format {self.format!r}")


def written(documents: list[Document], fmt: str) -> str:
    """What the format's own writer writes for ``documents``."""
    from medlink.corpora.document_files import write_documents

    out = io.StringIO()
    write_documents(documents, out, fmt)
    return out.getvalue()

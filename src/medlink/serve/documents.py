"""What /annotate reads and writes: a request's texts or document-file content as ``Document``s, read by the library's
own readers from memory, and the annotated documents in the format asked for.

Why in memory: no value of a request may reach the filesystem, so file content arrives in the body and is read
from a byte stream, never from a path.
"""

from __future__ import annotations

import io
import json

import medlink
from medlink.core import Document
from medlink.corpora.annotate_output import SIGNATURE
from medlink.corpora.document_files import document_json, read_documents, write_documents
from medlink.linking.output import decision_text, explanation_lines, result_json, with_preferred_document_ids
from medlink.serve.limits import check_count, check_lengths
from medlink.serve.models import AnnotateRequest
from medlink.serve.settings import Limits

MEDIA_TYPES = {
    "jsonl": "application/x-ndjson",
    "pubtator": "text/plain; charset=utf-8",
    "bioc": "application/xml",
    "bioc-json": "application/json",
}


def request_documents(body: AnnotateRequest, limits: Limits) -> list[Document]:
    """The request's documents, each checked against the text-length limit; counted against the documents limit."""
    if body.text is not None or body.texts is not None:
        texts = [body.text] if body.text is not None else list(body.texts or [])
        check_count(len(texts), limits.max_documents, "texts", "--max-documents")
        check_lengths(((f"text {n}", t) for n, t in enumerate(texts, 1)), limits.max_text_chars, "--max-text-chars")
        return [Document.from_text(text, str(number)) for number, text in enumerate(texts, 1)]
    if body.documents is not None:
        check_count(len(body.documents), limits.max_documents, "documents", "--max-documents")
        content, fmt = "\n".join(json.dumps(item, ensure_ascii=False) for item in body.documents), "jsonl"
    else:
        content, fmt = body.content or "", body.format or "text"
        if fmt == "text":  # one document, as 'medlink annotate' reads a plain-text argument
            check_lengths([("the content", content)], limits.max_text_chars, "--max-text-chars")
            return [Document.from_text(content, "1")]
    stream = io.BytesIO(content.encode("utf-8"))
    stream.name = "the request's " + ("documents" if body.documents is not None else "content")
    documents = []
    for document in read_documents(stream, fmt):
        documents.append(document)
        check_count(len(documents), limits.max_documents, "documents", "--max-documents")
        check_lengths([(f"document {document.doc_id[:40]!r}", document.text)], limits.max_text_chars, "--max-text-chars")
    return documents


def signed(documents: list[Document], prefer: list[str]) -> list[Document]:
    """As 'medlink annotate' writes them: ids under the preferred namespaces, and medlink's mark among the infons."""
    for document in documents:
        with_preferred_document_ids(document, prefer)
        document.infons[SIGNATURE] = f"medlink {medlink.__version__}"
    return documents


def documents_json(documents: list[Document], explain: bool) -> list[dict]:
    """``medlink annotate --json``'s objects; with ``explain``, each linked span also says why (the sentence of
    ``medlink link --explain``) and gives its lines."""
    out = []
    for document in documents:
        payload = document_json(document)
        if explain:
            for written, span in zip(payload["annotations"], document.annotations):
                if span.result is not None:
                    written["why"] = decision_text(span.result)
                    written["explanation"] = explanation_lines(span.result)
        out.append(payload)
    return out


def documents_file(documents: list[Document], fmt: str) -> str:
    """The documents as the file 'medlink annotate --output-format FMT' writes."""
    out = io.StringIO()
    write_documents(documents, out, fmt)
    return out.getvalue()


def results_json(results, explain: bool) -> list[dict]:
    """``medlink link --json``'s objects; with ``explain``, also each result's explanation lines."""
    out = []
    for result in results:
        payload = result_json(result, explain)
        if explain:
            payload["explanation"] = explanation_lines(result)
        out.append(payload)
    return out

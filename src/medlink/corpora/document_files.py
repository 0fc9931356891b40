"""Documents in and out by format name: the registry ``medlink annotate`` (and any batch job) reads and writes through.

Formats: ``text`` (the whole input is one document; id the file's stem, or ``stdin``), ``lines``
(one document per non-empty line; id its line number), ``jsonl`` (one JSON object per line, below),
``pubtator``, ``bioc`` (XML) and ``bioc-json`` (see ``pubtator`` and ``bioc_format``). Every reader
streams (``bioc-json`` aside, one JSON value) and takes a path, ``-`` or a stream: stdin works.
Offsets are Python character offsets into ``Document.text``; ``text`` keeps the input's line
endings as they are, so offsets index the file's characters.

JSONL in (read by ``jsonl_documents``): ``{"id": ..., "text": ...}`` or ``{"id": ..., "passages": [{"offset", "text", "type"}]}``,
optionally ``"infons"`` and ``"annotations": [{"start", "end", "text", "type", "ids", "source"}]``
(``text`` may be left out: the slice is taken; ``source`` defaults to ``gold``). A missing id is
the line number. Any other key is an error (a misspelt "annotatons" would otherwise lose its spans unseen). JSONL out: the same, plus per
annotation, when it was linked, ``candidates``
(``linking.output.candidate_json``), ``probability`` and ``nil``, which reading ignores.

Bad records go to the ``InvalidLinePolicy`` (fail, or skip and count) with file, line and
document id; overlapping gold spans are kept and reported once per input (see ``pubtator``).
Writing ``text`` or ``lines`` is refused: they hold no spans, and plain output is the front end's
rendering (``linking.output``), not a file format.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from medlink import core
from medlink.corpora.bioc_format import read_bioc, read_bioc_json
from medlink.corpora.bioc_writing import write_bioc, write_bioc_json
from medlink.corpora.document_io import (
    Source,
    document_text,
    has_lone_surrogate,
    json_text,
    open_source,
    open_text_target,
    size_problem,
    source_lines,
    source_name,
    too_long,
)
from medlink.corpora.jsonl_documents import read_jsonl
from medlink.corpora.pubtator import iter_pubtator, write_pubtator
from medlink.errors import MedlinkError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import not_a_file, open_bytes

DOCUMENT_FORMATS = ("text", "lines", "jsonl", "pubtator", "bioc", "bioc-json")
WRITABLE_FORMATS = ("jsonl", "pubtator", "bioc", "bioc-json")
_SUFFIXES = {
    ".txt": "text",
    ".text": "text",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".pubtator": "pubtator",
    ".xml": "bioc",
    ".bioc": "bioc",
    ".json": "bioc-json",
    ".bioc-json": "bioc-json",
}  # the last: a file named after the format, as --output-format bioc-json suggests
_PUBTATOR_TEXT_LINE = re.compile(rb"[^|\t\r\n]+\|[ta]\|")
_SNIFF_BYTES, _SNIFF_LINES = 1 << 20, 1000


def guess_document_format(path: Path | str | None) -> str:
    """The format a file's name suggests (``.gz`` looked through); a ``.txt`` (or unknown) file with a PubTator text
    line (``PMID|t|`` or ``PMID|a|``) among its first lines is ``pubtator``; stdin is ``text``."""
    if path is None or str(path) == "-":
        return "text"
    name = Path(str(path).lower().removesuffix(".gz"))
    guessed = _SUFFIXES.get(name.suffix, "text")
    return "pubtator" if guessed == "text" and _looks_like_pubtator(Path(path)) else guessed


def _looks_like_pubtator(path: Path) -> bool:
    """Any of the first lines (1 MB) a PubTator title or abstract line: not the first alone, which a shuffled, damaged
    or annotation-first file does not start with (and which would then be read, silently, as one plain-text document)."""
    try:
        with open_bytes(path) as handle:
            head = handle.read(_SNIFF_BYTES)
    except (OSError, EOFError, zlib.error):
        return False
    return any(_PUBTATOR_TEXT_LINE.match(line) for line in head.removeprefix(b"\xef\xbb\xbf").splitlines()[:_SNIFF_LINES])


def read_documents(
    source: Source, fmt: str, *, policy: InvalidLinePolicy | None = None, max_chars: int | None = None
) -> Iterator[core.Document]:
    """The documents of ``source`` (a path, ``-`` or a stream) in format ``fmt``, streamed in input order. A document whose
    text is over ``max_chars`` characters goes to ``policy`` with its file, line (where the format has one) and id."""
    if fmt not in _READERS:
        raise MedlinkError(f"unknown document format {fmt!r}; known: {', '.join(DOCUMENT_FORMATS)}")
    if isinstance(source, (str, Path)) and str(source) != "-" and not Path(source).is_file():
        raise not_a_file(source, "document file")
    return _READERS[fmt](source, policy=policy if policy is not None else InvalidLinePolicy(), max_chars=max_chars)


def write_documents(documents: Iterable[core.Document], target: Path | str | IO[str], fmt: str) -> None:
    """``documents`` to ``target`` (a text stream, ``-``, or a file written atomically) in format ``fmt``."""
    if fmt in ("text", "lines"):
        raise MedlinkError(
            f"documents are not written as {fmt!r}: it holds no spans (plain output is rendered by the front end); "
            f"write one of {', '.join(WRITABLE_FORMATS)}"
        )
    if fmt not in _WRITERS:
        raise MedlinkError(f"unknown document format {fmt!r}; written: {', '.join(WRITABLE_FORMATS)}")
    _WRITERS[fmt](documents, target)


# --- text and lines ------------------------------------------------------------------------------------------------------


def read_text(source: Source, *, policy: InvalidLinePolicy, max_chars: int | None = None) -> Iterator[core.Document]:
    """The whole input as one document, its line endings kept (offsets index the file's characters); one over
    ``max_chars`` characters is refused without reading more than four bytes a character of it."""
    where = source_name(source)
    stem = Path(str(source).removesuffix(".gz")).stem if isinstance(source, (str, Path)) and str(source) != "-" else "stdin"
    with open_source(source, "text file") as handle:
        data, beyond = _read_at_most(handle, None if max_chars is None else 4 * max_chars)  # UTF-8: at most 4 bytes a character
    if beyond:
        policy.invalid(where, None, too_long(stem, None, max_chars))
        return
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        policy.invalid(where, line, f"not valid UTF-8 at byte {error.start + 1} of the file (save the file as UTF-8)")
        return
    document = core.Document.from_text(text, stem)
    problem = size_problem(document, max_chars)
    if problem:
        policy.invalid(where, None, problem)
        return
    yield document


def _read_at_most(handle: IO[bytes], limit: int | None, chunk: int = 1 << 20) -> tuple[bytes, bool]:
    """The bytes of ``handle`` and False, or, when there are more than ``limit``, what was read and True. Read in chunks:
    ``read(limit)`` would set aside ``limit`` bytes at once, however short the file."""
    if limit is None:
        return handle.read(), False
    chunks, size = [], 0
    while size <= limit and (piece := handle.read(chunk)):
        chunks.append(piece)
        size += len(piece)
    return b"".join(chunks), size > limit


def read_lines(source: Source, *, policy: InvalidLinePolicy, max_chars: int | None = None) -> Iterator[core.Document]:
    """One document per non-empty line, its id the line number."""
    where = source_name(source)
    for lineno, line in source_lines(source, policy, "text file"):
        if line.strip():
            document = core.Document.from_text(line, str(lineno))
            problem = size_problem(document, max_chars)
            if problem:
                policy.invalid(where, lineno, problem)
                continue
            yield document


# --- JSONL: read in corpora.jsonl_documents, written here (a linked annotation's candidates) ------------------------


def document_json(document: core.Document) -> dict:
    """A document as one JSON object: id, text (or passages when there are several, typed or offset), annotations."""
    payload = _document_head(document)
    payload["annotations"] = [annotation_json(a) for a in document.annotations]
    return payload


def _document_head(document: core.Document) -> dict:
    """``document_json`` without the annotations."""
    document_text(document)  # refuses annotations that would not read back
    payload: dict = {"id": document.doc_id}
    if document.infons:  # before the text: a reader of the first bytes sees who wrote the document (medlink annotate's mark)
        payload["infons"] = dict(document.infons)
    passages = document.passages
    if len(passages) == 1 and passages[0].offset == 0 and passages[0].kind is None and not passages[0].infons:
        payload["text"] = passages[0].text
    else:
        payload["passages"] = [
            {
                "offset": p.offset,
                "text": p.text,
                **({"type": p.kind} if p.kind is not None else {}),
                **({"infons": dict(p.infons)} if p.infons else {}),
            }
            for p in passages
        ]
    return payload


def annotation_json(annotation: core.Annotation) -> dict:
    """An annotation as JSON; a linked one also carries its candidates, probability and NIL decision."""
    from medlink.linking.output import candidate_json  # only when writing: reading documents needs no linker

    payload: dict = {
        "start": annotation.start,
        "end": annotation.end,
        "text": annotation.text,
        "type": annotation.type,
        "ids": list(annotation.ids),
        "source": annotation.source,
    }
    infons = annotation.written_infons()
    if infons:
        payload["infons"] = infons
    if annotation.short_form_of is not None:
        payload["short_form_of"] = list(annotation.short_form_of)
    result = annotation.result
    if result is not None:
        payload.update(candidates=[candidate_json(c) for c in result.candidates], probability=result.probability, nil=result.nil)
        if result.error:
            payload["error"] = result.error
    return payload


def write_jsonl(documents: Iterable[core.Document], target: Path | str | IO[str]) -> None:
    """One JSON object per line and document (a file is written atomically)."""
    with open_text_target(target) as out:
        for document in documents:
            write_document_line(document, out)


def write_document_line(document: core.Document, out: IO[str]) -> None:
    """``document_json`` as one line, each annotation turned into JSON as it is written: a long document's annotations
    are never all held as JSON at once. The same characters as ``json_text(document_json(document))``, unless an
    annotation alone holds a lone surrogate (then only that annotation's non-ASCII characters are escaped)."""
    value = _document_head(document)
    head = json.dumps(value, ensure_ascii=False)
    escaped = has_lone_surrogate(head)  # json_text's rule, for the whole line: every part escaped alike
    out.write((json.dumps(value) if escaped else head)[:-1] + ', "annotations": [')
    for number, annotation in enumerate(document.annotations):
        part = annotation_json(annotation)
        out.write((", " if number else "") + (json.dumps(part) if escaped else json_text(part)))
    out.write("]}\n")


_READERS: dict[str, Callable[..., Iterator[core.Document]]] = {
    "text": read_text,
    "lines": read_lines,
    "jsonl": read_jsonl,
    "pubtator": iter_pubtator,
    "bioc": read_bioc,
    "bioc-json": read_bioc_json,
}
_WRITERS: dict[str, Callable[[Iterable[core.Document], Path | str | IO[str]], None]] = {
    "jsonl": write_jsonl,
    "pubtator": write_pubtator,
    "bioc": write_bioc,
    "bioc-json": write_bioc_json,
}

"""PubTator corpora (NCBI Disease, BC5CDR): documents with their annotated spans, read and written.

Format: a title line ``PMID|t|text``, an abstract line ``PMID|a|text``, then one annotation per line
``PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids[<TAB>parts]``; blank lines separate documents.
Offsets are Python character offsets into ``title + " " + abstract``. Relation lines (BC5CDR's
``PMID<TAB>CID<TAB>id<TAB>id``) are skipped, and not written back.

One parser (``iter_pubtator``) gives ``core.Document``s with gold annotations (``ids`` the split ids,
sorted; ``source="gold"``; a 7th "parts" column in ``infons["parts"]``); ``load_pubtator_documents``
and ``load_pubtator`` view them as ``LabeledMention`` records for the evaluation.

Ids, from reading the NCBI files: ``|`` marks a composite mention ("breast or ovarian cancer"
``D001943|D010051``) or alternative ids of one concept (``OMIM:201400|C535668``), ``+`` a mention
of several concepts (``D007674+D006222``). The text does not say where a composite splits, so a
mention has one part unless a 7th column lists them (BC5CDR), and its gold set holds every id: any
match counts (more lenient than the BioSyn processed files, which split composites: use those for
the published NCBI protocol). ``OMIM:`` is stripped by default (MEDIC and BioSyn write OMIM ids bare).
Duplicate documents (PMID 8528200 twice in NCBI train) are kept unless ``skip_duplicate_documents``.

Bad input (``InvalidLinePolicy``: fail at the first, or skip and count): a line that is neither text
nor annotation, offsets outside the text, or a mention that is not the slice it claims is reported
with file, line and document id, in line order; the rest goes on. Surrounding whitespace of the
mention is ignored (NCBI train line 3249 pads it). Overlapping or nested gold spans are kept, not
skipped: the three NCBI files have none (checked), nested mentions are legitimate in other schemes,
and a tagger or evaluation decides what to do with them; each input reports them once, as a count
(a logged warning, ``report_overlaps``).

Writing: ids joined by ``|``; an annotation without ids writes ``-1`` (the corpora's "no concept",
read back as no ids). PubTator holds a title and an abstract: the passage at offset 0 is the title
and the rest of the text, later passages included, goes on the abstract line at its offsets (gaps as
spaces), so every offset holds but passage kinds past title / abstract are lost. Line breaks in a
text, and tabs in an annotation's fields, are written as spaces (same length).

The end of the module holds what the document formats share (inputs, atomic outputs, span checks).
"""

from __future__ import annotations

import io
import json
import logging
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable, Iterator

from medlink import core
from medlink.corpora.mentions import LabeledMention, is_unlinked, split_ids
from medlink.directories import atomic_file
from medlink.errors import MedlinkError, MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import open_bytes, raw_lines

log = logging.getLogger(__name__)
Source = Path | str | IO[bytes] | IO[str]  # a path ("-": stdin) or an open stream, binary or text
_TEXT_LINE = re.compile(r"^([^|\t]+)\|([ta])\|(.*)$")
_OFFSET = re.compile(r"[0-9]{1,12}")
DEFAULT_STRIP_PREFIXES = ("OMIM:",)
NO_IDS = "-1"
MAX_GAP = 100_000  # characters between passages; more is a damaged offset (and would fill memory with spaces)
_SURROGATE = re.compile("[\ud800-\udfff]")
_EXPECTED = "expected 'PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids' or a 'PMID|t|' / 'PMID|a|' text line"


@dataclass
class _Block:
    """One document as its lines are read: its text so far, annotation rows waiting for the text, annotations accepted."""

    doc_id: str
    title: str = ""
    abstract: str | None = None
    pending: list[tuple[int, list[str]]] = field(default_factory=list)
    accepted: list[tuple[int, core.Annotation]] = field(default_factory=list)

    def settle(self, where: str, policy: InvalidLinePolicy, strip: tuple[str, ...]) -> None:
        """Check the rows read so far against the text: as they come once the abstract is in (so reports follow the
        lines), else at the document's end."""
        text = f"{self.title} {self.abstract}" if self.abstract else self.title
        rows = ((lineno, "", _annotation(fields, len(text), strip), (0, len(text))) for lineno, fields in self.pending)
        self.accepted += checked_annotations(self.doc_id, rows, text, where, policy)
        self.pending.clear()

    def document(self) -> core.Document:
        document = core.Document.from_title_abstract(self.doc_id, self.title, self.abstract or "")
        document.annotations = [annotation for _, annotation in self.accepted]
        return document


def iter_pubtator(source: Source, *, policy: InvalidLinePolicy | None = None,
                  strip_id_prefixes: tuple[str, ...] = DEFAULT_STRIP_PREFIXES) -> Iterator[core.Document]:
    """Documents in file order (a path, ``.gz`` too, or a binary / text stream such as stdin), streamed."""
    policy = policy if policy is not None else InvalidLinePolicy()
    where, tally = source_name(source), OverlapTally()
    for block in _blocks(source_lines(source, policy, "PubTator file"), where, policy, strip_id_prefixes):
        tally.add(block.doc_id, block.accepted)
        yield block.document()
    report_overlaps(where, tally)


def read_pubtator(path: Source, *, policy: InvalidLinePolicy | None = None,
                  strip_id_prefixes: tuple[str, ...] = DEFAULT_STRIP_PREFIXES) -> list[core.Document]:
    """Every document of a PubTator file with its gold annotations (see ``iter_pubtator``)."""
    return list(iter_pubtator(path, policy=policy, strip_id_prefixes=strip_id_prefixes))


def _blocks(lines: Iterable[tuple[int, str]], where: str, policy: InvalidLinePolicy, strip: tuple[str, ...]) -> Iterator[_Block]:
    """Group lines into documents: a blank line, a title line or another PMID's text line starts the next."""
    block: _Block | None = None
    for lineno, line in lines:
        text_line = _TEXT_LINE.match(line)
        if block is not None and (not line.strip() or (text_line and (text_line[2] == "t" or text_line[1] != block.doc_id))):
            block.settle(where, policy, strip)
            yield block
            block = None
        if text_line:
            doc_id, kind, text = text_line.groups()
            block = block or _Block(doc_id)
            if kind == "t":
                block.title = text
            elif block.abstract is not None:
                policy.invalid(where, lineno, f"document {doc_id}: a second abstract line")
            else:
                block.abstract = text
        elif line.strip() and _add_row(block, line, lineno, where, policy) and block.abstract is not None:
            block.settle(where, policy, strip)
    if block is not None:
        block.settle(where, policy, strip)
        yield block


def _add_row(block: _Block | None, line: str, lineno: int, where: str, policy: InvalidLinePolicy) -> bool:
    """Queue an annotation row on its document; False for a relation line or a malformed one (reported)."""
    fields = line.split("\t")
    if len(fields) == 4 and not fields[1].strip().isdigit():
        return False  # relation line (BC5CDR chemical-induced disease)
    if len(fields) not in (6, 7):
        policy.invalid(where, lineno, f"{_EXPECTED}; found {len(fields)} tab-separated field(s)")
    elif block is None or block.doc_id != fields[0].strip():
        policy.invalid(where, lineno, f"annotation for document {fields[0].strip()[:40]!r} outside that document "
                                      "(its title line must come first)")
    else:
        block.pending.append((lineno, fields))
        return True
    return False


def _annotation(fields: list[str], length: int, strip: tuple[str, ...]) -> core.Annotation | str:
    """An annotation row as a gold Annotation (its text checked later against the document), or what is wrong with it."""
    start, end, ids = fields[1].strip(), fields[2].strip(), fields[5]
    if not _OFFSET.fullmatch(start) or not _OFFSET.fullmatch(end) or not int(start) < int(end) <= length:
        return f"{_EXPECTED}; offsets {start!r}..{end!r} do not make a span within the document text ({length} characters)"
    gold = split_ids(ids, strip)
    infons = {"parts": fields[6].strip()} if len(fields) == 7 and fields[6].strip() else {}
    return core.Annotation(int(start), int(end), fields[3], fields[4].strip() or None, () if is_unlinked(gold) else tuple(sorted(gold)),
                           source="gold", infons=infons)


# --- the evaluation's view: documents of LabeledMention records -------------------------------------------------------

@dataclass
class Document:
    """One PubTator document as the evaluation sees it: title, abstract and the labelled mentions annotated in it."""

    doc_id: str
    title: str
    abstract: str
    mentions: list[LabeledMention] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text PubTator offsets index: title, one space, abstract."""
        return f"{self.title} {self.abstract}" if self.abstract else self.title


def labeled_view(document: core.Document, keep_unlinked: bool = False) -> Document:
    """A document read by ``iter_pubtator`` as title, abstract and ``LabeledMention`` records (parts from ``infons["parts"]``)."""
    title = document.passages[0].text if document.passages else ""
    abstract = document.passages[1].text if len(document.passages) > 1 else ""
    mentions = [_labeled(document.doc_id, a) for a in document.annotations if keep_unlinked or not is_unlinked(frozenset(a.ids))]
    return Document(document.doc_id, title, abstract, mentions)


def _labeled(doc_id: str, annotation: core.Annotation) -> LabeledMention:
    parts = tuple(p.strip() for p in annotation.infons.get("parts", "").split("|") if p.strip()) or (annotation.text,)
    return LabeledMention(annotation.text, parts, frozenset(annotation.ids), doc_id, annotation.start, annotation.end, annotation.type)


def load_pubtator_documents(
    path: Path | str,
    *,
    policy: InvalidLinePolicy | None = None,
    strip_id_prefixes: tuple[str, ...] = DEFAULT_STRIP_PREFIXES,
    keep_unlinked: bool = False,
    skip_duplicate_documents: bool = False,
) -> list[Document]:
    """Documents in file order, each with its mentions in file order."""
    seen: set[str] = set()
    documents = []
    for document in iter_pubtator(path, policy=policy, strip_id_prefixes=strip_id_prefixes):
        if skip_duplicate_documents and document.doc_id in seen:
            continue
        seen.add(document.doc_id)
        documents.append(labeled_view(document, keep_unlinked))
    return documents


def load_pubtator(path: Path | str, **options) -> list[LabeledMention]:
    """Every annotated mention of a PubTator file, document by document (see ``load_pubtator_documents``)."""
    return [m for document in load_pubtator_documents(path, **options) for m in document.mentions]


# --- writing -----------------------------------------------------------------------------------------------------------

def write_pubtator(documents: Iterable[core.Document], path_or_stream: Path | str | IO[str]) -> None:
    """Documents as PubTator records (a file is written atomically: all of it or, on error, nothing)."""
    with open_text_target(path_or_stream) as out:
        for document in documents:
            out.write(pubtator_record(document))


def pubtator_record(document: core.Document) -> str:
    """One document's lines (title, abstract, annotations) and the blank line that ends it."""
    doc_id = document.doc_id
    if not doc_id or doc_id != doc_id.strip() or any(c in doc_id for c in "|\t\r\n"):
        raise MedlinkError(f"document {doc_id!r}: PubTator needs an id without '|', tabs, line breaks or surrounding spaces")
    text = document_text(document)
    first = min(document.passages, key=lambda p: p.offset, default=None)
    title = first.text if first is not None and first.offset == 0 else ""
    if len(text) > len(title) and text[len(title)] != " ":
        raise MedlinkError(f"document {doc_id}: a passage starts right after the title (offset {len(title)}); "
                           "PubTator needs one character between title and abstract")
    lines = [f"{doc_id}|t|{flat(title, tabs=False)}", f"{doc_id}|a|{flat(text[len(title) + 1:], tabs=False)}"]
    lines += [_annotation_line(doc_id, a) for a in document.annotations]
    return "\n".join(lines) + "\n\n"


def _annotation_line(doc_id: str, annotation: core.Annotation) -> str:
    fields = [doc_id, str(annotation.start), str(annotation.end), flat(annotation.text), flat(annotation.type or ""),
              flat("|".join(annotation.ids)) or NO_IDS]
    if annotation.infons.get("parts"):
        fields.append(flat(annotation.infons["parts"]))
    return "\t".join(fields)


# --- shared by the document formats (bioc_format, document_files): sources, targets, span checks ----------------------

def source_name(source: Source) -> str:
    """How errors name an input: its path, or the stream's name (``<stdin>``)."""
    if isinstance(source, (str, Path)):
        return "<stdin>" if str(source) == "-" else str(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<stream>"


@contextmanager
def open_source(source: Source, what: str) -> Iterator[IO[bytes]]:
    """The input as bytes: a file (``.gz`` decompressed), ``-`` for stdin, or a stream (a text stream's buffer)."""
    if isinstance(source, (str, Path)) and str(source) != "-":
        path = Path(source)
        if not path.is_file():
            raise MissingInputError(f"{what} not found: {path} (no such file)")
        with open_bytes(path) as handle:
            yield handle
        return
    stream = sys.stdin if isinstance(source, (str, Path)) else source
    if isinstance(stream, io.TextIOBase):
        buffer = getattr(stream, "buffer", None)
        stream = buffer if buffer is not None else io.BytesIO(stream.read().encode("utf-8"))
    yield stream


def source_lines(source: Source, policy: InvalidLinePolicy, what: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of an input, LF / CRLF / CR, a BOM dropped; a line that is not UTF-8 goes to ``policy``
    with its line and byte (``decoded_lines`` for streams too: stdin works)."""
    where = source_name(source)
    with open_source(source, what) as handle:
        for lineno, raw in enumerate(raw_lines(handle), 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                policy.invalid(where, lineno, f"not valid UTF-8 at byte {error.start + 1} of the line (save the file as UTF-8)")
                continue
            yield lineno, text.removeprefix("\ufeff") if lineno == 1 else text


@contextmanager
def open_text_target(target: Path | str | IO[str]) -> Iterator[IO[str]]:
    """Where a writer writes: a file, written atomically (complete or untouched), ``-`` for stdout, or a text stream."""
    if isinstance(target, (str, Path)) and str(target) != "-":
        with atomic_file(Path(target)) as out:
            yield out
    else:
        yield sys.stdout if isinstance(target, (str, Path)) else target


def flat(text: str, tabs: bool = True) -> str:
    """``text`` on one line (and ``tabs``: fields intact): line breaks (tabs) become spaces, and a lone surrogate (a
    command-line argument that was not UTF-8) U+FFFD, so the line can be encoded; same length, so offsets hold."""
    return _SURROGATE.sub("\ufffd", text.translate({9: 32, 10: 32, 13: 32} if tabs else {10: 32, 13: 32}))


def json_text(value: object) -> str:
    """``value`` as JSON, non-ASCII kept readable unless a lone surrogate forces escapes (it cannot be encoded)."""
    text = json.dumps(value, ensure_ascii=False)
    return json.dumps(value) if _SURROGATE.search(text) else text


def is_int(value: object) -> bool:
    """A JSON integer (``True`` is an int to Python, not an offset)."""
    return isinstance(value, int) and not isinstance(value, bool)


def passage_problem(passages: list[core.Passage]) -> str | None:
    """Why passages cannot be laid out as one text (overlap; a gap so large a damaged offset is likelier), or None."""
    at = 0
    for passage in sorted(passages, key=lambda p: p.offset):
        if passage.offset < at:
            return f"passage at offset {passage.offset} overlaps the one before (it ends at {at})"
        if passage.offset - at > MAX_GAP:
            return f"passage at offset {passage.offset} leaves {passage.offset - at} characters empty before it (at most {MAX_GAP})"
        at = passage.end
    return None


def document_text(document: core.Document) -> str:
    """The text a writer writes, after checking that its annotations index it (else they would not read back)."""
    try:
        text = document.text
    except ValueError as error:
        raise MedlinkError(str(error)) from None
    for annotation in document.annotations:
        problem = span_problem(annotation, text, 0, len(text))
        if problem:
            raise MedlinkError(f"document {document.doc_id}: {problem}; it cannot be written")
    return text


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:60] + "...")


def span_problem(annotation: core.Annotation, text: str, low: int, high: int) -> str | None:
    """Why ``annotation`` is not a span of ``text[low:high]`` whose text it gives (surrounding whitespace aside), or None."""
    start, end = annotation.start, annotation.end
    if not low <= start < end <= high:
        return f"span {start}..{end} is not a non-empty span within {low}..{high} (its passage or text)"
    actual = text[start:end]
    if annotation.text != actual and flat(annotation.text).strip() != flat(actual).strip():
        return f"mention {_short(annotation.text)} is not the text at {start}..{end} ({_short(actual)})"
    return None


@dataclass
class OverlapTally:
    """Overlapping or nested gold spans seen in one input: kept, and reported once per input as a count."""

    count: int = 0
    first: str | None = None

    def add(self, doc_id: str, located: list[tuple[int | None, core.Annotation]]) -> None:
        reach = -1
        for start, end, line in sorted((a.start, a.end, line or 0) for line, a in located):
            if start < reach:
                self.count += 1
                self.first = self.first or f"document {doc_id}" + (f", line {line}" if line else "")
            reach = max(reach, end)


def checked_annotations(doc_id: str, located: Iterable[tuple[int | None, str, core.Annotation | str, tuple[int, int]]], text: str,
                        where: str, policy: InvalidLinePolicy) -> list[tuple[int | None, core.Annotation]]:
    """From (line, label, annotation or why it is none, the range it must lie in): the annotations that are spans of
    ``text`` giving its text, their text set to the exact slice; the others go to ``policy`` with file, line, document
    and label, in order."""
    kept = []
    for line, label, annotation, (low, high) in located:
        problem = annotation if isinstance(annotation, str) else span_problem(annotation, text, low, high)
        if problem:
            policy.invalid(where, line, f"document {doc_id}: {label}{problem}")
        else:
            annotation.text = text[annotation.start:annotation.end]
            kept.append((line, annotation))
    return kept


def report_overlaps(where: str, tally: OverlapTally) -> None:
    """One warning per input for its overlapping gold spans (kept: nested mentions are legitimate in some corpora)."""
    if tally.count:
        log.warning("%s: %d overlapping or nested annotation span(s) kept (first: %s)", where, tally.count, tally.first)

"""PubTator corpora (NCBI Disease, BC5CDR): documents with their annotated spans, read and written.

Format: a title line ``PMID|t|text``, an abstract line ``PMID|a|text``, then one annotation per line
``PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids[<TAB>parts]``; blank lines separate documents.
Offsets are Python character offsets into ``title + " " + abstract``. Relation lines (BC5CDR's
``PMID<TAB>CID<TAB>id<TAB>id``: a relation type and two concept ids) are skipped, and not written back; a four-field
line with an offset or a mention where the ids go (``2<TAB>x<TAB>9<TAB>Fever``) is a damaged annotation row, reported.

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
nor annotation, a document id with a control character (a NUL byte, a BOM mid-file), offsets outside
the text, a line that is not UTF-8, or a mention that is not the slice it claims is reported
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

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from medlink import core
from medlink.corpora.document_io import (
    OverlapTally,
    Source,
    checked_annotations,
    control_character,
    document_text,
    flat,
    open_text_target,
    report_overlaps,
    size_problem,
    source_lines,
    source_name,
)
from medlink.corpora.mentions import LabeledMention, is_unlinked, ordered_ids, paired_ids, split_ids
from medlink.errors import MedlinkError
from medlink.kb.errors_policy import InvalidLinePolicy

log = logging.getLogger(__name__)
_TEXT_LINE = re.compile(r"^([^|\t]+)\|([ta])\|(.*)$")
_OFFSET = re.compile(r"[0-9]{1,12}")
_LINE_ID = re.compile(r"([^|\t]{1,40})(?:\|[ta]\||\t)")  # the PMID every line starts with
_RELATION_TYPE = re.compile(r"[A-Za-z][\w-]*")  # CID
_CONCEPT_ID = re.compile(r"(?=\S*[0-9])(?![0-9]+$)\S+")  # D008750, OMIM:201400: a digit, no bare number (an offset), no space
DEFAULT_STRIP_PREFIXES = ("OMIM:",)
NO_IDS = "-1"
_EXPECTED = "expected 'PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids' or a 'PMID|t|' / 'PMID|a|' text line"


@dataclass
class _Block:
    """One document as its lines are read: its text so far, annotation rows waiting for the text, annotations accepted."""

    doc_id: str
    line: int  # its first line
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


def iter_pubtator(
    source: Source,
    *,
    policy: InvalidLinePolicy | None = None,
    strip_id_prefixes: tuple[str, ...] = DEFAULT_STRIP_PREFIXES,
    max_chars: int | None = None,
) -> Iterator[core.Document]:
    """Documents in file order (a path, ``.gz`` too, or a binary / text stream such as stdin), streamed; one whose text is
    over ``max_chars`` characters goes to ``policy`` with its first line."""
    policy = policy if policy is not None else InvalidLinePolicy()
    where, tally = source_name(source), OverlapTally()
    for block in _blocks(source_lines(source, policy, "PubTator file", _line_document), where, policy, strip_id_prefixes):
        document = block.document()
        problem = size_problem(document, max_chars)
        if problem:
            policy.invalid(where, block.line, problem)
            continue
        tally.add(block.doc_id, block.accepted)
        yield document
    report_overlaps(where, tally)


def read_pubtator(
    path: Source, *, policy: InvalidLinePolicy | None = None, strip_id_prefixes: tuple[str, ...] = DEFAULT_STRIP_PREFIXES
) -> list[core.Document]:
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
        if text_line and control_character(text_line[1]):
            policy.invalid(
                where,
                lineno,
                f"document id {text_line[1][:40]!r} holds a control character ({control_character(text_line[1])}): a damaged line",
            )
        elif text_line:
            doc_id, kind, text = text_line.groups()
            block = block or _Block(doc_id, lineno)
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


def _line_document(line: str) -> str | None:
    """The document id a line starts with (``PMID|t|``, ``PMID<TAB>``), when it is a clean one: what names the document of
    a line that is not even UTF-8 (decoded with replacement characters to find it)."""
    found = _LINE_ID.match(line)
    return found[1].strip() if found and not control_character(found[1]) and "\ufffd" not in found[1] else None


def is_relation(fields: list[str]) -> bool:
    """A relation line (BC5CDR's ``PMID<TAB>CID<TAB>id<TAB>id``), told from an annotation row damaged down to four
    fields (``2<TAB>x<TAB>9<TAB>Fever``): a relation type, then two concept ids where a row has an offset and a mention.
    Why not "four fields, no number second": that takes the damaged row for a relation and drops it unsaid."""
    return (
        len(fields) == 4 and bool(_RELATION_TYPE.fullmatch(fields[1].strip())) and all(_CONCEPT_ID.fullmatch(f.strip()) for f in fields[2:])
    )


def _add_row(block: _Block | None, line: str, lineno: int, where: str, policy: InvalidLinePolicy) -> bool:
    """Queue an annotation row on its document; False for a relation line or a malformed one (reported)."""
    fields = line.split("\t")
    if is_relation(fields):
        return False
    if len(fields) not in (6, 7):
        document = f"document {block.doc_id}" if block is not None else "outside a document (no title line 'PMID|t|' opens one here)"
        policy.invalid(where, lineno, f"{document}: {_EXPECTED}; found {len(fields)} tab-separated field(s)")
    elif block is None or block.doc_id != fields[0].strip():
        policy.invalid(
            where, lineno, f"annotation for document {fields[0].strip()[:40]!r} outside that document (its title line must come first)"
        )
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
    return core.Annotation(
        int(start),
        int(end),
        fields[3],
        fields[4].strip() or None,
        () if is_unlinked(gold) else ordered_ids(ids, strip),  # in the file's order: a composite's ids pair with its parts
        source="gold",
        infons=infons,
    )


# --- the evaluation's view: documents of LabeledMention records -------------------------------------------------------


@dataclass
class LabeledDocument:
    """One PubTator document as the mention-level evaluation reads it: title, abstract and its labelled mentions (a
    view of a ``core.Document``, which is the one document type everything else takes)."""

    doc_id: str
    title: str
    abstract: str
    mentions: list[LabeledMention] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text PubTator offsets index: title, one space, abstract."""
        return f"{self.title} {self.abstract}" if self.abstract else self.title


def labeled_view(document: core.Document, keep_unlinked: bool = False) -> LabeledDocument:
    """A document read by ``iter_pubtator`` as title, abstract and ``LabeledMention`` records (parts from ``infons["parts"]``)."""
    title = document.passages[0].text if document.passages else ""
    abstract = document.passages[1].text if len(document.passages) > 1 else ""
    mentions = [_labeled(document.doc_id, a) for a in document.annotations if keep_unlinked or not is_unlinked(frozenset(a.ids))]
    return LabeledDocument(document.doc_id, title, abstract, mentions)


def _labeled(doc_id: str, annotation: core.Annotation) -> LabeledMention:
    parts = tuple(p.strip() for p in annotation.infons.get("parts", "").split("|") if p.strip()) or (annotation.text,)
    return LabeledMention(
        annotation.text,
        parts,
        frozenset(annotation.ids),
        doc_id,
        annotation.start,
        annotation.end,
        annotation.type,
        part_ids=paired_ids(parts, annotation.ids),
    )


def load_pubtator_documents(
    path: Path | str,
    *,
    policy: InvalidLinePolicy | None = None,
    strip_id_prefixes: tuple[str, ...] = DEFAULT_STRIP_PREFIXES,
    keep_unlinked: bool = False,
    skip_duplicate_documents: bool = False,
) -> list[LabeledDocument]:
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
            for line in pubtator_lines(document):
                out.write(line)


def pubtator_record(document: core.Document) -> str:
    """One document's lines (title, abstract, annotations) and the blank line that ends it."""
    return "".join(pubtator_lines(document))


def pubtator_lines(document: core.Document) -> Iterator[str]:
    """``pubtator_record``'s lines one at a time, each with its line break (a long document's annotations are never
    all held as lines at once); the checks come before the first."""
    doc_id = document.doc_id
    if not doc_id or doc_id != doc_id.strip() or any(c in doc_id for c in "|\t\r\n"):
        raise MedlinkError(f"document {doc_id!r}: PubTator needs an id without '|', tabs, line breaks or surrounding spaces")
    text = document_text(document)
    first = min(document.passages, key=lambda p: p.offset, default=None)
    title = first.text if first is not None and first.offset == 0 else ""
    if len(text) > len(title) and text[len(title)] != " ":
        raise MedlinkError(
            f"document {doc_id}: a passage starts right after the title (offset {len(title)}); "
            "PubTator needs one character between title and abstract"
        )
    return _lines_after_checks(doc_id, title, text, document.annotations)


def _lines_after_checks(doc_id: str, title: str, text: str, annotations: list[core.Annotation]) -> Iterator[str]:
    yield f"{doc_id}|t|{flat(title, tabs=False)}\n"
    yield f"{doc_id}|a|{flat(text[len(title) + 1 :], tabs=False)}\n"
    for annotation in annotations:
        yield _annotation_line(doc_id, annotation) + "\n"
    yield "\n"


def _annotation_line(doc_id: str, annotation: core.Annotation) -> str:
    fields = [
        doc_id,
        str(annotation.start),
        str(annotation.end),
        flat(annotation.text),
        flat(annotation.type or ""),
        flat("|".join(annotation.ids)) or NO_IDS,
    ]
    if annotation.infons.get("parts"):
        fields.append(flat(annotation.infons["parts"]))
    return "\t".join(fields)

"""PubTator corpora (NCBI Disease, BC5CDR): documents with their annotated mentions.

Format: a title line ``PMID|t|text``, an abstract line ``PMID|a|text``, then one annotation
per line ``PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids[<TAB>parts]``; documents are
separated by blank lines. Offsets index ``title + " " + abstract``. Relation lines
(``PMID<TAB>CID<TAB>id<TAB>id``, BC5CDR) are skipped.

Decisions, from reading the NCBI files: ``|`` in the ids marks either a composite mention
(``CompositeMention`` "breast or ovarian cancer" ``D001943|D010051``) or alternative ids for
one concept (``OMIM:201400|C535668``), and ``+`` a mention that denotes several concepts at
once (``D007674+D006222``). The raw text does not say where a composite splits, so a PubTator
mention has one part (the text as written) unless a 7th column lists the parts (BC5CDR), and its
gold set holds every id: any match counts. That is more lenient on composite mentions than the
BioSyn processed files (which split them); use those for the published NCBI protocol.
``OMIM:`` is stripped from ids by default because MEDIC and the BioSyn files write OMIM ids
bare. Duplicate documents (PMID 8528200 twice in the NCBI training file) are kept as written
unless ``skip_duplicate_documents``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from medlink.corpora.mentions import LabeledMention, is_unlinked, split_ids
from medlink.errors import MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import decoded_lines

_TEXT_LINE = re.compile(r"^([^|\t]+)\|([ta])\|(.*)$")
DEFAULT_STRIP_PREFIXES = ("OMIM:",)


@dataclass
class Document:
    """One PubTator document: title, abstract and the mentions annotated in it."""

    doc_id: str
    title: str
    abstract: str
    mentions: list[LabeledMention] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text PubTator offsets index: title, one space, abstract."""
        return f"{self.title} {self.abstract}" if self.abstract else self.title


def load_pubtator_documents(
    path: Path | str,
    *,
    policy: InvalidLinePolicy | None = None,
    strip_id_prefixes: tuple[str, ...] = DEFAULT_STRIP_PREFIXES,
    keep_unlinked: bool = False,
    skip_duplicate_documents: bool = False,
) -> list[Document]:
    """Documents in file order, each with its mentions in file order."""
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"PubTator file not found: {path} (no such file)")
    policy = policy or InvalidLinePolicy()
    documents: list[Document] = []
    seen: set[str] = set()
    current: Document | None = None
    skipping = False
    for lineno, line in decoded_lines(path, policy):
        if not line.strip():
            current = None
            continue
        text_line = _TEXT_LINE.match(line)
        if text_line:
            doc_id, kind, text = text_line.groups()
            if kind == "t" or current is None or current.doc_id != doc_id:
                skipping = skip_duplicate_documents and doc_id in seen
                seen.add(doc_id)
                current = Document(doc_id, "", "")
                if not skipping:
                    documents.append(current)
            if kind == "t":
                current.title = text
            else:
                current.abstract = text
            continue
        if skipping:
            continue
        mention = _annotation(line, current, strip_id_prefixes)
        if isinstance(mention, str):
            policy.invalid(path, lineno, mention)
        elif mention is not None and (keep_unlinked or not is_unlinked(mention.gold)):
            current.mentions.append(mention)
    return documents


def load_pubtator(path: Path | str, **options) -> list[LabeledMention]:
    """Every annotated mention of a PubTator file, document by document (see ``load_pubtator_documents``)."""
    return [m for document in load_pubtator_documents(path, **options) for m in document.mentions]


_EXPECTED = "expected 'PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids' or a 'PMID|t|' / 'PMID|a|' text line"


def _annotation(line: str, document: Document | None, strip_prefixes: tuple[str, ...]) -> LabeledMention | str | None:
    """Parse an annotation line: a mention, None for a relation line, or why it is malformed."""
    fields = line.split("\t")
    if len(fields) == 4 and not fields[1].strip().isdigit():
        return None  # relation line (BC5CDR chemical-induced disease)
    if len(fields) not in (6, 7):
        return f"{_EXPECTED}; found {len(fields)} tab-separated field(s)"
    doc_id, start, end, text, semantic_type, ids = (f.strip() for f in fields[:6])
    if document is None or document.doc_id != doc_id:
        return f"annotation for document {doc_id!r} outside that document (its title line must come first)"
    if not start.isdigit() or not end.isdigit() or int(start) > int(end) or int(end) > len(document.text):
        return f"{_EXPECTED}; offsets {start!r}..{end!r} do not lie within the document text ({len(document.text)} characters)"
    if not text:
        return f"{_EXPECTED}; empty mention"
    parts: tuple[str, ...] = (text,)
    if len(fields) == 7 and fields[6].strip():
        parts = tuple(p.strip() for p in fields[6].split("|") if p.strip()) or parts
    return LabeledMention(text, parts, split_ids(ids, strip_prefixes), doc_id, int(start), int(end), semantic_type or None)

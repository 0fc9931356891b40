"""What ``medlink annotate`` reads from its arguments and how its outputs are recognised.

Why a module: an output file may be replaced only by another run of the same command, judged by the mark every
output carries near its start (never by its name); the check and the mark belong together, beside the readers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from medlink.core import Document
from medlink.corpora.document_io import size_problem
from medlink.kb.errors_policy import InvalidLinePolicy


def text_documents(texts: list[str], policy: InvalidLinePolicy, max_chars: int) -> Iterator[Document]:
    """The texts given as arguments, one document each (id: its number); one over ``max_chars`` characters goes to
    ``policy``, named by its argument."""
    for number, item in enumerate(texts, 1):
        document = Document.from_text(item, str(number))
        problem = size_problem(document, max_chars)
        if problem:
            policy.invalid(f"text argument {number}", None, problem)
            continue
        yield document


SIGNATURE = "medlink_version"  # a document infon every written document carries (a key of medlink's own: no user infon is overwritten)
# what an earlier output holds near its start: the text format's first header line, the BioC collection's source, the
# JSONL document's infon (written right after its id). PubTator has no room for a mark: a gold corpus and an output
# look the same. An output of any of these formats may be replaced by another (the same kind: medlink annotate's)
_OUTPUT_MARKS = (
    re.compile(r"# [^\n]*\t\d+ mention\(s\)\n"),
    re.compile(r'\{"id": [^\n]*?, "infons": \{[^\n]*"medlink_version": "'),
    re.compile(r"<\?xml[^\n]*\n?<collection><source>medlink</source>"),
    re.compile(r'\{"source": "medlink"'),
)
MARK_WITHIN = 1 << 16  # characters read


def is_annotate_output(path: Path) -> bool:
    """Is ``path`` an earlier output of 'medlink annotate' (so --out may replace it)? Judged by the mark medlink
    writes (``_OUTPUT_MARKS``), never by the name; an empty file may always be replaced."""
    try:
        with open(path, encoding="utf-8") as stream:
            start = stream.read(MARK_WITHIN)
    except (OSError, UnicodeDecodeError):
        return False
    return start == "" or any(mark.match(start) for mark in _OUTPUT_MARKS)

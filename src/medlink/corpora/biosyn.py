"""BioSyn ``processed_*`` directories: one ``*.concept`` file per document, one labelled mention per line."""

from __future__ import annotations

import re
from pathlib import Path

from medlink.corpora.mentions import LabeledMention, is_unlinked, ordered_ids, paired_ids, split_ids
from medlink.errors import MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import decoded_lines


def load_biosyn(path: Path | str, *, policy: InvalidLinePolicy | None = None, keep_unlinked: bool = False) -> list[LabeledMention]:
    """Mentions from a BioSyn ``processed_*`` directory of ``*.concept`` files (or one such file).

    Line format ``PMID||start|end||type||mention||ids``; a composite mention joins its parts
    with ``|``. Files are read in file-name order, lines in file order, so runs are repeatable.
    """
    path = Path(path)
    policy = policy or InvalidLinePolicy()
    if path.is_dir():
        files = sorted(path.glob("*.concept"), key=lambda p: p.name)
        if not files:
            raise MissingInputError(f"no *.concept files in {path} (expected a BioSyn processed_* directory)")
    elif path.is_file():
        files = [path]
    else:
        raise MissingInputError(f"BioSyn mentions not found: {path} (no such file or directory)")
    mentions: list[LabeledMention] = []
    for file in files:
        for lineno, line in decoded_lines(file, policy):
            if not line.strip():
                continue
            mention = _biosyn_line(line)
            if isinstance(mention, str):
                policy.invalid(file, lineno, mention)
            elif keep_unlinked or not is_unlinked(mention.gold):
                mentions.append(mention)
    return mentions


_OFFSET = re.compile(r"[0-9]{1,12}")  # ASCII digits only ('²'.isdigit() is true), and no 5,000-digit number
_BIOSYN_EXPECTED = "expected 'PMID||start|end||type||mention||ids' (mention parts and ids joined by '|')"


def _biosyn_line(line: str) -> LabeledMention | str:
    """Parse one ``.concept`` line, or return why it is malformed."""
    fields = line.split("||")
    if len(fields) != 5:
        return f"{_BIOSYN_EXPECTED}; found {len(fields)} '||'-separated fields"
    doc_id, span, semantic_type, text, ids = (f.strip() for f in fields)
    start, sep, end = (s.strip() for s in span.partition("|"))
    if not sep or not _OFFSET.fullmatch(start) or not _OFFSET.fullmatch(end) or int(end) < int(start):
        return f"{_BIOSYN_EXPECTED}; span {span[:40]!r} is not 'start|end' (character offsets, start <= end)"
    parts = tuple(p.strip() for p in text.split("|"))
    if not text or not all(parts):
        return f"{_BIOSYN_EXPECTED}; empty mention or mention part"
    gold = split_ids(ids)
    if not gold:
        return f"{_BIOSYN_EXPECTED}; no concept id"
    return LabeledMention(
        text, parts, gold, doc_id or None, int(start), int(end), semantic_type or None, part_ids=paired_ids(parts, ordered_ids(ids))
    )

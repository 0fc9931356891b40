"""The on-disk form of mined pairs and hard negatives: TSV files that a person can read and grep.

``pairs.{train,dev}.tsv`` rows are ``task left right left_id right_id left_kind right_kind``;
``left`` plays the mention and ``right`` the concept (Kong et al. (2021)'s ``m`` and ``c``). Names keep
their original spelling, with tabs and line breaks turned into spaces so one row is one line.
Files are written atomically (temporary file + rename) so a crash never leaves half a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from medlink.errors import InputFormatError, MissingInputError
from medlink.kb.readers.files import decoded_lines

PAIR_COLUMNS = ("task", "left", "right", "left_id", "right_id", "left_kind", "right_kind")
NEGATIVE_COLUMNS = ("split", "left_id", "right_id", "relation", "left", "right")

# Characters some line splitters break on (str.splitlines): none may survive inside a field.
_BREAKS = {ord(c): " " for c in "\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}

_UNSAFE = re.compile("[" + "".join(chr(c) for c in _BREAKS if c != ord("\t")) + "]")

Row = tuple[str, str, str, str, str, str, str]  # PAIR_COLUMNS, in order


@dataclass(frozen=True, slots=True)
class Pair:
    """One mined (mention-side, concept-side) pair; ``left_id``/``right_id`` differ for graph pairs."""

    task: str
    left: str
    right: str
    left_id: str
    right_id: str
    left_kind: str = ""
    right_kind: str = ""


@dataclass(frozen=True, slots=True)
class Negative:
    """A related-but-different concept pair (ICD excludes1/excludes2), for hard-negative training."""

    split: str  # train | dev | cross (the two concepts are on different sides of the node split)
    left_id: str
    right_id: str
    relation: str
    left: str
    right: str


def clean(text: str) -> str:
    """A name fit for one TSV field: tabs and line breaks become spaces."""
    return text.translate(_BREAKS)


def tsv_line(fields: tuple[str, ...] | list[str]) -> str:
    """One TSV row; fields are cleaned only when the row shows a stray tab or break (the rare case)."""
    line = "\t".join(fields)
    if line.count("\t") != len(fields) - 1 or _UNSAFE.search(line):
        line = "\t".join(clean(f) for f in fields)
    return line + "\n"


def _read_rows(path: Path | str, columns: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of every data row, checking the header and the column count."""
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"pairs file not found: {path}")
    lines = decoded_lines(path, None)  # a line that is not UTF-8 fails with the file and line
    first = next(lines, (1, ""))[1]
    if first.split("\t") != list(columns):
        raise InputFormatError(path, 1, f"expected the header {' '.join(columns)!r} (tab-separated), found {first[:80]!r}")
    for lineno, line in lines:
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != len(columns):
            raise InputFormatError(
                path, lineno, f"expected {len(columns)} tab-separated columns ({', '.join(columns)}), found {len(fields)}"
            )
        yield lineno, fields


def read_pairs(path: Path | str) -> list[Pair]:
    """Every pair of a ``pairs.*.tsv`` file; a malformed line raises InputFormatError naming file and line."""
    pairs = []
    for lineno, fields in _read_rows(path, PAIR_COLUMNS):
        empty = [column for column, value in zip(PAIR_COLUMNS[:5], fields) if not value.strip()]
        if empty:
            raise InputFormatError(path, lineno, f"empty {', '.join(empty)} (a pair needs both texts and both concept ids)")
        pairs.append(Pair(*fields))
    return pairs


def read_negatives(path: Path | str) -> list[Negative]:
    """Every row of a ``negatives.tsv`` file (same error reporting as read_pairs)."""
    return [Negative(*fields) for _lineno, fields in _read_rows(path, NEGATIVE_COLUMNS)]

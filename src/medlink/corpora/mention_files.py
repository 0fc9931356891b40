"""Files of mentions to link (``medlink link --input``): stdin or a file of plain lines, TSV or JSONL."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from medlink.core import Mention
from medlink.errors import InputFormatError
from medlink.kb.readers.files import not_a_file, parse_json, raw_lines

FORMATS = ("lines", "tsv", "jsonl")
JSON_TEXT_KEYS = ("mention", "text")


def guess_format(path: Path | None) -> str:
    suffix = path.suffix.lower() if path else ""
    return {".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}.get(suffix, "lines")


def _raw_lines(path: Path | None) -> Iterator[tuple[int, bytes]]:
    if path is None:
        yield from enumerate(raw_lines(sys.stdin.buffer), 1)
        return
    if not path.is_file():
        raise not_a_file(path, "mention file")
    with open(path, "rb") as handle:
        yield from enumerate(raw_lines(handle), 1)


def read_mentions(path: Path | None, format_name: str, column: int = 0, header: bool = False) -> Iterator[str | Mention]:
    """Mentions, one per input line (LF, CRLF or CR; a BOM dropped): strings from plain lines and TSV; from JSONL a
    ``Mention`` carrying ``doc_id``, ``start``, ``end``, ``left`` and ``right`` when the object gives them.
    ``header``: the first line names columns and is skipped. Malformed or non-UTF-8 lines fail with file and line. A blank
    line is a blank mention in plain lines and TSV (the caller answers it in its place); in JSONL it is no object, skipped."""
    where = str(path) if path else "<stdin>"
    for lineno, raw in _raw_lines(path):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputFormatError(where, lineno, f"not valid UTF-8 (byte {error.start + 1}); save the file as UTF-8") from error
        if lineno == 1:
            line = line.removeprefix("\ufeff")
            if header:
                continue
        if format_name == "lines":
            yield line
        elif format_name == "tsv":
            if not line.strip():
                yield ""  # a blank row is a blank mention (answered in its place), not a row short of columns
                continue
            fields = line.split("\t")
            if column >= len(fields):
                raise InputFormatError(where, lineno, f"expected at least {column + 1} tab-separated fields, got {len(fields)}")
            yield fields[column]
        else:
            if not line.strip():
                continue
            item = parse_json(line, where, lineno)
            text = next((item[k] for k in JSON_TEXT_KEYS if isinstance(item, dict) and isinstance(item.get(k), str)), None)
            if text is None:
                raise InputFormatError(where, lineno, 'expected a JSON object with a "mention" (or "text") string')
            yield _with_position(item, text, where, lineno)


POSITION = {"doc_id": str, "start": int, "end": int, "left": str, "right": str}  # what a JSONL mention may say of its place


def _with_position(item: dict, text: str, where: str, lineno: int) -> str | Mention:
    """The mention with its document position and context, as the JSONL object gives them (a plain string without any)."""
    given = {key: item[key] for key in POSITION if item.get(key) is not None}
    for key, value in given.items():
        if not isinstance(value, POSITION[key]) or isinstance(value, bool):
            kind = "an integer (a character offset)" if POSITION[key] is int else "a string"
            raise InputFormatError(where, lineno, f'"{key}" must be {kind}, not {value!r}')
    return Mention(text, **given) if given else text

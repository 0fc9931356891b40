"""Where the documents of one JSON value start, as line numbers: ``json.loads`` gives values, not positions, and a
damaged document in a BioC JSON collection is reported by its line like a damaged line of any other format."""

from __future__ import annotations

import json
import re

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
CONTAINERS = ("documents", "PubTator3")  # the keys of a collection object that hold its documents


def document_lines(text: str, value: object) -> list[int] | None:
    """The line of each document of ``value`` (``json.loads(text)``, already known valid): a collection's or PubTator3's
    list, a bare list, or one document; None for anything else."""
    start = _SPACE.match(text).end()
    if isinstance(value, dict) and any(isinstance(value.get(key), list) for key in CONTAINERS):
        key = next(key for key in CONTAINERS if isinstance(value.get(key), list))
        offsets = _array_items(text, _member(text, start, key))
    elif isinstance(value, list):
        offsets = _array_items(text, start)
    elif isinstance(value, dict):
        offsets = [start]
    else:
        return None
    return _lines(text, offsets)


def _member(text: str, at: int, key: str) -> int:
    """Where the value of the last top-level ``key`` starts in the object at ``text[at]`` (``json.loads`` keeps the last)."""
    found, at = -1, _SPACE.match(text, at + 1).end()
    while text[at] != "}":
        name, at = _DECODER.raw_decode(text, at)
        at = _SPACE.match(text, _SPACE.match(text, at).end() + 1).end()  # past the ':'
        if name == key:
            found = at
        at = _next(text, _DECODER.raw_decode(text, at)[1])
    return found


def _array_items(text: str, at: int) -> list[int]:
    """Where each item of the array at ``text[at]`` starts."""
    items, at = [], _SPACE.match(text, at + 1).end()
    while text[at] != "]":
        items.append(at)
        at = _next(text, _DECODER.raw_decode(text, at)[1])
    return items


def _next(text: str, at: int) -> int:
    """Past the whitespace and the comma after a value: the next key or item, or the closing bracket."""
    at = _SPACE.match(text, at).end()
    return _SPACE.match(text, at + 1).end() if text[at] == "," else at


def _lines(text: str, offsets: list[int]) -> list[int]:
    """1-based line numbers of increasing offsets, counted in one pass."""
    lines, line, previous = [], 1, 0
    for offset in offsets:
        line += text.count("\n", previous, offset)
        lines.append(line)
        previous = offset
    return lines

"""The AskAPatient ontology: ``{"concept_id": [["primary", "name"], ...], ...}`` (1,036 SNOMED CT / AMT concepts).

The first name of kind ``primary`` (else the first name) is the preferred name; the others are
synonyms (``abbreviation`` kinds become abbreviations); the source's kind is kept as the name's
scope. Ids are kept as written so they match the fold files' gold ids, unless a prefix is given.
The file is small (about 60 kB), so it is read whole with ``json.load``; malformed entries are
reported with the file, the line of the concept key (found by a second scan of the text, only when needed) and the key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import partial
from json.decoder import scanstring
from pathlib import Path
from typing import Any

from medlink.errors import InputFormatError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import mover, parse_json, require_file
from medlink.kb.records import ABBREVIATION, PREFERRED, SYNONYM, ConceptRecord, NameRecord, Record, qualify

SOURCE = "askapatient"
_EXPECTED = 'expected a list of [kind, name] pairs, e.g. [["primary", "Arthralgia"]]'


def read_askapatient_ontology(path: Path | str, *, prefix: str = "", policy: InvalidLinePolicy | None = None) -> Iterator[Record]:
    """Stream one concept and its names per key of the ontology JSON object."""
    path = require_file(path, "AskAPatient ontology JSON")
    policy = policy or InvalidLinePolicy()
    text, data = _load(path)
    lines = _KeyLines(text)
    move = mover(policy)
    for key, entries in data.items():
        names = _names(entries)
        if not key.strip() or names is None:
            policy.invalid(path, lines.line_of(key), f"concept {key!r}: {_EXPECTED}" if key.strip() else "empty concept id")
            continue
        move(path, partial(lines.line_of, key))
        concept_id = qualify(prefix, key.strip())
        preferred = next((i for i, (kind, _) in enumerate(names) if kind.lower() == "primary"), 0)
        yield ConceptRecord(concept_id, names[preferred][1], SOURCE)
        for i, (kind, name) in enumerate(names):
            role = PREFERRED if i == preferred else ABBREVIATION if kind.lower().startswith("abbrev") else SYNONYM
            yield NameRecord(concept_id, name, role, scope=kind or None, source=SOURCE)


def _load(path: Path) -> tuple[str, dict[str, Any]]:
    """The text and the whole JSON object; decoding and syntax errors name the file and line."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise InputFormatError(path, line, "not valid UTF-8 (save the ontology JSON as UTF-8)") from error
    data = parse_json(text, path)
    if not isinstance(data, dict):
        raise InputFormatError(path, None, f'expected a JSON object {{"concept_id": [[kind, name], ...]}}, found {type(data).__name__}')
    return text, data


_SPACE = re.compile(r"[ \t\n\r]*")


class _KeyLines:
    """The line of each top-level key of a JSON object's text (the last of a repeated key, the one ``json.loads`` keeps),
    scanned once, when an error first needs one."""

    def __init__(self, text: str):
        self._text = text
        self._lines: dict[str, int] | None = None

    def line_of(self, key: str) -> int | None:
        if self._lines is None:
            self._lines = self._scan()
        return self._lines.get(key)

    def _scan(self) -> dict[str, int]:
        """Walk the object key by key (the text already parsed, so it is well-formed), counting line breaks on the way."""
        text, decoder, lines = self._text, json.JSONDecoder(), {}
        position = _SPACE.match(text).end() + 1  # past "{"
        line, counted = 1, 0
        while True:
            position = _SPACE.match(text, position).end()
            if position >= len(text) or text[position] != '"':
                return lines
            line += text.count("\n", counted, position)
            counted = position
            key, position = scanstring(text, position + 1)
            lines[key] = line
            position = _SPACE.match(text, position).end() + 1  # past ":"
            _, position = decoder.raw_decode(text, _SPACE.match(text, position).end())
            position = _SPACE.match(text, position).end()
            position += text.startswith(",", position)


def _names(entries: Any) -> list[tuple[str, str]] | None:
    """Validated (kind, name) pairs with blank names dropped, or None when the entry is malformed."""
    if not isinstance(entries, list):
        return None
    names: list[tuple[str, str]] = []
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(x, str) for x in entry)):
            return None
        if entry[1].strip():
            names.append((entry[0].strip(), entry[1].strip()))
    return names or None

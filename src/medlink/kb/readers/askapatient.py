"""The AskAPatient ontology: ``{"concept_id": [["primary", "name"], ...], ...}`` (1,036 SNOMED CT / AMT concepts).

The first name of kind ``primary`` (else the first name) is the preferred name; the others are
synonyms (``abbreviation`` kinds become abbreviations); the source's kind is kept as the name's
scope. Ids are kept as written so they match the fold files' gold ids, unless a prefix is given.
The file is small (about 60 kB), so it is read whole with ``json.load``; malformed entries are
reported with the file and the concept key (JSON has no useful line for a key).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from medlink.errors import InputFormatError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import parse_json, require_file
from medlink.kb.records import ABBREVIATION, PREFERRED, SYNONYM, ConceptRecord, NameRecord, Record, qualify

SOURCE = "askapatient"
_EXPECTED = 'expected a list of [kind, name] pairs, e.g. [["primary", "Arthralgia"]]'


def read_askapatient_ontology(path: Path | str, *, prefix: str = "", policy: InvalidLinePolicy | None = None) -> Iterator[Record]:
    """Stream one concept and its names per key of the ontology JSON object."""
    path = require_file(path, "AskAPatient ontology JSON")
    policy = policy or InvalidLinePolicy()
    data = _load(path)
    for key, entries in data.items():
        names = _names(entries)
        if not key.strip() or names is None:
            policy.invalid(path, None, f"concept {key!r}: {_EXPECTED}" if key.strip() else "empty concept id")
            continue
        concept_id = qualify(prefix, key.strip())
        preferred = next((i for i, (kind, _) in enumerate(names) if kind.lower() == "primary"), 0)
        yield ConceptRecord(concept_id, names[preferred][1], SOURCE)
        for i, (kind, name) in enumerate(names):
            role = PREFERRED if i == preferred else ABBREVIATION if kind.lower().startswith("abbrev") else SYNONYM
            yield NameRecord(concept_id, name, role, scope=kind or None, source=SOURCE)


def _load(path: Path) -> dict[str, Any]:
    """The whole JSON object; decoding and syntax errors name the file and line."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise InputFormatError(path, line, "not valid UTF-8 (save the ontology JSON as UTF-8)") from error
    data = parse_json(text, path)
    if not isinstance(data, dict):
        raise InputFormatError(path, None, f'expected a JSON object {{"concept_id": [[kind, name], ...]}}, found {type(data).__name__}')
    return data


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

"""medlink's own JSONL and TSV formats, so a private terminology loads without code.

The formats are documented for users in ``docs/kb-schema.md``; in short:

- JSONL: one concept object per line, keys ``id`` and ``name`` required, optional
  ``synonyms``, ``abbreviations``, ``types``, ``definition``, ``parents``, ``relations``,
  ``xrefs``, ``alt_ids``. Unknown keys and wrong types are errors naming the key and line.
- TSV: a header line, then one *name* per row; columns ``id`` and ``name`` required, optional
  ``kind``, ``type``, ``definition``, ``parent``, ``xref`` (``|`` joins several values).

Both read the file line by line (UTF-8, a BOM is tolerated, ``.gz`` is decompressed on the
fly), validate a whole line before yielding any of its records (so a skipped line leaves no
partial concept), and namespace ids, parents, relation targets and alt ids with ``prefix``
(xrefs are kept as written). The only state kept across lines is the set of ids that already
have a preferred name, so that an id repeated later in the file adds synonyms rather than a
second preferred name.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medlink.errors import InputFormatError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import decoded_lines, require_file
from medlink.kb.records import (
    ABBREVIATION,
    ALT_ID,
    IS_A,
    NAME_KINDS,
    PREFERRED,
    SYNONYM,
    ConceptRecord,
    IdAliasRecord,
    NameRecord,
    Record,
    RelationRecord,
    TypeRecord,
    XrefRecord,
    qualify,
)

JSONL_KEYS = ("id", "name", "synonyms", "abbreviations", "types", "definition", "parents", "relations", "xrefs", "alt_ids")
SYNONYM_KEYS = ("text", "kind", "scope", "lang")
RELATION_KEYS = ("relation", "target")
TSV_REQUIRED = ("id", "name")
TSV_COLUMNS = ("id", "name", "kind", "type", "definition", "parent", "xref")
TSV_KINDS = (PREFERRED, SYNONYM, ABBREVIATION, "inclusion")
SYNONYM_KINDS = tuple(kind for kind in NAME_KINDS if kind != PREFERRED)
MULTI_SEPARATOR = "|"
_NAME_LIST_COLUMNS = {"synonym", "synonyms", "alias", "aliases", "abbreviation", "abbreviations"}


class _Invalid(Exception):
    """A line does not match the format; carries the message for ``policy.invalid``."""


def _did_you_mean(word: str, allowed: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, allowed, n=1)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _describe(value: Any) -> str:
    """A JSON value's type and a short rendering, for error messages."""
    kind = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{kind.get(type(value), type(value).__name__)} {text}"


def _string(value: Any, field: str) -> str:
    """A required non-empty string (surrounding whitespace stripped)."""
    if not isinstance(value, str):
        raise _Invalid(f'field "{field}" must be a string, got {_describe(value)}')
    value = value.strip()
    if not value:
        raise _Invalid(f'field "{field}" must not be empty')
    return value


def _string_list(value: Any, field: str) -> list[str]:
    """A list of non-empty strings (``null`` = absent)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Invalid(f'field "{field}" must be an array of strings, got {_describe(value)}')
    return [_string(item, f"{field}[{i}]") for i, item in enumerate(value)]


# ---------------------------------------------------------------------------------------- JSONL


def _jsonl_synonyms(value: Any) -> list[tuple[str, str, str | None, str]]:
    """``synonyms``: strings or {"text", "kind", "scope", "lang"} objects -> (text, kind, scope, lang)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Invalid(f'field "synonyms" must be an array of strings or objects, got {_describe(value)}')
    synonyms = []
    for i, item in enumerate(value):
        field = f"synonyms[{i}]"
        if isinstance(item, str):
            synonyms.append((_string(item, field), SYNONYM, None, "en"))
            continue
        if not isinstance(item, dict):
            raise _Invalid(f'field "{field}" must be a string or an object {{"text": ...}}, got {_describe(item)}')
        for key in item:
            if key not in SYNONYM_KEYS:
                raise _Invalid(f'unknown key "{key}" in {field}{_did_you_mean(key, SYNONYM_KEYS)}; allowed: {", ".join(SYNONYM_KEYS)}')
        if "text" not in item:
            raise _Invalid(f'{field} has no "text"')
        text = _string(item["text"], f"{field}.text")
        kind = SYNONYM if item.get("kind") is None else _string(item["kind"], f"{field}.kind")
        if kind not in SYNONYM_KINDS:
            reserved = ' ("preferred" is the concept\'s "name")' if kind == PREFERRED else ""
            raise _Invalid(f'{field}.kind is "{kind}", expected one of {", ".join(SYNONYM_KINDS)}{reserved}')
        scope = None if item.get("scope") is None else _string(item["scope"], f"{field}.scope")
        lang = "en" if item.get("lang") is None else _string(item["lang"], f"{field}.lang")
        synonyms.append((text, kind, scope, lang))
    return synonyms


def _jsonl_relations(value: Any) -> list[tuple[str, str]]:
    """``relations``: {"relation", "target"} objects or [relation, target] pairs."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Invalid(f'field "relations" must be an array, got {_describe(value)}')
    relations = []
    for i, item in enumerate(value):
        field = f"relations[{i}]"
        if isinstance(item, dict):
            for key in item:
                if key not in RELATION_KEYS:
                    raise _Invalid(f'unknown key "{key}" in {field}{_did_you_mean(key, RELATION_KEYS)}; allowed: relation, target')
            missing = [key for key in RELATION_KEYS if key not in item]
            if missing:
                raise _Invalid(f'{field} has no "{missing[0]}"')
            relation, target = item["relation"], item["target"]
        elif isinstance(item, list) and len(item) == 2:
            relation, target = item
        else:
            raise _Invalid(f'{field} must be {{"relation": ..., "target": ...}} or [relation, target], got {_describe(item)}')
        relations.append((_string(relation, f"{field}.relation"), _string(target, f"{field}.target")))
    return relations


def _jsonl_line(text: str, prefix: str, source: str, has_preferred: set[str]) -> list[Record]:
    """All records of one JSONL line, or _Invalid."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as error:
        raise _Invalid(f"invalid JSON at column {error.colno}: {error.msg}") from None
    except RecursionError:
        raise _Invalid("JSON nested too deeply to read") from None
    if not isinstance(obj, dict):
        raise _Invalid(f'expected one JSON object per line ({{"id": ..., "name": ...}}), got {_describe(obj)}')
    for key in obj:
        if key not in JSONL_KEYS:
            raise _Invalid(f'unknown key "{key}"{_did_you_mean(key, JSONL_KEYS)}; allowed keys: {", ".join(JSONL_KEYS)}')
    for key in ("id", "name"):
        if key not in obj:
            raise _Invalid(f'missing required key "{key}"')
    concept_id = qualify(prefix, _string(obj["id"], "id"))
    name = _string(obj["name"], "name")
    definition = obj.get("definition")
    if definition is not None:
        if not isinstance(definition, str):
            raise _Invalid(f'field "definition" must be a string, got {_describe(definition)}')
        definition = " ".join(definition.split()) or None
    synonyms = _jsonl_synonyms(obj.get("synonyms"))
    abbreviations = _string_list(obj.get("abbreviations"), "abbreviations")
    types = _string_list(obj.get("types"), "types")
    parents = _string_list(obj.get("parents"), "parents")
    relations = _jsonl_relations(obj.get("relations"))
    xrefs = _string_list(obj.get("xrefs"), "xrefs")
    alt_ids = _string_list(obj.get("alt_ids"), "alt_ids")

    records: list[Record] = [ConceptRecord(concept_id, name, source, definition)]
    name_kind = SYNONYM if concept_id in has_preferred else PREFERRED
    names = [(name, name_kind, None, "en")] + synonyms + [(a, ABBREVIATION, None, "en") for a in abbreviations]
    seen: set[str] = set()
    for text_, kind, scope, lang in names:
        if text_ not in seen:
            seen.add(text_)
            records.append(NameRecord(concept_id, text_, kind, scope=scope, lang=lang, source=source))
    records.extend(TypeRecord(concept_id, t) for t in dict.fromkeys(types))
    edges = [(IS_A, p) for p in parents] + relations
    records.extend(RelationRecord(concept_id, rel, qualify(prefix, target), source) for rel, target in dict.fromkeys(edges))
    records.extend(XrefRecord(concept_id, x) for x in dict.fromkeys(xrefs))
    records.extend(IdAliasRecord(qualify(prefix, a), concept_id, ALT_ID) for a in dict.fromkeys(alt_ids))
    has_preferred.add(concept_id)
    return records


def read_jsonl(
    path: Path | str, *, prefix: str = "", policy: InvalidLinePolicy | None = None, source: str | None = None
) -> Iterator[Record]:
    """Stream the records of a medlink JSONL file (one concept object per line, docs/kb-schema.md).

    ``source`` labels the concepts (default: the file name without extension). Raises
    ``MissingInputError`` at once if the file is missing.
    """
    path = require_file(path, "JSONL terminology file")
    return _read_jsonl(path, prefix, policy or InvalidLinePolicy(), source or _stem(path))


def _read_jsonl(path: Path, prefix: str, policy: InvalidLinePolicy, source: str) -> Iterator[Record]:
    has_preferred: set[str] = set()
    for lineno, text in decoded_lines(path, policy):
        if not text.strip():
            continue
        try:
            records = _jsonl_line(text, prefix, source, has_preferred)
        except _Invalid as error:
            policy.invalid(path, lineno, str(error))
            continue
        yield from records


# ------------------------------------------------------------------------------------------ TSV


def _cell(value: str) -> str:
    """A TSV cell: surrounding spaces stripped, spreadsheet-style "quoting" removed."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1].replace('""', '"').strip()
    return value


def _multi(value: str) -> list[str]:
    """``a|b|c`` -> [a, b, c] (empty parts dropped)."""
    return [part.strip() for part in value.split(MULTI_SEPARATOR) if part.strip()]


def _tsv_header(path: Path, lineno: int, text: str, header_like_comment: str | None) -> list[str]:
    """Validate the header line and return its column names (lower-cased)."""
    columns = [_cell(c).lower() for c in text.split("\t")]
    seen_text = ", ".join(columns) if any(columns) else "(empty)"
    expected = f"expected tab-separated columns {', '.join(TSV_REQUIRED)} (required) and optionally {', '.join(TSV_COLUMNS[2:])}"
    missing = [c for c in TSV_REQUIRED if c not in columns]
    if missing:
        hint = ""
        if header_like_comment is not None:
            hint = f"; line {header_like_comment} looks like the header but starts with '#', which marks a comment"
        elif len(columns) == 1 and ("," in text or ";" in text):
            hint = "; the line has no tab: is the file comma- or semicolon-separated?"
        raise InputFormatError(
            path, lineno, f"header is missing required column(s) {', '.join(missing)}; header seen: {seen_text}; {expected}{hint}"
        )
    for column in columns:
        if column not in TSV_COLUMNS:
            hint = _did_you_mean(column, TSV_COLUMNS)
            if column in _NAME_LIST_COLUMNS:
                hint = " (one name per row: give each synonym or abbreviation its own row with the same id and a kind)"
            raise InputFormatError(path, lineno, f'unknown column "{column}" in the header{hint}; {expected}')
    duplicates = sorted({c for c in columns if columns.count(c) > 1})
    if duplicates:
        raise InputFormatError(path, lineno, f"column(s) {', '.join(duplicates)} appear more than once in the header")
    return columns


def read_tsv(path: Path | str, *, prefix: str = "", policy: InvalidLinePolicy | None = None, source: str | None = None) -> Iterator[Record]:
    """Stream the records of a medlink TSV file (header, then one name per row, docs/kb-schema.md).

    ``source`` labels the concepts (default: the file name without extension). Raises
    ``MissingInputError`` at once if the file is missing; a bad header raises ``InputFormatError``
    whatever the policy (no row can be read without it).
    """
    path = require_file(path, "TSV terminology file")
    return _read_tsv(path, prefix, policy or InvalidLinePolicy(), source or _stem(path))


def _read_tsv(path: Path, prefix: str, policy: InvalidLinePolicy, source: str) -> Iterator[Record]:
    columns: list[str] | None = None
    header_like_comment: str | None = None
    has_preferred: set[str] = set()
    current_id: str | None = None  # id of the previous row, to emit one ConceptRecord per group of rows
    group_seen: set[tuple[str, str]] = set()  # (field, value) already emitted for the current group
    for lineno, text in decoded_lines(path, policy):
        if not text.strip():
            continue
        if text.lstrip().startswith("#"):
            if columns is None and header_like_comment is None:
                names = [c.strip().lower() for c in text.lstrip().lstrip("#").split("\t")]
                if all(c in names for c in TSV_REQUIRED):
                    header_like_comment = str(lineno)
            continue
        if columns is None:
            columns = _tsv_header(path, lineno, text, header_like_comment)
            continue
        cells = text.split("\t")
        if len(cells) != len(columns):
            policy.invalid(
                path,
                lineno,
                f"expected {len(columns)} tab-separated columns ({', '.join(columns)}) as in the header, found {len(cells)}",
            )
            continue
        row = {column: _cell(cell) for column, cell in zip(columns, cells)}
        concept_id, name, kind = row["id"], row["name"], row.get("kind", "").lower()
        if not concept_id:
            policy.invalid(path, lineno, 'empty "id"')
            continue
        if not name:
            policy.invalid(path, lineno, f'empty "name" for id {concept_id}')
            continue
        if kind and kind not in TSV_KINDS:
            policy.invalid(path, lineno, f'unknown kind "{kind}" for id {concept_id}; expected one of {", ".join(TSV_KINDS)} or empty')
            continue
        concept_id = qualify(prefix, concept_id)
        if kind == PREFERRED and concept_id in has_preferred:
            policy.invalid(
                path,
                lineno,
                f'id {concept_id} already has a preferred name on an earlier line; use kind "synonym" for "{name}"',
            )
            continue
        if not kind:
            kind = SYNONYM if concept_id in has_preferred else PREFERRED
        if kind == PREFERRED:
            has_preferred.add(concept_id)

        new_group = concept_id != current_id
        if new_group:
            current_id = concept_id
            group_seen.clear()
        definition = " ".join(row.get("definition", "").split()) or None
        if kind == PREFERRED or definition or new_group:
            yield ConceptRecord(concept_id, name if kind == PREFERRED else None, source, definition)
        yield NameRecord(concept_id, name, kind, source=source)
        for type_name in _multi(row.get("type", "")):
            if ("type", type_name) not in group_seen:
                group_seen.add(("type", type_name))
                yield TypeRecord(concept_id, type_name)
        for parent in _multi(row.get("parent", "")):
            if ("parent", parent) not in group_seen:
                group_seen.add(("parent", parent))
                yield RelationRecord(concept_id, IS_A, qualify(prefix, parent), source)
        for xref in _multi(row.get("xref", "")):
            if ("xref", xref) not in group_seen:
                group_seen.add(("xref", xref))
                yield XrefRecord(concept_id, xref)
    if columns is None:
        raise InputFormatError(
            path, None, f"no header line: expected tab-separated columns {', '.join(TSV_COLUMNS)} (id and name required)"
        )


def _stem(path: Path) -> str:
    """``terms.tsv.gz`` -> ``terms``."""
    name = path.name
    for suffix in (".gz", ".jsonl", ".tsv", ".json", ".txt"):
        name = name.removesuffix(suffix)
    return name or path.name


__all__ = ["read_jsonl", "read_tsv", "JSONL_KEYS", "TSV_COLUMNS"]

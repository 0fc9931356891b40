"""OBO 1.2 ontologies (HPO, Disease Ontology, MONDO): one ``[Term]`` stanza at a time.

Kept: name, synonyms with scope (EXACT / RELATED / BROAD / NARROW) and synonym type
(``abbreviation`` becomes an abbreviation name; ``obsolete_synonym`` is dropped), def,
is_a, ``relationship:`` lines, xref, alt_id, namespace (as a type). Obsolete terms are skipped
unless ``include_obsolete``; their ``replaced_by`` is kept as an id alias so old ids resolve.
Ids are already CURIEs (``HP:0001250``), so the prefix is only applied when given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import decoded_lines, liner, mover, require_file
from medlink.kb.records import (
    ABBREVIATION,
    ALT_ID,
    IS_A,
    PREFERRED,
    REPLACED_BY,
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

_QUOTED = re.compile(r'^"((?:[^"\\]|\\.)*)"\s*(.*)$')
_ESCAPE = re.compile(r"\\(.)")
_SCOPES = {"EXACT", "RELATED", "BROAD", "NARROW"}
_DROPPED_SYNONYM_TYPES = {"obsolete_synonym"}


@dataclass
class _Stanza:
    """The tags of one [Term] stanza, collected until the stanza ends; each value keeps its line for the record check."""

    line: int
    id: str | None = None
    name: str | None = None
    definition: str | None = None
    namespace: str | None = None
    obsolete: bool = False
    lines: dict[str, int] = field(default_factory=dict)  # line of the id, name, def and namespace tags
    synonyms: list[tuple[str, str, str | None, int]] = field(default_factory=list)  # (text, scope, type, line)
    parents: list[tuple[str, int]] = field(default_factory=list)
    relations: list[tuple[str, str, int]] = field(default_factory=list)
    xrefs: list[tuple[str, int]] = field(default_factory=list)
    alt_ids: list[tuple[str, int]] = field(default_factory=list)
    replaced_by: list[tuple[str, int]] = field(default_factory=list)


def _strip_comment(value: str) -> str:
    """Drop a trailing ``! comment`` and ``{modifiers}`` from an unquoted tag value."""
    value = value.split(" !", 1)[0]
    if value.endswith("}") and " {" in value:
        value = value.rsplit(" {", 1)[0]
    return value.strip()


def _unquote(value: str) -> tuple[str, str] | None:
    """Split ``"quoted text" rest`` into (text, rest), resolving backslash escapes."""
    match = _QUOTED.match(value)
    if match is None:
        return None
    return _ESCAPE.sub(r"\1", match.group(1)), match.group(2)


STANZAS = ("[Term]", "[Typedef]", "[Instance]")  # OBO 1.2 / 1.4 stanza types


def _parse_tag(stanza: _Stanza, tag: str, value: str, line: int, fail) -> None:
    """Store one ``tag: value`` line (at ``line``) in ``stanza``; ``fail(message)`` reports a malformed value."""
    if tag in ("id", "name") and getattr(stanza, tag):  # OBO allows one of each: a second one is a merge gone wrong
        fail(
            f"a second '{tag}:' tag in this [Term] (the first: {getattr(stanza, tag)!r}); with --skip-invalid this line is skipped and the first kept"
        )
    elif tag == "id":
        stanza.id = _strip_comment(value)
        stanza.lines["id"] = line
    elif tag == "name":
        stanza.name = value.strip()
        stanza.lines["name"] = line
    elif tag == "def":
        parsed = _unquote(value)
        if parsed is None:
            fail('expected def: "text" [xrefs]')
        else:
            stanza.definition = parsed[0]
            stanza.lines["def"] = line
    elif tag == "synonym":
        parsed = _unquote(value)
        if parsed is None:
            fail('expected synonym: "text" SCOPE [TYPE] [xrefs]')
            return
        text, rest = parsed
        words = rest.split()
        scope = words[0] if words and words[0] in _SCOPES else "RELATED"  # OBO 1.2's default scope
        syn_type = words[1] if len(words) > 1 and not words[1].startswith("[") else None
        stanza.synonyms.append((text, scope, syn_type, line))
    elif tag == "exact_synonym":  # OBO 1.0 forms still found in old files
        parsed = _unquote(value)
        if parsed:
            stanza.synonyms.append((parsed[0], "EXACT", None, line))
    elif tag in ("related_synonym", "broad_synonym", "narrow_synonym"):
        parsed = _unquote(value)
        if parsed:
            stanza.synonyms.append((parsed[0], tag.split("_")[0].upper(), None, line))
    elif tag == "is_a":
        stanza.parents.append((_strip_comment(value), line))
    elif tag == "relationship":
        parts = _strip_comment(value).split()
        if len(parts) < 2:
            fail("expected relationship: RELATION TARGET_ID")
        else:
            stanza.relations.append((parts[0], parts[1], line))
    elif tag == "xref":
        xref = _strip_comment(value).split(' "', 1)[0].strip()
        if xref:
            stanza.xrefs.append((xref, line))
    elif tag == "alt_id":
        stanza.alt_ids.append((_strip_comment(value), line))
    elif tag == "is_obsolete":
        stanza.obsolete = value.strip().lower() == "true"
    elif tag == "replaced_by":
        stanza.replaced_by.append((_strip_comment(value), line))
    elif tag == "namespace":
        stanza.namespace = value.strip()
        stanza.lines["namespace"] = line


def _records(stanza: _Stanza, prefix: str, source: str, include_obsolete: bool, here: Callable[[int], None]) -> Iterator[Record]:
    """Turn one finished stanza into records; ``here(line)`` is told the line of each record's tag before it is yielded
    (for the concept's record, of its id, name and def tags)."""
    concept_id = qualify(prefix, stanza.id)
    here(stanza.lines["id"])
    if stanza.obsolete and not include_obsolete:
        for target, line in stanza.replaced_by:
            here(line)
            yield IdAliasRecord(concept_id, qualify(prefix, target), REPLACED_BY)
        return
    lines = stanza.lines
    here({None: lines["id"], "name": lines["name"], "definition": lines.get("def", lines["id"])})
    yield ConceptRecord(concept_id, stanza.name, source, stanza.definition)
    here(stanza.lines["name"])
    yield NameRecord(concept_id, stanza.name, PREFERRED, source=source)
    seen = {stanza.name}
    for text, scope, syn_type, line in stanza.synonyms:
        if syn_type in _DROPPED_SYNONYM_TYPES or text in seen:
            continue
        seen.add(text)
        kind = ABBREVIATION if syn_type and syn_type.lower() in ("abbreviation", "acronym") else SYNONYM
        here(line)
        yield NameRecord(concept_id, text, kind, scope=f"{scope} {syn_type}" if syn_type else scope, source=source)
    if stanza.namespace:
        here(stanza.lines["namespace"])
        yield TypeRecord(concept_id, stanza.namespace)
    for parent, line in stanza.parents:
        here(line)
        yield RelationRecord(concept_id, IS_A, qualify(prefix, parent), source)
    for relation, target, line in stanza.relations:
        here(line)
        yield RelationRecord(concept_id, relation, qualify(prefix, target), source)
    for xref, line in stanza.xrefs:
        here(line)
        yield XrefRecord(concept_id, xref)
    for alt_id, line in stanza.alt_ids:
        here(line)
        yield IdAliasRecord(qualify(prefix, alt_id), concept_id, ALT_ID)


def read_obo(
    path: Path | str,
    *,
    prefix: str = "",
    policy: InvalidLinePolicy | None = None,
    include_obsolete: bool = False,
    source: str | None = None,
) -> Iterator[Record]:
    """Stream the [Term] stanzas of an OBO file as records; other stanzas ([Typedef]...) are skipped."""
    path = require_file(path, "OBO file")
    policy = policy or InvalidLinePolicy()
    source = source or path.stem
    stanza: _Stanza | None = None
    in_term = False
    move, here = mover(policy), liner(policy)

    def finish() -> Iterator[Record]:
        if stanza is None:
            return
        if not stanza.id or not stanza.name:
            missing = "id" if not stanza.id else "name"
            policy.invalid(path, stanza.line, f"[Term] stanza has no '{missing}:' tag")
            return
        move(path, stanza.line)  # the stanza's records are one group: a refused one skips the stanza
        yield from _records(stanza, prefix, source, include_obsolete, here)

    for lineno, raw in decoded_lines(path, policy):
        line = raw.strip()
        if not line or line.startswith("!"):
            continue
        if line.startswith("["):
            yield from finish()
            in_term = line == "[Term]"
            stanza = _Stanza(lineno) if in_term else None
            if line not in STANZAS:  # '[Trem]' must not drop a term without a word
                policy.invalid(path, lineno, f"unknown stanza header {line[:40]!r}; expected one of {', '.join(STANZAS)}")
            continue
        if not in_term:
            continue  # header tags and [Typedef] stanzas
        tag, sep, value = line.partition(":")
        if not sep or not tag or " " in tag:
            policy.invalid(path, lineno, "expected 'tag: value'")
            continue

        def fail(message: str, _lineno: int = lineno) -> None:
            policy.invalid(path, _lineno, message)

        _parse_tag(stanza, tag, value.strip(), lineno, fail)
    yield from finish()

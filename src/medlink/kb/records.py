"""The records every KB reader yields and the store consumes.

Readers stream small records rather than whole concepts because some sources (UMLS RRF,
SNOMED RF2) spread one concept over several files. The store merges them: a later
``ConceptRecord`` for the same id fills in what an earlier one left empty, and a concept that
only ever received names gets its first name as preferred name when the build finishes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Kinds of name. ``preferred`` is the concept's display name; the others are aliases.
PREFERRED = "preferred"
SYNONYM = "synonym"
ABBREVIATION = "abbreviation"
INCLUSION = "inclusion"  # ICD-10-CM inclusion terms
NAME_KINDS = (PREFERRED, SYNONYM, ABBREVIATION, INCLUSION)

# Relation names with a fixed meaning across sources. ``head IS_A tail``: tail is the parent.
IS_A = "is_a"

# Why an id is an alias of another concept's id.
ALT_ID = "alt_id"
REPLACED_BY = "replaced_by"


@dataclass(slots=True)
class ConceptRecord:
    """A concept, or more facts about one already seen (fields left ``None`` keep their value)."""

    id: str
    name: str | None = None
    source: str | None = None
    definition: str | None = None


@dataclass(slots=True)
class NameRecord:
    """One name of a concept. ``scope`` keeps OBO's EXACT/RELATED/BROAD/NARROW or a source's term type."""

    concept_id: str
    text: str
    kind: str = SYNONYM
    scope: str | None = None
    lang: str = "en"
    source: str | None = None


@dataclass(slots=True)
class TypeRecord:
    """A semantic type or category of a concept (UMLS STY, SNOMED semantic tag, OBO namespace...)."""

    concept_id: str
    type: str


@dataclass(slots=True)
class RelationRecord:
    """``head relation tail``, e.g. ``HP:0001250 is_a HP:0012638``."""

    head: str
    relation: str
    tail: str
    source: str | None = None


@dataclass(slots=True)
class XrefRecord:
    """A cross-reference to another terminology, kept as the source wrote it (``MESH:D003924``)."""

    concept_id: str
    xref: str


@dataclass(slots=True)
class IdAliasRecord:
    """An id that should resolve to ``concept_id``: an alternative id or an obsolete id's replacement."""

    alias: str
    concept_id: str
    reason: str = ALT_ID


Record = ConceptRecord | NameRecord | TypeRecord | RelationRecord | XrefRecord | IdAliasRecord


@dataclass
class Concept:
    """A concept as the store returns it: everything known about one id."""

    id: str
    name: str
    source: str | None = None
    definition: str | None = None
    synonyms: list[tuple[str, str]] = field(default_factory=list)  # (text, kind) other than the preferred name
    types: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    relations: list[tuple[str, str]] = field(default_factory=list)  # (relation, tail) other than is_a
    xrefs: list[str] = field(default_factory=list)
    alt_ids: list[str] = field(default_factory=list)


def qualify(prefix: str, identifier: str) -> str:
    """Namespace an id (``qualify("ICD10CM", "I21.9") == "ICD10CM:I21.9"``); an empty prefix keeps it."""
    return f"{prefix}:{identifier}" if prefix else identifier


# C0 (tab, line breaks and NUL among them), DEL and C1: never part of an id or a name as a terminology means it.
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_RUN = re.compile(" *[\x00-\x1f\x7f-\x9f][\x00-\x1f\x7f-\x9f ]*")

# Fields that identify a concept (or, for xrefs, another terminology's): a control character there is an error, since an
# id is matched exactly and a repaired one would silently be another id.
IDENTIFIER_FIELDS: dict[type, tuple[str, ...]] = {
    ConceptRecord: ("id",),
    NameRecord: ("concept_id",),
    TypeRecord: ("concept_id",),
    RelationRecord: ("head", "tail"),
    XrefRecord: ("concept_id", "xref"),
    IdAliasRecord: ("alias", "concept_id"),
}
# Fields of words (names, definitions, labels): a control character there is replaced by a space, as a stray one is
# usually an export's or an encoding's slip, not meant; a required one left empty is an error.
TEXT_FIELDS: dict[type, tuple[str, ...]] = {
    ConceptRecord: ("name", "definition", "source"),
    NameRecord: ("text", "scope", "lang", "source"),
    TypeRecord: ("type",),
    RelationRecord: ("relation", "source"),
    XrefRecord: (),
    IdAliasRecord: (),
}
REQUIRED_TEXT_FIELDS = frozenset({(NameRecord, "text"), (TypeRecord, "type"), (RelationRecord, "relation")})
FIELD_LABELS = {
    (ConceptRecord, "id"): "id",
    (NameRecord, "concept_id"): "id",
    (TypeRecord, "concept_id"): "id",
    (RelationRecord, "head"): "id",
    (RelationRecord, "tail"): "relation target",
    (XrefRecord, "concept_id"): "id",
    (XrefRecord, "xref"): "xref",
    (IdAliasRecord, "alias"): "alternative id",
    (IdAliasRecord, "concept_id"): "id",
    (ConceptRecord, "name"): "name",
    (ConceptRecord, "definition"): "definition",
    (NameRecord, "text"): "name",
}


def first_control_character(text: str | None) -> str | None:
    """The first control character in ``text``, or None (the usual case answered by one C-level ``isprintable``)."""
    if text is None or text.isprintable():
        return None
    found = CONTROL_CHARACTERS.search(text)
    return found.group() if found else None


def without_control_characters(text: str) -> str:
    """``text`` with each run of control characters (and the spaces around it) made one space, ends stripped."""
    return _CONTROL_RUN.sub(" ", text).strip()


def describe_character(character: str) -> str:
    """``U+0000 (NUL)``: how an error names a control character (the raw one would be invisible or break the line)."""
    names = {"\x00": "NUL", "\t": "tab", "\n": "line feed", "\r": "carriage return", "\x1b": "escape", "\x7f": "DEL"}
    name = names.get(character)
    return f"U+{ord(character):04X}" + (f" ({name})" if name else "")

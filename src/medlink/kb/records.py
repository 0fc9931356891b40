"""The records every KB reader yields and the store consumes.

Readers stream small records rather than whole concepts because some sources (UMLS RRF,
SNOMED RF2) spread one concept over several files. The store merges them: a later
``ConceptRecord`` for the same id fills in what an earlier one left empty, and a concept that
only ever received names gets its first name as preferred name when the build finishes.
"""

from __future__ import annotations

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

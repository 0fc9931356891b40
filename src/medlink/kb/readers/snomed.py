"""SNOMED CT RF2 reader: streams concepts, descriptions, relationships, text definitions and
historical associations from a release's Snapshot directory.

Files (globbed, every match is read, in name order; the ``*`` before ``Snapshot`` also matches
extension packages such as ``sct2_Description_SpanishExtensionSnapshot-es_INT_...``)::

    Snapshot/Terminology/sct2_Concept_*Snapshot*.txt                required
    Snapshot/Terminology/sct2_Description_*Snapshot*.txt            required (one per language)
    Snapshot/Terminology/sct2_Relationship_*Snapshot*.txt           required (inferred + additional)
    Snapshot/Terminology/sct2_TextDefinition_*Snapshot*.txt         optional
    Snapshot/Refset/Language/der2_cRefset_Language*Snapshot*.txt    optional (picks preferred terms)
    Snapshot/Refset/Content/der2_cRefset_Association*Snapshot*.txt  optional (REPLACED BY / SAME AS)

Every file starts with its RF2 header, which is checked. Rows are read one line at a time; what
is kept in memory across files:

* the ids of *inactive* concepts (a Python set). Descriptions, definitions and relationships of
  inactive concepts have to be dropped while streaming, and descriptions often stay active after
  their concept is retired. Inactive concepts are the minority of the Snapshot (about 150k ids
  against 370k active ones in the International release), so this set is the smaller choice; it
  also means rows that refer to a concept absent from the concept files (an extension read
  without its base) are kept rather than silently lost;
* with a language refset: the ids of the descriptions it marks *preferred* (one FSN and one
  preferred synonym per concept, ~750k short strings, ~60 MB for the International release);
* the concepts that already have a text definition (a few thousand).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path

from medlink.errors import InputFormatError, MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import as_set, decoded_lines
from medlink.kb.records import (
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
)

SOURCE = "SNOMEDCT"

FSN_TYPE = "900000000000003001"
SYNONYM_TYPE = "900000000000013009"
IS_A_TYPE = "116680003"
PREFERRED_ACCEPTABILITY = "900000000000548007"
US_ENGLISH_REFSET = "900000000000509007"
GB_ENGLISH_REFSET = "900000000000508004"
REPLACED_BY_REFSET = "900000000000526001"
SAME_AS_REFSET = "900000000000527005"

# Common attribute types, named after their FSN; any other type becomes "attr:<typeId>".
ATTRIBUTE_NAMES = {
    "363698007": "finding_site",
    "116676008": "associated_morphology",
    "246075003": "causative_agent",
    "370135005": "pathological_process",
    "42752001": "due_to",
    "255234002": "after",
    "263502005": "clinical_course",
    "246454002": "occurrence",
    "363713009": "has_interpretation",
    "363714003": "interprets",
    "47429007": "associated_with",
    "246112005": "severity",
    "272741003": "laterality",
}

CONCEPT_HEADER = ("id", "effectiveTime", "active", "moduleId", "definitionStatusId")
DESCRIPTION_HEADER = (
    "id",
    "effectiveTime",
    "active",
    "moduleId",
    "conceptId",
    "languageCode",
    "typeId",
    "term",
    "caseSignificanceId",
)
RELATIONSHIP_HEADER = (
    "id",
    "effectiveTime",
    "active",
    "moduleId",
    "sourceId",
    "destinationId",
    "relationshipGroup",
    "typeId",
    "characteristicTypeId",
    "modifierId",
)
LANGUAGE_REFSET_HEADER = ("id", "effectiveTime", "active", "moduleId", "refsetId", "referencedComponentId", "acceptabilityId")
ASSOCIATION_REFSET_HEADER = (
    "id",
    "effectiveTime",
    "active",
    "moduleId",
    "refsetId",
    "referencedComponentId",
    "targetComponentId",
)

# Name scopes: the FSN as written, the FSN without its semantic tag, the language refset's
# preferred term, any other synonym.
SCOPE_FSN = "FSN"
SCOPE_FSN_UNTAGGED = "FSN-untagged"
SCOPE_PT = "PT"
SCOPE_SY = "SY"


def _snapshot_dir(path: str | Path | None) -> Path:
    if path is None:
        raise MissingInputError("the snomed reader needs an RF2 Snapshot directory (containing Terminology/)")
    path = Path(path)
    if not path.exists():
        raise MissingInputError(f"SNOMED CT RF2 directory not found: {path}")
    if not path.is_dir():
        raise MissingInputError(f"SNOMED CT input must be an RF2 Snapshot directory, not a file: {path}")
    if (path / "Terminology").is_dir():
        return path
    if (path / "Snapshot" / "Terminology").is_dir():
        return path / "Snapshot"
    raise MissingInputError(f"no Terminology/ or Snapshot/Terminology/ directory in {path} (expected an RF2 Snapshot directory)")


def _glob(directory: Path, pattern: str, *, required: bool) -> list[Path]:
    files = sorted(p for p in directory.glob(pattern) if p.is_file()) if directory.is_dir() else []
    if required and not files:
        raise MissingInputError(f"no SNOMED CT RF2 file {directory / pattern}")
    return files


def _rf2_rows(
    path: Path, header: tuple[str, ...], what: str, policy: InvalidLinePolicy, *, active_only: bool = True
) -> Iterator[tuple[int, list[str]]]:
    """Yield (line number, fields) for the rows of an RF2 file, whose header must be exactly ``header``.

    A row without one field per header column goes to ``policy`` (a blank line is ignored); with
    ``active_only``, rows whose ``active`` is not ``1`` are dropped unread. The end of line is
    stripped from the last field.
    """
    nfields = len(header)
    lines = decoded_lines(path, policy)
    first = next(lines, (1, ""))[1]
    if tuple(first.split("\t")) != header:
        expected = "\\t".join(header)
        found = first.replace("\t", "\\t")[:200]
        raise InputFormatError(path, 1, f"expected the RF2 header '{expected}', got '{found}'")
    for lineno, line in lines:
        parts = line.split("\t")
        if len(parts) != nfields:
            if len(parts) > 1 or parts[0].strip():
                policy.invalid(path, lineno, f"expected {nfields} tab-separated fields ({what}), got {len(parts)}")
            continue
        if active_only and parts[2] != "1":
            continue
        yield lineno, parts


def read_snomed(
    path: str | Path | None,
    *,
    prefix: str = "SCTID",
    policy: InvalidLinePolicy | None = None,
    include_inactive: bool = False,
    language_refset: str | None = US_ENGLISH_REFSET,
    preferred_language: str = "en",
    languages: Iterable[str] | str | None = None,
    relations: bool = True,
    definitions: bool = True,
    aliases: bool = True,
) -> Iterator[Record]:
    """Stream the records of an RF2 Snapshot directory (or of a directory that contains ``Snapshot/``).

    Options:
        include_inactive: also read inactive concepts (their active descriptions, relationships...).
            Descriptions and relationships are always read only when active themselves.
        language_refset: refsetId whose *preferred* synonym names each concept (default US English,
            ``GB_ENGLISH_REFSET`` for GB). ``None``, or no language refset file: the FSN of
            ``preferred_language`` without its semantic tag names the concept.
        preferred_language: languageCode of the FSNs that give the semantic tag (TypeRecord) and,
            without a refset, the preferred name.
        languages: languageCodes of the descriptions to keep (``None``: all).
        relations / definitions / aliases: read relationships / text definitions / the
            REPLACED BY and SAME AS association refsets (inactive id -> active concept alias).

    A missing directory or required file raises ``MissingInputError`` at call time, a wrong header
    ``InputFormatError`` (whatever ``skip_invalid`` says); records stream lazily.
    """
    policy = policy if policy is not None else InvalidLinePolicy()
    snapshot = _snapshot_dir(path)
    terminology = snapshot / "Terminology"
    concept_files = _glob(terminology, "sct2_Concept_*Snapshot*.txt", required=True)
    description_files = _glob(terminology, "sct2_Description_*Snapshot*.txt", required=True)
    relationship_files = _glob(terminology, "sct2_Relationship_*Snapshot*.txt", required=True)
    definition_files = _glob(terminology, "sct2_TextDefinition_*Snapshot*.txt", required=False)
    language_files = _glob(snapshot / "Refset" / "Language", "der2_cRefset_Language*Snapshot*.txt", required=False)
    association_files = _glob(snapshot / "Refset" / "Content", "der2_cRefset_Association*Snapshot*.txt", required=False)

    inactive: set[str] = set()
    preferred: set[str] | None = set() if (language_refset and language_files) else None
    language_set = as_set(languages)
    skip = None if include_inactive else inactive

    parts: list[Iterator[Record]] = []
    # Generators run lazily, in this order: the refset and the concepts fill ``preferred`` and
    # ``inactive`` before the descriptions and relationships are read.
    if preferred is not None:
        parts.extend(_read_language_refset(f, policy, language_refset, preferred) for f in language_files)
    parts.extend(_read_concepts(f, prefix, policy, include_inactive, inactive) for f in concept_files)
    parts.extend(_read_descriptions(f, prefix, policy, skip, language_set, preferred, preferred_language) for f in description_files)
    if definitions:
        defined: set[str] = set()
        parts.extend(_read_text_definitions(f, prefix, policy, skip, language_set, defined) for f in definition_files)
    if relations:
        parts.extend(_read_relationships(f, prefix, policy, skip) for f in relationship_files)
    if aliases and not include_inactive:
        parts.extend(_read_associations(f, prefix, policy, inactive) for f in association_files)
    return chain.from_iterable(parts)


def _read_language_refset(path: Path, policy: InvalidLinePolicy, refset: str, preferred: set[str]) -> Iterator[Record]:
    """Collect the ids of the descriptions ``refset`` marks preferred (yields nothing)."""
    add = preferred.add
    for _, parts in _rf2_rows(path, LANGUAGE_REFSET_HEADER, "language refset", policy):
        if parts[4] == refset and parts[6] == PREFERRED_ACCEPTABILITY:
            add(parts[5])
    return
    yield  # a generator, so that it runs in turn with the others


def _read_concepts(path: Path, prefix: str, policy: InvalidLinePolicy, include_inactive: bool, inactive: set[str]) -> Iterator[Record]:
    for lineno, parts in _rf2_rows(path, CONCEPT_HEADER, "concept", policy, active_only=False):
        sctid = parts[0]
        active = parts[2]
        if not sctid.isdigit() or active not in ("0", "1"):
            policy.invalid(path, lineno, "expected a numeric concept id and active 0 or 1 (concept)")
            continue
        if active == "0":
            inactive.add(sctid)
            if not include_inactive:
                continue
        yield ConceptRecord(f"{prefix}:{sctid}" if prefix else sctid, None, SOURCE)


def _read_descriptions(
    path: Path,
    prefix: str,
    policy: InvalidLinePolicy,
    inactive: set[str] | None,
    languages: frozenset[str] | None,
    preferred: set[str] | None,
    preferred_language: str,
) -> Iterator[Record]:
    Name = NameRecord
    for lineno, parts in _rf2_rows(path, DESCRIPTION_HEADER, "description", policy, active_only=False):
        if parts[2] != "1":
            if parts[2] != "0":
                policy.invalid(path, lineno, f"expected active 0 or 1 (description), got {parts[2]!r}")
            continue
        concept = parts[4]
        if inactive is not None and concept in inactive:
            continue
        lang = parts[5]
        if languages is not None and lang not in languages:
            continue
        term = parts[7]
        if not term or not concept.isdigit():
            policy.invalid(path, lineno, "expected a numeric conceptId and a non-empty term (description)")
            continue
        cid = f"{prefix}:{concept}" if prefix else concept

        if parts[6] == FSN_TYPE:
            untagged = term
            primary = lang == preferred_language
            if term[-1] == ")":
                cut = term.rfind(" (")
                if cut > 0:
                    untagged = term[:cut]
                    if primary:
                        yield TypeRecord(cid, term[cut + 2 : -1])
            # The untagged text comes first: a concept the refset gives no preferred term
            # is then named by it (the store names such concepts by their first name).
            if preferred is None and primary:
                # No language refset: the FSN without its tag names the concept.
                yield ConceptRecord(cid, untagged, SOURCE)
                if untagged is term:
                    yield Name(cid, term, PREFERRED, SCOPE_FSN, lang, SOURCE)
                    continue
                yield Name(cid, untagged, PREFERRED, SCOPE_FSN_UNTAGGED, lang, SOURCE)
            else:
                if untagged is not term:
                    yield Name(cid, untagged, SYNONYM, SCOPE_FSN_UNTAGGED, lang, SOURCE)
            yield Name(cid, term, SYNONYM, SCOPE_FSN, lang, SOURCE)
        elif preferred is not None and parts[0] in preferred:
            yield ConceptRecord(cid, term, SOURCE)
            yield Name(cid, term, PREFERRED, SCOPE_PT, lang, SOURCE)
        else:
            yield Name(cid, term, SYNONYM, SCOPE_SY, lang, SOURCE)


def _read_text_definitions(
    path: Path,
    prefix: str,
    policy: InvalidLinePolicy,
    inactive: set[str] | None,
    languages: frozenset[str] | None,
    defined: set[str],
) -> Iterator[Record]:
    """The first active text definition of each concept (``defined`` spans all definition files)."""
    for lineno, parts in _rf2_rows(path, DESCRIPTION_HEADER, "text definition", policy):
        concept = parts[4]
        if concept in defined or (inactive is not None and concept in inactive):
            continue
        if languages is not None and parts[5] not in languages:
            continue
        term = parts[7]
        if not term or not concept.isdigit():
            policy.invalid(path, lineno, "expected a numeric conceptId and a non-empty term (text definition)")
            continue
        defined.add(concept)
        yield ConceptRecord(f"{prefix}:{concept}" if prefix else concept, definition=term)


def _read_relationships(path: Path, prefix: str, policy: InvalidLinePolicy, inactive: set[str] | None) -> Iterator[Record]:
    names = ATTRIBUTE_NAMES
    for lineno, parts in _rf2_rows(path, RELATIONSHIP_HEADER, "relationship", policy):
        source = parts[4]
        destination = parts[5]
        if inactive is not None and (source in inactive or destination in inactive):
            continue
        type_id = parts[7]
        if not (source.isdigit() and destination.isdigit() and type_id.isdigit()):
            policy.invalid(path, lineno, "expected numeric sourceId, destinationId and typeId (relationship)")
            continue
        if source == destination:
            continue
        if type_id == IS_A_TYPE:
            relation = IS_A
        else:
            relation = names.get(type_id) or f"attr:{type_id}"
        if prefix:
            source = f"{prefix}:{source}"
            destination = f"{prefix}:{destination}"
        yield RelationRecord(source, relation, destination, SOURCE)


def _read_associations(path: Path, prefix: str, policy: InvalidLinePolicy, inactive: set[str]) -> Iterator[Record]:
    """REPLACED BY / SAME AS rows of inactive concepts pointing to an active one -> id aliases."""
    refsets = (REPLACED_BY_REFSET, SAME_AS_REFSET)
    for _, parts in _rf2_rows(path, ASSOCIATION_REFSET_HEADER, "association refset", policy):
        if parts[4] not in refsets:
            continue
        old = parts[5]
        new = parts[6]
        if old not in inactive or not new or new in inactive:
            continue  # not a retired concept (descriptions have associations too), or no active target
        if prefix:
            old, new = f"{prefix}:{old}", f"{prefix}:{new}"
        yield IdAliasRecord(old, new, REPLACED_BY)

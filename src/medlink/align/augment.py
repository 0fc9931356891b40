"""Metadata transfer (Varma et al. 2021): carry a target KB's definitions, types / ancestors and synonyms into a source KB
through mappings, each added fact with its provenance.

This module decides what each mapping carries (by its predicate and confidence) and reads it from the target KB; the
KB API (``kb.edits.augment``) writes the augmented copy: the source KB is never changed, every added row is listed
with the mapping that brought it (``medlink kb show`` / ``kb info``), and ``medlink kb unaugment`` (``kb.edits.unaugment``)
gives back the source KB's content and checksum. An augmented KB may be augmented again: the rounds accumulate.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from medlink.align.sssom import EXACT, NO_TERM, read_sssom, resolve
from medlink.directories import require_replaceable_file
from medlink.errors import InputFormatError, MedlinkError
from medlink.kb.edits import CarriedFact
from medlink.kb.edits import augment as augment_copy
from medlink.kb.schema import is_kb_file
from medlink.kb.store import KB

CARRY = ("definitions", "types", "ancestors", "synonyms")
ANCESTOR_LEVELS = 3
# Synonyms are carried only through a target concept that one source concept maps to: when several source concepts
# map to one target (MEDIC's "Colonic Neoplasms" and "Colorectal Neoplasms" -> DO "colorectal cancer"), its names would
# be added to each of them and make them tie.
# what each predicate carries: an equivalence everything; a close or broader match the target's types and ancestors (what
# kind of thing the source is), never its names or definition; a narrower or related match nothing
EQUIVALENT = {EXACT, "owl:equivalentClass"}
CATEGORY = {"skos:closeMatch", "skos:broadMatch"}
MAX_SYNONYMS = 10  # per mapping: a MEDIC concept has dozens of permuted entry terms


@dataclass
class AugmentReport:
    mappings_used: int = 0
    mappings_below_confidence: int = 0
    no_term_rows: int = 0
    negated_rows: int = 0  # predicate_modifier Not
    carrying_nothing: int = 0  # a predicate that is neither an equivalence nor a close or broader match (narrowMatch, relatedMatch)
    added: dict[str, int] = field(default_factory=dict)
    concepts_augmented: int = 0

    def summary(self) -> str:
        added = ", ".join(f"{count:,} {what}" for what, count in self.added.items()) or "nothing"
        return (
            f"{self.mappings_used:,} mappings used ({self.mappings_below_confidence:,} below --min-confidence, "
            f"{self.no_term_rows:,} NoTermFound rows, {self.negated_rows:,} negated, {self.carrying_nothing:,} narrow or related "
            f"matches carrying nothing), {self.concepts_augmented:,} concepts augmented: added {added}"
        )


def _ancestor_names(other: KB, concept_id: str) -> list[str]:
    names, frontier, seen = [], [concept_id], {concept_id}
    for _ in range(ANCESTOR_LEVELS):
        frontier = [p for c in frontier for p in other.parents(c) if p not in seen]
        seen.update(frontier)
        names += [n for n in map(other.name_of, frontier) if n]
    return names


def _facts(other: KB, object_id: str, carry: list[str], shared: bool = False, equivalent: bool = True) -> list[tuple[str, str]]:
    """(field, value) pairs the target concept offers: no synonyms when it is ``shared`` by several source concepts;
    only types and ancestors through a mapping that is not an ``equivalent`` (a close or broad match: "Acute myocardial
    infarction" is a close match of "myocardial infarction", neither its synonym nor its definition)."""
    concept = other.concept(object_id)
    facts: list[tuple[str, str]] = []
    if not equivalent:
        carry = [c for c in carry if c in ("types", "ancestors")]
    if "definitions" in carry and concept.definition:
        facts.append(("definition", concept.definition))
    if "types" in carry:
        facts += [("type", t) for t in concept.types]
    if "ancestors" in carry:
        facts += [("type", name) for name in _ancestor_names(other, concept.id)]
    if "synonyms" in carry and not shared:
        facts += [("synonym", text) for text in [concept.name, *(t for t, _ in concept.synonyms)][:MAX_SYNONYMS]]
    return facts


def augment_kb(
    kb: str | Path,
    mappings: Path,
    other: str | Path,
    out: Path,
    *,
    min_confidence: float = 0.0,
    carry: list[str] | None = None,
    progress: bool = True,
    shared_synonyms: bool = False,
) -> AugmentReport:
    """Write ``out``: ``kb`` plus what ``other`` says about each concept a mapping (confidence >= ``min_confidence``)
    ties it to. A mapping naming a concept either KB lacks is an error naming the SSSOM line; ``shared_synonyms``:
    carry synonyms through a target concept several source concepts map to as well."""
    if carry is None:
        carry = list(CARRY)
    unknown = [c for c in carry if c not in CARRY]
    if unknown or not carry:
        raise MedlinkError(f"--carry {','.join(carry)}: choose among {', '.join(CARRY)}")
    from medlink.align.inputs import AUGMENT, open_pair

    source, target = open_pair(kb, other, AUGMENT)
    out = Path(out)
    require_replaceable_file(out, "a medlink KB", is_kb_file, [Path(source.path), Path(target.path), Path(mappings)])
    report = AugmentReport()
    kept = []
    for mapping in read_sssom(mappings):
        if mapping.object_id == NO_TERM:
            report.no_term_rows += 1
            continue
        if mapping.negated:
            report.negated_rows += 1
            continue
        if mapping.predicate_id not in EQUIVALENT | CATEGORY:
            report.carrying_nothing += 1
            continue
        if mapping.confidence is not None and mapping.confidence < min_confidence:
            report.mappings_below_confidence += 1
            continue
        subject, obj = resolve(source, mapping.subject_id), resolve(target, mapping.object_id)
        if subject is None or obj is None:
            missing = (
                f"subject_id {mapping.subject_id!r} is not in {source.path}"
                if subject is None
                else f"object_id {mapping.object_id!r} is not in {target.path}"
            )
            reversed_pair = resolve(target, mapping.subject_id) is not None and resolve(source, mapping.object_id) is not None
            hint = (
                f"the mappings go from {target.path} to {source.path}: augment {target.path} --with {source.path}, "
                f"or align the other way (--source {source.path} --target {target.path})"
                if reversed_pair
                else "were these mappings made between these two KBs?"
            )
            raise InputFormatError(mappings, mapping.line, f"{missing}: {hint}")
        report.mappings_used += 1
        kept.append((subject, obj, mapping))
    sources_per_target = Counter(obj for _, obj, _ in kept)
    facts: list[CarriedFact] = []
    for subject, obj, mapping in kept:
        shared = sources_per_target[obj] > 1 and not shared_synonyms
        facts += [
            CarriedFact(subject, f, v, obj, mapping.predicate_id, mapping.confidence, mapping.line)
            for f, v in _facts(target, obj, carry, shared, mapping.predicate_id in EQUIVALENT)
        ]
    added = augment_copy(
        source,
        out,
        facts,
        mapping_file=str(mappings),
        carried_with=f"{mappings} with {target.path} (checksum {target.checksum})",
        also_read=[Path(target.path), Path(mappings)],
        progress=progress,
    )
    report.added, report.concepts_augmented = added.added, added.concepts
    return report

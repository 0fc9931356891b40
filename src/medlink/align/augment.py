"""Metadata transfer (paper 002): carry a target KB's definitions, types / ancestors and synonyms into a source KB
through mappings, each added fact with its provenance.

The augmented KB is a copy of the source KB (the original is never changed) with rows added: names (kind
``synonym``, scope ``augmented``, source ``augment:OBJECT_ID``), types (the target's types, and ``ancestors``: its
is_a ancestors' names, up to three levels), and the definition of a concept that had none. Every added row is also
listed in the table ``augmentations`` (concept, field, value, the mapping's object id, predicate and confidence, the
SSSOM file), so a user can see exactly what came from where (``medlink kb show`` / ``kb info``) and undo it: ``medlink
kb unaugment`` (``undo_augmentation``) gives back the source KB's content. The checksum is recomputed over the new
content, so indexes built on the source KB are not mistaken for the augmented one's. An augmented KB may be augmented
again: the table and ``augmented_with`` accumulate the rounds, ``augmented_from`` keeps the KB before the first, and
undo removes every round, its checksum recomputed from the content it leaves (the first round's source's again).
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlink.align.sssom import EXACT, NO_TERM, read_sssom, resolve
from medlink.directories import require_replaceable_file, staged_file
from medlink.errors import InputFormatError, MedlinkError
from medlink.kb.schema import CHECKSUM_QUERIES, FORMAT_VERSION, is_kb_file
from medlink.kb.store import KB
from medlink.progress import bar as progress_bar

CARRY = ("definitions", "types", "ancestors", "synonyms")
AUGMENTATIONS = """CREATE TABLE IF NOT EXISTS augmentations (concept_id TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL,
    object_id TEXT NOT NULL, predicate_id TEXT NOT NULL, confidence REAL, mapping_file TEXT NOT NULL, line INTEGER)"""
ANCESTOR_LEVELS = 3
# Synonyms are carried only through a target concept that one source concept maps to: when several source concepts
# map to one target (MEDIC's "Colonic Neoplasms" and "Colorectal Neoplasms" -> DO "colorectal cancer"), its names would
# be added to each of them and make them tie (NCBI dev: carrying them anyway cost 1.6-2.2 points of Acc@1, BENCHMARKS.md).
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


def checksum(connection: sqlite3.Connection, augmented: bool = True) -> str:
    """The KB content checksum as ``KBWriter`` computes it, plus (``augmented``) the augmentations (what makes this KB
    differ); without them, a KB whose augmentations are all undone gets its source's checksum back."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(FORMAT_VERSION.encode())
    for query in (*CHECKSUM_QUERIES, *(["SELECT * FROM augmentations ORDER BY rowid"] if augmented else [])):
        cursor = connection.execute(query)
        while rows := cursor.fetchmany(100_000):
            digest.update(repr(rows).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


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
    carry: list[str] = None,
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
            raise InputFormatError(mappings, mapping.line, f"{missing}: were these mappings made between these two KBs?")
        report.mappings_used += 1
        kept.append((subject, obj, mapping))
    sources_per_target = Counter(obj for _, obj, _ in kept)
    rows: list[tuple] = []  # (concept, field, value, object, predicate, confidence, line)
    for subject, obj, mapping in kept:
        shared = sources_per_target[obj] > 1 and not shared_synonyms
        facts = _facts(target, obj, carry, shared, mapping.predicate_id in EQUIVALENT)
        rows += [(subject, f, v, obj, mapping.predicate_id, mapping.confidence, mapping.line) for f, v in facts]
    with staged_file(out) as staging:
        destination = sqlite3.connect(staging)
        with sqlite3.connect(f"file:{Path(source.path).resolve()}?mode=ro", uri=True) as original:
            original.backup(destination)
        try:
            _apply(destination, source, target, rows, str(mappings), report, progress)
        finally:
            destination.close()
    return report


def _apply(
    db: sqlite3.Connection, source: KB, target: KB, rows: list[tuple], mapping_file: str, report: AugmentReport, progress: bool
) -> None:
    """Insert the facts not already there, each listed in ``augmentations``; then the new checksum and meta (this
    round appended to ``augmented_with``; ``augmented_from`` stays the KB before the first round)."""
    db.execute(AUGMENTATIONS)
    names = {(c, t) for c, t in db.execute("SELECT concept_id, norm FROM names")}
    types = {(c, t) for c, t in db.execute("SELECT concept_id, type FROM types")}
    defined = {c for (c,) in db.execute("SELECT id FROM concepts WHERE definition IS NOT NULL")}
    touched: set[str] = set()
    with progress_bar(progress, total=len(rows), desc="augmenting", unit=" facts", unit_scale=True) as bar:
        for concept, field_, value, obj, predicate, confidence, line in rows:
            bar.update(1)
            if field_ == "synonym":
                key = (concept, source.normalize(value))
                if not key[1] or key in names:
                    continue
                names.add(key)
                db.execute(
                    "INSERT INTO names VALUES (?, ?, ?, 'synonym', 'augmented', 'en', ?)", (concept, value, key[1], f"augment:{obj}")
                )
            elif field_ == "type":
                if (concept, value) in types:
                    continue
                types.add((concept, value))
                db.execute("INSERT INTO types VALUES (?, ?)", (concept, value))
            elif field_ == "definition":
                if concept in defined:
                    continue
                defined.add(concept)
                db.execute("UPDATE concepts SET definition = ? WHERE id = ?", (value, concept))
            db.execute(
                "INSERT INTO augmentations VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (concept, field_, value, obj, predicate, confidence, mapping_file, line),
            )
            report.added[field_ + "s"] = report.added.get(field_ + "s", 0) + 1
            touched.add(concept)
    report.concepts_augmented = len(touched)
    earlier = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('augmented_from', 'augmented_with')"))
    meta = {
        "checksum": checksum(db),
        "augmented_from": earlier.get("augmented_from") or f"{source.path} (checksum {source.checksum})",
        "augmented_with": "; ".join(
            filter(None, (earlier.get("augmented_with"), f"{mapping_file} with {target.path} (checksum {target.checksum})"))
        ),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", sorted(meta.items()))
    db.commit()


@dataclass
class UndoReport:
    removed: int  # rows deleted or definitions cleared
    rounds: int  # augmentations undone (every 'kb augment' that wrote into this KB's line)
    checksum: str  # recomputed from the content left
    original: str  # augmented_from: the KB before the first round, with the checksum it had

    @property
    def matches_original(self) -> bool:
        return self.original.endswith(f"(checksum {self.checksum})")

    def summary(self) -> str:
        same = f"checksum {self.checksum}" + (", the original's" if self.matches_original else f"; the original was {self.original}")
        return f"removed {self.removed:,} carried facts ({self.rounds} augmentation round{'s' * (self.rounds != 1)}): {same}"


def augmentation_rounds(kb: KB) -> list[str]:
    """Each ``augment_kb`` round the KB went through: its mappings file and --with KB, as the meta records them."""
    return [r for r in kb.meta.get("augmented_with", "").split("; ") if r]


def is_augmented(kb: KB) -> bool:
    return kb._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'augmentations'").fetchone() is not None


def undo_augmentation(kb: str | Path, out: Path) -> UndoReport:
    """Write ``out``: ``kb`` without the rows its ``augmentations`` table lists, every round of them (the KB before the
    first ``augment_kb``), its checksum recomputed from that content."""
    with KB.open(kb) as store:
        if not is_augmented(store):
            raise MedlinkError(f"{kb}: not an augmented KB (no augmentations table); nothing to undo")
        path, original = Path(store.path), store.meta.get("augmented_from", "?")
        rounds = len(augmentation_rounds(store))
    out = Path(out)
    require_replaceable_file(out, "a medlink KB", is_kb_file, [path])
    with staged_file(out) as staging:
        db = sqlite3.connect(staging)
        with sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True) as source:
            source.backup(db)
        try:
            removed = 0
            for concept, field_, value, obj in db.execute("SELECT concept_id, field, value, object_id FROM augmentations").fetchall():
                if field_ == "synonym":
                    removed += db.execute(
                        "DELETE FROM names WHERE concept_id = ? AND text = ? AND source = ?", (concept, value, f"augment:{obj}")
                    ).rowcount
                elif field_ == "type":
                    removed += db.execute(
                        "DELETE FROM types WHERE rowid = (SELECT MAX(rowid) FROM types WHERE concept_id = ? AND type = ?)", (concept, value)
                    ).rowcount
                else:
                    removed += db.execute("UPDATE concepts SET definition = NULL WHERE id = ?", (concept,)).rowcount
            db.execute("DROP TABLE augmentations")
            db.execute("DELETE FROM meta WHERE key IN ('augmented_from', 'augmented_with')")
            restored = checksum(db, augmented=False)  # not a recorded one: after two rounds that was the middle KB's
            db.execute("UPDATE meta SET value = ? WHERE key = 'checksum'", (restored,))
            db.commit()
        finally:
            db.close()
    return UndoReport(removed, rounds, restored, original)


def provenance(kb: KB, concept_id: str | None = None) -> list[dict[str, Any]]:
    """The carried facts (of one concept, or all), each with the mapping that brought it: what ``kb show`` marks."""
    if not is_augmented(kb):
        return []
    columns = ("concept_id", "field", "value", "object_id", "predicate_id", "confidence", "mapping_file", "line")
    where, params = ("WHERE concept_id = ?", (concept_id,)) if concept_id is not None else ("", ())
    rows = kb._db.execute(f"SELECT {', '.join(columns)} FROM augmentations {where} ORDER BY rowid", params)
    return [dict(zip(columns, row)) for row in rows]


def augmentation_summary(kb: KB) -> dict[str, Any] | None:
    """What ``kb info`` says of an augmented KB (None for one that is not): where from, through what, how much."""
    if not is_augmented(kb):
        return None
    facts = dict(kb._db.execute("SELECT field, COUNT(*) FROM augmentations GROUP BY field ORDER BY field"))
    concepts = kb._db.execute("SELECT COUNT(DISTINCT concept_id) FROM augmentations").fetchone()[0]
    return {"augmented_from": kb.meta.get("augmented_from"), "rounds": augmentation_rounds(kb), "facts": facts, "concepts": concepts}

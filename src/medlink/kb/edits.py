"""Editing a KB into a new file: facts carried in from another KB (augment), and taken out again exactly (unaugment).

Why in ``kb``: the tables, the content checksum and the rule that a KB file is written aside and renamed into place
belong to the store; a caller (``align.augment``) says which facts to add, never how they are stored.

The KB given is never changed: ``augment`` writes a copy with rows added (names of kind ``synonym``, scope
``augmented``, source ``augment:OBJECT_ID``; types; the definition of a concept that had none), each added row also
listed in the table ``augmentations`` with the mapping that brought it. ``unaugment`` writes a copy without every row
that table lists, over every round, so the content (and its checksum) is the KB's before the first round again.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from medlink.directories import require_replaceable_file, staged_file
from medlink.errors import MedlinkError
from medlink.kb.schema import AUGMENTATIONS, is_kb_file
from medlink.kb.store import KB
from medlink.kb.writer import content_checksum
from medlink.progress import bar as progress_bar

FIELDS = ("synonym", "type", "definition")


@dataclass(frozen=True)
class CarriedFact:
    """One fact another KB offers a concept, with the mapping that carried it (a row of ``augmentations``)."""

    concept_id: str
    field: str  # one of FIELDS
    value: str
    object_id: str  # the other KB's concept the fact comes from
    predicate_id: str
    confidence: float | None = None
    line: int | None = None  # the mapping's line in its file


@dataclass
class AddedFacts:
    """What ``augment`` added: facts per field (``"synonyms"``, ``"types"``, ``"definitions"``) and concepts touched."""

    added: dict[str, int] = field(default_factory=dict)
    concepts: int = 0


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


def _copy(path: Path, staging: Path) -> sqlite3.Connection:
    """A writable copy of the KB file at ``path`` (read-only there) at ``staging``."""
    destination = sqlite3.connect(staging)
    with sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True) as original:
        original.backup(destination)
    return destination


def augment(
    kb: KB,
    out: Path,
    facts: Sequence[CarriedFact],
    *,
    mapping_file: str,
    carried_with: str,
    also_read: Iterable[Path] = (),
    progress: bool = True,
) -> AddedFacts:
    """Write ``out``: ``kb`` plus each of ``facts`` it does not hold yet (a synonym whose normalised form the concept
    has, a type it has, a definition where it has one: skipped), every one listed in ``augmentations``; then the new
    checksum and meta (``carried_with``, e.g. "MAPPINGS with OTHER (checksum C)", appended to ``augmented_with``;
    ``augmented_from`` stays the KB before the first round). ``also_read``: other inputs ``out`` must not be."""
    unknown = sorted({f.field for f in facts} - set(FIELDS))
    if unknown:
        raise MedlinkError(f"cannot add {', '.join(unknown)} to a KB: the fields are {', '.join(FIELDS)}")
    out = Path(out)
    require_replaceable_file(out, "a medlink KB", is_kb_file, [Path(kb.path), *map(Path, also_read)])
    with staged_file(out) as staging:
        db = _copy(Path(kb.path), staging)
        try:
            added = _insert(db, kb, facts, mapping_file, progress)
            earlier = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('augmented_from', 'augmented_with')"))
            meta = {
                "checksum": content_checksum(db, augmented=True),
                "augmented_from": earlier.get("augmented_from") or f"{kb.path} (checksum {kb.checksum})",
                "augmented_with": "; ".join(filter(None, (earlier.get("augmented_with"), carried_with))),
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", sorted(meta.items()))
            db.commit()
        finally:
            db.close()
    return added


def _insert(db: sqlite3.Connection, kb: KB, facts: Sequence[CarriedFact], mapping_file: str, progress: bool) -> AddedFacts:
    """Insert the facts not already there, each listed in ``augmentations`` (not committed)."""
    db.execute(AUGMENTATIONS)
    names = {(c, t) for c, t in db.execute("SELECT concept_id, norm FROM names")}
    types = {(c, t) for c, t in db.execute("SELECT concept_id, type FROM types")}
    defined = {c for (c,) in db.execute("SELECT id FROM concepts WHERE definition IS NOT NULL")}
    report, touched = AddedFacts(), set()
    with progress_bar(progress, total=len(facts), desc="augmenting", unit=" facts", unit_scale=True) as bar:
        for fact in facts:
            bar.update(1)
            concept, value = fact.concept_id, fact.value
            if fact.field == "synonym":
                key = (concept, kb.normalize(value))
                if not key[1] or key in names:
                    continue
                names.add(key)
                db.execute(
                    "INSERT INTO names VALUES (?, ?, ?, 'synonym', 'augmented', 'en', ?)",
                    (concept, value, key[1], f"augment:{fact.object_id}"),
                )
            elif fact.field == "type":
                if (concept, value) in types:
                    continue
                types.add((concept, value))
                db.execute("INSERT INTO types VALUES (?, ?)", (concept, value))
            else:
                if concept in defined:
                    continue
                defined.add(concept)
                db.execute("UPDATE concepts SET definition = ? WHERE id = ?", (value, concept))
            db.execute(
                "INSERT INTO augmentations VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (concept, fact.field, value, fact.object_id, fact.predicate_id, fact.confidence, mapping_file, fact.line),
            )
            report.added[fact.field + "s"] = report.added.get(fact.field + "s", 0) + 1
            touched.add(concept)
    report.concepts = len(touched)
    return report


def unaugment(kb: str | Path, out: Path) -> UndoReport:
    """Write ``out``: ``kb`` without the rows its ``augmentations`` table lists, every round of them (the KB before the
    first ``augment``), its checksum recomputed from that content."""
    with KB.open(kb) as store:
        if not store.is_augmented():
            raise MedlinkError(f"{kb}: not an augmented KB (no augmentations table); nothing to undo")
        path, original = Path(store.path), store.meta.get("augmented_from", "?")
        rounds = len(store.augmentation_rounds())
    out = Path(out)
    require_replaceable_file(out, "a medlink KB", is_kb_file, [path])
    with staged_file(out) as staging:
        db = _copy(path, staging)
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
            restored = content_checksum(db)  # not a recorded one: after two rounds that was the middle KB's
            db.execute("UPDATE meta SET value = ? WHERE key = 'checksum'", (restored,))
            db.commit()
        finally:
            db.close()
    return UndoReport(removed, rounds, restored, original)

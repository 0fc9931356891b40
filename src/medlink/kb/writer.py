"""Writing records into a new KB file: batched inserts, merge of concept facts, finishing touches.

The writer owns one SQLite connection on a temporary file; ``build.build_kb`` renames it into
place only when everything succeeded, so an interrupted build leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from medlink.kb.records import (
    ConceptRecord,
    IdAliasRecord,
    NameRecord,
    Record,
    RelationRecord,
    TypeRecord,
    XrefRecord,
)
from medlink.kb.schema import AUGMENTATIONS_QUERY, CHECKSUM_QUERIES, FORMAT_VERSION, INDICES, TABLES
from medlink.text.normalize import Normalizer

BATCH = 50_000

_UPSERT_CONCEPT = (
    "INSERT INTO concepts (id, name, source, definition) VALUES (?, ?, ?, ?) "
    "ON CONFLICT(id) DO UPDATE SET name = COALESCE(concepts.name, excluded.name), "
    "source = COALESCE(concepts.source, excluded.source), "
    "definition = COALESCE(concepts.definition, excluded.definition)"
)
_INSERTS = {
    NameRecord: "INSERT INTO names VALUES (?, ?, ?, ?, ?, ?, ?)",
    TypeRecord: "INSERT INTO types VALUES (?, ?)",
    RelationRecord: "INSERT INTO relations VALUES (?, ?, ?, ?)",
    XrefRecord: "INSERT INTO xrefs VALUES (?, ?, ?)",
    IdAliasRecord: "INSERT INTO id_aliases VALUES (?, ?, ?)",
    ConceptRecord: _UPSERT_CONCEPT,
}


FINISH_RULES = "2"  # bump when finish() changes what a KB holds (2: a repeated preferred name kept once): cached KBs rebuild


@dataclass
class FinishReport:
    """What finishing the KB changed: concepts named from their first name, orphans dropped."""

    named_from_first_name: int = 0
    nameless_concepts_dropped: int = 0
    dangling_relations_dropped: int = 0
    orphan_rows_dropped: int = 0
    repeated_preferred_as_synonyms: int = 0  # a repeated id's other "preferred" names: synonyms (the first one names the concept)
    repeated_preferred_merged: int = 0  # a repeated id's preferred name given again with the same text: one row, the first source's


def content_checksum(connection: sqlite3.Connection, augmented: bool = False) -> str:
    """blake2b over every row in a fixed order: two KB files with equal checksums have equal content. ``augmented``:
    the ``augmentations`` table too (what makes an augmented KB differ from one built with the same rows)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(FORMAT_VERSION.encode())
    for query in (*CHECKSUM_QUERIES, *([AUGMENTATIONS_QUERY] if augmented else [])):
        cursor = connection.execute(query)
        while rows := cursor.fetchmany(100_000):
            digest.update(repr(rows).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class KBWriter:
    """Accepts records in any order and any number of sources, then finishes the file."""

    def __init__(self, path: Path, normalizer: Normalizer):
        self.path = path
        self.normalize = normalizer
        self.connection = sqlite3.connect(path, isolation_level=None)
        self.connection.executescript(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -200000; BEGIN;" + TABLES
        )
        self.buffers: dict[type, list[tuple]] = {kind: [] for kind in _INSERTS}
        self.meta: dict[str, str] = {"format_version": FORMAT_VERSION, "normalizer": normalizer.signature}

    def add_source(self, position: int, format_name: str, path: str | None, prefix: str) -> None:
        self.connection.execute(
            "INSERT INTO sources (position, format, path, prefix) VALUES (?, ?, ?, ?)", (position, format_name, path, prefix)
        )

    def set_source_counts(self, position: int, records: int, skipped: int) -> None:
        self.connection.execute("UPDATE sources SET records = ?, skipped = ? WHERE position = ?", (records, skipped, position))

    def write(self, records: Iterable[Record], on_batch: Callable[[int], None] | None = None) -> int:
        """Insert every record; returns how many. ``on_batch(n)`` is called after each flushed batch."""
        buffers = self.buffers
        names, types, relations, xrefs, aliases, concepts = (
            buffers[NameRecord],
            buffers[TypeRecord],
            buffers[RelationRecord],
            buffers[XrefRecord],
            buffers[IdAliasRecord],
            buffers[ConceptRecord],
        )
        normalize = self.normalize
        count = pending = 0
        for record in records:
            kind = type(record)
            if kind is NameRecord:
                names.append(
                    (record.concept_id, record.text, normalize(record.text), record.kind, record.scope, record.lang, record.source)
                )
            elif kind is ConceptRecord:
                concepts.append((record.id, record.name, record.source, record.definition))
            elif kind is TypeRecord:
                types.append((record.concept_id, record.type))
            elif kind is RelationRecord:
                relations.append((record.head, record.relation, record.tail, record.source))
            elif kind is XrefRecord:
                xrefs.append((record.concept_id, record.xref, record.xref.partition(":")[0] if ":" in record.xref else ""))
            elif kind is IdAliasRecord:
                aliases.append((record.alias, record.concept_id, record.reason))
            else:
                raise TypeError(f"not a KB record: {record!r}")
            count += 1
            pending += 1
            if pending >= BATCH:
                self.flush()
                if on_batch:
                    on_batch(pending)
                pending = 0
        self.flush()
        if on_batch and pending:
            on_batch(pending)
        return count

    def flush(self) -> None:
        for kind, rows in self.buffers.items():
            if rows:
                self.connection.executemany(_INSERTS[kind], rows)
                rows.clear()

    def finish(self, extra_meta: dict[str, str]) -> tuple[str, FinishReport]:
        """Name unnamed concepts, drop orphans, index, checksum, commit. Returns (checksum, report)."""
        self.flush()
        sql = self.connection.execute
        report = FinishReport()
        sql("CREATE INDEX tmp_names_concept ON names (concept_id)")
        # Concepts known only through their names (UMLS without a preferred atom, for example).
        report.named_from_first_name = sql(
            "INSERT INTO concepts (id, name) SELECT concept_id, text FROM names "
            "WHERE rowid IN (SELECT MIN(rowid) FROM names GROUP BY concept_id) "
            "AND concept_id NOT IN (SELECT id FROM concepts)"
        ).rowcount
        report.named_from_first_name += sql(
            "UPDATE concepts SET name = (SELECT text FROM names WHERE names.concept_id = concepts.id ORDER BY rowid LIMIT 1) "
            "WHERE name IS NULL AND id IN (SELECT concept_id FROM names)"
        ).rowcount
        # A concept with no name at all cannot be linked (e.g. a UMLS definition of a filtered-out CUI).
        report.nameless_concepts_dropped = sql("DELETE FROM concepts WHERE name IS NULL").rowcount
        # An id repeated (in one source or several) brings a preferred name each time: the concept keeps its first, the
        # others become synonyms (one preferred name per concept); the same text again is the same name, kept once.
        report.repeated_preferred_merged = sql(
            "DELETE FROM names WHERE kind = 'preferred' AND rowid NOT IN "
            "(SELECT MIN(rowid) FROM names WHERE kind = 'preferred' GROUP BY concept_id, text)"
        ).rowcount
        report.repeated_preferred_as_synonyms = sql(
            "UPDATE names SET kind = 'synonym' WHERE kind = 'preferred' AND concept_id IN "
            "(SELECT concept_id FROM names WHERE kind = 'preferred' GROUP BY concept_id HAVING COUNT(*) > 1) "
            "AND text <> (SELECT name FROM concepts WHERE concepts.id = names.concept_id)"
        ).rowcount
        # Every preferred name is also a row of names, so streaming names sees it.
        rows = sql(
            "SELECT id, name, source FROM concepts c WHERE NOT EXISTS (SELECT 1 FROM names n WHERE n.concept_id = c.id AND n.text = c.name)"
        ).fetchall()
        self.connection.executemany(
            "INSERT INTO names VALUES (?, ?, ?, 'preferred', NULL, 'en', ?)",
            [(cid, name, self.normalize(name), source) for cid, name, source in rows],
        )
        sql("DROP INDEX tmp_names_concept")
        sql("CREATE TEMP TABLE known (id TEXT PRIMARY KEY) WITHOUT ROWID")
        sql("INSERT INTO known SELECT id FROM concepts")
        report.dangling_relations_dropped = sql(
            "DELETE FROM relations WHERE head NOT IN (SELECT id FROM known) OR tail NOT IN (SELECT id FROM known) OR head = tail"
        ).rowcount
        for table in ("names", "types", "xrefs", "id_aliases"):
            report.orphan_rows_dropped += sql(f"DELETE FROM {table} WHERE concept_id NOT IN (SELECT id FROM known)").rowcount
        # An alias may itself be a concept id: a BioSyn line "114480|D001943||breast cancer" says the name's
        # concept is known under both ids. resolve() prefers the concept itself; alt_ids keep the equivalence.
        for statement in filter(str.strip, INDICES.split(";")):
            sql(statement)
        checksum = self._checksum()
        meta = {**self.meta, **extra_meta, "checksum": checksum}
        self.connection.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", sorted(meta.items()))
        sql("COMMIT")
        sql("ANALYZE")
        self.connection.close()
        return checksum, report

    def _checksum(self) -> str:
        return content_checksum(self.connection)

    def abort(self) -> None:
        try:
            self.connection.close()
        except sqlite3.Error:
            pass

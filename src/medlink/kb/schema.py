"""The SQLite layout of a KB file. One file per KB; bump FORMAT_VERSION when this changes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

FORMAT_VERSION = "1"

TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sources (position INTEGER PRIMARY KEY, format TEXT NOT NULL, path TEXT, prefix TEXT,
                      records INTEGER NOT NULL DEFAULT 0, skipped INTEGER NOT NULL DEFAULT 0);
CREATE TABLE concepts (id TEXT PRIMARY KEY, name TEXT, source TEXT, definition TEXT);
CREATE TABLE names (concept_id TEXT NOT NULL, text TEXT NOT NULL, norm TEXT NOT NULL, kind TEXT NOT NULL,
                    scope TEXT, lang TEXT, source TEXT);
CREATE TABLE types (concept_id TEXT NOT NULL, type TEXT NOT NULL);
CREATE TABLE relations (head TEXT NOT NULL, relation TEXT NOT NULL, tail TEXT NOT NULL, source TEXT);
CREATE TABLE xrefs (concept_id TEXT NOT NULL, xref TEXT NOT NULL, prefix TEXT NOT NULL);
CREATE TABLE id_aliases (alias TEXT NOT NULL, concept_id TEXT NOT NULL, reason TEXT NOT NULL);
"""

# Created after the bulk load: building a B-tree once is much faster than maintaining it per insert.
INDICES = """
CREATE INDEX names_norm ON names (norm);
CREATE INDEX names_concept ON names (concept_id);
CREATE INDEX types_concept ON types (concept_id);
CREATE INDEX relations_head ON relations (head, relation);
CREATE INDEX relations_tail ON relations (tail, relation);
CREATE INDEX xrefs_concept ON xrefs (concept_id);
CREATE INDEX xrefs_xref ON xrefs (xref);
CREATE INDEX id_aliases_alias ON id_aliases (alias);
"""

# Tables hashed (in this order, rows in rowid order) into the KB's content checksum.
CHECKSUM_QUERIES = (
    "SELECT id, name, source, definition FROM concepts ORDER BY id",
    "SELECT concept_id, text, norm, kind, scope, lang, source FROM names ORDER BY rowid",
    "SELECT concept_id, type FROM types ORDER BY rowid",
    "SELECT head, relation, tail, source FROM relations ORDER BY rowid",
    "SELECT concept_id, xref FROM xrefs ORDER BY rowid",
    "SELECT alias, concept_id, reason FROM id_aliases ORDER BY rowid",
)

# Facts an augmentation carried into the KB, each with the mapping that brought it (``kb.edits``); absent otherwise.
AUGMENTATIONS = """CREATE TABLE IF NOT EXISTS augmentations (concept_id TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL,
    object_id TEXT NOT NULL, predicate_id TEXT NOT NULL, confidence REAL, mapping_file TEXT NOT NULL, line INTEGER)"""
AUGMENTATION_COLUMNS = ("concept_id", "field", "value", "object_id", "predicate_id", "confidence", "mapping_file", "line")
AUGMENTATIONS_QUERY = "SELECT * FROM augmentations ORDER BY rowid"  # hashed after CHECKSUM_QUERIES in an augmented KB


def is_kb_file(path: Path | str) -> bool:
    """Did medlink write this file? (A rebuild replaces only a KB: a user's own file of that name is left alone.)"""
    try:
        with open(path, "rb") as handle:
            if handle.read(16) != b"SQLite format 3\x00":
                return False
        connection = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
        try:
            keys = {key for (key,) in connection.execute("SELECT key FROM meta")}
        finally:
            connection.close()
    except (OSError, sqlite3.DatabaseError):
        return False
    return {"checksum", "normalizer"} <= keys

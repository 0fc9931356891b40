"""Reading a KB file: the API every later stage (indexing, training, linking, alignment) leans on."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from medlink.errors import MedlinkError, MissingInputError
from medlink.kb.records import IS_A, PREFERRED, Concept
from medlink.kb.schema import AUGMENTATION_COLUMNS, FORMAT_VERSION
from medlink.text.normalize import Normalizer


class KB:
    """A read-only view of one KB file. Cheap to open; queries go straight to SQLite's indices."""

    def __init__(self, path: Path, connection: sqlite3.Connection):
        self.path = path
        self._db = connection
        self.meta: dict[str, str] = dict(connection.execute("SELECT key, value FROM meta"))
        if self.meta.get("format_version") != FORMAT_VERSION:
            raise MedlinkError(
                f"{path}: KB format version {self.meta.get('format_version')!r}, this medlink reads {FORMAT_VERSION!r}; "
                "rebuild it with 'medlink kb build'"
            )
        self.normalize = Normalizer.from_signature(self.meta["normalizer"])

    @classmethod
    def open(cls, path: Path | str) -> KB:
        """Open a KB file read-only; ``"default"`` opens (building it if needed) the embedded default KB."""
        if str(path) == "default":
            from medlink.kb.default import default_kb_path

            path = default_kb_path()
        path = Path(path)
        if not path.is_file():
            raise MissingInputError(f"KB file not found: {path} (build one with 'medlink kb build {path} FORMAT:PATH')")
        try:
            connection = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, check_same_thread=False)
            connection.execute("SELECT 1 FROM meta LIMIT 1")
        except sqlite3.DatabaseError as error:
            raise MedlinkError(f"{path}: not a medlink KB file ({error})") from error
        return cls(path, connection)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> KB:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- identity -----------------------------------------------------------------------------
    @property
    def checksum(self) -> str:
        """Content checksum: artefacts built from this KB record it to prove which KB they came from."""
        return self.meta["checksum"]

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM concepts").fetchone()[0]

    def name_count(self) -> int:
        """How many names the KB holds (preferred names and synonyms)."""
        return self._db.execute("SELECT COUNT(*) FROM names").fetchone()[0]

    def __contains__(self, concept_id: str) -> bool:
        return self._db.execute("SELECT 1 FROM concepts WHERE id = ?", (concept_id,)).fetchone() is not None

    def resolve(self, concept_id: str) -> str | None:
        """The current id for ``concept_id``: itself, or the concept it is an alt id of / was replaced by."""
        if concept_id in self:
            return concept_id
        row = self._db.execute("SELECT concept_id FROM id_aliases WHERE alias = ? ORDER BY rowid LIMIT 1", (concept_id,)).fetchone()
        return row[0] if row else None

    def ids_ending(self, local: str, limit: int = 3) -> list[str]:
        """Concept ids whose part after a prefix is ``local`` ("UMLS:C0000001" for "C0000001"): what a user who left the
        prefix out meant (a scan: for an error's hint, not a lookup)."""
        if ":" in local:
            return []
        pattern = "%:" + local.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return [cid for (cid,) in self._db.execute("SELECT id FROM concepts WHERE id LIKE ? ESCAPE '\\' LIMIT ?", (pattern, limit))]

    # -- concepts -----------------------------------------------------------------------------
    def concept(self, concept_id: str) -> Concept | None:
        """Everything known about one concept (alt ids and replaced ids resolve), or None."""
        resolved = self.resolve(concept_id)
        if resolved is None:
            return None
        sql = self._db.execute
        cid, name, source, definition = sql("SELECT id, name, source, definition FROM concepts WHERE id = ?", (resolved,)).fetchone()
        concept = Concept(cid, name, source, definition)
        seen = {name}
        for text, kind in sql("SELECT text, kind FROM names WHERE concept_id = ? ORDER BY rowid", (cid,)):
            if text not in seen:
                seen.add(text)
                concept.synonyms.append((text, kind))
        concept.types = [t for (t,) in sql("SELECT DISTINCT type FROM types WHERE concept_id = ? ORDER BY rowid", (cid,))]
        for relation, tail in sql("SELECT relation, tail FROM relations WHERE head = ? ORDER BY rowid", (cid,)):
            (concept.parents.append(tail) if relation == IS_A else concept.relations.append((relation, tail)))
        concept.xrefs = [x for (x,) in sql("SELECT DISTINCT xref FROM xrefs WHERE concept_id = ? ORDER BY rowid", (cid,))]
        concept.alt_ids = [a for (a,) in sql("SELECT alias FROM id_aliases WHERE concept_id = ? ORDER BY rowid", (cid,))]
        return concept

    def name_of(self, concept_id: str) -> str | None:
        row = self._db.execute("SELECT name FROM concepts WHERE id = ?", (concept_id,)).fetchone()
        return row[0] if row else None

    def iter_concepts(self) -> Iterator[tuple[str, str]]:
        """Stream (id, preferred name) for every concept, in id order."""
        yield from self._db.execute("SELECT id, name FROM concepts ORDER BY id")

    def iter_descriptions(self) -> Iterator[tuple[str, list[str], str | None]]:
        """Stream (id, types, definition) for every concept, in id order: what a concept's text says beyond its names."""
        types: dict[str, list[str]] = {}
        for concept_id, type_name in self._db.execute("SELECT concept_id, type FROM types ORDER BY rowid"):
            listed = types.setdefault(concept_id, [])
            if type_name not in listed:
                listed.append(type_name)
        for concept_id, definition in self._db.execute("SELECT id, definition FROM concepts ORDER BY id"):
            yield concept_id, types.get(concept_id, []), definition

    def iter_names(self, kinds: tuple[str, ...] | None = None, batch: int = 10_000) -> Iterator[tuple[str, str, str]]:
        """Stream (concept id, name, kind) for every name without loading them all."""
        query = "SELECT concept_id, text, kind FROM names"
        params: tuple = ()
        if kinds:
            query += f" WHERE kind IN ({','.join('?' * len(kinds))})"
            params = tuple(kinds)
        cursor = self._db.execute(query + " ORDER BY rowid", params)
        while rows := cursor.fetchmany(batch):
            yield from rows

    def iter_names_with_scope(self, scope: str) -> Iterator[tuple[str, str]]:
        """Stream (concept id, name) of the names with a given scope (e.g. ICD-10-CM's "title concatenation")."""
        yield from self._db.execute("SELECT concept_id, text FROM names WHERE scope = ? ORDER BY rowid", (scope,))

    def lookup(self, text: str) -> list[tuple[str, str, str]]:
        """Exact lookup by normalised name: (concept id, name, kind), preferred names first."""
        rows = self._db.execute(
            "SELECT concept_id, text, kind FROM names WHERE norm = ? ORDER BY kind != ?, rowid", (self.normalize(text), PREFERRED)
        ).fetchall()
        unique: dict[tuple[str, str], tuple[str, str, str]] = {}
        for row in rows:
            unique.setdefault((row[0], row[1]), row)
        return list(unique.values())

    def iter_id_aliases(self) -> Iterator[tuple[str, str, str]]:
        """Stream (alias, concept id, reason) for every alternative or replaced id."""
        yield from self._db.execute("SELECT alias, concept_id, reason FROM id_aliases ORDER BY rowid")

    # -- graph --------------------------------------------------------------------------------
    def parents(self, concept_id: str) -> list[str]:
        return [t for (t,) in self._db.execute("SELECT tail FROM relations WHERE head = ? AND relation = ?", (concept_id, IS_A))]

    def children(self, concept_id: str) -> list[str]:
        return [h for (h,) in self._db.execute("SELECT head FROM relations WHERE tail = ? AND relation = ?", (concept_id, IS_A))]

    def neighbours(self, concept_id: str) -> list[tuple[str, str, str]]:
        """Every directly connected concept as (relation, other id, "out" | "in"), both directions."""
        out = [(r, t, "out") for r, t in self._db.execute("SELECT relation, tail FROM relations WHERE head = ?", (concept_id,))]
        into = [(r, h, "in") for r, h in self._db.execute("SELECT relation, head FROM relations WHERE tail = ?", (concept_id,))]
        return out + into

    def iter_relations(self, relations: tuple[str, ...] | None = None) -> Iterator[tuple[str, str, str]]:
        """Stream (head, relation, tail) triples, optionally only some relation names."""
        query, params = "SELECT head, relation, tail FROM relations", ()
        if relations:
            query += f" WHERE relation IN ({','.join('?' * len(relations))})"
            params = tuple(relations)
        yield from self._db.execute(query, params)

    # -- cross-references ---------------------------------------------------------------------
    def xrefs(self, concept_id: str, prefix: str | None = None) -> list[str]:
        """Cross-references of a concept, optionally only those with a given prefix (``"MESH"``)."""
        if prefix is None:
            rows = self._db.execute("SELECT DISTINCT xref FROM xrefs WHERE concept_id = ?", (concept_id,))
        else:
            rows = self._db.execute("SELECT DISTINCT xref FROM xrefs WHERE concept_id = ? AND prefix = ?", (concept_id, prefix))
        return [x for (x,) in rows]

    def concepts_with_xref(self, xref: str) -> list[str]:
        """Concepts that cross-reference ``xref`` (e.g. every DO term pointing at ``MESH:D003924``)."""
        return [c for (c,) in self._db.execute("SELECT DISTINCT concept_id FROM xrefs WHERE xref = ?", (xref,))]

    def iter_xrefs(self, prefix: str | None = None) -> Iterator[tuple[str, str]]:
        """Stream (concept id, xref), optionally only one prefix."""
        if prefix is None:
            yield from self._db.execute("SELECT concept_id, xref FROM xrefs")
        else:
            yield from self._db.execute("SELECT concept_id, xref FROM xrefs WHERE prefix = ?", (prefix,))

    # -- augmentations (kb.edits) ----------------------------------------------------------------
    def is_augmented(self) -> bool:
        """Did ``medlink kb augment`` write this KB (it lists the facts it carried in)?"""
        return self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'augmentations'").fetchone() is not None

    def augmentation_rounds(self) -> list[str]:
        """Each augmentation round the KB went through: its mappings file and other KB, as the meta records them."""
        return [r for r in self.meta.get("augmented_with", "").split("; ") if r]

    def augmentations(self, concept_id: str | None = None) -> list[dict[str, Any]]:
        """The carried facts (of one concept, or all), each with the mapping that brought it: what ``kb show`` marks."""
        if not self.is_augmented():
            return []
        where, params = ("WHERE concept_id = ?", (concept_id,)) if concept_id is not None else ("", ())
        rows = self._db.execute(f"SELECT {', '.join(AUGMENTATION_COLUMNS)} FROM augmentations {where} ORDER BY rowid", params)
        return [dict(zip(AUGMENTATION_COLUMNS, row)) for row in rows]

    def augmentation_summary(self) -> dict[str, Any] | None:
        """What ``kb info`` says of an augmented KB (None for one that is not): where from, through what, how much."""
        if not self.is_augmented():
            return None
        facts = dict(self._db.execute("SELECT field, COUNT(*) FROM augmentations GROUP BY field ORDER BY field"))
        concepts = self._db.execute("SELECT COUNT(DISTINCT concept_id) FROM augmentations").fetchone()[0]
        rounds = self.augmentation_rounds()
        return {"augmented_from": self.meta.get("augmented_from"), "rounds": rounds, "facts": facts, "concepts": concepts}

    # -- summary ------------------------------------------------------------------------------
    def stats(self) -> dict:
        """Counts of concepts, names, relations, xrefs, types and aliases, plus per-source and per-kind detail."""
        one = lambda q: self._db.execute(q).fetchone()[0]  # noqa: E731
        return {
            "path": str(self.path),
            "checksum": self.checksum,
            "concepts": one("SELECT COUNT(*) FROM concepts"),
            "names": self.name_count(),
            "distinct_normalized_names": one("SELECT COUNT(DISTINCT norm) FROM names"),
            "relations": one("SELECT COUNT(*) FROM relations"),
            "xrefs": one("SELECT COUNT(*) FROM xrefs"),
            "types": one("SELECT COUNT(*) FROM types"),
            "id_aliases": one("SELECT COUNT(*) FROM id_aliases"),
            "with_definition": one("SELECT COUNT(*) FROM concepts WHERE definition IS NOT NULL"),
            "normalizer": asdict(self.normalize),
            "names_by_kind": dict(self._db.execute("SELECT kind, COUNT(*) FROM names GROUP BY kind ORDER BY kind")),
            "relations_by_type": dict(
                self._db.execute("SELECT relation, COUNT(*) FROM relations GROUP BY relation ORDER BY 2 DESC LIMIT 20")
            ),
            "concepts_by_source": dict(self._db.execute("SELECT COALESCE(source, '?'), COUNT(*) FROM concepts GROUP BY 1 ORDER BY 1")),
            "sources": [
                dict(zip(("format", "path", "prefix", "records", "skipped"), row))
                for row in self._db.execute("SELECT format, path, prefix, records, skipped FROM sources ORDER BY position")
            ],
            "format_version": self.meta.get("format_version"),
            "built_at": self.meta.get("built_at"),
        }

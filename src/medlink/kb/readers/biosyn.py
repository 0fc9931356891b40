"""BioSyn / SapBERT dictionaries: ``ids||name`` per line.

``ids`` may hold alternatives joined by ``|`` (``C567755|613097``): the first is the concept id,
the others become id aliases. The raw MEDIC file puts several names on a line joined by ``|``
(``ids||name|synonym|...``); every name is kept. The first name seen for an id is its preferred
name. Ids are kept as written (NCBI Disease gold ids are unprefixed) unless a prefix is given.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import decoded_lines, require_file
from medlink.kb.records import (
    ALT_ID,
    PREFERRED,
    SYNONYM,
    ConceptRecord,
    IdAliasRecord,
    NameRecord,
    Record,
    qualify,
)


def read_biosyn(path: Path | str, *, prefix: str = "", policy: InvalidLinePolicy | None = None, source: str = "biosyn") -> Iterator[Record]:
    """Stream concepts, names and id aliases from a BioSyn-format dictionary."""
    path = require_file(path, "BioSyn dictionary")
    policy = policy or InvalidLinePolicy()
    seen: set[str] = set()  # ids with a preferred name already; bounded by the number of concepts
    seen_aliases: set[tuple[str, str]] = set()
    for lineno, line in decoded_lines(path, policy):
        if not line.strip():
            continue
        ids_field, sep, names_field = line.partition("||")
        ids = [i.strip() for i in ids_field.split("|") if i.strip()]
        names = [n.strip() for n in names_field.split("|") if n.strip()]
        if not sep or not ids or not names:
            policy.invalid(path, lineno, "expected 'ids||name' (ids joined by '|', then '||', then one or more names joined by '|')")
            continue
        concept_id = qualify(prefix, ids[0])
        for alias in ids[1:]:
            key = (qualify(prefix, alias), concept_id)
            if key not in seen_aliases:
                seen_aliases.add(key)
                yield IdAliasRecord(key[0], concept_id, ALT_ID)
        first = concept_id not in seen
        if first:
            seen.add(concept_id)
            yield ConceptRecord(concept_id, names[0], source)
        for position, name in enumerate(names):
            kind = PREFERRED if first and position == 0 else SYNONYM
            yield NameRecord(concept_id, name, kind, source=source)

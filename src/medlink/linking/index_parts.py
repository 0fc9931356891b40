"""The parts a Linker is made of, built from a KB or read from an index folder.

Why a module of its own: ``Linker`` keeps what linking needs (the parts, the variants, the linking loop); how the
parts come from a KB, or from the files ``Linker.save`` wrote, is read here, one function per part.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Container, Mapping, Sequence
from pathlib import Path

from medlink.corpora.entity_types import concept_types, entity_type
from medlink.errors import DamagedFileError, MedlinkError, reading
from medlink.kb.store import KB
from medlink.linking import manifest as layout
from medlink.linking.config import LinkerConfig
from medlink.linking.kb_inputs import alt_ids_of, descriptions_of
from medlink.linking.memory import MemoryEntries
from medlink.progress import phase
from medlink.rerank.base import LinkerParts, Reranker, load_reranker, reranker_class
from medlink.retrieval.base import CandidateGenerator, build_generator, load_generator
from medlink.retrieval.lines import Lines
from medlink.retrieval.names import KB_ORIGIN, MEMORY_ORIGIN, NameTable, read_lines
from medlink.text.finders.dictionary import DictionaryFinder

log = logging.getLogger(__name__)
Generators = tuple[list[str], list[str], dict[str, str], dict[str, NameTable], dict[str, CandidateGenerator]]


def table_sources(config: LinkerConfig, has_memory: bool) -> dict[str, str]:
    """Generator name -> alias table it searches, after dropping what a missing memory makes moot."""
    chosen = {}
    for generator in config.generators:
        source = generator.names
        if not has_memory:
            if source == "memory":
                continue
            source = "kb"
        chosen[generator.name] = source
    return chosen


def built_generators(kb: KB, config: LinkerConfig, memory: MemoryEntries | None) -> Generators:
    """The concept ids and preferred names, each generator's alias table (by generator) and the tables and generators
    themselves, built over ``kb`` (+ ``memory``)."""
    has_memory = bool(memory and memory.pairs)
    concept_ids, concept_names = [], []
    for concept_id, name in kb.iter_concepts():
        concept_ids.append(concept_id)
        concept_names.append(name)
    position = {cid: i for i, cid in enumerate(concept_ids)}
    for concept_id, name in memory_concepts(memory, position) if has_memory else ():
        position[concept_id] = len(concept_ids)
        concept_ids.append(concept_id)
        concept_names.append(name)
    sources = table_sources(config, has_memory)
    memory_only = [g.name for g in config.generators if g.name not in sources]
    if memory_only and not sources:
        raise MedlinkError(
            f"every generator of this config searches the memory only ('names': 'memory': {', '.join(memory_only)}) and no "
            "memory was given: give --memory FILE, or let a generator search the KB's names ('names': 'kb' or 'kb+memory')"
        )
    if memory_only:
        log.warning("no memory given: generator(s) %s, which search the memory only, left out of the index", ", ".join(memory_only))

    def entries(source: str):
        if source in ("kb", "kb+memory"):
            for concept_id, text, _kind in kb.iter_names():
                yield text, concept_id, KB_ORIGIN
        if source in ("memory", "kb+memory") and memory:
            for text, concept_id in memory.pairs:
                yield text, concept_id, MEMORY_ORIGIN

    with phase(f"index: name tables of {len(concept_ids):,} concepts"):
        tables = {source: NameTable.build(entries(source), position, kb.normalize) for source in sorted(set(sources.values()))}
    descriptions = descriptions_of(kb, position) if any(g.params.get("text", "name") != "name" for g in config.generators) else None
    generators = {}
    for generator in config.generators:
        if generator.name in sources:
            table = tables[sources[generator.name]]
            with phase(f"index: {generator.name} ({generator.type}) over {len(table):,} names"):
                generators[generator.name] = build_generator(
                    generator.type, table, concept_ids, generator.name, generator.params, descriptions, kb.normalize
                )
    return concept_ids, concept_names, sources, tables, generators


def memory_concepts(memory: MemoryEntries, known: Container[str]) -> list[tuple[str, str]]:
    """(id, name) of each concept the memory's mentions bring that the KB lacks (``memory_from_datasets(new_concepts=
    True)``), by id; its name is its most frequent mention (the first written, of equally frequent ones)."""
    texts: dict[str, Counter[str]] = {}
    for text, concept_id in memory.pairs:
        if concept_id not in known:
            texts.setdefault(concept_id, Counter())[text] += 1
    return [(concept_id, texts[concept_id].most_common(1)[0][0]) for concept_id in sorted(texts)]


def built_dictionary(kb: KB, memory: MemoryEntries | None, skipped: set[str]) -> DictionaryFinder:
    """The mention finder over the KB's names (and the memory's mentions), without those of ``skipped`` concepts."""
    has_memory = bool(memory and memory.pairs)
    with phase("index: dictionary finder over the KB's names" + (" and the memory's mentions" if has_memory else "")):
        pairs = [(text, cid) for cid, text, _kind in kb.iter_names() if cid not in skipped]
        pairs += [(text, concept) for text, concept in memory.pairs if concept not in skipped] if has_memory else []
        typed = concept_types(kb)  # each name's span takes its concept's entity type
        if has_memory and len(memory.types) == 1:  # a memory of one type's mentions: its concepts are of that type
            kind = entity_type(memory.types[0])
            typed.update((concept, kind) for _, concept in memory.pairs if concept not in typed)
        return DictionaryFinder.build([text for text, _ in pairs], kb.normalize, types=[typed.get(cid) for _, cid in pairs])


def checked_kb(directory: Path, manifest: dict, kb: KB | None) -> KB | None:
    """The KB the index was built from (or ``kb``), refused if its content changed; None if it is gone."""
    recorded = manifest["kb"]
    if kb is None:
        kb_path = Path(recorded["path"])
        if not kb_path.is_file():
            log.warning("the KB this index was built from (%s) is not there; using the index as built", kb_path)
            return None
        kb = KB.open(kb_path)
    if kb.checksum != recorded["checksum"]:
        raise MedlinkError(
            f"{directory}: built from a KB with checksum {recorded['checksum']}, but {kb.path} now has {kb.checksum}; "
            f"rebuild the index: medlink index build --kb {kb.path} --out {directory}"
        )
    return kb


def read_generators(
    directory: Path, manifest: dict, config: LinkerConfig, sources: dict[str, str], kb: KB | None
) -> tuple[list[str], Sequence[str], dict[str, NameTable], dict[str, CandidateGenerator], dict[str, list[str]]]:
    """The concept ids and names, alias tables, generators and alt ids an index folder holds."""
    concept_ids = read_lines(directory / layout.CONCEPT_IDS)
    concept_names = Lines.read(directory / layout.CONCEPT_NAMES)  # a few are read: those of the candidates kept
    if len(concept_ids) != len(concept_names) or len(concept_ids) != manifest["kb"].get("concepts", len(concept_ids)):
        raise DamagedFileError(
            directory / layout.CONCEPT_IDS,
            ValueError(f"{len(concept_ids)} ids, {len(concept_names)} names, the manifest says {manifest['kb'].get('concepts')} concepts"),
        )
    tables = {source: NameTable.load(directory / layout.TABLES / source, len(concept_ids)) for source in sorted(set(sources.values()))}
    types = {g.name: g.type for g in config.generators}
    generators = {}
    for name, source in sources.items():
        with reading(directory / layout.GENERATORS / name, (KeyError,)):  # a setting missing from its params
            generators[name] = load_generator(types[name], directory / layout.GENERATORS / name, tables[source], concept_ids, name)
    if (directory / layout.ALT_IDS).is_file():
        alt_ids = {row[0]: row[1:] for row in (line.split("\t") for line in read_lines(directory / layout.ALT_IDS)) if len(row) > 1}
    else:  # a version-2 index: its KB knows them
        alt_ids = alt_ids_of(kb) if kb is not None else {}
    return concept_ids, concept_names, tables, generators, alt_ids


def read_rerankers(directory: Path, config: LinkerConfig, parts: LinkerParts) -> list[Reranker]:
    """The config's rerankers, in order, each read from its folder (or from the config alone, for those that keep
    nothing on disk)."""
    rerankers = []
    for position, settings in enumerate(config.rerankers):
        folder = directory / layout.reranker_dir(position, settings["type"])
        if getattr(reranker_class(settings["type"]), "in_config", False):  # nothing on disk: the config holds it all
            try:
                rerankers.append(load_reranker(folder, settings, parts))
            except MedlinkError as error:
                raise MedlinkError(f"{directory}: {error}") from error
            continue
        if not folder.is_dir() and settings["type"] in layout.LEGACY_RERANKER_DIRS:
            folder = directory / layout.LEGACY_RERANKER_DIRS[settings["type"]]
        if not folder.is_dir():
            raise DamagedFileError(folder, FileNotFoundError(f"the {settings['type']} reranker's folder is missing"))
        with reading(folder, (KeyError,)):
            rerankers.append(load_reranker(folder, settings, parts))
    return rerankers


def stage_readings(
    generators: Mapping[str, CandidateGenerator], keys: Sequence[str], stages: Sequence[str]
) -> dict[str, dict[str, dict[str, str]]]:
    """key -> {stage: its evidence entry} for the keys a stage read otherwise (BM25's spelling, the thesaurus's
    synonyms), so a candidate that stage found says so."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for stage in stages:
        generator = generators[stage]
        reading = getattr(generator, "reading", None)
        evidence = getattr(generator, "reading_evidence", None) or (
            lambda key, read, stage=stage: {"spelling": f"{stage} read '{key}' as '{read}'"}
        )
        for key in keys if reading else ():
            if (read := reading(key)) is not None:
                out.setdefault(key, {})[stage] = evidence(key, read)
    return out

"""The Linker: normalise mentions, ask every candidate generator, fuse, name the candidates.

``Linker.build`` makes one from a KB (+ optional mention memory) and a config; ``save`` writes an
index directory atomically; ``Linker.load`` reads it back offline and refuses an index whose KB
has changed since (checksum in the manifest).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from medlink.core import Candidate, LinkResult, Mention
from medlink.directories import require_replaceable, staged_directory
from medlink.errors import DamagedFileError, MedlinkError, reading
from medlink.inventory import describe_files
from medlink.kb.store import KB
from medlink.linking import manifest as layout
from medlink.linking.calibration import check_calibration
from medlink.linking.config import NAME_SOURCES, LinkerConfig, default_config
from medlink.linking.kb_inputs import alt_ids_of, descriptions_of, finder_skipped
from medlink.linking.manifest import MANIFEST, check_index_files, is_index_manifest, new_manifest, read_manifest
from medlink.linking.memory import MemoryEntries
from medlink.progress import phase
from medlink.rerank.base import LinkerParts, Reranker, build_reranker, load_reranker, reads_context, reranker_class
from medlink.retrieval.base import CandidateGenerator, build_generator, load_generator, to_candidates
from medlink.retrieval.fusion import Fusion
from medlink.retrieval.hits import Hits
from medlink.retrieval.hits import top_k as ranked_top
from medlink.retrieval.names import KB_ORIGIN, MEMORY_ORIGIN, NameTable, read_lines, write_json, write_lines
from medlink.text.concept_text import entity_texts
from medlink.text.finders.dictionary import DictionaryFinder
from medlink.text.normalize import Normalizer

log = logging.getLogger(__name__)
MAX_MENTION_CHARS = 1000  # longer mentions are truncated (with a warning): no concept name is that long


def _table_sources(config: LinkerConfig, has_memory: bool) -> dict[str, str]:
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


def is_text(text: str) -> bool:
    """False for a string holding bytes that were not UTF-8 (a command-line argument decodes them as lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def mention_error(text: str, key: str) -> str | None:
    """Why a mention cannot be linked (``key``: its normalised form), or None: reported per mention, not for the batch."""
    if not is_text(text):
        return "not valid UTF-8 text (it holds bytes that are not UTF-8)"
    if not text.strip():
        return "empty mention"
    if not key:
        return "nothing to link after normalisation (only punctuation or symbols)"
    return None


class Linker:
    """Candidate generators over shared alias tables, fused into one ranking per mention, then each reranker in turn."""

    def __init__(
        self,
        config: LinkerConfig,
        normalizer: Normalizer,
        concept_ids: list[str],
        concept_names: list[str],
        tables: dict[str, NameTable],
        generators: dict[str, CandidateGenerator],
        manifest: dict,
        memory: MemoryEntries | None = None,
        alt_ids: dict[str, list[str]] | None = None,
    ):
        self.config = config
        self.normalize = normalizer
        self.concept_ids = concept_ids
        self.concept_names = concept_names
        self.tables = tables
        self.generators = generators
        self.manifest = manifest
        self.memory = memory  # kept only to be saved beside the index (memory.tsv), for inspection
        self.alt_ids = alt_ids or {}
        self.rerankers: list[Reranker] = []
        self.dictionary: DictionaryFinder | None = None  # built with the index; loaded by the annotator when it needs it
        self.directory: Path | None = None  # the index folder this linker was loaded from
        self._position = {cid: i for i, cid in enumerate(concept_ids)}

    def parts(self, memory: Sequence[tuple[str, str]] = (), describe: Callable[[], dict[str, str]] | None = None) -> LinkerParts:
        """What rerankers may use of this linker (``memory``: normalised (mention, concept) pairs, and ``describe``: the
        KB's entity texts, when building)."""
        return LinkerParts(
            self.generators, self.candidate_for, memory, self.memory.summary() if self.memory else None, self.normalize, describe
        )

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        kb: KB,
        config: LinkerConfig | None = None,
        memory: MemoryEntries | None = None,
        dictionary: bool = True,
        finder_skip: Sequence[str] = (),
    ) -> Linker:
        """A linker over ``kb`` (+ ``memory``); ``dictionary=False`` skips the mention finder (a linker that only links strings);
        ``finder_skip``: concepts whose names (theirs and their descendants') the mention finder leaves out (``finder_skipped``)."""
        config = config or default_config()
        skipped = finder_skipped(kb, finder_skip) if dictionary else set()  # first: an unknown id is refused before the (long) build
        has_memory = bool(memory and memory.pairs)
        concept_ids, concept_names = [], []
        for concept_id, name in kb.iter_concepts():
            concept_ids.append(concept_id)
            concept_names.append(name)
        position = {cid: i for i, cid in enumerate(concept_ids)}
        sources = _table_sources(config, has_memory)
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
        manifest = new_manifest(
            kb.path, kb.checksum, len(concept_ids), config.to_dict(), kb.normalize.signature, memory.summary() if memory else None
        )
        manifest["tables"] = sources
        check_calibration(config.to_dict(), kb.checksum, "config", manifest["memory"])
        linker = cls(config, kb.normalize, concept_ids, concept_names, tables, generators, manifest, memory, alt_ids_of(kb))
        parts = linker.parts(
            [(kb.normalize(text), concept) for text, concept in memory.pairs] if has_memory else [], lambda: entity_texts(kb)
        )
        for settings in config.rerankers:
            with phase(f"index: {settings['type']} reranker"):
                linker.rerankers.append(build_reranker(settings, parts))
        if not dictionary:
            return linker
        with phase("index: dictionary finder over the KB's names" + (" and the memory's mentions" if has_memory else "")):
            names = [text for cid, text, _kind in kb.iter_names() if cid not in skipped]
            names += [text for text, concept in memory.pairs if concept not in skipped] if has_memory else []
            linker.dictionary = DictionaryFinder.build(names, kb.normalize)
            manifest["dictionary"] = {"skip_under": sorted(finder_skip), "concepts_skipped": len(skipped)}
        return linker

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: Path | str) -> Path:
        """Write the index directory atomically (build beside it, then swap)."""
        directory = Path(directory)
        require_replaceable(directory, MANIFEST, "a medlink index", is_index_manifest, layout.LAYOUT)
        with staged_directory(directory) as temporary:
            write_lines(temporary / layout.CONCEPT_IDS, self.concept_ids)
            write_lines(temporary / layout.CONCEPT_NAMES, self.concept_names)
            write_lines(temporary / layout.ALT_IDS, ["\t".join([cid, *alt]) for cid, alt in self.alt_ids.items()])
            for source, table in self.tables.items():
                table.save(temporary / layout.TABLES / source)
            for name, generator in self.generators.items():
                generator.save(temporary / layout.GENERATORS / name)
            if self.memory is not None:
                self.memory.save(temporary / layout.MEMORY)
            for position, reranker in enumerate(self.rerankers):
                reranker.save(temporary / layout.reranker_dir(position, reranker.type))
            if self.dictionary is not None:
                self.dictionary.save(temporary / layout.DICTIONARY)
            self.manifest[layout.FILES] = describe_files(temporary)  # what loading checks
            write_json(temporary / MANIFEST, self.manifest)  # last: a directory with a manifest is complete
        return directory

    @classmethod
    def load(cls, directory: Path | str, kb: KB | None = None) -> Linker:
        """Load an index folder offline (``medlink.load_index`` also takes the default indexes' names). The KB it was
        built from is checked when present (or given)."""
        directory = Path(directory)
        manifest = read_manifest(directory)
        if not check_index_files(directory, manifest):
            log.warning(
                "%s was built by an older medlink: its manifest records no file checksums, so damage cannot be "
                "detected; rebuild it (medlink index build) to have its files checked",
                directory,
            )
        with reading(directory / MANIFEST):  # a key missing or of the wrong kind: the manifest was edited or damaged
            kb = cls._check_kb(directory, manifest, kb)
            config = LinkerConfig.from_dict(manifest["config"], f"{directory / MANIFEST}: config")
            normalizer = Normalizer.from_signature(manifest["normalizer"])
            sources: dict[str, str] = dict(manifest["tables"])
            check_calibration(config.to_dict(), manifest["kb"]["checksum"], str(directory / MANIFEST), manifest.get("memory"))
        if any(s not in NAME_SOURCES or n not in {g.name for g in config.generators} for n, s in sources.items()):
            raise MedlinkError(
                f"{directory / MANIFEST}: 'tables' must map this config's generators to {', '.join(NAME_SOURCES)}; "
                "the manifest was changed by hand or damaged: rebuild the index"
            )
        concept_ids = read_lines(directory / layout.CONCEPT_IDS)
        concept_names = read_lines(directory / layout.CONCEPT_NAMES)
        if len(concept_ids) != len(concept_names) or len(concept_ids) != manifest["kb"].get("concepts", len(concept_ids)):
            raise DamagedFileError(
                directory / layout.CONCEPT_IDS,
                ValueError(
                    f"{len(concept_ids)} ids, {len(concept_names)} names, the manifest says {manifest['kb'].get('concepts')} concepts"
                ),
            )
        tables = {source: NameTable.load(directory / layout.TABLES / source, len(concept_ids)) for source in sorted(set(sources.values()))}
        types = {g.name: g.type for g in config.generators}
        generators = {}
        for name, source in sources.items():
            with reading(directory / layout.GENERATORS / name):
                generators[name] = load_generator(types[name], directory / layout.GENERATORS / name, tables[source], concept_ids, name)
        if (directory / layout.ALT_IDS).is_file():
            alt_ids = {row[0]: row[1:] for row in (line.split("\t") for line in read_lines(directory / layout.ALT_IDS)) if len(row) > 1}
        else:  # a version-2 index: its KB knows them
            alt_ids = alt_ids_of(kb) if kb is not None else {}
        linker = cls(config, normalizer, concept_ids, concept_names, tables, generators, manifest, alt_ids=alt_ids)
        linker.directory = directory
        parts = linker.parts()
        for position, settings in enumerate(config.rerankers):
            folder = directory / layout.reranker_dir(position, settings["type"])
            if getattr(reranker_class(settings["type"]), "in_config", False):  # nothing on disk: the config holds it all
                try:
                    linker.rerankers.append(load_reranker(folder, settings, parts))
                except MedlinkError as error:
                    raise MedlinkError(f"{directory}: {error}") from error
                continue
            if not folder.is_dir() and settings["type"] in layout.LEGACY_RERANKER_DIRS:
                folder = directory / layout.LEGACY_RERANKER_DIRS[settings["type"]]
            if not folder.is_dir():
                raise DamagedFileError(folder, FileNotFoundError(f"the {settings['type']} reranker's folder is missing"))
            with reading(folder):
                linker.rerankers.append(load_reranker(folder, settings, parts))
        return linker

    @staticmethod
    def _check_kb(directory: Path, manifest: dict, kb: KB | None) -> KB | None:
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

    # -- variants -----------------------------------------------------------------------------
    def with_rerankers(self, rerankers: Sequence[Reranker]) -> Linker:
        """This linker with other rerankers; itself unchanged, so threads sharing it are not disturbed."""
        variant = copy.copy(self)
        variant.rerankers = list(rerankers)
        return variant

    def with_last_stage(self, stage: Reranker) -> Linker:
        """This linker with ``stage`` as its last reranker, replacing one of its type, in its config and manifest too
        (a calibration stage: it reads every other stage's scores, so it comes last)."""
        variant = self.with_rerankers([r for r in self.rerankers if r.type != stage.type] + [stage])
        variant.config = replace(
            self.config, rerankers=[r for r in self.config.rerankers if r["type"] != stage.type] + [dict(stage.settings)]
        )
        variant.manifest = {**self.manifest, "config": variant.config.to_dict()}
        return variant

    def with_decisions(self, nil_threshold: float | None = None, backoff_below: float | None = None) -> Linker:
        """This linker deciding NIL (and backoff) at these thresholds instead of the index's own."""
        from medlink.linking.calibration import decided_rerankers

        return self.with_rerankers(decided_rerankers(self, nil_threshold, backoff_below))

    # -- describing ---------------------------------------------------------------------------
    def name_of(self, concept_id: str) -> str | None:
        position = self._position.get(concept_id)
        return None if position is None else self.concept_names[position]

    def candidate_for(self, concept_id: str) -> Candidate:
        """A zero-score candidate for a concept a reranker brings in: its preferred name and alt ids filled."""
        return Candidate(concept_id, 0.0, name=self.name_of(concept_id), alt_ids=list(self.alt_ids.get(concept_id, ())))

    def precisions(self) -> dict[str, str]:
        """What each neural stage runs in on this machine (fp32 or bf16), for reports; empty for a lexical index."""
        stages = {name: getattr(generator, "encoder", None) for name, generator in self.generators.items()}
        stages.update({f"reranker {reranker.type}": getattr(reranker, "model", None) for reranker in self.rerankers})
        return {name: model.precision for name, model in stages.items() if model is not None}

    # -- linking ------------------------------------------------------------------------------
    def stages(self, generators: Sequence[str] | None = None) -> list[str]:
        """The generators a call uses: ``generators`` (checked), else all but those the fusion weighs at zero."""
        if generators is None:  # stages the fusion weighs at zero would only cost time
            weights = self.config.fusion.weights
            names = [n for n in self.generators if len(self.generators) == 1 or weights.get(n, 1.0) != 0]
        else:
            unknown = [n for n in generators if n not in self.generators]
            if unknown:
                raise MedlinkError(f"unknown generator {', '.join(map(repr, unknown))}; this index has {', '.join(self.generators)}")
            names = [n for n in self.generators if n in generators]
        if not names:
            raise MedlinkError(f"no generator selected; this index has {', '.join(self.generators)}")
        return names

    def prepare(self) -> Linker:
        """Build now what generators would build on their first query (BM25's spelling vocabulary), for a long run."""
        for generator in self.generators.values():
            if hasattr(generator, "prepare"):
                generator.prepare()
        return self

    def key(self, text: str) -> str:
        """A mention's normalised form, what the generators search (over-long mentions truncated)."""
        if len(text) > MAX_MENTION_CHARS:
            log.warning("mention of %d characters truncated to %d", len(text), MAX_MENTION_CHARS)
            text = text[:MAX_MENTION_CHARS]
        return self.normalize(text)

    def search(self, keys: Sequence[str], names: Sequence[str]) -> dict[str, Hits]:
        """Each of the ``names`` generators' ``k_per_generator`` best hits for normalised, non-empty ``keys``.

        The depth is the config's, never the caller's k: with RRF or weighted fusion, a deeper list adds votes, so a
        k-dependent depth would make the top candidate of ``--k 1`` differ from that of ``--k 64``."""
        return {name: self.generators[name].search_hits(keys, self.config.k_per_generator, stage=i) for i, name in enumerate(names)}

    def fuse(
        self, per_stage: dict[str, Hits], depth: int, fusion: Fusion | None = None, names: Sequence[str] | None = None
    ) -> list[list[Candidate]]:
        """``search``'s hits (all of them, in search order) fused by the config's fusion (or ``fusion``) into ``depth``
        candidates per key; ``names`` fuses only those stages (one stage: its own scores, as linking with it alone gives)."""
        searched = list(per_stage)  # a hit's stage number is its position here
        names = list(names or searched)
        fused = (
            ranked_top(per_stage[names[0]], depth)
            if len(names) == 1
            else (fusion or self.config.fusion).fuse({n: per_stage[n] for n in names}, depth)
        )
        tables = [self.generators[name].table for name in searched]
        by_stage = {n: per_stage[n] for n in names} if len(names) > 1 else None
        return to_candidates(fused, tables, searched, self.concept_ids, self.concept_names, by_stage)

    def retrieve(self, keys: Sequence[str], names: Sequence[str], depth: int) -> list[list[Candidate]]:
        """Candidates of normalised, non-empty ``keys`` from the ``names`` generators, fused: ``depth`` per key."""
        return self.fuse(self.search(keys, names), depth) if keys else []

    def link(
        self, mentions: Sequence[str | Mention], k: int = 10, generators: Sequence[str] | None = None, rerank: bool = True
    ) -> list[LinkResult]:
        """One ``LinkResult`` per mention, in order: its ``k`` best candidates (none, with an ``error``, for a mention
        that is empty or only punctuation).

        ``generators`` restricts the stages used; ``rerank=False`` skips the rerankers (a reranker that needs a
        generator left out is skipped too). Identical mentions are searched and reranked once; with a reranker that
        reads context, "identical" takes the context too (each distinct text is still searched once).
        """
        items = [Mention.of(m) for m in mentions]
        keys = [self.key(m.text) if is_text(m.text) else "" for m in items]
        unique = sorted({key for key in keys if key})
        names = self.stages(generators)
        everything = generators is None or names == self.stages()
        rerankers = [
            r
            for r in self.rerankers
            if rerank
            and (r.requires_generator is None or r.requires_generator in names)
            and (everything or not getattr(r, "in_config", False))
        ]  # probabilities are fitted for every stage, not a subset
        depth = max(k, self.config.k_per_generator) if rerankers else k  # rerankers see the whole fused list
        with_context = any(reads_context(r) for r in rerankers)
        idents = [(key, m.left, m.right) if with_context else key for m, key in zip(items, keys)]
        first = {}
        for mention, key, ident in zip(items, keys, idents):
            if key:
                first.setdefault(ident, (key, mention))
        order = sorted(first, key=lambda ident: first[ident][0])  # by key, as the searches
        retrieved = dict(zip(unique, self.retrieve(unique, names, depth)))
        queries = [Mention(key, m.doc_id, m.start, m.end, m.left, m.right) for key, m in map(first.get, order)]
        results = [LinkResult(query, list(retrieved[query.text])) for query in queries]
        for reranker in rerankers:
            results = reranker.rerank(queries, results)
        by_ident = dict(zip(order, results))
        readings = self._readings(unique, names)
        out = []
        for mention, key, ident in zip(items, keys, idents):
            found = by_ident.get(ident)
            if found is None:
                out.append(LinkResult(mention, [], mention_error(mention.text, key)))
                continue
            # a fresh list per mention: duplicates share the search, not the objects
            candidates = [c.copy(alt_ids=list(self.alt_ids.get(c.concept_id, ()))) for c in found.candidates[:k]]
            for candidate in candidates:
                candidate.evidence += [
                    {"spelling": f"{stage} read '{key}' as '{read}'"}
                    for stage, read in readings.get(key, {}).items()
                    if stage in candidate.scores_by_stage
                ]
            out.append(replace(found, mention=mention, candidates=candidates))
        return out

    def _readings(self, keys: Sequence[str], stages: Sequence[str]) -> dict[str, dict[str, str]]:
        """key -> {stage: what that stage searched instead} for the keys a stage read otherwise (BM25's spelling), so a
        candidate that its corrected words found says so."""
        out: dict[str, dict[str, str]] = {}
        for stage in stages:
            reading = getattr(self.generators[stage], "reading", None)
            for key in keys if reading else ():
                if (read := reading(key)) is not None:
                    out.setdefault(key, {})[stage] = read
        return out

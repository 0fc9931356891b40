"""The Linker: normalise mentions, ask every candidate generator, fuse, name the candidates. ``Linker.build`` makes one
from a KB (+ optional mention memory) and a config; ``save`` writes an index directory atomically; ``Linker.load`` reads
it back offline and refuses an index whose KB has changed since (checksum in the manifest)."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path

from medlink.collector import collection_paused
from medlink.core import Candidate, LinkResult, Mention
from medlink.directories import require_replaceable, staged_directory
from medlink.errors import SHAPE_ERRORS, MedlinkError, reading
from medlink.inventory import describe_files
from medlink.kb.store import KB
from medlink.linking import manifest as layout
from medlink.linking.batch_calibration import batch_decides, decided, decisive, hit_columns
from medlink.linking.calibration import CalibrationStage, check_calibration
from medlink.linking.codes import CodeLookup, resolve_codes
from medlink.linking.config import NAME_SOURCES, LinkerConfig, default_config
from medlink.linking.index_parts import built_dictionary, built_generators, checked_kb, read_generators, read_rerankers, stage_readings
from medlink.linking.kb_inputs import alt_ids_of, finder_skipped
from medlink.linking.manifest import MANIFEST, check_index_files, is_index_manifest, new_manifest, read_manifest
from medlink.linking.memory import MemoryEntries, read_memory
from medlink.linking.mentions import checked, is_text, mention_error, note_readings_once, own_candidates
from medlink.linking.readings import derived_words, mention_reading
from medlink.linking.search_ahead import searched_ahead
from medlink.progress import phase
from medlink.rerank.base import LinkerParts, Reranker, build_reranker, reads_context
from medlink.retrieval.base import CandidateGenerator, to_candidates
from medlink.retrieval.fusion import Fusion
from medlink.retrieval.hits import Hits
from medlink.retrieval.hits import top_k as ranked_top
from medlink.retrieval.names import NameTable, write_json, write_lines
from medlink.text.concept_text import entity_texts
from medlink.text.finders.dictionary import DictionaryFinder
from medlink.text.finders.dictionary_files import is_current as dictionary_is_current
from medlink.text.normalize import Normalizer

log = logging.getLogger(__name__)
MAX_MENTION_CHARS = 1000  # longer mentions are truncated (with a warning): no concept name is that long


class Linker:
    """Candidate generators over shared alias tables, fused into one ranking per mention, then each reranker in turn."""

    def __init__(
        self,
        config: LinkerConfig,
        normalizer: Normalizer,
        concept_ids: list[str],
        concept_names: Sequence[str],
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
        self.dictionary: DictionaryFinder | None = None  # built with the index; read on first use (dictionary_finder)
        self.directory: Path | None = None  # the index folder this linker was loaded from
        self._position: dict[str, int] | None = None  # concept id -> its place, made when a name is first asked for

    def parts(self, memory: Sequence[tuple[str, str]] = (), describe: Callable[[], dict[str, str]] | None = None) -> LinkerParts:
        """What rerankers may use of this linker (``memory``: normalised (mention, concept) pairs; ``describe``: KB texts)."""
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
        concept_ids, concept_names, sources, tables, generators = built_generators(kb, config, memory)
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
        linker.dictionary = built_dictionary(kb, memory, skipped)
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
        """Load an index folder offline (``medlink.load_index`` also takes default indexes' names), its KB checked if there."""
        directory = Path(directory)
        manifest = read_manifest(directory)
        if not check_index_files(directory, manifest):
            log.warning(
                "%s was built by an older medlink: its manifest records no file checksums, so damage cannot be "
                "detected; rebuild it (medlink index build) to have its files checked",
                directory,
            )
        with reading(directory / MANIFEST, SHAPE_ERRORS):  # a key missing or of the wrong kind: the manifest was edited or damaged
            kb = checked_kb(directory, manifest, kb)
            config = LinkerConfig.from_dict(manifest["config"], f"{directory / MANIFEST}: config")
            normalizer = Normalizer.from_signature(manifest["normalizer"])
            sources: dict[str, str] = dict(manifest["tables"])
            check_calibration(config.to_dict(), manifest["kb"]["checksum"], str(directory / MANIFEST), manifest.get("memory"))
        if any(s not in NAME_SOURCES or n not in {g.name for g in config.generators} for n, s in sources.items()):
            raise MedlinkError(
                f"{directory / MANIFEST}: 'tables' must map this config's generators to {', '.join(NAME_SOURCES)}; "
                "the manifest was changed by hand or damaged: rebuild the index"
            )
        concept_ids, concept_names, tables, generators, alt_ids = read_generators(directory, manifest, config, sources, kb)
        linker = cls(config, normalizer, concept_ids, concept_names, tables, generators, manifest, alt_ids=alt_ids)
        linker.directory = directory
        linker.rerankers = read_rerankers(directory, config, linker.parts())
        return linker

    # -- variants -----------------------------------------------------------------------------
    def with_rerankers(self, rerankers: Sequence[Reranker]) -> Linker:
        """This linker with other rerankers; itself unchanged, so threads sharing it are not disturbed."""
        variant = copy.copy(self)
        variant.rerankers = list(rerankers)
        return variant

    def with_last_stage(self, stage: Reranker) -> Linker:
        """This linker with ``stage`` last, replacing one of its type, in its config and manifest too (a calibration stage reads
        every other stage's scores)."""
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

    def memory_entries(self) -> MemoryEntries | None:
        """The mention memory this index was built with: in hand after a build, else the index folder's copy."""
        if self.memory is not None or self.directory is None:
            return self.memory
        path = self.directory / layout.MEMORY
        return read_memory(path) if path.is_file() else None

    def dictionary_finder(self) -> DictionaryFinder:
        """The index's dictionary finder: the one built with it, else one built now from its name table (an index
        without a current one; rebuild the index to keep it)."""
        if self.dictionary is not None:
            return self.dictionary
        if self.directory is not None and dictionary_is_current(self.directory / layout.DICTIONARY):
            self.dictionary = DictionaryFinder.load(self.directory / layout.DICTIONARY)
            return self.dictionary
        source = "kb" if "kb" in self.tables else "kb+memory"
        if source not in self.tables:
            raise MedlinkError("this index has no table of KB names to find mentions with; rebuild it with 'medlink index build'")
        with phase(f"annotate: dictionary finder over {len(self.tables[source]):,} names (rebuild the index to keep it)"):
            self.dictionary = DictionaryFinder.build(self.tables[source].display, self.normalize)
        return self.dictionary

    # -- describing ---------------------------------------------------------------------------
    def name_of(self, concept_id: str) -> str | None:
        if self._position is None:
            self._position = dict(zip(self.concept_ids, range(len(self.concept_ids))))
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

    def prepare(self, compiled: bool = False) -> Linker:
        """Build now what generators would build on their first query (BM25's spelling vocabulary), for a long run;
        ``compiled``: load the compiled stages too, so that every call of 64 distinct mentions or more takes them
        (``retrieval.compiled``)."""
        for generator in self.generators.values():
            if hasattr(generator, "prepare"):
                generator.prepare()
        if compiled:
            from medlink.retrieval.compiled import load

            load()
        return self

    def key(self, text: str) -> str:
        """A mention's normalised form, what the generators search (``reading``)."""
        return self.reading(text)[0]

    def reading(self, text: str) -> tuple[str, str | None]:
        """What the generators search for a mention, and that again where it is not its own normalised words
        (``linking.readings``); over-long mentions truncated."""
        if len(text) > MAX_MENTION_CHARS:
            log.warning("mention of %d characters truncated to %d", len(text), MAX_MENTION_CHARS)
            text = text[:MAX_MENTION_CHARS]
        return mention_reading(text, self.normalize, self.generators.values(), self.derived_words)

    def search(self, keys: Sequence[str], names: Sequence[str]) -> dict[str, Hits]:
        """Each of the ``names`` generators' ``k_per_generator`` best hits for normalised, non-empty ``keys``.

        The depth is the config's, never the caller's k: with RRF or weighted fusion, a deeper list adds votes, so a
        k-dependent depth would make the top candidate of ``--k 1`` differ from that of ``--k 64``."""
        return {name: self.generators[name].search_hits(keys, self.config.k_per_generator, stage=i) for i, name in enumerate(names)}

    def fused_hits(
        self, per_stage: dict[str, Hits], depth: int, fusion: Fusion | None = None, names: Sequence[str] | None = None
    ) -> tuple[Hits, list[NameTable], list[str], dict[str, Hits] | None]:
        """``search``'s hits fused into ``depth`` per key, with what reading them needs: each searched stage's alias
        table and name (a hit's stage number is its position), and the fused stages' own hits (None for one stage)."""
        searched = list(per_stage)
        names = list(names or searched)
        fused = (
            ranked_top(per_stage[names[0]], depth)
            if len(names) == 1
            else (fusion or self.config.fusion).fuse({n: per_stage[n] for n in names}, depth)
        )
        tables = [self.generators[name].table for name in searched]
        return fused, tables, searched, ({n: per_stage[n] for n in names} if len(names) > 1 else None)

    def fuse(
        self, per_stage: dict[str, Hits], depth: int, fusion: Fusion | None = None, names: Sequence[str] | None = None
    ) -> list[list[Candidate]]:
        """``search``'s hits (all of them, in search order) fused by the config's fusion (or ``fusion``) into ``depth``
        candidates per key; ``names`` fuses only those stages (one stage: its own scores, as linking with it alone gives)."""
        fused, tables, searched, by_stage = self.fused_hits(per_stage, depth, fusion, names)
        return to_candidates(fused, tables, searched, self.concept_ids, self.concept_names, by_stage)

    def calibrated(self, keys: Sequence[str], names: Sequence[str], depth: int, stage: CalibrationStage, k: int) -> list[LinkResult]:
        """``retrieve`` then ``stage`` for normalised ``keys``, their first ``k``, decided on arrays (``batch_calibration``)."""
        return [result for part, per_stage in self.searched(keys, names) for result in self._decided(part, per_stage, depth, stage, k)]

    def _decided(self, keys: Sequence[str], per_stage: dict[str, Hits], depth: int, stage: CalibrationStage, k: int) -> list[LinkResult]:
        fused, tables, searched, by_stage = self.fused_hits(per_stage, depth)
        fused, positions = decisive(stage, fused, k)
        columns = hit_columns(fused, tables, searched, by_stage, len(self.concept_ids), stage.normalize)
        return [
            LinkResult(Mention(key), candidates, None, nil, probability, stage.settings["nil_threshold"])
            for key, (candidates, probability, nil) in zip(
                keys, decided(stage, keys, fused, columns, searched, self.concept_ids, self.concept_names, k, positions, self.alt_ids)
            )
        ]

    def retrieve(self, keys: Sequence[str], names: Sequence[str], depth: int) -> list[list[Candidate]]:
        """Candidates of normalised, non-empty ``keys`` from the ``names`` generators, fused: ``depth`` per key."""
        return self.fuse(self.search(keys, names), depth) if keys else []

    def searched(self, keys: Sequence[str], names: Sequence[str]) -> Iterator[tuple[Sequence[str], dict[str, Hits]]]:
        """``search``'s hits chunk by chunk, the next chunk searched while the caller decides one (``search_ahead``); one
        search where a stage encodes mentions (a dense encoder's batches, and its memo of them, span the call)."""
        whole = any(getattr(self.generators[name], "encoder", None) is not None for name in names)
        return searched_ahead(lambda part: self.search(part, names), keys, len(keys) if whole else None) if keys else iter(())

    def link(
        self,
        mentions: str | Mention | Sequence[str | Mention],
        k: int = 10,
        generators: Sequence[str] | None = None,
        rerank: bool = True,
        batched: bool = True,
    ) -> list[LinkResult]:
        """One ``LinkResult`` per mention, in order (one string or ``Mention`` is one mention): its ``k`` (at least 1)
        best candidates (none, with an ``error``, for a mention that is empty or only punctuation).

        ``generators`` restricts the stages used; a subset leaves out the index's calibration (its probabilities
        are fitted on every stage), so candidates come without ``probability``. ``rerank=False`` skips the
        rerankers (a reranker that needs a generator left out is skipped too). Identical mentions are searched and reranked once; with a reranker that
        reads context, "identical" takes the context too (each distinct text is still searched once). A calibration
        stage alone decides on the batch's arrays; ``batched=False`` takes the candidate-by-candidate reference path.
        """
        mentions = checked(mentions, k, "Linker.link")
        with collection_paused():
            return self._link(mentions, k, generators, rerank, batched)

    def _link(
        self, mentions: Sequence[str | Mention], k: int, generators: Sequence[str] | None, rerank: bool, batched: bool
    ) -> list[LinkResult]:
        items = [Mention.of(m) for m in mentions]
        read = [self.reading(m.text) if is_text(m.text) else ("", None) for m in items]
        keys = [key for key, _ in read]
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
        if batched and not with_context and len(rerankers) == 1 and batch_decides(rerankers[0]):
            by_ident = dict(zip(unique, self.calibrated(unique, names, depth, rerankers[0], k)))
        else:
            retrieved = dict(zip(unique, self.retrieve(unique, names, depth)))
            queries = [Mention(key, m.doc_id, m.start, m.end, m.left, m.right) for key, m in map(first.get, order)]
            results = [LinkResult(query, list(retrieved[query.text])) for query in queries]
            for reranker in rerankers:
                results = reranker.rerank(queries, results)
            by_ident = dict(zip(order, results))
        fresh = set() if with_context else set(by_ident)  # idents whose candidates were made for them alone, not yet handed out
        readings = stage_readings(self.generators, unique, names)
        note_readings_once((found.candidates[:k], readings.get(first[ident][0])) for ident, found in by_ident.items())
        out = []
        for mention, (key, read_as), ident in zip(items, read, idents):
            found = by_ident.get(ident)
            if found is None:
                out.append(LinkResult(mention, [], mention_error(mention.text, key)))
                continue
            candidates = own_candidates(found.candidates[:k], ident in fresh, self.alt_ids)
            fresh.discard(ident)
            out.append(replace(found, mention=mention, candidates=candidates, read_as=read_as))
        return resolve_codes(out, lambda: self.codes, self.candidate_for)

    @cached_property
    def derived_words(self) -> dict[str, str]:
        """Words derived from names, read as them (``readings.derived_words``)."""
        return derived_words(self.dictionary, self.directory and self.directory / layout.DICTIONARY)

    @cached_property
    def codes(self) -> CodeLookup:
        """The index's ids in every form a mention may write them (built on the first mention that looks like a code)."""
        return CodeLookup(self.concept_ids, self.alt_ids)

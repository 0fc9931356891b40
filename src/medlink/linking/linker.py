"""The Linker: normalise mentions, ask every candidate generator, fuse, name the candidates.

``Linker.build`` makes one from a KB (+ optional mention memory) and a config; ``save`` writes an
index directory atomically; ``Linker.load`` reads it back offline and refuses an index whose KB
has changed since (checksum in the manifest).
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Sequence

from medlink.core import Candidate, Mention
from medlink.directories import replace_directory, require_replaceable
from medlink.errors import MedlinkError
from medlink.kb.store import KB
from medlink.linking.config import LinkerConfig, default_config
from medlink.linking.manifest import MANIFEST, new_manifest, read_manifest
from medlink.linking.memory import MemoryEntries
from medlink.rerank.cross_encoder import CrossEncoderReranker
from medlink.rerank.knn import KnnParams, KnnReranker
from medlink.retrieval.base import CandidateGenerator, build_generator, load_generator, to_candidates
from medlink.retrieval.hits import top_k as ranked_top
from medlink.retrieval.names import KB_ORIGIN, MEMORY_ORIGIN, NameTable, read_lines, write_json, write_lines
from medlink.text.normalize import Normalizer

log = logging.getLogger(__name__)
RERANKER_DIRS = {KnnReranker: "knn", CrossEncoderReranker: "cross_encoder"}  # where each kind is saved in an index
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


def _descriptions(kb: KB, position: dict[str, int]) -> dict[int, tuple[list[str], str | None]]:
    """Concept position -> (types, definition), for generators that embed more than the name."""
    return {position[cid]: (types, definition) for cid, types, definition in kb.iter_descriptions() if types or definition}


class Linker:
    """Candidate generators over shared alias tables, fused into one ranking per mention."""

    def __init__(self, config: LinkerConfig, normalizer: Normalizer, concept_ids: list[str], concept_names: list[str],
                 tables: dict[str, NameTable], generators: dict[str, CandidateGenerator], manifest: dict,
                 memory: MemoryEntries | None = None, reranker: KnnReranker | CrossEncoderReranker | None = None):
        self.config = config
        self.normalize = normalizer
        self.concept_ids = concept_ids
        self.concept_names = concept_names
        self.tables = tables
        self.generators = generators
        self.manifest = manifest
        self.memory = memory  # kept only to be saved beside the index (memory.tsv), for inspection
        self.reranker = reranker
        self._position = {cid: i for i, cid in enumerate(concept_ids)}

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def build(cls, kb: KB, config: LinkerConfig | None = None, memory: MemoryEntries | None = None) -> "Linker":
        config = config or default_config()
        has_memory = bool(memory and memory.pairs)
        if config.reranker and config.reranker["type"] == "knn" and not has_memory:
            why = (f"the memory given has no usable entry ({memory.skipped_composite} composite, {memory.skipped_unknown_concept} "
                   "with no concept in this KB)") if memory else "no mention memory was given"
            raise MedlinkError(f"the kNN reranker votes with training mentions, but {why}: give a mention memory whose concepts are in "
                               "the KB (medlink index build --memory FORMAT:PATH) or remove the reranker from the config")
        concept_ids, concept_names = [], []
        for concept_id, name in kb.iter_concepts():
            concept_ids.append(concept_id)
            concept_names.append(name)
        position = {cid: i for i, cid in enumerate(concept_ids)}
        sources = _table_sources(config, has_memory)

        def entries(source: str):
            if source in ("kb", "kb+memory"):
                for concept_id, text, _kind in kb.iter_names():
                    yield text, concept_id, KB_ORIGIN
            if source in ("memory", "kb+memory") and memory:
                for text, concept_id in memory.pairs:
                    yield text, concept_id, MEMORY_ORIGIN

        tables = {source: NameTable.build(entries(source), position, kb.normalize) for source in sorted(set(sources.values()))}
        descriptions = _descriptions(kb, position) if any(g.params.get("text", "name") != "name" for g in config.generators) else None
        generators = {}
        for generator in config.generators:
            if generator.name in sources:
                generators[generator.name] = build_generator(generator.type, tables[sources[generator.name]], concept_ids, generator.name,
                                                             generator.params, descriptions)
        manifest = new_manifest(kb.path, kb.checksum, len(concept_ids), config.to_dict(), kb.normalize.signature, memory.summary() if memory else None)
        manifest["tables"] = sources
        reranker = None
        if config.reranker and config.reranker["type"] == "cross-encoder":
            reranker = CrossEncoderReranker.build(config.reranker)
        elif config.reranker:
            settings = {key: value for key, value in config.reranker.items() if key in ("k", "lambda_", "beta1", "beta2")}
            encoder = generators[config.reranker["generator"]].encoder
            reranker = KnnReranker.build(encoder, [(kb.normalize(text), concept) for text, concept in memory.pairs], KnnParams(**settings))
        return cls(config, kb.normalize, concept_ids, concept_names, tables, generators, manifest, memory, reranker)

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: Path | str) -> Path:
        """Write the index directory atomically (build beside it, then swap)."""
        directory = Path(directory)
        require_replaceable(directory, MANIFEST, "a medlink index")
        directory.parent.mkdir(parents=True, exist_ok=True)
        temporary = directory.with_name(f".{directory.name}.{os.getpid()}.tmp")
        shutil.rmtree(temporary, ignore_errors=True)
        try:
            temporary.mkdir()
            write_lines(temporary / "concept_ids.txt", self.concept_ids)
            write_lines(temporary / "concept_names.txt", self.concept_names)
            for source, table in self.tables.items():
                table.save(temporary / "tables" / source)
            for name, generator in self.generators.items():
                generator.save(temporary / "generators" / name)
            if self.memory is not None:
                self.memory.save(temporary / "memory.tsv")
            if self.reranker is not None:
                self.reranker.save(temporary / RERANKER_DIRS[type(self.reranker)])
            write_json(temporary / MANIFEST, self.manifest)  # last: a directory with a manifest is complete
            replace_directory(temporary, directory)
        except BaseException:
            shutil.rmtree(temporary, ignore_errors=True)
            raise
        return directory

    @classmethod
    def load(cls, directory: Path | str, kb: KB | None = None) -> "Linker":
        """Load an index offline. The KB it was built from is checked when present (or given)."""
        directory = Path(directory)
        manifest = read_manifest(directory)
        cls._check_kb(directory, manifest, kb)
        config = LinkerConfig.from_dict(manifest["config"], f"{directory / MANIFEST}: config")
        concept_ids = read_lines(directory / "concept_ids.txt")
        concept_names = read_lines(directory / "concept_names.txt")
        sources: dict[str, str] = manifest["tables"]
        tables = {source: NameTable.load(directory / "tables" / source) for source in sorted(set(sources.values()))}
        types = {g.name: g.type for g in config.generators}
        generators = {
            name: load_generator(types[name], directory / "generators" / name, tables[source], concept_ids, name)
            for name, source in sources.items()
        }
        reranker = next((kind.load(directory / sub) for kind, sub in RERANKER_DIRS.items() if (directory / sub).is_dir()), None)
        return cls(config, Normalizer.from_signature(manifest["normalizer"]), concept_ids, concept_names, tables, generators, manifest,
                   reranker=reranker)

    @staticmethod
    def _check_kb(directory: Path, manifest: dict, kb: KB | None) -> None:
        recorded = manifest["kb"]
        if kb is None:
            kb_path = Path(recorded["path"])
            if not kb_path.is_file():
                log.warning("the KB this index was built from (%s) is not there; using the index as built", kb_path)
                return
            kb = KB.open(kb_path)
        if kb.checksum != recorded["checksum"]:
            raise MedlinkError(
                f"{directory}: built from a KB with checksum {recorded['checksum']}, but {kb.path} now has {kb.checksum}; "
                f"rebuild the index: medlink index build --kb {kb.path} --out {directory}"
            )

    def precisions(self) -> dict[str, str]:
        """What each neural stage runs in on this machine (fp32 or bf16), for reports; empty for a lexical index."""
        stages = {name: getattr(generator, "encoder", None) for name, generator in self.generators.items()}
        stages["reranker"] = getattr(self.reranker, "model", None)
        return {name: model.precision for name, model in stages.items() if model is not None}

    # -- linking ------------------------------------------------------------------------------
    def name_of(self, concept_id: str) -> str | None:
        position = self._position.get(concept_id)
        return None if position is None else self.concept_names[position]

    def link(self, mentions: Sequence[str | Mention], k: int = 10, generators: Sequence[str] | None = None,
             rerank: bool = True, knn: KnnParams | None = None) -> list[list[Candidate]]:
        """Ranked candidates per mention (an empty list for an empty mention).

        ``generators`` restricts the stages used; ``rerank=False`` skips the reranker (kNN or
        cross-encoder) and ``knn`` overrides the kNN's parameters (dev tuning). Identical mentions
        are searched once.
        """
        texts = [m.text if isinstance(m, Mention) else m for m in mentions]
        keys = []
        for text in texts:
            if len(text) > MAX_MENTION_CHARS:
                log.warning("mention of %d characters truncated to %d", len(text), MAX_MENTION_CHARS)
                text = text[:MAX_MENTION_CHARS]
            keys.append(self.normalize(text))
        unique = sorted({key for key in keys if key})
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
        per_stage = {
            name: self.generators[name].search_hits(unique, max(k, self.config.k_per_generator), stage=i) for i, name in enumerate(names)
        }
        cross = isinstance(self.reranker, CrossEncoderReranker)
        reranking = rerank and self.reranker is not None and (cross or self.config.reranker["generator"] in names)  # kNN needs its dense stage
        depth = max(k, self.config.k_per_generator) if reranking else k  # the reranker sees the whole candidate list
        if len(names) == 1:
            fused = ranked_top(per_stage[names[0]], depth)
        else:
            fused = self.config.fusion.fuse(per_stage, depth)
        tables = [self.generators[name].table for name in names]
        candidates = to_candidates(fused, tables, names, self.concept_ids, self.concept_names, per_stage if len(names) > 1 else None)
        if reranking and cross:
            candidates = self.reranker.rerank(unique, candidates, k)
        elif reranking:
            vectors = self.generators[self.config.reranker["generator"]].encode_mentions(unique)
            candidates = self.reranker.rerank(vectors, candidates, k, knn, name_of=self.name_of)
        by_key = dict(zip(unique, candidates))
        results = []
        for key in keys:
            # a fresh list per mention: duplicates share the search, not the objects
            results.append([self._copy(c) for c in by_key[key]] if key else [])
        return results

    @staticmethod
    def _copy(candidate: Candidate) -> Candidate:
        return Candidate(candidate.concept_id, candidate.score, candidate.matched_name, dict(candidate.scores_by_stage),
                         list(candidate.evidence), candidate.name)

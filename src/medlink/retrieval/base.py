"""The candidate-generator protocol and the registry that builds / loads generators by type name."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from medlink.core import Candidate
from medlink.retrieval.hits import Hits, from_key_hits
from medlink.retrieval.names import MEMORY_ORIGIN, NameTable
from medlink.text.normalize import Normalizer


@runtime_checkable
class CandidateGenerator(Protocol):
    """Anything that ranks concepts for a batch of (normalised) mention strings.

    ``search_hits`` is the fast path the Linker fuses (flat arrays, ``stage`` tags the hits);
    ``search`` returns ``Candidate`` lists for callers that want objects.
    """

    name: str
    table: NameTable

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits: ...

    def search(self, mentions: Sequence[str], k: int) -> list[list[Candidate]]: ...

    def save(self, directory: Path) -> None: ...


class GeneratorBase:
    """Shared state and the object-returning ``search`` of every generator over a ``NameTable``."""

    def __init__(self, table: NameTable, concept_ids: Sequence[str], name: str):
        self.name = name
        self.table = table
        self.concept_ids = concept_ids

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        raise NotImplementedError

    def search(self, mentions: Sequence[str], k: int) -> list[list[Candidate]]:
        return to_candidates(self.search_hits(mentions, k), [self.table], [self.name], self.concept_ids)

    def _concept_hits(self, query: np.ndarray, key: np.ndarray, score: np.ndarray, stage: int, n_queries: int, k: int) -> Hits:
        return from_key_hits(
            query, key.astype(np.int64), score, self.table.indptr, self.table.concept_index, self.table.priors, stage, n_queries, k
        )


# type name -> "module:Class" under medlink.retrieval; each class has
# build(table, concept_ids, name, **params) and load(directory, table, concept_ids, name)
GENERATORS = {
    "exact": "exact:ExactGenerator",
    "completion": "completion:CompletionGenerator",
    "thesaurus": "thesaurus:ThesaurusGenerator",
    "tfidf": "tfidf:TfidfGenerator",
    "bm25": "bm25:BM25Generator",
    "dense": "dense:DenseGenerator",
}


def generator_class(type_name: str) -> Any:
    if type_name not in GENERATORS:
        raise ValueError(f"unknown generator type {type_name!r}; known: {', '.join(GENERATORS)}")
    module, cls = GENERATORS[type_name].split(":")
    return getattr(import_module(f"medlink.retrieval.{module}"), cls)


def build_generator(
    type_name: str,
    table: NameTable,
    concept_ids: Sequence[str],
    name: str,
    params: dict,
    descriptions: dict[int, tuple[list[str], str | None]] | None = None,
    normalize: Normalizer | None = None,
) -> CandidateGenerator:
    """``descriptions`` (concept position -> types, definition) go to the generators that embed them, ``normalize`` (the
    table's normaliser) to those that read the names as written."""
    cls = generator_class(type_name)
    extra = {}
    if descriptions is not None and getattr(cls, "uses_descriptions", False):
        extra["descriptions"] = descriptions
    if normalize is not None and getattr(cls, "uses_normalizer", False):
        extra["normalize"] = normalize
    return cls.build(table, concept_ids, name, **extra, **params)


def load_generator(type_name: str, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> CandidateGenerator:
    return generator_class(type_name).load(directory, table, concept_ids, name)


def stage_scores(hits: Hits, n_concepts: int) -> tuple[np.ndarray, np.ndarray]:
    """A sorted (query * n_concepts + concept) code per hit and its score, for looking a stage's score up later."""
    codes = hits.query_index().astype(np.int64) * n_concepts + hits.concepts
    order = np.argsort(codes, kind="stable")
    return codes[order], hits.scores[order]


def to_candidates(
    hits: Hits,
    tables: Sequence[NameTable],
    stage_names: Sequence[str],
    concept_ids: Sequence[str],
    concept_names: Sequence[str] | None = None,
    per_stage: dict[str, Hits] | None = None,
) -> list[list[Candidate]]:
    """Materialise ``Candidate`` objects for every hit (call it on the final top-k only).

    ``per_stage`` (stage name -> that stage's own hits) fills ``scores_by_stage`` after fusion.
    """
    n_concepts = len(concept_ids)
    lookups = {name: stage_scores(h, n_concepts) for name, h in (per_stage or {}).items()}
    queries = hits.query_index()
    codes = queries.astype(np.int64) * n_concepts + hits.concepts
    by_stage: dict[str, np.ndarray] = {}
    for name, (stage_codes, stage_values) in lookups.items():
        at = np.clip(np.searchsorted(stage_codes, codes), 0, max(len(stage_codes) - 1, 0))
        found = (stage_codes[at] == codes) if len(stage_codes) else np.zeros(len(codes), bool)
        by_stage[name] = np.where(found, stage_values[at] if len(stage_values) else 0, np.nan)
    # plain Python values, read once: numpy scalars taken one by one cost more than the rest of the loop
    columns = [(name, values.tolist()) for name, values in by_stage.items()]
    from_memory = np.zeros(len(codes), bool)
    for stage in np.unique(hits.stages).tolist():
        at = hits.stages == stage
        from_memory[at] = (np.asarray(tables[stage].origins)[hits.keys[at]] & MEMORY_ORIGIN) != 0
    out: list[list[Candidate]] = [[] for _ in range(hits.n_queries)]
    for j, (query, concept, score, key, stage, memory) in enumerate(
        zip(queries.tolist(), hits.concepts.tolist(), hits.scores.tolist(), hits.keys.tolist(), hits.stages.tolist(), from_memory.tolist())
    ):
        table = tables[stage]
        stage_name = stage_names[stage]
        if per_stage is None:
            scores = {stage_name: score}
        else:
            scores = {name: values[j] for name, values in columns if values[j] == values[j]}  # NaN: the stage did not find it
        matched = table.display[key]
        out[query].append(
            Candidate(
                concept_ids[concept],
                float(score),
                matched,
                scores,
                [{"matched": matched, "origin": "memory" if memory else "kb", "stage": stage_name}],
                concept_names[concept] if concept_names is not None else None,
            )
        )
    return out

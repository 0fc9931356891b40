"""Bi-encoder evidence for alignment (paper 003 scores the lexical candidates with a dense bi-encoder too).

Why: BM25 and character n-grams see spelling; a bi-encoder sees that "Neoplasm of kidney" and "renal tumour" say the
same thing. Each candidate pair (source concept, target concept) gets the best cosine between any of the source's
first aliases and any of the target's names (its preferred name and the synonyms the target index keeps), a feature
the aligner's calibration weighs beside the lexical ones. The same bi-encoder also proposes candidates: the target
concepts whose names lie nearest to a source alias (``dense_generator``; on DO -> ICD-10-CM it lifts recall@64 from
0.955 to 0.971, BENCHMARKS.md). Any medlink bi-encoder folder works; "packaged" is the MiniLM that ships with the
dense extra.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medlink.align.candidates import CandidateSet, TargetIndex
from medlink.retrieval.names import NameTable

PACKAGED = "packaged"  # the bi-encoder setting that means the packaged MiniLM
SOURCE_ALIASES = 8  # a source concept's first aliases (preferred first) that are encoded


def bi_encoder_setting(value: str) -> str:
    """A --bi-encoder value as an aligner records it: "packaged", or a model folder (checked, made absolute)."""
    if value == PACKAGED:
        return value
    from medlink.encoders.transformer import check_model_dir

    check_model_dir(Path(value))
    return str(Path(value).resolve())


def load_bi_encoder(setting: str):
    """The encoder a calibration's ``bi_encoder`` names: "packaged" or a model folder."""
    from medlink.encoders.transformer import Encoder

    return Encoder(None if setting == PACKAGED else Path(setting), inference_only=True)


def dense_generator(table: NameTable, concept_ids: list[str], setting: str):
    """The target's names embedded by the bi-encoder ``setting`` names (a flat inner-product index: exact neighbours)."""
    from medlink.progress import phase
    from medlink.retrieval.dense import DenseGenerator

    with phase(f"embedding the target's {len(table):,} names ({setting})"):
        return DenseGenerator.build(table, concept_ids, "dense", model=None if setting == PACKAGED else setting)


def with_dense_candidates(index: TargetIndex, setting: str | None) -> TargetIndex:
    """``index`` with the bi-encoder ``setting`` names as its "dense" generator (unchanged for None)."""
    if setting is not None:
        index.generators["dense"] = dense_generator(index.table, index.concept_ids, setting)
    return index


def encoder_for(generators: dict, setting: str):
    """The bi-encoder ``setting`` names: the target index's dense generator's when it has one (loaded once), else loaded."""
    dense = generators.get("dense")
    return dense.encoder if dense is not None else load_bi_encoder(setting)


def dense_similarity(candidates: CandidateSet, setting: str, progress: bool = False) -> np.ndarray:
    """``bi_encoder_similarity`` with the bi-encoder ``setting`` names (the target index's own when it embedded the names)."""
    return bi_encoder_similarity(candidates, encoder_for(candidates.target.generators, setting), progress=progress)


def bi_encoder_similarity(candidates: CandidateSet, encoder, aliases: int = SOURCE_ALIASES, progress: bool = False) -> np.ndarray:
    """Per fused hit of ``candidates``: the best cosine between the source's first ``aliases`` aliases and the
    target concept's names (-1 for a source or target without text)."""
    hits, queries, target = candidates.hits, candidates.queries, candidates.target
    source_texts = [queries.alias_sets[q][:aliases] for q in range(hits.n_queries)]
    used = np.unique(hits.concepts)
    target_texts = {int(c): [target.names[c], *target.synonyms.get(int(c), [])] for c in used}
    distinct = sorted({t for texts in source_texts for t in texts} | {t for texts in target_texts.values() for t in texts})
    row_of = {text: i for i, text in enumerate(distinct)}
    vectors = encoder.encode(distinct, progress=progress) if distinct else np.zeros((0, 1), np.float32)
    out = np.full(len(hits.concepts), -1.0, dtype=np.float64)
    for q in range(hits.n_queries):
        row = hits.row(q)
        concepts = hits.concepts[row]
        if not len(concepts) or not source_texts[q]:
            continue
        names = [target_texts[int(c)] for c in concepts]
        counts = np.array([len(n) for n in names])
        name_rows = [row_of[t] for n in names for t in n]
        similarity = vectors[[row_of[t] for t in source_texts[q]]] @ vectors[name_rows].T  # aliases x all candidate names
        best_per_name = similarity.max(axis=0)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        out[row] = np.maximum.reduceat(best_per_name, starts)
    return out

"""Bi-encoder evidence for alignment (Rahimi et al. (2020) scores the lexical candidates with a dense bi-encoder too).

Why: BM25 and character n-grams see spelling; a bi-encoder sees that "Neoplasm of kidney" and "renal tumour" say the
same thing. Each candidate pair (source concept, target concept) gets the best cosine between any of the source's
first aliases and any of the target's names (every name its table holds, read back from the index), a feature
the aligner's calibration weighs beside the lexical ones. The same bi-encoder also proposes candidates: the target
concepts whose names lie nearest to a source alias (``dense_generator``; on DO -> ICD-10-CM it lifts recall@64 from
0.955 to 0.971, BENCHMARKS.md). Any medlink bi-encoder folder works; "packaged" is the MiniLM that ships with the
dense extra.

The bi-encoder reads a target name without its episode-of-care qualifier (``QUALIFIERS``: ICD-10-CM's "..., initial
encounter for closed fracture"), as the default KB's dense stage does: the qualifier says when the patient is seen, not
what they have, and ICD-10-CM + HPO's 151,578 distinct names are 102,370 texts once it is gone, half the words
(benchmarks/notes.md).
An aligner records the pattern it was trained with (``Calibration.dense_strip``; none for aligners trained before).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medlink.align.candidates import SEARCHED_ALIASES, CandidateSet, SourceQueries, TargetIndex
from medlink.kb.readers.icd10cm import EPISODE_OF_CARE
from medlink.retrieval.hits import runs
from medlink.retrieval.names import NameTable

PACKAGED = "packaged"  # the bi-encoder setting that means the packaged MiniLM
QUALIFIERS = EPISODE_OF_CARE  # what the bi-encoder leaves out of a target name (module docstring)
SOURCE_ALIASES = SEARCHED_ALIASES["dense"]  # a source concept's first aliases (preferred first): those the bi-encoder searched


def bi_encoder_setting(value: str, option: str = "--bi-encoder") -> str:
    """A --bi-encoder value as an aligner records it: "packaged", or a model folder (checked, made absolute; a folder
    that is missing or holds no model is refused naming ``option``, before any work)."""
    if value == PACKAGED:
        return value
    from medlink.encoders.transformer import check_model_dir
    from medlink.errors import MedlinkError, MissingInputError

    try:
        check_model_dir(Path(value))
    except MissingInputError:
        raise MissingInputError(f"{option} {value}: no such model folder (give '{PACKAGED}' or a bi-encoder folder)") from None
    except MedlinkError as error:
        raise MedlinkError(f"{option} {value}: {error} (give '{PACKAGED}' or a bi-encoder folder)") from None
    return str(Path(value).resolve())


def load_bi_encoder(setting: str):
    """The encoder a calibration's ``bi_encoder`` names: "packaged" or a model folder."""
    from medlink.encoders.transformer import Encoder

    return Encoder(None if setting == PACKAGED else Path(setting), inference_only=True)


def dense_generator(table: NameTable, concept_ids: list[str], setting: str, strip: str | None = None):
    """The target's names (less ``strip``) embedded by the bi-encoder ``setting`` names (a flat inner-product index:
    exact neighbours)."""
    from medlink.progress import phase
    from medlink.retrieval.dense import DenseGenerator

    with phase(f"embedding the target's {len(table):,} names ({setting})"):
        return DenseGenerator.build(table, concept_ids, "dense", model=None if setting == PACKAGED else setting, strip=strip)


def with_dense_candidates(index: TargetIndex, setting: str | None, strip: str | None = None) -> TargetIndex:
    """``index`` with the bi-encoder ``setting`` names as its "dense" generator (unchanged for None)."""
    if setting is not None:
        generator = index.generators["dense"] = dense_generator(index.table, index.concept_ids, setting, strip)
        generator.mention_memo = {}  # the source aliases it searches are read again for their similarities (KeyVectors)
    return index


def remember_source_aliases(index: TargetIndex, queries: SourceQueries) -> None:
    """Encode the source aliases the bi-encoder's generator will search through the encode cache, into its memo: an
    alignment of the same source again (another threshold, another aligner) reads them back as it reads the target's
    names (BENCHMARKS.md, align_speed_aliases)."""
    generator = index.generators.get("dense")
    if generator is None or generator.mention_memo is None:
        return
    from medlink.progress import phase
    from medlink.retrieval.dense import encode_cached

    texts = list(dict.fromkeys(queries.aliases[int(i)] for i in queries.first_aliases(SOURCE_ALIASES)))
    with phase(f"embedding the source's {len(texts):,} aliases the bi-encoder searches (encode cache)"):
        vectors = np.asarray(encode_cached(generator.encoder, texts, generator.params["batch_size"]))
    generator.mention_memo.update(zip(texts, vectors))


class KeyVectors:
    """Unit vectors of normalised names for the bi-encoder similarities, none encoded twice in an alignment: through the
    target index's dense generator (its index holds the target's names, embedded when it was built, and it remembers the
    source aliases it searched: ``with_dense_candidates``), or, for an aligner without dense candidates, the bi-encoder."""

    def __init__(self, target: TargetIndex, setting: str, progress: bool = False, strip: str | None = None):
        self.table, self.progress, self.strip = target.table, progress, strip
        self.generator = target.generators.get("dense")
        self.encoder = self.generator.encoder if self.generator is not None else load_bi_encoder(setting)

    def of_rows(self, rows: np.ndarray) -> np.ndarray:
        """The target's names at these table rows."""
        if self.generator is not None:
            return self.generator.name_vectors(rows)
        from medlink.retrieval.dense import stripped

        return self.of_texts(stripped([self.table.keys[int(r)] for r in rows], self.strip))

    def of_texts(self, texts: list[str]) -> np.ndarray:
        """Normalised texts (source aliases)."""
        if not texts:
            return np.zeros((0, self.encoder.dimension), np.float32)
        if self.generator is not None:
            return self.generator.encode_mentions(texts)
        return self.encoder.encode(texts, progress=self.progress)


def dense_similarity(candidates: CandidateSet, setting: str, progress: bool = False, strip: str | None = None) -> np.ndarray:
    """``bi_encoder_similarity`` with the bi-encoder ``setting`` names (the target index's own when it embedded the
    names; else target names less ``strip``)."""
    return bi_encoder_similarity(candidates, KeyVectors(candidates.target, setting, progress, strip))


def bi_encoder_similarity(candidates: CandidateSet, vectors: KeyVectors, aliases: int = SOURCE_ALIASES) -> np.ndarray:
    """Per fused hit of ``candidates``: the best cosine between the source's first ``aliases`` aliases and any of the
    target concept's names, all normalised as the target normalises them (-1 for a source or target without one)."""
    hits, queries, target = candidates.hits, candidates.queries, candidates.target
    chosen = queries.first_aliases(aliases)
    source_indptr = np.searchsorted(queries.owner[chosen], np.arange(hits.n_queries + 1))
    unread = (np.diff(hits.indptr) > 0) & (np.diff(source_indptr) == 0)
    if unread.any():  # candidates come from aliases: queries without them are not the ones the hits were found for
        raise ValueError(
            f"{int(unread.sum())} source concept(s) with candidates but no alias in the queries: the queries and hits do not belong together"
        )
    source = vectors.of_texts([queries.aliases[int(i)] for i in chosen])
    name_indptr, name_rows = target.name_rows()
    used = np.unique(hits.concepts)
    counts = name_indptr[used + 1] - name_indptr[used]
    rows = name_rows[runs(name_indptr[used], counts)]
    names = vectors.of_rows(rows) if len(rows) else np.zeros((0, source.shape[1]), np.float32)
    first_name = np.zeros(len(target.concept_ids) + 1, np.int64)
    first_name[used] = np.cumsum(counts) - counts
    has_names = np.zeros(len(target.concept_ids), bool)
    has_names[used] = counts > 0
    out = np.full(len(hits.concepts), -1.0, dtype=np.float64)
    for q in range(hits.n_queries):
        row = hits.row(q)
        concepts = hits.concepts[row].astype(np.int64)
        if source_indptr[q] == source_indptr[q + 1]:
            continue
        concepts_named = concepts[has_names[concepts]]
        if not len(concepts_named):
            continue
        n = name_indptr[concepts_named + 1] - name_indptr[concepts_named]
        similarity = (
            source[source_indptr[q] : source_indptr[q + 1]] @ names[runs(first_name[concepts_named], n)].T
        )  # aliases x the candidates' names
        best = np.maximum.reduceat(similarity.max(axis=0), np.cumsum(n) - n)
        values = out[row]
        values[has_names[concepts]] = best
        out[row] = values
    return out

"""The evidence an aligner's calibration weighs for each fused candidate (``align.scoring``): its lexical scores, its
place in the target's hierarchy, whether it names an identifying word the source does not, and the cross-encoder's
logit for the first candidates of each source.

Why apart from the calibration: the same evidence is computed for fitting it, for ranking with it, and for the
lexical ranking without it; the calibration file and the fit need only its names.
"""

from __future__ import annotations

import numpy as np

from medlink.align.candidates import CandidateSet
from medlink.align.identifiers import identifying_sets, mismatched

LEXICAL_FEATURES = ("fused", "tfidf", "bm25", "rank", "structural", "depth", "children")
FEATURES = ("cross", *LEXICAL_FEATURES)  # with a cross-encoder; "dense" joins either set when a bi-encoder is given


def features(candidates: CandidateSet, cross: np.ndarray | None = None, dense: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per fused hit, the evidence a calibration weighs (module docstring); ``cross`` NaN where the model did not read;
    ``dense`` the bi-encoder's best alias-to-name cosine (``align.dense``)."""
    hits = candidates.hits
    query = hits.query_index()
    bm25 = candidates.stage_score("bm25").astype(np.float64)
    best = np.zeros(hits.n_queries)
    np.maximum.at(best, query, bm25)
    tfidf = np.clip(candidates.stage_score("tfidf"), 0, 1).astype(np.float64)
    target = candidates.target
    out = {
        "fused": hits.scores.astype(np.float64),
        "tfidf": tfidf,
        "bm25": np.divide(bm25, best[query], out=np.zeros_like(bm25), where=best[query] > 0),
        "rank": np.log1p(np.arange(len(query)) - hits.indptr[query]),
        "structural": ((bm25 == 0) & (tfidf == 0)).astype(np.float64),
        "depth": target.depth()[hits.concepts].astype(np.float64),
        "children": np.log1p(target.children()[hits.concepts]),
    }
    if cross is not None:
        out["cross"] = cross.astype(np.float64)
    if dense is not None:
        out["dense"] = dense.astype(np.float64)
    return out


def identifiers_differ(candidates: CandidateSet) -> np.ndarray:
    """Per fused hit: does the target name an identifying word the source does not (``align.identifiers``)?"""
    hits, queries, table = candidates.hits, candidates.queries, candidates.target.table
    if table is None or not len(hits.concepts):
        return np.zeros(len(hits.concepts), bool)
    per_source: list[list[str]] = [[] for _ in queries.concept_ids]
    for alias, owner in zip(queries.aliases, queries.owner.tolist()):
        per_source[owner].append(alias)
    wanted = np.unique(hits.concepts)
    slot = {int(c): j for j, c in enumerate(wanted)}
    per_target: list[list[str]] = [[] for _ in wanted]
    for row, key in enumerate(table.keys):
        for concept in table.concepts_of(row).tolist():
            if concept in slot:
                per_target[slot[concept]].append(key)
    return mismatched(
        identifying_sets(per_source), identifying_sets(per_target), hits.query_index(), np.searchsorted(wanted, hits.concepts)
    )


def in_depth(candidates: CandidateSet, depth: int) -> np.ndarray:
    """Whether each fused hit is among its source's first ``depth`` (what the cross-encoder reads)."""
    hits = candidates.hits
    query = hits.query_index()
    return (np.arange(len(query)) - hits.indptr[query]) < depth


CROSS_BATCH = 64  # pairs per forward for the aligner's short pairs (48 tokens); align_speed's figures are measured with it


def cross_logits(model, candidates: CandidateSet, depth: int, progress: bool = False) -> np.ndarray:
    """The cross-encoder's logit for each source's first ``depth`` candidates (NaN beyond), batched by source."""
    from medlink.progress import bar as progress_bar

    hits = candidates.hits
    read = in_depth(candidates, depth)
    rows = np.flatnonzero(read)
    query = hits.query_index()[rows]
    out = np.full(len(hits.concepts), np.nan, dtype=np.float32)
    sources = {int(q): candidates.queries.text(int(q)) for q in np.unique(query)}
    step = 4096
    with progress_bar(progress, total=len(rows), desc="cross-encoder", unit=" pairs", unit_scale=True) as bar:
        for start in range(0, len(rows), step):
            part = rows[start : start + step]
            left = [sources[int(q)] for q in query[start : start + step]]
            right = [candidates.target.text(int(c)) for c in hits.concepts[part]]
            out[part] = model.score(left, right, batch_size=CROSS_BATCH)
            bar.update(len(part))
    return out

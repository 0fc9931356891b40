"""The calibration stage over a whole batch at once: features, probabilities, order, backoff and NIL from the fused
hits' arrays, with ``Candidate`` objects made only for the candidates a caller keeps.

Why: ``CalibrationStage.decide`` reads one candidate list of objects at a time, and building those objects and their
features one by one costs far more than retrieval (every fused candidate of every mention, the k kept or not). The
arrays give the same features (``probability.candidate_features``), and the same order and decisions as ``decide``;
``tests/test_batch_calibration.py`` compares the two on every candidate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz.fuzz import ratio
from rapidfuzz.process import cpdist

from medlink.core import Candidate
from medlink.linking.calibration import CalibrationStage, spelt_in_capitals
from medlink.linking.contradictions import capped, cues
from medlink.linking.probability import BASE_FEATURES, TIE, ProbabilityModel
from medlink.linking.rivals import shared
from medlink.retrieval.base import stage_scores
from medlink.retrieval.hits import Hits
from medlink.retrieval.names import MEMORY_ORIGIN, NameTable
from medlink.text.finders.base import is_plausible_mention


def batch_decides(reranker) -> bool:
    """Can the batch decide what ``reranker`` decides? A calibration stage with a fitted probability model (another
    model object, one a caller put in, is asked candidate list by candidate list)."""
    return isinstance(reranker, CalibrationStage) and isinstance(reranker.probability_model, ProbabilityModel)


@dataclass
class HitColumns:
    """What each fused hit carries, as arrays: its query, the alias that earned it (normalised), each stage's score."""

    query: np.ndarray  # int64: the key each hit belongs to
    aliases: np.ndarray  # object: the matched alias as the linker reads it ("" when none)
    displays: np.ndarray  # object: the matched alias as the table spells it
    from_memory: np.ndarray  # bool
    stage_values: dict[str, np.ndarray]  # stage name -> its score (NaN: that stage did not find the candidate)
    alias_ids: np.ndarray  # int64: each hit's alias as a position in ``distinct_aliases``
    distinct_aliases: list[str]  # the batch's aliases, each once


def objects(texts: list[str]) -> np.ndarray:
    """A one-dimensional object array of ``texts`` (numpy would make equal-length tuples a second dimension)."""
    out = np.empty(len(texts), dtype=object)
    out[:] = texts
    return out


def hit_columns(
    fused: Hits,
    tables: Sequence[NameTable],
    searched: Sequence[str],
    per_stage: dict[str, Hits] | None,
    n_concepts: int,
    normalize,
) -> HitColumns:
    """The columns of every fused hit; ``per_stage`` None: one stage, whose own score is the fused one. Each distinct
    alias is read from its table once (stages that share a table share its rows)."""
    query = fused.query_index()
    first_use = [next(s for s in range(len(tables)) if tables[s] is table) for table in tables]  # stages sharing a table
    table_of_hit = np.asarray(first_use, np.int64)[fused.stages.astype(np.int64)] if tables else fused.stages.astype(np.int64)
    distinct, alias_ids = np.unique(table_of_hit * (1 << 32) + fused.keys.astype(np.int64), return_inverse=True)
    located = list(zip((distinct >> 32).tolist(), (distinct & 0xFFFFFFFF).tolist()))
    distinct_aliases = [tables[t].keys[r] for t, r in located]  # each display normalised when the table was built
    aliases = objects(distinct_aliases)[alias_ids]
    displays = objects([tables[t].display[r] for t, r in located])[alias_ids]
    from_memory = np.array([(int(tables[t].origins[r]) & MEMORY_ORIGIN) != 0 for t, r in located], bool)[alias_ids]
    if per_stage is None:
        only = searched[int(fused.stages[0])] if len(fused.stages) else (searched[0] if searched else "")
        stage_values = {only: fused.scores.astype(np.float64)}
    else:
        codes = query.astype(np.int64) * n_concepts + fused.concepts
        stage_values = {}
        for name, hits in per_stage.items():
            stage_codes, values = stage_scores(hits, n_concepts)
            at = np.clip(np.searchsorted(stage_codes, codes), 0, max(len(stage_codes) - 1, 0))
            found = (stage_codes[at] == codes) if len(stage_codes) else np.zeros(len(codes), bool)
            stage_values[name] = np.where(found, values[at] if len(values) else 0, np.nan).astype(np.float64)
    return HitColumns(query, aliases, displays, from_memory, stage_values, alias_ids, distinct_aliases)


def similarities(keys: np.ndarray, texts: np.ndarray) -> np.ndarray:
    """``ratio(key, text) / 100`` of each pair (0 where the text is empty), as ``probability.similarity`` gives it."""
    if len(keys) == 0:
        return np.zeros(0, np.float64)
    values = cpdist(keys.tolist(), texts.tolist(), scorer=ratio, dtype=np.float64) / 100.0
    empty = np.fromiter((not t for t in texts.tolist()), bool, len(texts))
    values[empty] = 0.0
    return values


def word_ids(texts: Sequence[str], vocabulary: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Each text's distinct words as ids (``vocabulary`` grows as words come), CSR-style: (indptr, ids)."""
    ids: list[int] = []
    indptr = [0]
    for text in texts:
        ids.extend(vocabulary.setdefault(word, len(vocabulary)) for word in dict.fromkeys(text.split()))
        indptr.append(len(ids))
    return np.asarray(indptr, np.int64), np.asarray(ids, np.int64)


def shared_words(keys: Sequence[str], query: np.ndarray, columns: HitColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each hit, how many distinct words its alias shares with its key, the key's distinct words and the alias's:
    each key and each distinct alias split once, the hits counted with numpy."""
    vocabulary: dict[str, int] = {}
    key_indptr, key_ids = word_ids(keys, vocabulary)
    alias_of_hit = columns.alias_ids
    alias_indptr, alias_ids = word_ids(columns.distinct_aliases, vocabulary)
    width = len(vocabulary) + 1
    key_codes = np.unique(np.repeat(np.arange(len(keys), dtype=np.int64), np.diff(key_indptr)) * width + key_ids)
    alias_counts = np.diff(alias_indptr)[alias_of_hit]
    starts = alias_indptr[alias_of_hit]
    entry_hit = np.repeat(np.arange(len(query)), alias_counts)
    entry_word = alias_ids[np.arange(len(entry_hit)) - np.repeat(np.cumsum(alias_counts) - alias_counts - starts, alias_counts)]
    entry_code = query[entry_hit].astype(np.int64) * width + entry_word
    at = np.minimum(np.searchsorted(key_codes, entry_code), max(len(key_codes) - 1, 0))
    found = key_codes[at] == entry_code if len(key_codes) else np.zeros(len(entry_code), bool)
    shared = np.bincount(entry_hit[found], minlength=len(query)).astype(np.float64)
    return shared, np.diff(key_indptr).astype(np.float64)[query], alias_counts.astype(np.float64)


def ordered_keys(query: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """One ascending float64 value per hit (scores fall within each query): the query, then minus the score. Exact: a
    float32 score and a small whole query number add without rounding, so ``TIE`` comparisons on it are the scores'."""
    span = 2.0 ** math.ceil(math.log2(float(np.abs(scores).max(initial=0.0)) + 1.0) + 1)
    return query.astype(np.float64) * span - scores.astype(np.float64)


def tie_counts(order: np.ndarray) -> np.ndarray:
    """For each hit, how many hits of its query score within ``TIE`` of it, itself included (``order``: ``ordered_keys``)."""
    return np.searchsorted(order, order + TIE, side="right") - np.searchsorted(order, order - TIE, side="left")


POSITION_FEATURES = 7  # the first features read a hit's place among all its key's hits (rank, gaps, ties)


def position_features(fused: Hits) -> np.ndarray:
    """The first ``POSITION_FEATURES`` of ``candidate_features`` for every fused hit: score, relative score, gap to the
    top, margin to the next, log rank, first or not, log ties."""
    query = fused.query_index()
    n = len(query)
    rows = np.zeros((n, POSITION_FEATURES), np.float64)
    if n == 0:
        return rows
    scores = fused.scores.astype(np.float64)
    first = fused.indptr[:-1][query]
    rank = np.arange(n) - first
    top = scores[first]
    following = np.append(scores[1:], 0.0)
    last = np.append(query[1:] != query[:-1], True)
    following[last] = 0.0
    rows[:, 0] = scores
    rows[:, 1] = np.divide(scores, top, out=np.zeros(n), where=top > 0)
    rows[:, 2] = top - scores
    rows[:, 3] = scores - following
    rows[:, 4] = np.log1p(rank)
    rows[:, 5] = rank == 0
    rows[:, 6] = np.log(tie_counts(ordered_keys(query, fused.scores)))
    return rows


def decisive(stage: CalibrationStage, fused: Hits, k: int) -> tuple[Hits, np.ndarray]:
    """The hits that can reach a key's first ``k`` after the stage decides, and their ``position_features`` (read on
    every hit). Ordered by score, probabilities reorder hits only within a run of tied scores, and a hit's shared
    probability reads only the hits above it and in its run: so the hits down to the end of the run holding the k-th
    (the backoff's window, if wider) decide alone. Ordered by probability, every hit may come first."""
    positions = position_features(fused)
    if stage.settings["order"] == "probability" or len(fused.scores) == 0:
        return fused, positions
    reach = max(k, stage.settings["backoff_top"] if stage.settings["backoff_below"] is not None else 0, 1)
    query = fused.query_index()
    run = run_numbers(query, fused.scores)
    last = np.minimum(fused.indptr[:-1] + reach, fused.indptr[1:]) - 1  # each key's k-th hit (or its last)
    keep = run <= run[np.maximum(last, 0)][query]
    if keep.all():
        return fused, positions
    indptr = np.zeros(fused.n_queries + 1, np.int64)
    np.cumsum(np.bincount(query[keep], minlength=fused.n_queries), out=indptr[1:])
    kept = Hits(indptr, fused.concepts[keep], fused.scores[keep], fused.keys[keep], fused.stages[keep], fused.priors[keep])
    return kept, positions[keep]


def features(
    stage: CalibrationStage, keys: Sequence[str], fused: Hits, columns: HitColumns, names: np.ndarray, positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``candidate_features`` of every fused hit, one row each (``names``: each hit's concept name, normalised;
    ``positions``: ``position_features``, read on the whole ranking), and how closely each alias spells its key at full
    precision (the backoff compares them)."""
    query, n = columns.query, len(columns.query)
    stages = stage.probability_model.stages
    rows = np.zeros((n, len(BASE_FEATURES) + 2 * len(stages)), np.float32)  # each value cast as it is written
    if n == 0:
        return rows, np.zeros(0)
    rows[:, :POSITION_FEATURES] = positions
    key_of_hit = np.asarray(keys, dtype=object)[query]
    rows[:, 7] = key_of_hit == columns.aliases
    alias_similarity = similarities(key_of_hit, columns.aliases)
    rows[:, 8] = alias_similarity
    rows[:, 9] = similarities(key_of_hit, names)
    rows[:, 10] = np.array([math.log(1 + len(key.split())) for key in keys])[query]
    shared, key_words, alias_words = shared_words(keys, query, columns)
    rows[:, 11] = np.divide(shared, key_words, out=np.zeros(n), where=key_words > 0)
    rows[:, 12] = np.divide(shared, alias_words, out=np.zeros(n), where=alias_words > 0)
    rows[:, 13] = columns.from_memory
    for j, name in enumerate(stages):
        values = columns.stage_values.get(name)
        if values is not None:
            found = ~np.isnan(values)
            column = len(BASE_FEATURES) + 2 * j
            rows[found, column] = values[found]
            rows[found, column + 1] = 1.0
    return rows, alias_similarity


def run_numbers(query: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """``ties_by_probability``'s runs (a run lasts while a score is within ``TIE`` of the run's first), as a run number
    for every hit, increasing along the arrays."""
    n = len(scores)
    if n == 0:
        return np.zeros(0, np.int64)
    order = ordered_keys(query, scores)
    following = np.searchsorted(order, order + TIE, side="right")  # the first hit more than TIE under each one
    segment_start = np.flatnonzero(np.append(True, query[1:] != query[:-1]))
    segment_end = np.append(segment_start[1:], n)
    starts = np.zeros(n, bool)
    frontier, ends = segment_start, segment_end
    while len(frontier):
        starts[frontier] = True
        frontier = following[frontier]
        keep = frontier < ends
        frontier, ends = frontier[keep], ends[keep]
    return np.cumsum(starts) - 1


def share_rivals(probability: np.ndarray, fused: Hits, concept_ids: Sequence[str], order: np.ndarray) -> None:
    """``linking.rivals.shared`` over each query's hits in the decided ``order``, in place; only a query whose
    probabilities sum over 1 can change, and only those are read one by one."""
    starts, ends = fused.indptr[:-1], fused.indptr[1:]
    running = np.concatenate(([0.0], np.cumsum(probability, dtype=np.float64)))
    for i in np.flatnonzero(running[ends] - running[starts] > 1.0 + 1e-9).tolist():
        at = order[int(starts[i]) : int(ends[i])]
        ids = [concept_ids[c] for c in fused.concepts[at].tolist()]
        probability[at] = np.round(shared(ids, fused.scores[at].tolist(), probability[at].tolist()), 6)


def decided_order(stage: CalibrationStage, query: np.ndarray, scores: np.ndarray, probability: np.ndarray) -> np.ndarray:
    """The hits' order after the stage's ``order`` setting: by probability within each query, or within each run of
    equal scores (``ties_by_probability``); stable, as ``decide`` sorts."""
    position = np.arange(len(query))
    if stage.settings["order"] == "probability":
        return np.lexsort((position, -probability, query))
    return np.lexsort((position, -probability, run_numbers(query, scores)))


def stage_dicts(columns: HitColumns, kept: np.ndarray) -> list[dict[str, float]]:
    """``scores_by_stage`` of each kept hit: the stages that found it, with their scores (built pattern by pattern of
    stages found, so a hit costs one ``zip``, not a test per stage)."""
    names = list(columns.stage_values)
    if not names:
        return [{} for _ in range(len(kept))]
    values = np.stack([columns.stage_values[name][kept] for name in names], axis=1)
    found = ~np.isnan(values)
    pattern = found @ (1 << np.arange(len(names)))
    out: list[dict[str, float]] = [{}] * len(kept)
    for code in np.unique(pattern).tolist():
        at = np.flatnonzero(pattern == code)
        stages = [i for i in range(len(names)) if code >> i & 1]
        keys = [names[i] for i in stages]
        for position, row in zip(at.tolist(), values[np.ix_(at, stages)].tolist()):
            out[position] = dict(zip(keys, row))
    return out


def chosen_hits(
    stage: CalibrationStage, fused: Hits, order: np.ndarray, probabilities: list[float], similarity: list[float], concept_ids, k: int
) -> tuple[list[int], list[int], dict[int, str]]:
    """Per key, its first ``k`` hits in the decided order after the backoff, flattened: the hits, each key's count,
    and key -> the backoff's explanation where it moved a candidate first."""
    below, window = stage.settings["backoff_below"], stage.settings["backoff_top"]
    kept: list[int] = []
    counts: list[int] = []
    backoffs: dict[int, str] = {}
    concepts = fused.concepts
    bounds = fused.indptr.tolist()
    for i in range(len(bounds) - 1):
        chosen = order[bounds[i] : bounds[i + 1]]
        if len(chosen) and below is not None and probabilities[int(chosen[0])] < below:
            chosen = chosen.tolist()
            look = chosen[:window]
            closest = max(range(len(look)), key=lambda j: similarity[look[j]])
            if closest:
                first = chosen[0]
                backoffs[i] = (
                    f"backoff: the model's first choice, {concept_ids[int(concepts[first])]}, had probability "
                    f"{probabilities[first]:.3f} < {below}; this alias spells the mention most closely"
                )
                chosen.insert(0, chosen.pop(closest))
            chosen = chosen[:k]
        else:
            chosen = chosen[:k].tolist()
        kept.extend(chosen)
        counts.append(len(chosen))
    return kept, counts, backoffs


def decided(
    stage: CalibrationStage,
    keys: Sequence[str],
    fused: Hits,
    columns: HitColumns,
    searched: Sequence[str],
    concept_ids: Sequence[str],
    concept_names: Sequence[str],
    k: int,
    positions: np.ndarray,
    alt_ids: dict[str, list[str]] | None = None,
) -> list[tuple[list[Candidate], float | None, bool | None]]:
    """For each key: its first ``k`` candidates after ``CalibrationStage.decide`` (probabilities, order, backoff), the
    first one's probability and the NIL decision, as ``decide`` gives them for the same fused list (``fused`` and
    ``positions``: ``decisive``'s). ``alt_ids`` fills each candidate's other ids."""
    normalize = stage.normalize
    concepts = fused.concepts
    unique_concepts, inverse = np.unique(concepts, return_inverse=True)
    names = np.array([normalize(concept_names[c]) if concept_names[c] else "" for c in unique_concepts.tolist()], dtype=object)
    rows, alias_similarity = features(stage, keys, fused, columns, hit_names := names[inverse], positions)
    probability = stage.probability_model.predict(rows)
    for i, key in enumerate(keys):
        if not is_plausible_mention(key):  # stop words only: right about nothing, unless the alias is them as an abbreviation
            for at in range(int(fused.indptr[i]), int(fused.indptr[i + 1])):
                probe = Candidate("", 0.0, columns.displays[at] or None, name=concept_names[concepts[at]])
                if not spelt_in_capitals(key, probe, normalize):
                    probability[at] = 0.0
    for i, key in enumerate(keys):
        if mention_cues := cues(key):  # a name that says the opposite of the mention ("in situ" for "invasive")
            for at in range(int(fused.indptr[i]), int(fused.indptr[i + 1])):
                probability[at] = capped(probability[at], mention_cues, columns.aliases[at], hit_names[at])
    probability = np.round(probability, 6)
    order = decided_order(stage, columns.query, fused.scores, probability)
    if stage.settings["rivals"] == "share":
        share_rivals(probability, fused, concept_ids, order)
    probabilities = probability.tolist()
    kept, counts, backoffs = chosen_hits(stage, fused, order, probabilities, alias_similarity.tolist(), concept_ids, k)
    at = np.asarray(kept, np.int64)
    ids = [concept_ids[c] for c in concepts[at].tolist()]
    others = alt_ids or {}
    candidates = [
        Candidate(
            concept_id,
            score,
            display,
            by_stage,
            [{"matched": display, "origin": "memory" if memory else "kb", "stage": searched[stage_of]}],
            concept_names[concept],
            list(others.get(concept_id, ())),
            p,
        )
        for concept_id, score, display, by_stage, memory, stage_of, concept, p in zip(
            ids,
            fused.scores[at].tolist(),
            columns.displays[at].tolist(),
            stage_dicts(columns, at),
            columns.from_memory[at].tolist(),
            fused.stages[at].tolist(),
            concepts[at].tolist(),
            probability[at].tolist(),
        )
    ]
    threshold = stage.settings["nil_threshold"]
    out = []
    start = 0
    for i, count in enumerate(counts):
        mine = candidates[start : start + count]
        start += count
        if i in backoffs:
            mine[0].evidence = [*mine[0].evidence, {"backoff": backoffs[i]}]
        first_probability = mine[0].probability if mine else None
        nil = None if threshold is None else (first_probability is None or first_probability < threshold)
        out.append((mine, first_probability, nil))
    return out

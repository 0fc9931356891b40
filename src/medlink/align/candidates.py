"""Candidate target concepts for every source concept (Rahimi et al. 2020): the source concept's alias set is the query.

Each alias (preferred name and synonyms, normalised as the target normalises) is searched with BM25 over the target's
names and with character n-gram TF-IDF (medlink's own generators); the per-alias hits are pooled per source concept by
max (the best-matching alias speaks for the concept) with a small bonus for every further alias that finds the same
target (``alias_bonus``: agreement between synonyms), then the generators are fused (normalised weighted sum) into the
top ``k``. Where the target has definitions, a BM25 over them joins with a lower weight; given a bi-encoder, its
nearest target names join as a third generator (``align.dense``: names no string measure finds, "renal tumour" for
"Neoplasm of kidney"). Everything stays in flat
arrays (``Hits``); per-stage scores are kept for the scorer and the confidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from medlink.kb.store import KB
from medlink.progress import bar as progress_bar
from medlink.retrieval.base import stage_scores
from medlink.retrieval.bm25 import BM25Generator
from medlink.retrieval.fusion import Fusion
from medlink.retrieval.hits import Hits, concatenate_hits, ranked, runs
from medlink.retrieval.names import KB_ORIGIN, NameTable
from medlink.retrieval.tfidf import TfidfGenerator

DEFAULT_K = 64
DEFAULT_WEIGHTS = {"bm25": 1.0, "tfidf": 1.0, "definition": 0.3, "dense": 2.0}  # dense: DO -> ICD-10-CM dev recall@4 and @64
# a bi-encoder searches each source concept's first 8 own aliases, not every alias and substitution twin: a model that
# reads meaning gains little from more spellings of one concept, and its exhaustive search is the candidates' costliest
# (a fifth fewer searches on the 10k-concept source; DO -> ICD-10-CM recall unchanged: BENCHMARKS.md training seeds)
SEARCHED_ALIASES = {"dense": 8}
TFIDF = {"ngram_range": [1, 5]}  # Rahimi et al. (2020)'s character n-grams (1-5)


@dataclass
class TargetIndex:
    """The target's concepts, names and generators (built once per alignment; cheap next to the queries)."""

    concept_ids: list[str]
    names: list[str]  # preferred name per concept position
    generators: dict[str, object]
    parent_indptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))  # is_a parents, CSR over positions
    parents: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    synonyms: dict[int, list[str]] = field(default_factory=dict)  # a few other names per position (what a reranker reads)
    table: NameTable | None = None  # every name of the target (what a bi-encoder's generator embeds)

    @classmethod
    def build(cls, kb: KB, definitions: bool = True, tfidf: dict | None = None, synonyms: int = 2) -> TargetIndex:
        """``synonyms``: how many names besides the preferred one to keep per concept for the reranker's text (a
        bi-encoder's generator joins later: ``align.dense.with_dense_candidates``)."""
        concept_ids, names = [], []
        for concept_id, name in kb.iter_concepts():
            concept_ids.append(concept_id)
            names.append(name)
        position = {c: i for i, c in enumerate(concept_ids)}
        others: dict[int, list[str]] = {}

        def entries():
            for cid, text, kind in kb.iter_names():
                i = position[cid]
                if kind != "preferred" and text != names[i] and len(others.setdefault(i, [])) < synonyms and text not in others[i]:
                    others[i].append(text)
                yield text, cid, KB_ORIGIN

        table = NameTable.build(entries(), position, kb.normalize)
        generators: dict[str, object] = {
            "bm25": BM25Generator.build(table, concept_ids, "bm25"),
            "tfidf": TfidfGenerator.build(table, concept_ids, "tfidf", **{**TFIDF, **(tfidf or {})}),
        }
        if definitions:
            texts = [(definition, cid, KB_ORIGIN) for cid, _, definition in kb.iter_descriptions() if definition]
            if texts:
                generators["definition"] = BM25Generator.build(NameTable.build(texts, position, kb.normalize), concept_ids, "definition")
        return cls(concept_ids, names, generators, *_parent_csr(kb, position), others, table)

    def depth(self) -> np.ndarray:
        """Is_a steps from each concept up to a root (through first parents; cached)."""
        if getattr(self, "_depth", None) is None:
            n = len(self.concept_ids)
            has_parent = self.parent_indptr[1:] > self.parent_indptr[:-1]
            if not len(self.parents):  # a flat terminology (MEDIC's CTD file): every concept is a root
                self._depth = np.zeros(n, np.int64)
                return self._depth
            first = np.where(has_parent, self.parents[np.minimum(self.parent_indptr[:-1], len(self.parents) - 1)], -1)
            depth = np.zeros(n, np.int64)
            for _ in range(64):  # terminologies are far shallower; a cycle stops here
                updated = np.where(first >= 0, depth[np.maximum(first, 0)] + 1, 0)
                if np.array_equal(updated, depth):
                    break
                depth = updated
            self._depth = depth
        return self._depth

    def name_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Each concept's rows in the name table, CSR over concept positions (every name the target gives it; cached)."""
        if getattr(self, "_name_rows", None) is None:
            table = self.table
            key_rows = np.repeat(np.arange(len(table.keys)), np.diff(table.indptr))
            order = np.argsort(table.concept_index, kind="stable")
            indptr = np.zeros(len(self.concept_ids) + 1, np.int64)
            np.cumsum(np.bincount(table.concept_index, minlength=len(self.concept_ids)), out=indptr[1:])
            self._name_rows = (indptr, key_rows[order].astype(np.int64))
        return self._name_rows

    def children(self) -> np.ndarray:
        """How many is_a children each concept has."""
        return np.bincount(self.parents, minlength=len(self.concept_ids))

    def text(self, position: int, parent: bool = True, hide: str | None = None) -> str:
        """What a reranker reads for a target concept: its name, a few other names (``hide`` left out), and its first
        parent's name."""
        parts = [self.names[position], *(name for name in self.synonyms.get(position, []) if name != hide)]
        text = " ; ".join(parts)
        if parent and self.parent_indptr[position] < self.parent_indptr[position + 1]:
            text += " < " + self.names[int(self.parents[self.parent_indptr[position]])]
        return text


def _parent_csr(kb: KB, position: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Each target concept's is_a parents as CSR arrays over concept positions."""
    pairs = sorted(
        (position[head], position[tail]) for head, _, tail in kb.iter_relations(("is_a",)) if head in position and tail in position
    )
    heads = np.asarray([h for h, _ in pairs], dtype=np.int64)
    indptr = np.zeros(len(position) + 1, dtype=np.int64)
    np.cumsum(np.bincount(heads, minlength=len(position)), out=indptr[1:])
    return indptr, np.asarray([t for _, t in pairs], dtype=np.int64)


@dataclass
class SourceQueries:
    """Every alias of every source concept, normalised; ``owner[i]`` is the source concept position of alias ``i``."""

    concept_ids: list[str]
    names: list[str]
    aliases: list[str]
    owner: np.ndarray
    alias_sets: list[list[str]] = field(default_factory=list)  # the display aliases per concept (what a reranker reads)
    reads: np.ndarray | None = (
        None  # per alias, the alias it is another reading of (a substitution's twin: align.substitutions); None: itself
    )

    @classmethod
    def from_kb(cls, kb: KB, normalize, max_aliases: int = 32) -> SourceQueries:
        """``normalize``: the target's normaliser (queries must meet the target's keys); at most ``max_aliases`` per concept."""
        concept_ids, names = [], []
        for concept_id, name in kb.iter_concepts():
            concept_ids.append(concept_id)
            names.append(name)
        position = {c: i for i, c in enumerate(concept_ids)}
        alias_sets: list[list[str]] = [[] for _ in concept_ids]
        seen: list[set[str]] = [set() for _ in concept_ids]
        aliases, owner = [], []
        for cid, text, _kind in sorted(kb.iter_names(), key=lambda row: (position[row[0]], row[2] != "preferred")):
            i = position[cid]
            key = normalize(text)
            if not key or key in seen[i] or len(seen[i]) >= max_aliases:
                continue
            seen[i].add(key)
            alias_sets[i].append(text)
            aliases.append(key)
            owner.append(i)
        return cls(concept_ids, names, aliases, np.asarray(owner, dtype=np.int64), alias_sets)

    def first_aliases(self, aliases: int) -> np.ndarray:
        """Positions in ``aliases`` of each source concept's first ``aliases`` own aliases (preferred first; a
        substitution's twin is another reading of one, not another alias)."""
        n = len(self.aliases)
        own = np.ones(n, bool) if self.reads is None else self.reads == np.arange(n)
        positions = np.flatnonzero(own)
        owner = self.owner[positions]
        first = np.searchsorted(owner, owner, side="left")  # each concept's aliases sit together, in order
        return positions[np.arange(len(positions)) - first < aliases]

    def followed_by(self, other: SourceQueries) -> SourceQueries:
        """These source concepts, then ``other``'s (aliases, owners and twins' readings moved along)."""
        shift, reads = len(self.concept_ids), None
        if self.reads is not None or other.reads is not None:
            own = lambda q: q.reads if q.reads is not None else np.arange(len(q.aliases))  # noqa: E731
            reads = np.concatenate([own(self), own(other) + len(self.aliases)])
        return SourceQueries(
            self.concept_ids + other.concept_ids,
            self.names + other.names,
            self.aliases + other.aliases,
            np.concatenate([self.owner, other.owner + shift]),
            self.alias_sets + other.alias_sets,
            reads,
        )

    def text(self, position: int, aliases: int = 4) -> str:
        """What a reranker reads for a source concept: its first ``aliases`` names (preferred first)."""
        return " ; ".join(self.alias_sets[position][:aliases])

    def subset(self, positions: Sequence[int]) -> SourceQueries:
        """Only some source concepts (a split), in the given order."""
        keep = {p: j for j, p in enumerate(positions)}
        rows = [i for i, o in enumerate(self.owner.tolist()) if o in keep]
        reads = None
        if self.reads is not None:  # a twin's original is its concept's, so kept with it
            moved = {old: new for new, old in enumerate(rows)}
            reads = np.asarray([moved[int(self.reads[i])] for i in rows], dtype=np.int64)
        return SourceQueries(
            [self.concept_ids[p] for p in positions],
            [self.names[p] for p in positions],
            [self.aliases[i] for i in rows],
            np.asarray([keep[int(self.owner[i])] for i in rows], dtype=np.int64),
            [self.alias_sets[p] for p in positions],
            reads,
        )


@dataclass
class CandidateSet:
    """Top-``k`` target concepts per source concept (``hits``: fused, best first) and each stage's own pooled hits."""

    queries: SourceQueries
    target: TargetIndex
    hits: Hits
    per_stage: dict[str, Hits]

    def followed_by(self, other: CandidateSet) -> CandidateSet:
        """One candidate set of both's source concepts (the same target): these first, then ``other``'s."""
        return CandidateSet(
            self.queries.followed_by(other.queries),
            self.target,
            concatenate_hits([self.hits, other.hits]),
            {k: concatenate_hits([self.per_stage[k], other.per_stage[k]]) for k in self.per_stage},
        )

    def stage_score(self, stage: str) -> np.ndarray:
        """The stage's pooled score of every fused hit (0 where that stage did not find it)."""
        n = len(self.target.concept_ids)
        codes, values = stage_scores(self.per_stage[stage], n)
        wanted = self.hits.query_index().astype(np.int64) * n + self.hits.concepts
        at = np.clip(np.searchsorted(codes, wanted), 0, max(len(codes) - 1, 0))
        found = (codes[at] == wanted) if len(codes) else np.zeros(len(wanted), bool)
        return np.where(found, values[at] if len(values) else 0, 0).astype(np.float32)


def pool_aliases(alias_hits: Hits, owner: np.ndarray, n_concepts: int, k: int, alias_bonus: float, reads: np.ndarray | None = None) -> Hits:
    """Alias-level hits -> source-concept hits: max over the concept's aliases, plus ``alias_bonus`` x the mean of the
    other aliases' scores for the same target (relative to the max), so several synonyms agreeing beat one. ``reads``
    (per alias, the alias it is another reading of): a twin first merges with its original by max, so one name read two
    ways is one voice, not two synonyms agreeing."""
    if reads is not None:
        alias_hits = ranked(
            reads[alias_hits.query_index()],
            alias_hits.concepts,
            alias_hits.scores,
            alias_hits.keys,
            alias_hits.stages,
            alias_hits.priors,
            len(owner),
            len(alias_hits.concepts),
        )
        owner = np.where(reads == np.arange(len(reads)), owner, -1)  # only the originals are counted as aliases below
    query = owner[alias_hits.query_index()]
    if alias_bonus and len(query):
        order = np.lexsort((-alias_hits.scores, alias_hits.concepts, query))
        q, c, s = query[order], alias_hits.concepts[order], alias_hits.scores[order].astype(np.float64)
        first = np.ones(len(q), bool)
        first[1:] = (q[1:] != q[:-1]) | (c[1:] != c[:-1])
        starts = np.flatnonzero(first)
        best, total = s[starts], np.add.reduceat(s, starts)
        aliases = np.bincount(owner[owner >= 0], minlength=n_concepts)[q[starts]]
        pooled = best + alias_bonus * (total - best) / np.maximum(aliases - 1, 1)
        pick = order[starts]
        return ranked(
            q[starts],
            c[starts],
            pooled.astype(np.float32),
            alias_hits.keys[pick],
            alias_hits.stages[pick],
            alias_hits.priors[pick],
            n_concepts,
            k,
        )
    return ranked(query, alias_hits.concepts, alias_hits.scores, alias_hits.keys, alias_hits.stages, alias_hits.priors, n_concepts, k)


def with_ancestors(hits: Hits, target: TargetIndex, k: int, top: int = 8, depth: int = 2, factor: float = 0.9) -> Hits:
    """Add the is_a ancestors (up to ``depth`` levels) of each source concept's ``top`` candidates, each scored
    ``factor`` per level below the candidate that brought it (a concept already found keeps its own score if higher).

    Why: a source term often matches a target concept's child by name while the right mapping is the broader
    parent (an ICD-10-CM category later split into subcodes: DO's "Prader-Willi syndrome" -> Q87.1, whose 2026 child
    Q87.11 carries the name); the reranker then chooses between them."""
    if not len(target.parents) or not len(hits.concepts):
        return hits
    query = hits.query_index()
    first = (np.arange(len(query)) - hits.indptr[query]) < top
    parts = [(query, hits.concepts.astype(np.int64), hits.scores, hits.keys, hits.stages, hits.priors)]
    frontier = (
        query[first],
        hits.concepts[first].astype(np.int64),
        hits.scores[first],
        hits.keys[first],
        hits.stages[first],
        hits.priors[first],
    )
    for _ in range(depth):
        q, c, s, key, stage, prior = frontier
        counts = target.parent_indptr[c + 1] - target.parent_indptr[c]
        if not counts.sum():
            break
        run = runs(target.parent_indptr[c], counts)
        frontier = (
            np.repeat(q, counts),
            target.parents[run],
            np.repeat(s, counts) * factor,
            np.repeat(key, counts),
            np.repeat(stage, counts),
            np.repeat(prior, counts),
        )
        parts.append(frontier)
    q, c, s, key, stage, prior = (np.concatenate([part[i] for part in parts]) for i in range(6))
    return ranked(q, c, s.astype(np.float32), key, stage, prior, hits.n_queries, k)


def generate(
    target: TargetIndex,
    queries: SourceQueries,
    k: int = DEFAULT_K,
    weights: dict[str, float] | None = None,
    alias_bonus: float = 0.2,
    ancestors: int = 8,
    batch: int = 2048,
    progress: bool = False,
) -> CandidateSet:
    """The fused top ``k`` per source concept, in batches of source concepts (memory stays bounded); ``ancestors``:
    how many top candidates bring their is_a ancestors in (0: none; ``with_ancestors``)."""
    weights = {**DEFAULT_WEIGHTS, **(weights or {})}
    stages = [name for name in target.generators if weights.get(name, 1.0)]
    n = len(queries.concept_ids)
    limited = {}  # per generator that searches only some aliases: which
    for name in set(stages) & set(SEARCHED_ALIASES):
        limited[name] = np.zeros(len(queries.aliases), bool)
        limited[name][queries.first_aliases(SEARCHED_ALIASES[name])] = True
    per_stage: dict[str, list[Hits]] = {name: [] for name in stages}
    fused: list[Hits] = []
    fusion = Fusion("weighted", {name: weights.get(name, 1.0) for name in stages})
    with progress_bar(progress, total=n, desc="candidates", unit=" concepts") as bar:
        for start in range(0, max(n, 1), batch):
            stop = min(start + batch, n)
            rows = np.flatnonzero((queries.owner >= start) & (queries.owner < stop))
            aliases = [queries.aliases[i] for i in rows]
            owner = queries.owner[rows] - start
            reads = None
            if queries.reads is not None:  # as positions in this batch (a twin's original is in the batch: same concept)
                position = np.full(len(queries.aliases), -1, np.int64)
                position[rows] = np.arange(len(rows))
                reads = position[queries.reads[rows]]
            pooled = {}
            for stage, name in enumerate(stages):
                if name in limited:  # only the first own aliases: no twin among them (reads: none)
                    searched = limited[name][rows]
                    alias_hits = target.generators[name].search_hits([a for a, keep in zip(aliases, searched) if keep], 2 * k, stage)
                    pooled[name] = pool_aliases(alias_hits, owner[searched], stop - start, k, alias_bonus)
                else:
                    alias_hits = target.generators[name].search_hits(aliases, 2 * k, stage)
                    pooled[name] = pool_aliases(alias_hits, owner, stop - start, k, alias_bonus, reads)
                per_stage[name].append(pooled[name])
            joined = fusion.fuse(pooled, k)
            fused.append(with_ancestors(joined, target, k, ancestors) if ancestors else joined)
            bar.update(stop - start)
    return CandidateSet(queries, target, concatenate_hits(fused), {name: concatenate_hits(parts) for name, parts in per_stage.items()})

"""The graph task of Kong et al. (2021): preferred names of directly connected concepts, and hard negatives.

Every relation counts as "related" except those that mean "different" (ICD-10-CM excludes1 /
excludes2, OBO disjoint_from): those go to ``negatives.tsv`` instead. Edges are held as integer
arrays (16 bytes each) so that deduplication, the node split and the caps are vectorised.
Caps: each concept is the head of at most ``cap`` pairs and the tail of at most ``cap`` pairs,
so a hub with thousands of children appears in a handful of pairs, not thousands.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from medlink.kb.records import IS_A, PREFERRED
from medlink.kb.store import KB
from medlink.progress import bar as progress_bar
from medlink.training.pairs_io import Row
from medlink.training.pairs_split import DEV, TRAIN, NodeSplit, mix64
from medlink.training.pairs_tasks import TaskStats

NEGATIVE_RELATIONS = ("disjoint_from", "excludes1", "excludes2")
CROSS = "cross"  # a negative whose two concepts are on different sides of the split


@dataclass
class ConceptTable:
    """Concept ids and preferred names by integer index, and which indices are dev concepts."""

    ids: list[str]
    names: list[str]
    index: dict[str, int]
    dev: np.ndarray

    @classmethod
    def load(cls, kb: KB, split: NodeSplit) -> ConceptTable:
        ids, names = [], []
        for concept_id, name in kb.iter_concepts():
            ids.append(concept_id)
            names.append(name or "")
        dev = np.fromiter((split.is_dev(c) for c in ids), dtype=bool, count=len(ids))
        return cls(ids, names, {c: i for i, c in enumerate(ids)}, dev)


def _first_per_group(group: np.ndarray, ties: tuple[np.ndarray, ...], cap: int) -> np.ndarray:
    """Mask of the ``cap`` first items of each ``group`` value, ordering within a group by ``ties``."""
    order = np.lexsort((*reversed(ties), group))
    sorted_groups = group[order]
    starts = np.r_[True, sorted_groups[1:] != sorted_groups[:-1]]
    positions = np.arange(len(order))
    rank = positions - np.maximum.accumulate(np.where(starts, positions, 0))
    mask = np.zeros(len(order), dtype=bool)
    mask[order[rank < cap]] = True
    return mask


def graph_pairs(
    kb: KB, table: ConceptTable, cap: int | None, seed: int, stats: TaskStats, progress: bool = False
) -> Iterator[tuple[str, Row]]:
    """Graph task: (head name, tail name) per connected pair, once per unordered pair, is_a preferred."""
    heads, tails, relations = array("q"), array("q"), array("i")
    relation_ids: dict[str, int] = {}
    negatives = set(NEGATIVE_RELATIONS)
    negative_keys = array("q")  # pairs stated to be different are never positives, whatever else links them
    n = len(table.ids)
    for head, relation, tail in progress_bar(
        progress, iterable=kb.iter_relations(), desc="graph: relations", unit=" relations", unit_scale=True, mininterval=0.5
    ):
        h, t = table.index.get(head), table.index.get(tail)
        if relation in negatives:
            if h is not None and t is not None:
                negative_keys.append(min(h, t) * n + max(h, t))
            continue
        if h is None or t is None or h == t:
            stats.add("skipped: dangling or self relation")
            continue
        heads.append(h)
        tails.append(t)
        relations.append(relation_ids.setdefault(relation, len(relation_ids)))
    if not heads:
        stats.notes.append("graph: the KB has no relations between its concepts (other than negatives)")
        return
    h, t, r = (np.array(a, dtype=np.int64) for a in (heads, tails, relations))
    del heads, tails, relations
    not_is_a = (r != relation_ids.get(IS_A, -1)).astype(np.int8)
    key = np.minimum(h, t) * n + np.maximum(h, t)  # one key per unordered pair
    order = np.lexsort((np.arange(len(key)), not_is_a, key))
    first = np.r_[True, key[order[1:]] != key[order[:-1]]]
    keep = np.sort(order[first])
    if len(keep) < len(key):
        stats.add("duplicate or inverse relations merged", int(len(key) - len(keep)))
    h, t, r, not_is_a, key = h[keep], t[keep], r[keep], not_is_a[keep], key[keep]
    if negative_keys:
        positive = ~np.isin(key, np.array(negative_keys, dtype=np.int64))
        if not positive.all():
            stats.add("skipped: also related by a negative relation", int((~positive).sum()))
            h, t, r, not_is_a, key = h[positive], t[positive], r[positive], not_is_a[positive], key[positive]
    same_side = table.dev[h] == table.dev[t]
    stats.dropped_cross_split += int((~same_side).sum())
    h, t, r, not_is_a, key = h[same_side], t[same_side], r[same_side], not_is_a[same_side], key[same_side]
    priority = mix64(key, seed)
    if cap is not None:
        for group in ("head", "tail"):
            mask = _first_per_group(h if group == "head" else t, (not_is_a, priority), cap)
            stats.capped += int((~mask).sum())
            h, t, r, not_is_a, priority = h[mask], t[mask], r[mask], not_is_a[mask], priority[mask]
    relation_names = {i: name for name, i in relation_ids.items()}
    for i in np.lexsort((priority, not_is_a, h)):
        left, right = int(h[i]), int(t[i])
        stats.add(relation_names[int(r[i])])
        side = DEV if table.dev[left] else TRAIN
        yield side, ("graph", table.names[left], table.names[right], table.ids[left], table.ids[right], PREFERRED, PREFERRED)


def negative_rows(kb: KB, split: NodeSplit, counts: dict[str, int]) -> Iterator[tuple[str, str, str, str, str, str]]:
    """(split, left id, right id, relation, left name, right name) per "different" relation, once each."""
    seen: set[tuple[str, str, str]] = set()
    for head, relation, tail in kb.iter_relations(NEGATIVE_RELATIONS):
        if (head, relation, tail) in seen:
            continue
        seen.add((head, relation, tail))
        left, right = kb.name_of(head), kb.name_of(tail)
        if left is None or right is None:
            counts["dangling"] = counts.get("dangling", 0) + 1
            continue
        side = split.side(head)
        side = side if side == split.side(tail) else CROSS
        counts[side] = counts.get(side, 0) + 1
        yield side, head, tail, relation, left, right

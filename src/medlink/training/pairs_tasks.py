"""The synonym and ICD-10 learning tasks of Kong et al. (2021): name pairs that mean the same concept.

Each generator yields ``(split, row)``; a pair whose two concepts fall on different sides of
the node split is dropped (and counted) so that dev concepts stay unseen in training. Caps keep
concepts with hundreds of names from dominating: a concept with n names has n(n-1)/2 pairs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations

from medlink.kb.readers.icd10cm import TITLE_CONCATENATION
from medlink.kb.records import INCLUSION, PREFERRED
from medlink.kb.store import KB
from medlink.progress import bar as progress_bar
from medlink.training.pairs_io import Row
from medlink.training.pairs_split import DEV, TRAIN, NodeSplit, rng_for

ICD_PREFIX = "ICD10CM:"
_ENUMERATE_BELOW = 50_000  # sample "other" synonym pairs from an explicit list when there are at most this many


@dataclass
class TaskStats:
    """What one task produced and left out, for the report."""

    counts: dict[str, int] = field(default_factory=lambda: {TRAIN: 0, DEV: 0})
    dropped_cross_split: int = 0
    capped: int = 0  # pairs left out by the per-concept cap
    detail: dict[str, int] = field(default_factory=dict)  # e.g. graph pairs per relation
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, n: int = 1) -> None:
        self.detail[key] = self.detail.get(key, 0) + n


def choose_pairs(n: int, cap: int | None, rng) -> list[tuple[int, int]]:
    """Index pairs (i < j) among n names, name 0 being the preferred one: (0, j) pairs first, then
    random others, at most ``cap`` in all (``None``: every pair)."""
    anchored = [(0, j) for j in range(1, n)]
    if cap is not None and len(anchored) >= cap:
        return sorted(rng.sample(anchored, cap))
    budget = None if cap is None else cap - len(anchored)
    total_others = (n - 1) * (n - 2) // 2
    if budget is None or total_others <= budget:
        return anchored + list(combinations(range(1, n), 2))
    if total_others <= _ENUMERATE_BELOW:
        return anchored + sorted(rng.sample(list(combinations(range(1, n), 2)), budget))
    chosen: set[tuple[int, int]] = set()
    while len(chosen) < budget:  # budget is far below total_others here, so rejections are rare
        i, j = sorted(rng.sample(range(1, n), 2))
        chosen.add((i, j))
    return anchored + sorted(chosen)


def distinct_names(kb: KB, names: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Names distinct after normalisation, the preferred name first (stable otherwise)."""
    ordered = sorted(names, key=lambda name: name[1] != PREFERRED)
    seen: set[str] = set()
    unique = []
    for text, kind in ordered:
        key = kb.normalize(text)
        if key not in seen:
            seen.add(key)
            unique.append((text, kind))
    return unique


def syn_pairs(kb: KB, split: NodeSplit, cap: int | None, seed: int, stats: TaskStats, progress: bool = False) -> Iterator[tuple[str, Row]]:
    """Synonym task: pairs of distinct names of one concept (mention side = the alias)."""
    groups: dict[str, list[tuple[str, str]]] = {}  # rows of one concept are not guaranteed to be adjacent
    for concept_id, text, kind in progress_bar(
        progress, iterable=kb.iter_names(), desc="syn: names", unit=" names", unit_scale=True, mininterval=0.5
    ):
        groups.setdefault(concept_id, []).append((text, kind))
    for concept_id in sorted(groups):
        names = distinct_names(kb, groups.pop(concept_id))
        n = len(names)
        if n < 2:
            continue
        total = n * (n - 1) // 2
        chosen = choose_pairs(n, None, None) if cap is None or total <= cap else choose_pairs(n, cap, rng_for(seed, "syn", concept_id))
        stats.capped += total - len(chosen)
        side = split.side(concept_id)
        for i, j in chosen:
            (right, right_kind), (left, left_kind) = names[i], names[j]
            stats.add(f"{left_kind}~{right_kind}")
            yield side, ("syn", left, right, concept_id, concept_id, left_kind, right_kind)


def _capped(items: list, cap: int | None, rng, stats: TaskStats) -> list:
    """At most ``cap`` of ``items``, a seeded random choice kept in its original order."""
    if cap is None or len(items) <= cap:
        return items
    stats.capped += len(items) - cap
    keep = set(rng.sample(range(len(items)), cap))
    return [item for index, item in enumerate(items) if index in keep]


def icd_pairs(kb: KB, split: NodeSplit, cap: int | None, seed: int, stats: TaskStats, progress: bool = False) -> Iterator[tuple[str, Row]]:
    """ICD-10 task: 7th-character title concatenation <-> its code's description, and title <-> inclusion terms.

    Only concepts whose id starts with ``ICD10CM:`` take part; the KB has no see-also sections.
    """
    by_parent: dict[str, list[tuple[str, str]]] = {}
    for concept_id, text in kb.iter_names_with_scope(TITLE_CONCATENATION):
        if concept_id.startswith(ICD_PREFIX):
            for parent in kb.parents(concept_id):
                by_parent.setdefault(parent, []).append((concept_id, text))
    bar = progress_bar(progress, desc="icd: pairs", unit=" pairs", unit_scale=True, mininterval=0.5)
    for parent in sorted(by_parent):
        description = kb.name_of(parent)
        if description is None:
            continue
        side = split.side(parent)
        children = by_parent.pop(parent)
        same_side = [child for child in children if split.side(child[0]) == side]
        stats.dropped_cross_split += len(children) - len(same_side)
        for concept_id, text in _capped(same_side, cap, rng_for(seed, "icd-title", parent), stats):
            stats.add("title concatenation~code description")
            bar.update()
            yield side, ("icd", text, description, concept_id, parent, TITLE_CONCATENATION, PREFERRED)
    inclusions: dict[str, list[str]] = {}
    for concept_id, text, _kind in kb.iter_names((INCLUSION,)):
        if concept_id.startswith(ICD_PREFIX):
            inclusions.setdefault(concept_id, []).append(text)
    for concept_id in sorted(inclusions):
        title = kb.name_of(concept_id) or ""
        seen = {kb.normalize(title)}
        terms = []
        for text in inclusions.pop(concept_id):
            if (key := kb.normalize(text)) not in seen:
                seen.add(key)
                terms.append(text)
        side = split.side(concept_id)
        for text in _capped(terms, cap, rng_for(seed, "icd-inclusion", concept_id), stats):
            stats.add("inclusion~code description")
            bar.update()
            yield side, ("icd", text, title, concept_id, concept_id, INCLUSION, PREFERRED)
    bar.close()
    if not stats.detail and not stats.dropped_cross_split:
        stats.notes.append("icd: no ICD-10-CM (ICD10CM:) title concatenations or inclusion terms in this KB")
    else:
        stats.notes.append("icd: the KB has no see-also sections, so no see-also pairs")

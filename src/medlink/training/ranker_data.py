"""What the pairwise ranker trains on: each annotated mention's candidate list as an index retrieves it.

The negatives are the index's own top candidates (what the ranker will have to reorder) and the features are the
index's own scores. One trap: an index whose mention memory holds the training mentions finds every one of them by an
exact memory match, so a ranker trained on that learns to trust memory hits blindly. When the memory holds every training
occurrence (it was built from them, or from a superset such as train + dev), each is retrieved *cross-fitted*: the index is rebuilt ``folds`` times with that
fold's occurrences left out of the memory (the other occurrences of the same string stay, as they would for a test
mention that repeats a training one).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from medlink.core import Candidate
from medlink.kb.store import KB
from medlink.linking.linker import Linker
from medlink.linking.memory import MemoryEntries
from medlink.progress import phase


@dataclass
class Group:
    """One query's retrieved candidates, the gold's position among them (-1: not retrieved), and their features."""

    mention: str
    candidates: list[Candidate]
    gold: int
    features: np.ndarray | None = None


def retrieved_groups(linker: Linker, mentions: Sequence[tuple[str, str]], top: int) -> list[Group]:
    """(normalised mention, gold concept) -> its ``top`` fused candidates from ``linker`` (rerankers off)."""
    results = linker.link([text for text, _ in mentions], k=top, rerank=False)
    groups = []
    for (text, gold), result in zip(mentions, results):
        ids = [c.concept_id for c in result.candidates]
        groups.append(Group(text, result.candidates, ids.index(gold) if gold in ids else -1))
    return groups


def memory_holds(kb: KB, memory: MemoryEntries | None, mentions: Sequence[tuple[str, str]]) -> bool:
    """Does the memory hold every one of these occurrences (normalised text and concept, counted)? Then it was built
    from them; a partial overlap is only strings that recur across splits, as they do at test time."""
    if not memory or not memory.pairs or not mentions:
        return False
    held = Counter((kb.normalize(text), concept) for text, concept in memory.pairs)
    return not Counter(mentions) - held


def without(kb: KB, memory: MemoryEntries, left_out: Sequence[tuple[str, str]]) -> MemoryEntries:
    """``memory`` less one entry per occurrence in ``left_out`` (normalised text and concept)."""
    remove = Counter(left_out)
    kept = []
    for number, (text, concept) in enumerate(memory.pairs):
        key = (kb.normalize(text), concept)
        if remove[key] > 0:
            remove[key] -= 1
        else:
            kept.append(number)
    return memory.subset(kept)


def cross_fitted_groups(
    kb: KB, linker: Linker, memory: MemoryEntries, mentions: Sequence[tuple[str, str]], top: int, folds: int, seed: int
) -> list[Group]:
    """Each mention retrieved by ``linker``'s recipe rebuilt with its fold's occurrences left out of ``memory``."""
    config = replace(linker.config, rerankers=[])  # retrieval only: the rerankers would be rebuilt for nothing
    order = list(range(len(mentions)))
    random.Random(seed).shuffle(order)
    groups: list[Group | None] = [None] * len(mentions)
    for fold in range(folds):
        rows = order[fold::folds]
        held = [mentions[i] for i in rows]
        with phase(f"cross-fitted retrieval, fold {fold + 1}/{folds}: {len(held):,} mentions"):
            fold_linker = Linker.build(kb, config, without(kb, memory, held))
            for i, group in zip(rows, retrieved_groups(fold_linker, held, top)):
                groups[i] = group
    return [g for g in groups if g is not None]


def synonym_queries(kb: KB, limit: int, seed: int) -> list[tuple[str, str]]:
    """(a concept's non-preferred name, the concept): Schumacher et al. (2020)'s pre-training pairs, at most ``limit`` drawn at random."""
    preferred = {concept: kb.normalize(name) for concept, name in kb.iter_concepts()}
    pairs = list(
        dict.fromkeys(
            (kb.normalize(text), concept)
            for concept, text, _ in kb.iter_names()
            if kb.normalize(text) and kb.normalize(text) != preferred.get(concept)
        )
    )
    random.Random(seed).shuffle(pairs)
    return pairs[:limit]

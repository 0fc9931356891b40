"""Training examples: (anchor text, positive text, their concept ids), from annotated mentions or KB pairs.

A supervised example is a training mention and its gold concept; its positive text is drawn
afresh each epoch from the concept's KB names (SapBERT-style synonym sampling), so the model
sees the whole name set rather than one fixed name.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from medlink.corpora.datasets import load_dataset
from medlink.kb.store import KB


@dataclass(frozen=True)
class Example:
    anchor: str
    positive: str
    anchor_id: str
    positive_id: str


@dataclass
class ConceptNames:
    """Every concept's names (normalised, unique), for sampling positives and naming negatives."""

    names: dict[str, list[str]]

    @classmethod
    def from_kb(cls, kb: KB) -> ConceptNames:
        names: dict[str, list[str]] = {}
        seen: set[tuple[str, str]] = set()
        for concept_id, text, _kind in kb.iter_names():
            key = kb.normalize(text)
            if key and (concept_id, key) not in seen:
                seen.add((concept_id, key))
                names.setdefault(concept_id, []).append(key)
        return cls(names)

    def flat(self) -> tuple[list[str], list[str]]:
        """(texts, concept ids) of every name, in a fixed order."""
        texts, ids = [], []
        for concept_id, names in self.names.items():
            texts.extend(names)
            ids.extend([concept_id] * len(names))
        return texts, ids


def supervised_mentions(kb: KB, datasets: Iterable[str]) -> list[tuple[str, str]]:
    """(normalised mention, KB concept id) for every single-part annotated mention whose gold resolves in the KB."""
    return counted_supervised_mentions(kb, datasets)[0]


def counted_supervised_mentions(kb: KB, datasets: Iterable[str]) -> tuple[list[tuple[str, str]], Counter]:
    """``supervised_mentions`` and how many mentions were left out and why, so a caller can say so."""
    pairs, skipped = [], Counter()
    for spec in datasets:
        for mention in load_dataset(spec):
            if len(mention.parts) != 1:
                skipped["composite"] += 1
                continue
            concept = next((c for c in map(kb.resolve, sorted(mention.gold)) if c), None)
            if concept:
                pairs.append((kb.normalize(mention.text), concept))
            else:
                skipped["gold concept not in the KB"] += 1
    return pairs, skipped


def mentions_by_concept(mentions: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Concept -> its distinct training mentions: other positives for a mention of the same concept."""
    grouped: dict[str, dict[str, None]] = {}
    for text, concept in mentions:
        grouped.setdefault(concept, {})[text] = None
    return {concept: list(texts) for concept, texts in grouped.items()}


def sample_examples(
    mentions: list[tuple[str, str]], names: ConceptNames, rng: random.Random, other_mentions: dict[str, list[str]] | None = None
) -> list[Example]:
    """One example per mention, its positive a random name of the gold concept (this epoch's draw).

    With ``other_mentions`` the draw is over the concept's names and its other training mentions:
    a linker whose index holds training mentions (the mention memory) needs a new mention close
    to earlier mentions of its concept, not only to the concept's names.
    """
    examples = []
    for text, concept in mentions:
        candidates = names.names.get(concept)
        if not candidates:
            continue
        others = [m for m in (other_mentions or {}).get(concept, ()) if m != text]
        pool = candidates + others if others else candidates
        examples.append(Example(text, rng.choice(pool), concept, concept))
    return examples


def pair_examples(pairs) -> list[Example]:
    """KB-mined pairs (medlink.training.pairs.read_pairs rows) as examples; the right side's concept masks in-batch duplicates."""
    return [Example(p.left, p.right, p.left_id, p.right_id) for p in pairs]

"""The node-level train/dev split and the seeded randomness of pair mining.

Concepts, not pairs, are split (Kong et al. (2021)'s 80:20), so dev concepts are never seen in training:
dev measures zero-shot generalisation to unseen concepts. A concept's side comes from a hash of
the seed and its id, so it does not depend on the KB's row order or on Python's salted hash().
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

import numpy as np

TRAIN, DEV = "train", "dev"
SPLITS = (TRAIN, DEV)


def stable_fraction(seed: int, key: str) -> float:
    """A number in [0, 1) fixed by (seed, key), identical across processes and machines."""
    digest = hashlib.blake2b(f"{seed}\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def rng_for(seed: int, *parts: str) -> random.Random:
    """An independent random stream per (seed, task, concept): results do not depend on visiting order."""
    return random.Random("\x00".join((str(seed), *parts)))


@dataclass(frozen=True)
class NodeSplit:
    """Assigns each concept id to train or dev; ``dev_fraction`` of them (in expectation) go to dev."""

    seed: int = 13
    dev_fraction: float = 0.2

    def side(self, concept_id: str) -> str:
        return DEV if stable_fraction(self.seed, concept_id) < self.dev_fraction else TRAIN

    def is_dev(self, concept_id: str) -> bool:
        return self.side(concept_id) == DEV


def mix64(values: np.ndarray, seed: int) -> np.ndarray:
    """SplitMix64 of ``values`` (int64) salted with ``seed``: a seeded random priority per value, vectorised."""
    with np.errstate(over="ignore"):
        x = values.astype(np.uint64) ^ np.uint64((seed * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))

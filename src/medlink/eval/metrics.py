"""From ranked candidates to numbers: when a prediction matches, a mention's rank, Acc@k / recall@k / MRR.

A predicted id matches a mention when the id, or an id equivalent to it (an alt id of the same
concept, via ``equivalent_ids_from_kb``), is one of the mention's gold ids. A part's rank is the
1-based position of its first matching candidate, counting distinct concept ids (a linker that
repeats an id does not push others down). A mention's rank is the worst rank over its parts, so a
composite mention is correct at k only when every part is (BioSyn protocol: a part may match any
of the mention's gold ids). A mention never matched in the returned candidates has rank ``inf``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ACC_KS: tuple[int, ...] = (1, 5)
RECALL_KS: tuple[int, ...] = (1, 2, 4, 8, 16, 25, 32, 64)  # 25: Kong et al. (2021) reports R@1 and R@25
NOT_FOUND = math.inf

EquivalentIds = Mapping[str, frozenset[str] | set[str]]


def equivalent_ids_from_kb(kb: Any) -> dict[str, frozenset[str]]:
    """Concept id -> {concept id, its alt / replaced ids}: a predicted concept matches a gold id
    written with any of its aliases.

    Only the concept -> aliases direction: in BioSyn dictionaries an "alias" may itself be a
    concept ("114480|D001943||breast cancer"), and predicting D001943 must not count for gold
    114480 (BioSyn's own check compares the predicted entry's ids with the gold ids).
    """
    groups: dict[str, set[str]] = {}
    for alias, concept_id, _reason in kb.iter_id_aliases():
        groups.setdefault(concept_id, {concept_id}).add(alias)
    return {key: frozenset(value) for key, value in groups.items()}


def id_matches(predicted: str, gold: frozenset[str], equivalent_ids: EquivalentIds | None = None) -> bool:
    """Does ``predicted`` (or an id equivalent to it) appear in ``gold``?"""
    if predicted in gold:
        return True
    if equivalent_ids:
        group = equivalent_ids.get(predicted)
        return bool(group) and not gold.isdisjoint(group)
    return False


def candidate_id(candidate: Any) -> str:
    """A Candidate's concept id; plain strings are accepted as ids too."""
    return candidate if isinstance(candidate, str) else candidate.concept_id


def candidate_matches(candidate: Any, gold: frozenset[str], equivalent_ids: EquivalentIds | None = None) -> bool:
    """Does the candidate's id (or an id equivalent to it) or one of its own ``alt_ids`` appear in ``gold``?

    An alt id is compared as written, never expanded through its own equivalences: in BioSyn dictionaries an alt id
    may itself be another concept's id, and predicting this concept must not count for that one."""
    if isinstance(candidate, str):
        return id_matches(candidate, gold, equivalent_ids)
    return id_matches(candidate.concept_id, gold, equivalent_ids) or not gold.isdisjoint(getattr(candidate, "alt_ids", ()))


def part_rank(candidates: Iterable[Any], gold: frozenset[str], equivalent_ids: EquivalentIds | None = None) -> float:
    """1-based rank of the first matching candidate among distinct concept ids, or ``inf``."""
    seen: set[str] = set()
    for candidate in candidates:
        cid = candidate_id(candidate)
        if cid in seen:
            continue
        seen.add(cid)
        if candidate_matches(candidate, gold, equivalent_ids):
            return len(seen)
    return NOT_FOUND


def mention_rank(part_candidates: Sequence[Iterable[Any]], gold: frozenset[str], equivalent_ids: EquivalentIds | None = None) -> float:
    """The worst part rank: the smallest k at which every part's top k holds a gold id."""
    return max((part_rank(c, gold, equivalent_ids) for c in part_candidates), default=NOT_FOUND)


@dataclass(frozen=True)
class Metrics:
    """Counts behind the rates, so subsets and folds can be pooled and rates recomputed exactly."""

    n: int
    hits: dict[int, int]  # k -> mentions correct within the top k
    found: int  # mentions whose gold appears anywhere in the returned candidates
    reciprocal_rank_sum: float

    def rate(self, k: int) -> float | None:
        return self.hits[k] / self.n if self.n else None

    def to_dict(self, acc_ks: Sequence[int] = ACC_KS, recall_ks: Sequence[int] = RECALL_KS) -> dict[str, Any]:
        """``n``, ``acc@k``, ``recall@k``, ``nrecall@k`` (normalised recall), ``mrr``, counts; rates are fractions."""
        out: dict[str, Any] = {"n": self.n}
        out.update({f"acc@{k}": self.rate(k) for k in acc_ks})
        out["mrr"] = self.reciprocal_rank_sum / self.n if self.n else None
        out.update({f"recall@{k}": self.rate(k) for k in recall_ks})
        out.update({f"nrecall@{k}": self.hits[k] / self.found if self.found else None for k in recall_ks})
        out["found"] = self.found
        out.update({f"hits@{k}": self.hits[k] for k in sorted(set(acc_ks) | set(recall_ks))})
        return out


def compute_metrics(ranks: Iterable[float], ks: Iterable[int] = ACC_KS + RECALL_KS) -> Metrics:
    """Acc@k = recall@k = share of mentions with rank <= k; MRR = mean 1/rank (0 when not found).

    Normalised recall@k (Rahimi et al. 2020) divides by the mentions found anywhere in the returned
    candidates instead of all mentions: it measures ranking apart from candidate generation.
    """
    ks = sorted(set(ks))
    ranks = list(ranks)
    hits = {k: sum(1 for r in ranks if r <= k) for k in ks}
    found = sum(1 for r in ranks if r != NOT_FOUND)
    rr = sum(1.0 / r for r in ranks if r != NOT_FOUND)
    return Metrics(len(ranks), hits, found, rr)

"""Scoring NIL decisions: NIL precision / recall / F1, in-KB accuracy, and Schumacher et al. (2020)'s Accuracy and MRR over all mentions.

A mention is gold NIL when none of its gold ids is in the KB (the BLINKout-style benchmark removes concepts from the
KB to make such mentions). Schumacher et al. (2020) ranks "NIL" as one more candidate, placed where the threshold falls: a NIL
mention is right at rank 1 when the linker says NIL, and otherwise at 1 + the number of candidates whose probability
reaches the threshold (capped by the list); an in-KB mention's rank is its gold candidate's, one lower when the NIL
place comes first (its gold's probability is under the threshold).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medlink.core import LinkResult

LISTED = 10  # the candidates a NIL decision can look through (the calibration's fitting depth)


@dataclass
class NilOutcome:
    """One mention's gold status and what the linker did with it."""

    gold_nil: bool
    said_nil: bool
    right_at_1: bool  # for an in-KB mention: its first candidate is right (whatever the NIL decision)
    rank_with_nil: float  # Schumacher et al. (2020)'s rank, NIL a candidate (inf: never)
    listed: bool = False  # for an in-KB mention: a right candidate is among its first LISTED


def nil_outcome(result: LinkResult, gold_nil: bool, right: Sequence[bool], threshold: float | None) -> NilOutcome:
    """``right``: which of ``result``'s candidates are right (all False for a gold-NIL mention)."""
    said_nil = bool(result.nil)
    probabilities = [c.probability if c.probability is not None else 1.0 for c in result.candidates]
    nil_place = 1 + sum(p >= threshold for p in probabilities) if threshold is not None else len(probabilities) + 1
    if gold_nil:
        rank = 1.0 if said_nil else float(nil_place)
    else:
        gold = next((i for i, r in enumerate(right, 1) if r), None)
        rank = float("inf") if gold is None else float(gold + (1 if nil_place <= gold else 0))
    return NilOutcome(gold_nil, said_nil, bool(right and right[0]) and not gold_nil, rank, not gold_nil and any(right[:LISTED]))


def nil_metrics(outcomes: Sequence[NilOutcome], clusters: Sequence | None = None) -> dict:
    """NIL P/R/F1 (NIL the positive class), in-KB Acc@1 (first candidate, NIL decision ignored) and linked accuracy
    (right and not NIL), Schumacher et al. (2020)'s Accuracy / MRR over all mentions and over in-KB ones, and the NIL F1 of saying NIL
    exactly when the first candidate is wrong (the most a threshold on a perfectly calibrated first candidate gives) and
    of saying NIL exactly when no right candidate is listed (what telling "absent" from "ranked lower" could reach).
    ``clusters`` (each outcome's document): 95% intervals of the NIL P / R / F1 and in-KB figures too, documents resampled."""
    n = len(outcomes)
    said = sum(o.said_nil for o in outcomes)
    gold = sum(o.gold_nil for o in outcomes)
    both = sum(o.said_nil and o.gold_nil for o in outcomes)
    precision = both / said if said else 0.0
    recall = both / gold if gold else 0.0
    in_kb = [o for o in outcomes if not o.gold_nil]

    def accuracy(group):
        return sum(o.rank_with_nil == 1 for o in group) / len(group) if group else None

    def mrr(group):
        return sum(1 / o.rank_with_nil for o in group) / len(group) if group else None

    # what a perfect P(first candidate right) would reach: NIL exactly when the first candidate is wrong, so every
    # in-KB mention ranked wrong is a false NIL; beating it takes telling "absent" from "ranked lower"
    first_wrong = sum(not o.right_at_1 for o in outcomes)
    ceiling_precision = gold / first_wrong if first_wrong else 0.0
    not_listed = sum(not o.listed for o in outcomes)  # gold NIL mentions, and in-KB ones whose concept is not listed
    listed_precision = gold / not_listed if not_listed else 0.0
    return {
        "mentions": n,
        "gold_nil": gold,
        "said_nil": said,
        "nil_f1_if_first_wrong": 2 * ceiling_precision / (1 + ceiling_precision) if gold else 0.0,
        "nil_f1_if_not_listed": 2 * listed_precision / (1 + listed_precision) if gold else 0.0,
        "nil_precision": precision,
        "nil_recall": recall,
        "nil_f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "in_kb_acc@1": sum(o.right_at_1 for o in in_kb) / len(in_kb) if in_kb else None,
        "in_kb_linked_right": sum(o.right_at_1 and not o.said_nil for o in in_kb) / len(in_kb) if in_kb else None,
        "accuracy_all": accuracy(outcomes),
        "mrr_all": mrr(outcomes),
        "accuracy_in_kb": accuracy(in_kb),
        "mrr_in_kb": mrr(in_kb),
        **({"intervals": nil_intervals(outcomes, clusters)} if clusters is not None else {}),
    }


def nil_intervals(outcomes: Sequence[NilOutcome], clusters: Sequence) -> dict:
    """95% intervals of NIL precision / recall / F1, in-KB Acc@1, in-KB linked right, and what the NIL decisions cost the
    in-KB mentions (Acc@1 minus linked right, paired: the same draws) (``eval.intervals``)."""
    from medlink.eval.intervals import interval, paired_difference, prf_intervals, ratio, rounded

    said = np.array([o.said_nil for o in outcomes], np.float64)
    gold = np.array([o.gold_nil for o in outcomes], np.float64)
    right = np.array([o.right_at_1 for o in outcomes], np.float64)
    out = {
        f"nil_{name}": rounded(bounds)
        for name, bounds in prf_intervals(said * gold, said * (1 - gold), (1 - said) * gold, clusters).items()
    }
    out["in_kb_acc@1"] = rounded(interval(ratio(right * (1 - gold), 1 - gold), clusters))
    out["in_kb_linked_right"] = rounded(interval(ratio(right * (1 - said) * (1 - gold), 1 - gold), clusters))
    out["in_kb_nil_cost"] = rounded(
        paired_difference(ratio(right * (1 - gold), 1 - gold), ratio(right * (1 - said) * (1 - gold), 1 - gold), clusters)
    )
    return out


def annotated_nil(
    mentions: Sequence, part_results: Sequence[LinkResult], cuiless: Sequence[LinkResult], equivalent_ids=None
) -> dict | None:
    """``nil_metrics`` over a dataset's mentions annotated with a concept (``part_results``: one per part, in order; a
    composite's parts have no single answer and are left out) and those annotated with none ("-1", CUI-less: every
    candidate wrong); None when the index decides no NIL (no threshold)."""
    from medlink.eval.metrics import candidate_matches

    every = [*part_results, *cuiless]
    if not any(result.nil is not None for result in every):
        return None
    threshold = next((r.nil_threshold for r in every if r.nil_threshold is not None), None)
    owners = [m for m in mentions for _ in m.parts]
    outcomes = [
        nil_outcome(r, False, [candidate_matches(c, m.gold, equivalent_ids) for c in r.candidates], threshold)
        for r, m in zip(part_results, owners)
        if not m.is_composite
    ]
    outcomes += [nil_outcome(r, True, [False] * len(r.candidates), threshold) for r in cuiless]
    return nil_metrics(outcomes)

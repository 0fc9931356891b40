"""Rivals share one probability: a mention's candidates that are different answers never add up to more than 1.

Why: the probability model scores each candidate on its own features (how the alias spells the mention, the margins),
so two concepts that share a name ("Pyelonephritis": ICD-10-CM's N16 and HPO's Pyelonephritis) read the same and both
got p = 1.000. At most one of two rivals can be right, so their probabilities should be one distribution:

- candidates are taken in ranking order (best score first); a run of equal scores is one step;
- a candidate keeps its own probability ``q`` unless its better-ranked rivals already hold the mass: it gets at most
  what they left (1 minus their probabilities), and candidates tied with rivals split what is left in proportion to
  their ``q``. Two rivals tied at 1.0 get 0.5 each; a lone first candidate keeps its ``q``.

Two candidates of one terminology (id prefix) are rivals. Of HPO and ICD-10-CM, they are rivals unless medlink's own
mappings (``kb/data/hpo_icd10cm.sssom.tsv``: exact, close or broad matches) join them, the code or one above or below
it in ICD-10-CM's hierarchy (HPO's Dyspnea and R06.02 "Shortness of breath" can both be right). Of two terminologies
with no mappings between them, they are not: medlink cannot tell the same meaning from a rival there. So a
probability reads: the chance that this concept is a right answer, given the better-ranked rivals'.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache

from medlink.linking.probability import TIE

MAPPED = frozenset({"HP", "ICD10CM"})  # the terminologies medlink's own mappings join
SAME_MEANING = frozenset({"skos:exactMatch", "skos:closeMatch", "skos:broadMatch", "owl:equivalentClass"})
_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _hpo_codes() -> dict[str, tuple[str, ...]]:
    """HPO id -> the ICD-10-CM codes it means (medlink's packaged mappings), read once per process."""
    from medlink.kb.mappings import DEFAULT_MAPPINGS, mapped_objects

    return mapped_objects(DEFAULT_MAPPINGS, SAME_MEANING) if DEFAULT_MAPPINGS.is_file() else {}


def hpo_codes() -> dict[str, tuple[str, ...]]:
    with _LOCK:  # one reader of the file, however many threads link at once
        return _hpo_codes()


def _nested(code: str, other: str) -> bool:
    """Is one ICD-10-CM code the other or above it ("ICD10CM:R06.0" and "ICD10CM:R06.02")?"""
    return code.startswith(other) or other.startswith(code)


def namespace(concept_id: str) -> str:
    """An id's prefix ("HP", "ICD10CM"; "" for an id without one)."""
    prefix, colon, _ = concept_id.partition(":")
    return prefix if colon else ""


def same_meaning(a: str, b: str) -> bool:
    """Can ``a`` and ``b`` both be right for one mention? The same concept; an HPO term and a code it means; or two
    terminologies medlink has no mappings between (MeSH and ICD-10-CM in a KB of your own): it cannot tell the same
    meaning from a rival there, and leaves each its own probability."""
    if a == b:
        return True
    first, second = namespace(a), namespace(b)
    if first == second:
        return False
    if {first, second} != MAPPED:
        return True
    if first == "ICD10CM":
        a, b = b, a
    return any(_nested(code, b) for code in hpo_codes().get(a, ()))


def shared(ids: Sequence[str], scores: Sequence[float], probabilities: Sequence[float]) -> list[float]:
    """Each candidate's probability once rivals share (``ids``, ``scores`` and ``probabilities`` in ranking order, best
    score first). A list whose probabilities sum to at most 1 is returned as it is."""
    q = [float(p) for p in probabilities]
    if sum(q) <= 1.0 + 1e-9:
        return q
    spaces = [namespace(i) for i in ids]
    if MAPPED <= set(spaces) or len(set(ids)) < len(ids):
        return _shared_pairwise(ids, scores, q)
    return _shared_by_namespace(spaces, scores, q)


def _runs(scores: Sequence[float]):
    """(start, end) of each run of scores within ``TIE`` of the run's first, in order."""
    start = 0
    while start < len(scores):
        end = start + 1
        while end < len(scores) and abs(scores[end] - scores[start]) <= TIE:
            end += 1
        yield start, end
        start = end


def _shared_by_namespace(spaces: Sequence[str], scores: Sequence[float], q: list[float]) -> list[float]:
    """``_shared_pairwise`` where two candidates are rivals exactly when their terminologies are the same (no HPO and
    ICD-10-CM pair to look up): each terminology's kept mass summed as it grows, not rival by rival."""
    out = [0.0] * len(q)
    kept: dict[str, list[float]] = {}  # per terminology, the positive probabilities given so far, in ranking order
    for start, end in _runs(scores):
        for i in range(start, end):
            if q[i] <= 0.0:
                continue
            taken = sum(kept.get(spaces[i], ()))
            tied = q[i] + sum([q[j] for j in range(start, end) if j != i and q[j] > 0.0 and spaces[j] == spaces[i]])
            out[i] = min(q[i], max(0.0, 1.0 - taken) * q[i] / tied)
        for i in range(start, end):
            if out[i] > 0.0:
                kept.setdefault(spaces[i], []).append(out[i])
    return out


def _shared_pairwise(ids: Sequence[str], scores: Sequence[float], q: list[float]) -> list[float]:
    """The definition: each candidate's better-ranked rivals and tied rivals asked one pair at a time."""
    out = [0.0] * len(q)
    for start, end in _runs(scores):
        for i in range(start, end):
            if q[i] <= 0.0:
                continue
            taken = sum(out[j] for j in range(start) if out[j] > 0.0 and not same_meaning(ids[i], ids[j]))
            tied = q[i] + sum(q[j] for j in range(start, end) if j != i and q[j] > 0.0 and not same_meaning(ids[i], ids[j]))
            out[i] = min(q[i], max(0.0, 1.0 - taken) * q[i] / tied)
    return out

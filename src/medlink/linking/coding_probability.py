"""What a code's probability means in coding mode: the chance that this exact code is the one to write.

Why not the linked concept's probability: one concept often leads to several codes (HPO's Syncope maps to "Heat
syncope", "Cough syncope" and a mental disorder code, each a narrower match), and each code got the concept's
p = 1.000, rivals all sure. Here a code's probability is

    P(concept) x P(code | concept) x 1 / (leaves under the code)

- P(code | concept): the code's share of the ways out of the concept. A direct code (the concept is the code) weighs 1;
  a mapping weighs its confidence (an exact match 1, a narrower code about 0.5); several ways that reach one code add up,
  and a way to a code above it counts for it too (the code above stands for its leaves).
  Ways that weigh less than 1 together leave the rest to no code: a concept whose only way out is a narrower code
  ("Delayed speech and language development" to "... due to hearing loss") gives that code half its probability.
- a code with children left (no word said which child, and no "unspecified" child): ICD-10-CM codes a leaf, so the
  category stands for any of its leaves, one of which is right.

- a narrower code whose words the mention and its concept leave unsaid is a case the note did not state: its
  mapping counts ``UNSAID`` of its confidence (judged on the code the mapping reached, before the rules took it down
  to a default child; on its category, once the rules gave it up for its "unspecified" sibling). So does a status code
  (ICD-10-CM's Z codes) the linker matched on the condition's words alone.
- a code the rules reached by default ("X, unspecified": nothing more specific said, or a specific code whose words
  the mention lacks given up for it) is the convention when the note says nothing more, and notes often say more
  elsewhere (a trimester, a side, a site): ``BY_DEFAULT`` of it.

The codes of one mention are then rivals (one code is written) and share one distribution (``linking.rivals``).
"""

from __future__ import annotations

from collections.abc import Sequence

from medlink.align.sssom import BROAD, EXACT, NARROW
from medlink.kb.mappings import XREF
from medlink.linking.coding_rules import CodeSet
from medlink.linking.rivals import shared

EQUIVALENT = frozenset({EXACT, "owl:equivalentClass", XREF})  # the code is the concept
UNSAID = 0.1  # chosen on the clinical notes' dev split
OUTRANKED = 0.1  # chosen on the clinical notes' dev split
BY_DEFAULT = 0.85  # chosen on the clinical notes' dev split, where codes reached by default were right about 4 times in 5


def route_weight(confidence: float | None) -> float:
    """How much one way from a concept to a code counts: a direct code 1 (``None``), a mapping its confidence."""
    return 1.0 if confidence is None else max(0.0, min(1.0, float(confidence)))


def mapped_confidence(confidence: float, predicate: str, says_more: bool, outranked: bool) -> float:
    """A mapping's confidence for one mention: ``UNSAID`` of it for a narrower code that says what neither the mention
    nor its concept's names say ("Family history of sudden cardiac death" for "sudden cardiac death": the mapping holds
    for the concept, the code's extra words for a case the note did not state); ``OUTRANKED`` of it for a code that
    ``outranks`` says a plainer equivalent code beats."""
    if predicate == NARROW and says_more:  # the code says more than its concept
        return confidence * UNSAID
    return confidence * OUTRANKED if outranked else confidence


def outranks(predicate: str | None, residual: bool, plain_equivalent: bool) -> bool:
    """Does a concept's equivalent code that is no residual class (``plain_equivalent``) beat this way out of it? ICD-10-CM
    codes to the most specific code there is, so it beats a broader code ("Malignant (primary) neoplasm, unspecified" for
    prostate cancer) and an "Other ..." code (``residual``: "Other hypertension" beside "Essential (primary)
    hypertension"), which is for kinds the note names."""
    return plain_equivalent and predicate is not None and (predicate == BROAD or residual)


def leaf_count(codes: CodeSet, code: str) -> int:
    """How many leaves (codes without children) lie under ``code``, itself when it is one (counted once per code set)."""
    counts: dict[str, int] | None = getattr(codes, "_leaf_counts", None)
    if counts is None:
        counts = {}
        codes._leaf_counts = counts  # type: ignore[attr-defined]
    found = counts.get(code)
    if found is None:
        kids = codes.children.get(code, ())
        found = counts[code] = sum(leaf_count(codes, kid) for kid in kids) if kids else 1
    return found


def code_probabilities(
    source_probability: float | None, routes: Sequence[tuple[str, float | None, bool]], codes: CodeSet
) -> dict[str, float | None]:
    """Each code reached from one concept (``routes``: (chosen code, mapping confidence or None for direct, whether the
    rules chose it by default)) and its probability, the concept's shared among its codes; ``None`` throughout when the
    concept has none."""
    weights: dict[str, float] = {}
    guessed: dict[str, bool] = {}
    for code, confidence, by_default in routes:
        weights[code] = weights.get(code, 0.0) + route_weight(confidence)
        guessed[code] = guessed.get(code, True) and by_default
    if source_probability is None:
        return dict.fromkeys(weights)
    total = max(sum(weights.values()), 1.0)  # ways short of certain leave the rest to no code
    return {
        code: source_probability * reaching(weights, code, codes) / total / leaf_count(codes, code) * (BY_DEFAULT if guessed[code] else 1.0)
        for code in weights
    }


def reaching(weights: dict[str, float], code: str, codes: CodeSet) -> float:
    """The weight of the ways to ``code`` and to the codes above it: a way to "Migraine, unspecified" (G43.9) also leads
    to its leaf G43.909 that another way reached, so both count for the leaf."""
    weight, above = weights[code], codes.parent.get(code)
    while above is not None:
        weight += weights.get(above, 0.0)
        above = codes.parent.get(above)
    return weight


def shared_codes(ids: Sequence[str], probabilities: Sequence[float | None]) -> list[float | None]:
    """A mention's ranked codes' probabilities once rivals share (one code is written for a mention); ``None`` kept."""
    if any(p is None for p in probabilities):
        return list(probabilities)
    return shared(ids, [float(p) for p in probabilities], [float(p) for p in probabilities])

"""A candidate whose matched name says the opposite of the mention: "invasive ductal carcinoma" met *Ductal carcinoma in
situ*, "hyperkalemia" *Hypokalemia*, "type 1 diabetes" *Type 2 diabetes mellitus*.

Why: the character and word scores count the words two strings share, and such a pair shares all but the one that
decides; the probability model, which reads those scores, then calls it right (*Ductal carcinoma in situ* at p 0.76).
A contradicted candidate keeps its place in the ranking and gets at most ``CONTRADICTED_AT_MOST``: a mention whose first
candidate is contradicted is NIL, as it should be when nothing better was found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from medlink.core import Candidate, LinkResult

CONTRADICTED_AT_MOST = 0.05  # a contradicted candidate's probability, at most
# each pair: what a mention may say, and what a name may say that contradicts it (and the other way round)
OPPOSITES = [
    (r"(?<!non )(?:invasive|infiltrating)", r"in situ|noninvasive|non invasive"),  # "non-invasive" reads "non invasive"
    (r"malignant", r"benign"),
    (r"acute", r"chronic"),
    (r"congenital", r"acquired"),
    (r"type (?:1|i|one)", r"type (?:2|ii|two)"),
    (r"left", r"right"),
]
_OPPOSITES = [(re.compile(rf"\b(?:{one})\b"), re.compile(rf"\b(?:{other})\b")) for one, other in OPPOSITES]
_OPPOSITES += [(other, one) for one, other in _OPPOSITES]
_HYPER_HYPO = re.compile(r"\b(hyper|hypo)(\w{4,})")  # a root of four letters or more: "hyperkalemia", "hypotension"
_ANY = re.compile("|".join(rf"\b(?:{one}|{other})\b" for one, other in OPPOSITES) + "|" + _HYPER_HYPO.pattern)  # one pass for most mentions
Cues = tuple[tuple[re.Pattern, re.Pattern], ...]  # what a mention says, and what says its opposite


def cues(mention: str) -> Cues:
    """What a name must not say for ``mention`` (normalised), each with what the mention says: none for most mentions."""
    if not _ANY.search(mention):
        return ()
    found = [(said, opposite) for said, opposite in _OPPOSITES if said.search(mention) and not opposite.search(mention)]
    for m in _HYPER_HYPO.finditer(mention):
        other = "hypo" if m.group(1) == "hyper" else "hyper"
        if not re.search(rf"\b{other}{m.group(2)}\b", mention):
            found.append((re.compile(rf"\b{m.group()}\b"), re.compile(rf"\b{other}{m.group(2)}\b")))
    return tuple(found)


def contradicts(mention_cues: Cues, *names: str | None) -> bool:
    """Does one of ``names`` (normalised) say the opposite of what the mention says (``cues``), and not also what it says?"""
    return any(name and opposite.search(name) and not said.search(name) for said, opposite in mention_cues for name in names)


def capped(probability: float, mention_cues: Cues, *names: str | None) -> float:
    """``probability``, at most ``CONTRADICTED_AT_MOST`` where one of ``names`` contradicts the mention."""
    if probability > CONTRADICTED_AT_MOST and mention_cues and contradicts(mention_cues, *names):
        return CONTRADICTED_AT_MOST
    return probability


def capped_probabilities(
    mention_cues: Cues, probabilities: Sequence[float | None], candidates: Sequence[Candidate], key: Callable[[str], str]
) -> list[float | None]:
    """Each candidate's probability, capped where its matched name or its name (``key``: normalised) contradicts the
    mention."""
    return [
        p if p is None else capped(p, mention_cues, key(c.matched_name or ""), key(c.name or "")) for p, c in zip(probabilities, candidates)
    ]


def decided_again(result: LinkResult, candidates: Sequence[Candidate]) -> LinkResult:
    """``result`` with ``candidates`` (their probabilities changed), its probability and NIL decision taken again."""
    probability = candidates[0].probability if candidates else result.probability
    nil = result.nil
    if probability is not None and result.nil_threshold is not None:
        nil = probability < result.nil_threshold
    return replace(result, candidates=list(candidates), probability=probability, nil=nil)


def capped_result(result: LinkResult, mention: str, key: Callable[[str], str]) -> LinkResult:
    """``result`` with each candidate whose name says the opposite of ``mention`` capped (``key``: the linker's normalised
    form): for concepts found by another reading of the mention, as its head or without its side."""
    told = cues(key(mention))
    if not told:
        return result
    probabilities = capped_probabilities(told, [c.probability for c in result.candidates], result.candidates, key)
    return decided_again(result, [c if p is None else c.with_probability(p) for c, p in zip(result.candidates, probabilities)])

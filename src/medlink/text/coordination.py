"""Composite mentions: "breast and ovarian cancer" names two concepts, breast cancer and ovarian cancer.

Annotated corpora (NCBI Disease's CompositeMention, BioCreative's) mark such a coordination as one span with
several ids; a linker that reads it whole finds one concept at best. ``expand_coordination`` spells out the
conjuncts the way a reader fills in the shared words (coordination ellipsis):

- a one-word conjunct before the last takes the last conjunct's head: "breast and ovarian cancer" ->
  "breast cancer", "ovarian cancer"; "Saethre-Chotzen, Crouzon, and Pfeiffer syndromes" -> three syndromes;
- a last conjunct of one word (or a number) takes the first conjunct's modifiers: "colorectal adenomas and
  carcinoma" -> "colorectal adenomas", "colorectal carcinoma"; "spinocerebellar ataxias 1 and 2" -> "... 1",
  "... 2";
- an earlier conjunct that repeats the last one's first words takes the rest of it as its head: "type 1 and
  type 2 diabetes" -> "type 1 diabetes", "type 2 diabetes";
- numbered conjuncts share the words either side: "type 1 or 2 diabetes" -> "type 1 diabetes", "type 2 diabetes";
- conjuncts of several words stand as they are: "breast cancer and ovarian cancer"; so do those before a last
  conjunct whose second word is a number, which leaves no head to share: "hypertension or type 2 diabetes".

Only the text is expanded; which expansion to believe (the whole span may itself be a name, "Hereditary Breast
and Ovarian Cancer Syndrome") is the annotator's decision. A dictionary finds only the last conjunct ("ovarian cancer"
in "breast and ovarian cancer"): ``coordination_start`` widens such a span over the conjuncts before it when each of
them, spelt out, is a name too.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# ", and/or", ", and", ", or", ",", "and/or", "and", "or", "/" between conjuncts (a "/" inside a word-pair, as in
# "breast/ovarian", counts: "/" with letters both sides and no spaces)
_COORDINATOR = re.compile(r"\s*,\s*(?:and/or|and|or)\s+|\s*,\s*|\s+(?:and/or|and|or)\s+|(?<=[A-Za-z])/(?=[A-Za-z])")
_HAS_COORDINATOR = re.compile(r",|\band\b|\bor\b|[A-Za-z]/[A-Za-z]")
MAX_CONJUNCTS = 6
_COORDINATOR_WORDS = {"and", "or"}  # a conjunct that is one of these: a dangling "and/or", no coordination
_NUMBERED = re.compile(r"^(?:\d+[A-Za-z]?|[IVX]+|[A-Z])$")  # "1", "2A", "II", "B": a type or subtype's number


def expand_coordination(text: str) -> list[str] | None:
    """The conjuncts of a coordinated mention spelt out (see the module docstring), or None when ``text`` is not a
    coordination of two to ``MAX_CONJUNCTS`` non-empty conjuncts."""
    if not _HAS_COORDINATOR.search(text):
        return None
    conjuncts = [part.strip() for part in _COORDINATOR.split(text.strip())]
    if not 2 <= len(conjuncts) <= MAX_CONJUNCTS or any(
        not part or not any(c.isalnum() for c in part) or part.lower() in _COORDINATOR_WORDS for part in conjuncts
    ):
        return None
    first, last = conjuncts[0].split(), conjuncts[-1].split()
    if len(last) == 1 and len(first) >= 2:  # "colorectal adenomas and carcinoma", "ataxias 1 and 2"
        modifiers = " ".join(first[:-1])
        return [conjuncts[0]] + [f"{modifiers} {part}" if len(part.split()) == 1 else part for part in conjuncts[1:]]
    if (
        len(last) > len(first) >= 2
        and [w.lower() for w in first[:-1]] == [w.lower() for w in last[: len(first) - 1]]
        and first[-1].lower() != last[len(first) - 1].lower()
    ):
        head = " ".join(last[len(first) :])  # "type 1 and type 2 diabetes"
        return [f"{part} {head}" for part in conjuncts[:-1]] + [conjuncts[-1]]
    if (
        len(first) >= 2
        and len(last) >= 2
        and _NUMBERED.match(first[-1])
        and _NUMBERED.match(last[0])
        and all(_NUMBERED.match(part) for part in conjuncts[1:-1])
    ):  # "type 1 or 2 diabetes"
        modifiers, head = " ".join(first[:-1]), " ".join(last[1:])
        return [f"{conjuncts[0]} {head}"] + [f"{modifiers} {part} {head}" for part in conjuncts[1:-1]] + [f"{modifiers} {conjuncts[-1]}"]
    if len(last) >= 2 and _NUMBERED.match(last[1]):  # "hypertension or type 2 diabetes": "2 diabetes" is no head to share
        return conjuncts
    if len(last) >= 2:  # "breast and ovarian cancer"
        head = " ".join(last[1:])
        return [f"{part} {head}" if len(part.split()) == 1 else part for part in conjuncts[:-1]] + [conjuncts[-1]]
    return None  # single words on both sides ("pain and fever"): nothing is shared, and each is its own mention


# conjuncts of words (letters first; hyphens and apostrophes inside) ending in a coordinator, right before a span
_CONJUNCT = r"[^\W\d_][\w'-]*"
_COORDINATOR_BEFORE = r"(?:\s*,?\s*(?:and/or|and|or)\s+|/)$"
_BEFORE = (
    re.compile(rf"{_CONJUNCT}(?:\s*,\s*{_CONJUNCT}){{0,{MAX_CONJUNCTS - 2}}}{_COORDINATOR_BEFORE}"),  # every conjunct
    re.compile(rf"{_CONJUNCT}{_COORDINATOR_BEFORE}"),  # the nearest one alone
    re.compile(rf"{_CONJUNCT}\s+(?:\d+[A-Za-z]?|[IVX]+){_COORDINATOR_BEFORE}"),
)  # a numbered one: "type 1 and "
LOOKBACK = 160  # characters searched before a span for its conjuncts
_JUST_BEFORE = re.compile(r"(?:\band/or|\band|\bor|,)\s+$|[A-Za-z]/$")


def coordination_start(text: str, start: int, end: int, is_name: Callable[[str], bool]) -> int | None:
    """Where a coordination ending with the span ``text[start:end]`` starts, when every conjunct before it, spelt out,
    ``is_name`` ("breast and " before "ovarian cancer": "breast cancer" is a name); the longest such list of conjuncts,
    else the nearest one alone; None when there is none."""
    if not _JUST_BEFORE.search(text, max(0, start - 8), start):  # most spans: no coordinator right before them
        return None
    before = text[max(0, start - LOOKBACK) : start]
    for pattern in _BEFORE:
        found = pattern.search(before)
        if found is None:
            continue
        begin = start - len(before) + found.start()
        expanded = expand_coordination(text[begin:end])
        if expanded and len(expanded) >= 2 and all(is_name(part) for part in expanded[:-1]):
            return begin
    return None

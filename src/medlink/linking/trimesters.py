"""A note's gestational age as the trimester its pregnancy codes need.

Why: ICD-10-CM codes most pregnancy conditions by trimester ("Gestational hypertension, third trimester", O13.3), and a
note says it once, as a gestational age ("G2P1 at 34 weeks"), not in each mention. Coding reads the trimester there,
where a mention's own words leave it unsaid: the code an "unspecified trimester" name gives way to its sibling.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from medlink.core import Annotation, Candidate
from medlink.linking.coding import CODED
from medlink.linking.coding_rules import CodeSet
from medlink.linking.coding_words import said_words

TRIMESTER_WRITTEN = re.compile(r"\b(first|second|third|1st|2nd|3rd)\s+tri(?:mester)?\b", re.IGNORECASE)  # "3rd tri" too
# "34 weeks", "34 wks", "34w", "34w2d", "34+2 weeks", "GA 34", "34 weeks' gestation"
WEEKS = re.compile(r"\b(?:GA\s*(\d{1,2})\b|(\d{1,2})\s*(?:\+\s*\d\s*)?(?:w(?:ee)?ks?\b|weeks?\b|w\b|w\s*\d\s*d\b))", re.IGNORECASE)
ORDINAL = {"1st": "first", "2nd": "second", "3rd": "third"}
FIRST_WEEK_OF = {"second": 14, "third": 28}  # ICD-10-CM: first < 14 weeks 0 days <= second < 28 weeks 0 days <= third


def trimester_of(text: str) -> str | None:
    """The trimester a note states or its gestational age tells ("first", "second", "third"); None where it says none,
    or several."""
    found = {ORDINAL.get(m.group(1).lower(), m.group(1).lower()) for m in TRIMESTER_WRITTEN.finditer(text)}
    if not found:
        weeks = [int(m.group(1) or m.group(2)) for m in WEEKS.finditer(text)]
        found = {_trimester(w) for w in weeks if 4 <= w <= 42}
    return found.pop() if len(found) == 1 else None


def _trimester(weeks: int) -> str:
    return "third" if weeks >= FIRST_WEEK_OF["third"] else "second" if weeks >= FIRST_WEEK_OF["second"] else "first"


def with_trimester(text: str, spans: Sequence[Annotation], codes: CodeSet) -> None:
    """Each coded span whose first code gives way to a sibling once the note's trimester is said, moved to it (the step
    added to its path); nothing where the note tells no trimester."""
    trimester = trimester_of(text)
    if trimester is None:
        return
    told = frozenset({trimester, "trimester"})
    for span in spans:
        first = span.result.candidates[0] if span.result is not None and span.result.candidates else None
        if first is None or first.concept_id not in codes:
            continue
        code, steps = codes.refine(first.concept_id, said_words([span.text]) | told)
        if code != first.concept_id and trimester in said_words([codes.names[code]]):
            moved = _moved(first, code, codes.names[code], [f"{step} (the note: {trimester} trimester)" for step in steps])
            span.result = replace(span.result, candidates=[moved, *span.result.candidates[1:]])


def _moved(first: Candidate, code: str, name: str, steps: list[str]) -> Candidate:
    """``first`` as ``code``: its coding path with ``steps`` after the rules' own."""
    evidence = [dict(e) for e in first.evidence]
    path = dict(evidence[-1].get(CODED, {})) if evidence else {}
    path["reached"] = path.get("reached", first.concept_id)
    path["refined"] = [*path.get("refined", []), *steps]
    if evidence and CODED in evidence[-1]:
        evidence[-1][CODED] = path
    return replace(first, concept_id=code, name=name, evidence=evidence)

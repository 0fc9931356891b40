"""What the note around a mention tells its code: the trimester of a pregnancy code, and a condition written "with"
another as ICD-10-CM's combination code.

Why: ICD-10-CM codes most pregnancy conditions by trimester ("Gestational hypertension, third trimester", O13.3), and a
note says it once, as a gestational age ("G2P1 at 34 weeks"), not in each mention. And it codes many pairs as one code,
its index presuming the link "with" states ("Diabetes, with, polyneuropathy"): the finder sees two conditions in "T2DM
w/ peripheral neuropathy", and the first was coded alone, E11.9 *... without complications*, a code the note
contradicts. Both are read once the mentions are coded, from the whole note (``annotate``; ``link`` reads a mention alone).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from os.path import commonprefix

from medlink.core import Annotation, Candidate
from medlink.linking.coding import CODED
from medlink.linking.coding_rules import DEFAULT_STEP, CodeSet
from medlink.linking.coding_words import said_words, unasserted

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
        first = _coded_first(span, codes)
        if first is None:
            continue
        code, steps = codes.refine(first.concept_id, said_words([span.text]) | told)
        if code != first.concept_id and trimester in said_words([codes.names[code]]):
            now = moved(first, code, codes.names[code], [f"{step} (the note: {trimester} trimester)" for step in steps])
            span.result = replace(span.result, candidates=[now, *span.result.candidates[1:]])


def moved(first: Candidate, code: str, name: str, steps: list[str]) -> Candidate:
    """``first`` as ``code``: its coding path with ``steps`` after the rules' own."""
    evidence = [dict(e) for e in first.evidence]
    path = dict(evidence[-1].get(CODED, {})) if evidence else {}
    path["reached"] = path.get("reached", first.concept_id)
    path["refined"] = [*path.get("refined", []), *steps]
    if evidence and CODED in evidence[-1]:
        evidence[-1][CODED] = path
    return replace(first, concept_id=code, name=name, evidence=evidence)


JOINED_BY_WITH = re.compile(r"^\s*(?:with|w/)\s*((?:[A-Za-z]+\s+){0,2})$", re.IGNORECASE)  # between the spans: "with diabetic "
NOT_TELLING = frozenset({"unspecified", "other", "specified", "without"})
ROOT = 6  # letters a word shares with the category's own ("diabetic" with "diabetes"): the condition's, not the other's


def with_combinations(text: str, spans: Sequence[Annotation], codes: CodeSet) -> None:
    """Each coded span followed by "with" and another coded span, moved to the combination code under its category that
    names the other's words (the step added to its path); the other keeps its own code, as ICD-10-CM's "use additional
    code" asks for most pairs."""
    ordered = sorted(spans, key=lambda span: span.start)
    for first, second in zip(ordered, ordered[1:]):
        joined = JOINED_BY_WITH.match(text[first.end : second.start])
        if joined is None:
            continue
        head, other = _coded_first(first, codes), _coded_first(second, codes)
        if head is None:
            continue
        combined = combination(
            codes, head.concept_id, said_words([joined.group(1), second.text, other.name if other is not None else None])
        )
        if combined is None:
            continue
        code, steps = combined, [f"{head.concept_id} -> {combined}: 'with {second.text}', a combination code"]
        while (child := codes.default_child(code)) is not None:  # "... with ketoacidosis" is "... without coma"
            steps.append(f"{code} -> {child}: {DEFAULT_STEP}")
            code = child
        first.result = replace(first.result, candidates=[moved(head, code, codes.names[code], steps), *first.result.candidates[1:]])


def _coded_first(span: Annotation, codes: CodeSet) -> Candidate | None:
    """A span's first candidate where it is a code of ``codes``."""
    first = span.result.candidates[0] if span.result is not None and span.result.candidates else None
    return first if first is not None and first.concept_id in codes else None


def combination(codes: CodeSet, code: str, other: frozenset[str]) -> str | None:
    """The code under ``code``'s category whose name says "with" and then words ``other`` all says (less the category's
    own: "diabetic"), the one saying most; of those, the nearest ``code`` in the tree, then a specific one."""
    category = code
    while len(category.partition(":")[2]) > 3 and category in codes.parent:
        category = codes.parent[category]
    own = {word[:ROOT] for word in said_words([codes.names[category]]) if len(word) >= ROOT}
    best, best_key = None, None
    for candidate in _under(codes, category):
        name = codes.names[candidate]
        if " with " not in name:
            continue
        after = name.split(" with ", 1)[1]  # "... with unspecified diabetic retinopathy without macular edema": retinopathy
        told = {w for w in said_words([after]) - unasserted(after) if w[:ROOT] not in own} - NOT_TELLING
        if told and told <= other:
            key = (len(told), len(commonprefix([candidate, code])), "unspecified" not in name.lower(), -len(candidate))
            if best_key is None or key > best_key:
                best, best_key = candidate, key
    return best


def _under(codes: CodeSet, code: str) -> list[str]:
    """Every code below ``code``."""
    out, todo = [], [code]
    while todo:
        for child in codes.children.get(todo.pop(), ()):
            out.append(child)
            todo.append(child)
    return out


def codes_from_the_note(text: str, spans: Sequence[Annotation], codes: CodeSet) -> None:
    """Each coded span of a note moved to the code the note tells (``with_trimester``, ``with_combinations``)."""
    with_trimester(text, spans, codes)
    with_combinations(text, spans, codes)

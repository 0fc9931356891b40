"""Assertion status of a found mention: does the note say the patient has it, or that they do not, might, might
one day, only under some condition, that someone else has it; and is it past.

A clinical note names far more conditions than the patient has ("denies chest pain", "r/o PE", "mother had breast
cancer", "return if fever develops"); a user counting diagnoses must tell them apart, and every clinical toolkit
(cTAKES, medspaCy, MedCAT) says so per mention. The classes are the i2b2 2010 assertion task's: present, absent,
possible, conditional, hypothetical, someone_else; ``historical`` is ConText's temporality, apart from them.

The method is ConText (Harkema et al., J Biomed Inform 2009), NegEx's successor: cue phrases, each with a category and
a direction, modify the mentions in their scope, which runs from the cue to the end of its clause (forward), or back
to the clause's start (backward), and stops early at a terminating word ("but", "however", "which"), at a cue of
another category, or after the cue's word window. Pseudo-cues ("no increase", "gram-negative", "history of present
illness") hide the cues they contain. Clauses are sentences (``medlink.text.sentences``) cut at semicolons, em dashes
and line breaks before a capital or a digit. A note's layout is read too: a "Family history:" heading reaches its
section's end, a cue that ends its line the list under it, a template's answer the problem before it ("Fever: no").
Rules, not a model: no annotated assertion corpus ships with medlink, the rules are the published method, and a user
can read why a mention was marked (``Annotation.assertion.cue``). The lexicon and the finding of cues are
``medlink.text.assertion_cues``; linear in the text's length.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate

from medlink.core import ASSERTION_INFONS, Annotation, Assertion
from medlink.text.assertion_cues import (
    ABSENT,
    ANSWER,
    BACKWARD,
    BOTH,
    CONDITIONAL,
    EXISTENCE,
    FAMILY,
    FILLERS,
    FORWARD,
    HEADINGS,
    HISTORICAL,
    HYPOTHETICAL,
    NEGATED,
    ONGOING,
    POSSIBLE,
    PRESENT,
    PSEUDO,
    QUERY,
    REPORTING,
    SELF_NEGATED,
    SOMEONE_ELSE,
    STATUSES,
    TERMINATE,
    TOKEN,
    Cue,
    Match,
    apart,
    find_cues,
)
from medlink.text.sentences import split_sentences

__all__ = ["ASSERTION_INFONS", "STATUSES", "Assertion", "assertions", "find_cues", "mark_assertions", "section_runs_over"]

_HEADING = re.compile(r"^[ \t]*([A-Za-z][A-Za-z /]{0,40}?)[ \t]*:", re.MULTILINE)
_SECTION_END = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*[A-Za-z][A-Za-z /]{0,40}:)")  # a blank line, or the next heading
_PUNCTUATION = re.compile(r"[,.;:!?\n]")  # where the words a leading "?" doubts end
# the lines of a list under a cue that ends its line ("Denies:\n- fever\n- chills")
_LIST_LINES = re.compile(r"[ \t:]*(?:\n[ \t]*(?:[-*•▪◦·]|\d{1,3}[.)])[ \t]+[^\n]*)+")
STATUS_OF = {HYPOTHETICAL: HYPOTHETICAL, NEGATED: ABSENT, FAMILY: SOMEONE_ELSE, POSSIBLE: POSSIBLE, CONDITIONAL: CONDITIONAL}


SECTION_LOOKBACK = 4000  # characters searched back for a heading whose section may run over an offset


def section_runs_over(text: str, at: int) -> bool:
    """Whether a heading's section ("Family history: ...") that starts before ``at`` runs past it: a long document is
    not cut there (``medlink.text.windows``), since the heading reaches its whole section."""
    for m in _HEADING.finditer(text, max(0, at - SECTION_LOOKBACK), at):
        if " ".join(m.group(1).lower().split()) in HEADINGS:
            section = _SECTION_END.search(text, m.end())
            if (section.start() if section else len(text)) > at:
                return True
    return False


_PATIENT = frozenset({"patient", "pt", "the patient"})  # in a family history section, the patient again: the section's relatives end


def _headings(text: str, matches: list[Match]) -> list[tuple[Match, int]]:
    """Section cues and where each section ends (its end, or where the patient is named again)."""
    out = []
    patients = [c.start for c in matches if c.phrase in _PATIENT]
    for m in _HEADING.finditer(text):
        name = " ".join(m.group(1).lower().split())
        if name in HEADINGS:
            section = _SECTION_END.search(text, m.end())
            end = section.start() if section else len(text)
            named = bisect_left(patients, m.end())
            out.append((Match(m.start(1), m.end(1), name, (HEADINGS[name],)), min(end, patients[named]) if named < len(patients) else end))
    return out


_KIN = r"(?:mom|mother|dad|father|parents?|wife|husband|spouse|partner|son|daughter|sister|brother|aunt|uncle|grand\w+|caregiver|family)"
# before a relative who tells or comes along: "per her mother", "brought in by mom", "accompanied by his wife and son",
# "here with dad"; written with single spaces, each standing for any run of white space
_ALONG = (
    r"(?:\bper|\baccording to|\b(?:as )?(?:reported|told|relayed) by|\bhistory (?:from|obtained from|given by|provided by)"
    r"|\b(?:brought|accompanied|escorted|driven|carried|walked)(?: (?:him|her|them|in|back|here|today|over))*"
    r"(?: (?:to|into) (?:the )?(?:ed|er|clinic|office|hospital|emergency department))? by"
    r"|\b(?:here|seen|presents|presented|presenting|arrives|arrived|comes in|came in|brought in) (?:today )?with)"
    rf" (?:the )?(?:(?:his|her|their|pt's|patient's) )?(?:{_KIN} (?:and|or|&) (?:(?:his|her|their|the) )?)?$"
)
_PER = re.compile(_ALONG.replace(" ", r"\s+"), re.IGNORECASE)
_OWN = re.compile(r"[\s,]+who\s+(?:also\s+)?(?:has|had|have|is|was|suffers|carries)\b", re.IGNORECASE)  # "here with mom, who has asthma"


def _reports(text: str, match: Match) -> bool:
    """Whether a relative's cue names the one who tells or brings ("wife reports ...", "husband has noticed", "per her
    mother", "brought in by mom for fever"): the one with the problem is the patient."""
    if match.categories() != {FAMILY}:
        return False
    if _PER.search(text, max(0, match.start - 60), match.start):
        return not _OWN.match(text, match.end)
    for token in TOKEN.finditer(text, match.end, min(len(text), match.end + 40)):
        word = token.group().lower()
        if word not in FILLERS:
            return word in REPORTING
    return False


_CLAUSE_CUT = re.compile(
    r";|—|\n(?=[ \t]*[^a-z\s])|(?<![A-Za-z])(?P<no>[Nn]o\.)[ \t]+(?=[A-Z])"
)  # a semicolon, an em dash, a line that does not go on in lower case ("# Possible malignancy"), "no." before a capital
_COLON = re.compile(r"[ \t]*:")


def _clauses(text: str) -> list[tuple[int, int]]:
    """Sentences cut at semicolons, em dashes and line breaks not followed by a lower-case word (a note's lines are its
    statements: "Denies fever\nCough x3 days", "# Possible malignancy"; a line wrapped inside a sentence goes on in lower
    case): no scope crosses one."""
    out = []
    for start, end in split_sentences(text):
        cut = start
        for match in _CLAUSE_CUT.finditer(text, start, end):
            out.append((cut, match.end("no") if match.group("no") else match.start()))
            cut = match.end()
        out.append((cut, end))
    return out


def _word_limit(text: str, start: int, words: int, forward: bool, bound: int) -> int:
    """The offset ``words`` words from ``start`` (forward, or backward), not past ``bound``."""
    if forward:
        for count, m in enumerate(TOKEN.finditer(text, start, bound), 1):
            if count == words:
                return m.end()
        return bound
    starts = [m.start() for m in TOKEN.finditer(text, max(bound, start - 40 * words), start)]  # a window is a few words: never the clause
    return starts[-words] if len(starts) >= words else max(bound, start - 40 * words)


def _ends(stop: Match, category: str) -> bool:
    """Whether ``stop`` ends a scope of ``category``: a terminating phrase that ends it, a cue of another existence
    category ("no fever, possible pneumonia"), or for the past a denial, a doubt or a future ("s/p CVA without residual
    deficits"). An ongoing course ("persists") speaks of the word before it only and ends nothing."""
    return any(
        (cue.category == TERMINATE and category in cue.ends)
        or (category in EXISTENCE and cue.category in EXISTENCE - {ONGOING} and cue.category != category)
        or (category == HISTORICAL and cue.category in (NEGATED, POSSIBLE, HYPOTHETICAL))
        for cue in stop.cues
    )


def _closing(text: str, low: int, at: int, high: int) -> int:
    """Where the parenthesis ``at`` is in closes (``high`` if it is in none): "(hx of GI bleeding), DM" ends there."""
    opening = text.rfind("(", max(low, at - 200), at)  # a parenthetical is short: never a scan of the whole clause
    if opening < 0 or text.rfind(")", opening, at) >= 0:
        return high
    closing = text.find(")", at, min(high, at + 200))
    return closing if closing >= 0 else high


_CLOSES = re.compile(r"[ \t]*(?:[.;,:)!?\n]|$)")  # what may follow a cue that closes its phrase ("AKI, resolved.")
_CLOSES_BEFORE = re.compile(r"[ \t]+(?:with|by|after|following|since|on|in|over|within|per)\b", re.IGNORECASE)  # "PE, ruled out by CTA"


def _comma_before(text: str, match: Match, low: int, high: int) -> int:
    """Where a backward cue's word window starts at the latest: after the last comma before it ("chest pain, negative
    troponins": the pain is not denied), or, for a cue right after a comma that closes its phrase ("AKI, resolved.",
    "PE, ruled out by CTA"), after the comma before that: the item before the comma is what it speaks of. A cue that
    also reads forward closes its phrase only before punctuation ("cough, likely viral" doubts the cause, not the cough)."""
    comma = text.rfind(",", low, match.start)
    if comma >= 0 and not text[comma + 1 : match.start].strip():
        forward = any(cue.direction != BACKWARD for cue in match.cues)
        if _CLOSES.match(text, match.end, high) or (not forward and _CLOSES_BEFORE.match(text, match.end, high)):
            comma = text.rfind(",", low, comma)
    return comma + 1 if comma >= 0 else low


def _scopes(text: str, clause: tuple[int, int], matches: list[Match]) -> Iterator[tuple[Match, Cue, int, int]]:
    """Each modifying cue of one clause with the characters it reaches. A cue with a word window reaches no further
    than a comma either ("RLQ pain, appendicitis vs ovarian cyst": the pain is not in doubt), and a cue inside
    parentheses no further than their end."""
    low, high = clause
    stops: dict[str, tuple[list[int], list[int]]] = {}  # per category, where the matches that end its scopes start and end
    for match in matches:
        for cue in match.cues:
            if cue.category in (PSEUDO, TERMINATE):
                continue
            if cue.category not in stops:
                ending = [other for other in matches if _ends(other, cue.category)]
                stops[cue.category] = ([other.start for other in ending], [other.end for other in ending])
            starts, ends = stops[cue.category]
            direction = BOTH if cue.direction == BACKWARD and _COLON.match(text, match.end) else cue.direction  # "Ruled out: MI"
            if direction in (FORWARD, BOTH):
                later = bisect_left(starts, match.end)
                end = min(starts[later] if later < len(starts) else high, _closing(text, low, match.start, high))
                if cue.window is not None:
                    comma = text.find(",", match.end, end)
                    end = _word_limit(text, match.end, cue.window, True, comma if comma >= 0 else end)
                yield match, cue, match.end, end
            if direction in (BACKWARD, BOTH):
                earlier = bisect_right(ends, match.start)
                start = ends[earlier - 1] if earlier else low
                if cue.window is not None:
                    start = _word_limit(text, match.start, cue.window, False, _comma_before(text, match, start, high))
                yield match, cue, start, match.start


def assertions(text: str, spans: Sequence[tuple[int, int]]) -> list[Assertion]:
    """The assertion of each ``(start, end)`` span of ``text``, in order. A phrase inside a span (the "no" of a name) is no cue.
    Linear in the text's length but for the spans each cue reaches."""
    order = sorted(range(len(spans)), key=lambda i: spans[i])
    ordered = [tuple(spans[i]) for i in order]
    starts = [start for start, _end in ordered]
    reach_ends = list(accumulate((end for _start, end in ordered), max))  # the furthest end of the spans starting so far
    matches = [m for m in find_cues(text) if not _inside_a_span(m, ordered, reach_ends) and not _reports(text, m)]
    reaching: list[list[tuple[int, Match, str]]] = [[] for _ in spans]  # per span: (distance, phrase, category)

    def reach(match: Match, category: str, start: int, end: int, distance) -> None:
        for j in range(bisect_left(starts, start), bisect_left(starts, end)):
            s, e = spans[order[j]]
            if e <= end:
                reaching[order[j]].append((distance(s, e), match, category))

    match_starts = [m.start for m in matches]
    for clause in _clauses(text):
        inside = matches[bisect_left(match_starts, clause[0]) : bisect_left(match_starts, clause[1])]
        for match, cue, start, end in _scopes(text, clause, [m for m in inside if m.end <= clause[1] and not apart(m)]):
            reach(match, cue.category, start, end, lambda s, e, m=match: min(abs(s - m.end), abs(m.start - e)))
            listed = _LIST_LINES.match(text, end) if cue.direction != BACKWARD and end == clause[1] and start == match.end else None
            if listed and not text[match.end : end].strip(" \t:"):  # the cue ends its line: it reaches the list under it
                reach(match, cue.category, match.end, listed.end(), lambda s, e, m=match: s - m.end)
    for match in filter(apart, matches):  # "? MI", "Rash? No": the sentence splitter may have cut them off their words
        if match.cues[0] is QUERY:
            stop = _PUNCTUATION.search(text, match.end)
            end = _word_limit(text, match.end, QUERY.window, True, stop.start() if stop else len(text))
            reach(match, POSSIBLE, match.end, end, lambda s, e, m=match: s - m.end)
        else:
            stop = max(text.rfind(c, max(0, match.start - 200), match.start) for c in ".;!?\n,:")
            start = _word_limit(text, match.start, ANSWER.window, False, stop + 1)
            reach(match, NEGATED, start, match.start, lambda s, e, m=match: m.start - e)
    for match, end in _headings(text, matches):
        for cue in match.cues:  # a heading is the farthest cue: a phrase in the section overrides it
            reach(match, cue.category, match.end, end, lambda s, e, m=match: len(text) + s - m.end)
    for i, (s, e) in enumerate(spans):  # "Afebrile": the mention is its own denial, the nearest cue of all
        if text[s:e].lower() in SELF_NEGATED:
            reaching[i].append((0, Match(s, e, text[s:e].lower(), (Cue(NEGATED, BOTH),)), NEGATED))
    return [_decide(found) for found in reaching]


TIE_ORDER = (ONGOING, NEGATED, HYPOTHETICAL, POSSIBLE, CONDITIONAL)  # of two existence cues as near, the first speaks


def _inside_a_span(match: Match, ordered: list[tuple[int, int]], reach_ends: list[int]) -> bool:
    """Whether ``match`` overlaps a span other than one that is the cue alone: inside a longer span it is part of a name
    ("No hamartoma syndrome"); a span that is just the cue ("Allergies: PCN (rash)", where "Allergies" was found too)
    leaves it a cue for the spans around it. ``ordered``: the spans by start; ``reach_ends[i]``: the furthest end of
    the first i + 1."""
    before = bisect_left(ordered, (match.end,))  # the spans that start before the match ends
    if before == 0 or reach_ends[before - 1] <= match.start:
        return False
    alone = ordered[before - 1] == (match.start, match.end) and (before == 1 or reach_ends[before - 2] <= match.start)
    return not alone


def _decide(found: list[tuple[int, Match, str]]) -> Assertion:
    """One status from the cues that reach a span. Of denial, doubt, a future, a condition and an ongoing course the
    nearest cue speaks ("MI ruled out, CHF suspected"; "if pain persists": the pain is there); a denial outranks a
    relative ("no family history of colon cancer" is absent), a relative outranks doubt or a condition ("mother with
    possible dementia"); a relative's illness is not the patient's past."""
    found = sorted(found, key=lambda item: (item[0], TIE_ORDER.index(item[2]) if item[2] in TIE_ORDER else len(TIE_ORDER)))
    nearest: dict[str, str] = {}
    for _distance, match, category in found:
        nearest.setdefault(category, match.phrase)
    status = next((category for _distance, _match, category in found if category in EXISTENCE), None)
    if status == ONGOING:
        status = None
    if status != NEGATED and FAMILY in nearest:
        return Assertion(SOMEONE_ELSE, False, nearest[FAMILY])
    historical = nearest.get(HISTORICAL)
    return Assertion(STATUS_OF[status] if status else PRESENT, historical is not None, nearest.get(status) if status else None, historical)


def mark_assertions(text: str, annotations: Iterable[Annotation]) -> None:
    """Set each annotation's ``assertion`` (in place), replacing any an earlier run or the input gave."""
    annotations = list(annotations)
    for annotation, assertion in zip(annotations, assertions(text, [a.span for a in annotations])):
        annotation.assertion = assertion

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
illness") hide the cues they contain. Clauses are sentences (``medlink.text.sentences``) cut at semicolons and at
line breaks before a capital or a digit; a section
heading ("Family history:", "PMH:") reaches to its section's end instead. Rules, not a model: no annotated assertion
corpus ships with medlink, the rules are the published method, and a user can read why a mention was marked
(``infons["assertion_cue"]``). Linear in the text's length: one regular-expression pass finds every cue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from bisect import bisect_left, bisect_right
from functools import lru_cache
from itertools import accumulate
from typing import Iterable, Iterator, Sequence

from medlink.core import Annotation
from medlink.text.sentences import split_sentences

PRESENT, ABSENT, POSSIBLE, CONDITIONAL, HYPOTHETICAL, SOMEONE_ELSE = "present", "absent", "possible", "conditional", "hypothetical", "someone_else"
STATUSES = (PRESENT, ABSENT, POSSIBLE, CONDITIONAL, HYPOTHETICAL, SOMEONE_ELSE)
NEGATED, FAMILY, HISTORICAL, PSEUDO, TERMINATE = "negated", "family", "historical", "pseudo", "terminate"
ONGOING = "ongoing"  # "persists", "worsens" after a mention: it is there now (it outweighs an "if" before it)
FORWARD, BACKWARD, BOTH = "forward", "backward", "both"
STATUS_OF = {HYPOTHETICAL: HYPOTHETICAL, NEGATED: ABSENT, FAMILY: SOMEONE_ELSE, POSSIBLE: POSSIBLE, CONDITIONAL: CONDITIONAL}
EXISTENCE = frozenset({NEGATED, POSSIBLE, HYPOTHETICAL, CONDITIONAL, ONGOING})  # the categories that say whether the patient has it
EVERY = EXISTENCE | {FAMILY, HISTORICAL}


@dataclass(frozen=True)
class Cue:
    """A phrase's effect: the mentions in its scope get ``category``; a terminating phrase ends the scopes of ``ends``."""

    category: str
    direction: str
    window: int | None = None  # words of scope; None: to the clause's end (or start)
    ends: frozenset[str] = frozenset()  # TERMINATE only: the categories whose scope it ends


RELATIVES = """mother | mom | father | dad | brother | brothers | sister | sisters | sibling | siblings | son | sons | daughter | daughters |
    aunt | uncle | cousin | grandmother | grandfather | grandparent | grandparents | parent | parents | relatives | relative | twin |
    niece | nephew | husband | wife | spouse | mother's | father's | sister's | brother's | maternal history of | paternal history of |
    maternal hx of | paternal hx of | maternal history | paternal history"""


def _cues(category: str, direction: str, phrases: str, window: int | None = None, ends: frozenset[str] = frozenset()) -> list[tuple[str, Cue]]:
    return [(" ".join(phrase.split()), Cue(category, direction, window, ends)) for phrase in phrases.split("|") if phrase.strip()]


# Phrases in lower case, compared word by word (a hyphen parts words as a space does). One phrase may carry several
# cues ("no history of": denied and past). At one place the longest phrase wins, so a pseudo-cue hides the cue it contains.
LEXICON_ENTRIES: list[tuple[str, Cue]] = [
    *_cues(NEGATED, FORWARD, """no | not | denies | denied | deny | denying | without | w/o | negative for | neg for | free of | absence of |
        no evidence of | no signs of | no sign of | never had | never | none | nor | fails to reveal | failed to reveal | no longer |
        ruled out for | rules out | no further | no history of | no hx of | no h/o | no prior | no previous | no past | no one | nobody |
        denies history of | denies any history of | denies hx of | no family history of | no fhx of | no family hx of | no one in the family |
        no one in the family has | no one in the family has had | nobody in the family has | nobody in the family has had |
        does not have | did not have | do not have | doesn't have | didn't have | don't have | has not had | have not had | hasn't had |
        haven't had | has no | have no | had no | is not having | not having | no longer has | no longer have | does not report |
        did not report | does not complain of | did not complain of | does not endorse | did not endorse | does not experience |
        did not experience | does not get | is not experiencing | not experiencing"""),
    *_cues(NEGATED, BACKWARD, """ruled out | was ruled out | is ruled out | has been ruled out | were ruled out | have been ruled out |
        is negative | was negative | were negative | negative | is absent | are absent | not present | is not present | unlikely |
        is unlikely | not seen | none seen | not identified | not detected | excluded | was excluded | is excluded""", window=5),
    *_cues(NEGATED, BOTH, "absent", window=5),
    *_cues(POSSIBLE, FORWARD, """possible | possibly | probable | probably | likely | suspect | suspected | suspicion of | suspicious for |
        suspicious of | concern for | concerning for | concerned for | worrisome for | worrisome of | questionable | question of | r/o |
        rule out | to rule out | evaluate for | eval for | evaluation for | evaluated for | assess for | cannot rule out | can't rule out |
        cannot exclude | can't exclude | could not rule out | could not exclude | may have | might have | may have had | might have had |
        could have had | may have been | may be having | may be | might be | could be | presumed | presumptive | differential includes |
        differential diagnosis | ddx | or possibly | equivocal | uncertain | borderline | suggestive of | suggests | suggesting |
        not ruled out | not been ruled out | not excluded | not been excluded | likely from | most likely from | likely related to |
        likely secondary to | likely due to | probably from | probably due to | unsure if | unsure whether | unsure of | not sure if |
        not sure whether | not certain if | not certain whether | unclear if | unclear whether | not clear if | not clear whether |
        uncertain if | uncertain whether | question whether | questioning whether | wonder if | wonders if"""),
    *_cues(POSSIBLE, BACKWARD, """is possible | is likely | is suspected | was suspected | are suspected | suspected | is questionable |
        not excluded | not been excluded | cannot be excluded | cannot be ruled out | can not be ruled out | not ruled out | not been ruled out |
        is not excluded | is in the differential | is favored | less likely | more likely | possible | likely""", window=5),
    *_cues(POSSIBLE, BOTH, "versus | vs", window=4),
    *_cues(HYPOTHETICAL, FORWARD, """if | in case | in case of | in the event | should | should you | should she | should he |
        should there be | return if | return for | call if | call for | watch for | monitor for | monitoring for | observe for | look for |
        signs of | symptoms of | to prevent | prevent | prevention of | risk of | risk for | at risk | avoid | precautions for |
        prophylaxis for | in order to prevent | could develop | may develop | might develop | develop | potential for | to avoid |
        call 911 for | call 911 if | seek care for | seek care if | seek medical attention for | seek medical attention if |
        seek immediate medical attention for | seek immediate medical attention if | screening for | screen for | screened for"""),
    *_cues(HYPOTHETICAL, BACKWARD, "prophylaxis | precautions", window=4),
    # "if pain persists": the pain is there now, its course is what the sentence supposes
    *_cues(ONGOING, BACKWARD, """persists | persist | worsens | worsen | gets worse | get worse | continues | continue | does not improve |
        doesn't improve | do not improve | fails to improve | not improving | recurs | recur | returns""", window=2),
    *_cues(CONDITIONAL, BOTH, """when | whenever | with exertion | on exertion | upon exertion | with activity | on activity | after eating |
        after meals | with meals | after food | after exercise | with exercise | during exercise | when walking | upon walking | on walking |
        after walking | with walking | with ambulation | on ambulation | when lying | when climbing | upon climbing | on climbing |
        after taking | after starting | after drinking | triggered by | precipitated by | induced by | on standing | upon standing |
        with standing | in response to | each time | every time""", window=6),
    *_cues(CONDITIONAL, FORWARD, "allergy | allergies | allergic to | allergic reaction to | intolerance to | intolerant of"),
    *_cues(FAMILY, BOTH, f"""{RELATIVES} | family history of | family history | fhx | fh | family hx | fam hx | family member | family members |
        runs in the family | in the family | roommate | coworker | co worker | friend | friends | classmate | classmates | boyfriend |
        girlfriend | neighbor | neighbour""", window=12),
    *_cues(HISTORICAL, FORWARD, """history of | hx of | h/o | hx | past history of | s/p | status post | previous | prior | prior history of |
        remote | remote history of | old | former | formerly | past | no history of | no hx of | no h/o | no prior | no previous | no past |
        denies history of | denies any history of | denies hx of | resolution of"""),
    *_cues(HISTORICAL, BOTH, "in the past | as a child | in childhood | previously | remotely", window=6),
    *_cues(HISTORICAL, BACKWARD, """years ago | months ago | year ago | ago | at age | resolved | has resolved | have resolved | last year |
        last winter | last summer | last spring | last fall | last autumn | completely resolved | fully resolved | since resolved""", window=6),
    *_cues(PSEUDO, BOTH, """no increase | no increased | no change | no significant change | no interval change | not only | not necessarily |
        gram negative | gram neg | without difficulty | not cause | no further change |
        history of present illness | hx of present illness | social history | no acute change | not drain | not extend |
        not apparent | not significantly | no new | does not deny | doesn't deny | did not deny | prior to | previous to |
        history and physical | sign out | rule out risk | r/o risk | when asked | if any | if needed | as needed | if necessary |
        if desired | if possible | as above | past week | past few days | past several days | past month | past day | past 24 hours |
        past two weeks | past 2 weeks | past year | x ray | you have | you develop | you notice | you experience | you get | you feel |
        you are having | you start | you see | not resolved | has not resolved | have not resolved | not yet resolved | never resolved |
        not fully resolved | unresolved | relative risk | relative risks | relative to | past medical history | past medical hx |
        past surgical history | medical history"""),
    *_cues(TERMINATE, BOTH, """but | however | although | though | yet | except | aside from | apart from | which | whose | since | because |
        due to | secondary to | cause of | caused by | as the cause | etiology | otherwise | other than | instead | while | whereas |
        nevertheless | given | during | in the setting of | in setting of | with residual | residual""", ends=EVERY),
    *_cues(TERMINATE, BOTH, """reports | reported | complains | complaining | c/o | states | presents | presenting | presented | admits |
        endorses | notes | noted | currently | now | remains | still | then | in addition | additionally | also | found | shows |
        showed | demonstrates | revealed | reveals | p/w | presents with | presenting with | admitted with | admitted for | here for |
        seen for | now with""", ends=EXISTENCE | {HISTORICAL}),
    *_cues(TERMINATE, BOTH, "has | have | had | has had | is having", ends=frozenset({NEGATED})),  # "denies fever, has cough"
    *_cues(TERMINATE, BOTH, "patient | pt | she | he | the patient | himself | herself | her own | his own", ends=frozenset({FAMILY})),
]
LEXICON: dict[str, tuple[Cue, ...]] = {}
for _phrase, _cue in LEXICON_ENTRIES:
    LEXICON[_phrase] = LEXICON.get(_phrase, ()) + (_cue,)
# A heading's cue (at a line's start, before a colon) modifies its whole section: a family history lists several relatives' illnesses;
# a past medical history is not one ("PMH: HTN" lists what the patient has now)
HEADINGS: dict[str, Cue] = {
    phrase: Cue(FAMILY, FORWARD) for phrase in ("family history", "family hx", "fam hx", "fhx", "fh", "family medical history")}
# A relative who tells ("wife reports he has been confused", "per his mother") is the source, not the one who has it
REPORTING = frozenset("reports reported states stated notes noted noticed says said thinks believes feels describes worries brought brings".split())
FILLERS = frozenset("has have had also".split())
_HEADING = re.compile(r"^[ \t]*([A-Za-z][A-Za-z /]{0,40}?)[ \t]*:", re.MULTILINE)
_SECTION_END = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*[A-Za-z][A-Za-z /]{0,40}:)")  # a blank line, or the next heading
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[/'’][A-Za-z0-9]+)*")
_NOT_WORD = re.compile(r"[^A-Za-z0-9/'’]")
_WORD_CHARACTER = re.compile(r"[a-z0-9]|[/'][a-z0-9]")
# "?PE", "PE?": a question mark doubts the word it touches
_QUERY_BEFORE = re.compile(r"(?<![\w?])\? ?(?=[A-Za-z])")
_PUNCTUATION = re.compile(r"[,.;:!?\n]")  # where the words a leading "?" doubts end
# a template's answer after the problem: "Fever: no.", "Chills: none", "fever - denies", "Fever? No"
_ANSWER = re.compile(r"\b(?:no|none|denies|denied|negative|neg|absent|nil)\b(?=[ \t]*(?:[.,;\n]|$))", re.IGNORECASE)
_ANSWER_LEAD = re.compile(r"[ \t]*[:,?-]?[ \t]*$")  # what may stand between the problem and its answer
# the lines of a list under a cue that ends its line ("Denies:\n- fever\n- chills")
_LIST_LINES = re.compile(r"[ \t:]*(?:\n[ \t]*(?:[-*•▪◦·]|\d{1,3}[.)])[ \t]+[^\n]*)+")
_QUERY_AFTER = re.compile(r"(?<=\w)\?(?=\s|$|[,.;)])")


QUERY = Cue(POSSIBLE, FORWARD, 4)  # a leading "?": its words, whatever the sentence splitter made of "? MI"
ANSWER = Cue(NEGATED, BACKWARD, 4)


def _apart(match: "Match") -> bool:
    """A leading "?" or a template's answer: its scope is its words, read apart from the clauses."""
    return any(cue is QUERY or cue is ANSWER for cue in match.cues)


@dataclass(frozen=True)
class Match:
    """A phrase found in the text (``start``, ``end``: its characters) and its cues."""

    start: int
    end: int
    phrase: str
    cues: tuple[Cue, ...]

    def categories(self) -> set[str]:
        return {cue.category for cue in self.cues}


ASSERTION_INFONS = ("assertion", "assertion_cue", "historical", "historical_cue")


@dataclass(frozen=True)
class Assertion:
    """What the text says about one mention; the cue that decided each part, for a reader who asks why."""

    status: str = PRESENT
    historical: bool = False
    cue: str | None = None
    historical_cue: str | None = None

    def infons(self) -> dict[str, str]:
        """The annotation infons a document writer keeps (BioC, JSONL): the status and the past always, cues when there are."""
        out = {"assertion": self.status, "historical": "true" if self.historical else "false"}  # the keys are ASSERTION_INFONS
        if self.cue:
            out["assertion_cue"] = self.cue
        if self.historical_cue:
            out["historical_cue"] = self.historical_cue
        return out


@lru_cache(maxsize=1)
def _automaton():
    """Every phrase, its words behind a space (" no evidence of"), in one Aho-Corasick automaton over the scanned copy."""
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for phrase in LEXICON:
        automaton.add_word(" " + " ".join(_TOKEN.findall(phrase)), phrase)
    automaton.make_automaton()
    return automaton


def _scanned(text: str) -> str:
    """``text`` as the automaton reads it, character for character (offsets unchanged): ASCII lower case, "’" as "'",
    and everything but letters, digits, "/" and "'" a space, so a hyphen parts words as a space does."""
    return " " + _NOT_WORD.sub(" ", text).lower().replace("’", "'")


def find_cues(text: str) -> list[Match]:
    """Every cue phrase in ``text``, in order, none overlapping (at one place the longest), each a whole run of words."""
    scanned = _scanned(text)
    whole = []  # (start, end, phrase) of every phrase that ends where a word ends (" should" in "should headache", not " should he")
    for last, phrase in _automaton().iter(scanned):
        if not _WORD_CHARACTER.match(scanned, last + 1):  # the scanned copy's offset ``last`` is the text's last character + 1
            whole.append((last - len(" ".join(_TOKEN.findall(phrase))), last, phrase))
    found: list[Match] = []
    covered = 0
    for start, end, phrase in sorted(whole, key=lambda item: (item[0], -item[1])):
        if start >= covered:
            found.append(Match(start, end, phrase, LEXICON[phrase]))
            covered = end
    if "?" in text:
        found += [Match(m.start(), m.end(), "?", (QUERY,)) for m in _QUERY_BEFORE.finditer(text)]
        found += [Match(m.start(), m.end(), "?", (Cue(POSSIBLE, BACKWARD, 3),)) for m in _QUERY_AFTER.finditer(text)]
    for m in _ANSWER.finditer(text):
        lead = _ANSWER_LEAD.search(text, max(0, m.start() - 8), m.start())
        found.append(Match(lead.start() if lead else m.start(), m.end(), m.group().lower(), (ANSWER,)))
    return sorted(found, key=lambda m: m.start)


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


_PER = re.compile(r"(?:\bper|\baccording to)\s+(?:(?:his|her|their|the|pt's|patient's)\s+)?$", re.IGNORECASE)


def _reports(text: str, match: Match) -> bool:
    """Whether a relative's cue names the one who tells ("wife reports ...", "husband has noticed", "per her mother")."""
    if match.categories() != {FAMILY}:
        return False
    if _PER.search(text, max(0, match.start - 30), match.start):
        return True
    for token in _TOKEN.finditer(text, match.end, min(len(text), match.end + 40)):
        word = token.group().lower()
        if word not in FILLERS:
            return word in REPORTING
    return False


_CLAUSE_CUT = re.compile(r";|—|\n(?=[ \t]*[A-Z0-9])|(?<![A-Za-z])(?P<no>[Nn]o\.)[ \t]+(?=[A-Z])")  # a semicolon, an em dash, a line that starts with a capital or a digit, "no." before a capital ("Chills: no. Cough: yes.")
_COLON = re.compile(r"[ \t]*:")


def _clauses(text: str) -> list[tuple[int, int]]:
    """Sentences cut at semicolons, em dashes and line breaks before a capital or a digit (a note's lines are its statements:
    "Denies fever\nCough x3 days"; a line wrapped inside a sentence goes on in lower case): no scope crosses one."""
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
        for count, m in enumerate(_TOKEN.finditer(text, start, bound), 1):
            if count == words:
                return m.end()
        return bound
    starts = [m.start() for m in _TOKEN.finditer(text, bound, start)]
    return starts[-words] if len(starts) >= words else bound


def _ends(stop: Match, category: str) -> bool:
    """Whether ``stop`` ends a scope of ``category``: a terminating phrase that ends it, a cue of another existence
    category ("no fever, possible pneumonia"), or for the past a denial, a doubt or a future ("s/p CVA without residual
    deficits"). An ongoing course ("persists") speaks of the word before it only and ends nothing."""
    return any((cue.category == TERMINATE and category in cue.ends)
               or (category in EXISTENCE and cue.category in EXISTENCE - {ONGOING} and cue.category != category)
               or (category == HISTORICAL and cue.category in (NEGATED, POSSIBLE, HYPOTHETICAL)) for cue in stop.cues)


def _scopes(text: str, clause: tuple[int, int], matches: list[Match]) -> Iterator[tuple[Match, Cue, int, int]]:
    """Each modifying cue of one clause with the characters it reaches. A cue with a word window reaches no further
    than a comma either ("RLQ pain, appendicitis vs ovarian cyst": the pain is not in doubt)."""
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
                end = starts[later] if later < len(starts) else high
                if cue.window is not None:
                    comma = text.find(",", match.end, end)
                    end = _word_limit(text, match.end, cue.window, True, comma if comma >= 0 else end)
                yield match, cue, match.end, end
            if direction in (BACKWARD, BOTH):
                earlier = bisect_right(ends, match.start)
                start = ends[earlier - 1] if earlier else low
                if cue.window is not None:
                    start = _word_limit(text, match.start, cue.window, False, text.rfind(",", start, match.start) + 1 or start)
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
        inside = matches[bisect_left(match_starts, clause[0]):bisect_left(match_starts, clause[1])]
        for match, cue, start, end in _scopes(text, clause, [m for m in inside if m.end <= clause[1] and not _apart(m)]):
            reach(match, cue.category, start, end, lambda s, e, m=match: min(abs(s - m.end), abs(m.start - e)))
            listed = _LIST_LINES.match(text, end) if cue.direction != BACKWARD and end == clause[1] and start == match.end else None
            if listed and not text[match.end:end].strip(" \t:"):  # the cue ends its line: it reaches the list under it
                reach(match, cue.category, match.end, listed.end(), lambda s, e, m=match: s - m.end)
    for match in filter(_apart, matches):  # "? MI", "Rash? No": the sentence splitter may have cut them off their words
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
    """Write each annotation's assertion into its infons (in place), replacing any an earlier run wrote."""
    annotations = list(annotations)
    for annotation, assertion in zip(annotations, assertions(text, [a.span for a in annotations])):
        for key in ASSERTION_INFONS:
            annotation.infons.pop(key, None)
        annotation.infons.update(assertion.infons())

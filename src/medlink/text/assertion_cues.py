"""The assertion rules' lexicon, and finding its cue phrases in text (``medlink.text.assertion`` applies them).

Cue phrases, each with a category and a direction (ConText's), in lower case, compared word by word; a phrase may carry
several cues. They are found in one Aho-Corasick pass over a copy of the text that keeps every offset, whole words
only, the longest where several start at one word; a question mark that doubts a word and a template's answer after a
problem ("Fever: no") are found by their own patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

PRESENT, ABSENT, POSSIBLE, CONDITIONAL, HYPOTHETICAL, SOMEONE_ELSE = (
    "present",
    "absent",
    "possible",
    "conditional",
    "hypothetical",
    "someone_else",
)
STATUSES = (PRESENT, ABSENT, POSSIBLE, CONDITIONAL, HYPOTHETICAL, SOMEONE_ELSE)
NEGATED, FAMILY, HISTORICAL, PSEUDO, TERMINATE = "negated", "family", "historical", "pseudo", "terminate"
ONGOING = "ongoing"  # "persists", "worsens" after a mention: it is there now (it outweighs an "if" before it)
FORWARD, BACKWARD, BOTH = "forward", "backward", "both"
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


def _cues(
    category: str, direction: str, phrases: str, window: int | None = None, ends: frozenset[str] = frozenset()
) -> list[tuple[str, Cue]]:
    return [(" ".join(phrase.split()), Cue(category, direction, window, ends)) for phrase in phrases.split("|") if phrase.strip()]


# Phrases in lower case, compared word by word (a hyphen parts words as a space does). One phrase may carry several
# cues ("no history of": denied and past). At one place the longest phrase wins, so a pseudo-cue hides the cue it contains.
LEXICON_ENTRIES: list[tuple[str, Cue]] = [
    *_cues(
        NEGATED,
        FORWARD,
        """no | not | denies | denied | deny | denying | without | w/o | negative for | neg for | free of | absence of |
        no evidence of | no signs of | no sign of | never had | never | none | nor | fails to reveal | failed to reveal | no longer |
        ruled out for | rules out | no further | no history of | no hx of | no h/o | no prior | no previous | no past | no one | nobody |
        denies history of | denies any history of | denies hx of | no family history of | no fhx of | no family hx of | no one in the family |
        no one in the family has | no one in the family has had | nobody in the family has | nobody in the family has had |
        does not have | did not have | do not have | doesn't have | didn't have | don't have | has not had | have not had | hasn't had |
        haven't had | has no | have no | had no | is not having | not having | no longer has | no longer have | does not report |
        did not report | does not complain of | did not complain of | does not endorse | did not endorse | does not experience |
        did not experience | does not get | is not experiencing | not experiencing""",
    ),
    *_cues(
        NEGATED,
        BACKWARD,
        """ruled out | was ruled out | is ruled out | has been ruled out | were ruled out | have been ruled out |
        is negative | was negative | were negative | negative | is absent | are absent | not present | is not present | unlikely |
        is unlikely | not seen | none seen | not identified | not detected | excluded | was excluded | is excluded""",
        window=5,
    ),
    *_cues(NEGATED, BOTH, "absent", window=5),
    *_cues(
        POSSIBLE,
        FORWARD,
        """possible | possibly | probable | probably | likely | suspect | suspected | suspicion of | suspicious for |
        suspicious of | concern for | concerning for | concerned for | worrisome for | worrisome of | questionable | question of | r/o |
        rule out | to rule out | evaluate for | eval for | evaluation for | evaluated for | assess for | cannot rule out | can't rule out |
        cannot exclude | can't exclude | could not rule out | could not exclude | may have | might have | may have had | might have had |
        could have had | may have been | may be having | may be | might be | could be | presumed | presumptive | differential includes |
        differential diagnosis | ddx | or possibly | equivocal | uncertain | borderline | suggestive of | suggests | suggesting |
        not ruled out | not been ruled out | not excluded | not been excluded | likely from | most likely from | likely related to |
        likely secondary to | likely due to | probably from | probably due to | unsure if | unsure whether | unsure of | not sure if |
        not sure whether | not certain if | not certain whether | unclear if | unclear whether | not clear if | not clear whether |
        uncertain if | uncertain whether | question whether | questioning whether | wonder if | wonders if""",
    ),
    *_cues(
        POSSIBLE,
        BACKWARD,
        """is possible | is likely | is suspected | was suspected | are suspected | suspected | is questionable |
        not excluded | not been excluded | cannot be excluded | cannot be ruled out | can not be ruled out | not ruled out | not been ruled out |
        is not excluded | is in the differential | is favored | less likely | more likely | possible | likely""",
        window=5,
    ),
    *_cues(POSSIBLE, BOTH, "versus | vs", window=4),
    *_cues(
        HYPOTHETICAL,
        FORWARD,
        """if | in case | in case of | in the event | should | should you | should she | should he |
        should there be | return if | return for | call if | call for | watch for | monitor for | monitoring for | observe for | look for |
        signs of | symptoms of | to prevent | prevent | prevention of | risk of | risk for | at risk | avoid | precautions for |
        prophylaxis for | in order to prevent | could develop | may develop | might develop | develop | potential for | to avoid |
        call 911 for | call 911 if | return to the ed for | return to the ed if | return to the er for | return to the er if |
        return to ed for | return to ed if | come back for | come back if | seek care for | seek care if | seek medical attention for |
        seek medical attention if |
        seek immediate medical attention for | seek immediate medical attention if | screening for | screen for | screened for""",
    ),
    *_cues(HYPOTHETICAL, BACKWARD, "prophylaxis | ppx | precautions", window=4),
    # the mention names what is screened for, prevented or worked up: "TB screening", "bleeding risk", "sepsis workup"
    *_cues(HYPOTHETICAL, BACKWARD, "screening | screen | risk", window=1),
    *_cues(POSSIBLE, BACKWARD, "workup | work up | protocol | testing", window=1),
    # "if pain persists": the pain is there now, its course is what the sentence supposes ("if pain returns" or "recurs"
    # supposes it gone: the "if" speaks)
    *_cues(
        ONGOING,
        BACKWARD,
        """persists | persist | worsens | worsen | gets worse | get worse | continues | continue | does not improve |
        doesn't improve | do not improve | fails to improve | not improving""",
        window=2,
    ),
    *_cues(
        CONDITIONAL,
        BOTH,
        """when | whenever | with exertion | on exertion | upon exertion | with activity | on activity | after eating |
        after meals | with meals | after food | after exercise | with exercise | during exercise | when walking | upon walking | on walking |
        after walking | with walking | with ambulation | on ambulation | when lying | when climbing | upon climbing | on climbing |
        after taking | after drinking | triggered by | precipitated by | induced by | on standing | upon standing |
        with standing | in response to | each time | every time""",
        window=6,
    ),
    *_cues(CONDITIONAL, FORWARD, "allergy | allergies | allergic to | allergic reaction to | intolerance to | intolerant of"),
    *_cues(
        FAMILY,
        BOTH,
        f"""{RELATIVES} | family history of | family history | fhx | fh | family hx | fam hx | family member |
        family members |
        runs in the family | in the family | sick contact | sick contacts | roommate | coworker | co worker | friend | friends |
        classmate | classmates | boyfriend |
        girlfriend | neighbor | neighbour""",
        window=12,
    ),
    *_cues(
        HISTORICAL,
        FORWARD,
        """history of | hx of | h/o | hx | past history of | previous | prior | prior history of |
        remote history of | past | no history of | no hx of | no h/o | no prior | no previous | no past |
        denies history of | denies any history of | denies hx of | resolution of""",
    ),
    # a procedure or a word before a noun: its phrase, not the list after a comma ("s/p ablation 2022, HTN, OSA")
    *_cues(HISTORICAL, FORWARD, "s/p | status post | remote | old | former | formerly", window=5),
    *_cues(
        HISTORICAL,
        BOTH,
        """in the past | as a child | in childhood | previously | remotely | as a teenager | as a teen | as an infant |
        as a baby | as a toddler | as a young adult | in high school | in college | years prior | months prior | year prior | outgrew |
        outgrown | grew out of""",
        window=6,
    ),
    *_cues(
        HISTORICAL,
        BACKWARD,
        """years ago | months ago | year ago | ago | at age | resolved | has resolved | have resolved | last year | last yr |
        last winter | last summer | last spring | last fall | last autumn | completely resolved | fully resolved | since resolved |
        now resolved | has now resolved | have now resolved | now fully resolved | now completely resolved | since fully resolved |
        which resolved | which has resolved | which had resolved | which have resolved | which has since resolved |
        which later resolved | which eventually resolved | which spontaneously resolved | that resolved | that has resolved |
        that had resolved | that later resolved | that eventually resolved | that spontaneously resolved""",
        window=6,
    ),
    *_cues(
        PSEUDO,
        BOTH,
        """no increase | no increased | no change | no significant change | no interval change | not only | not necessarily |
        gram negative | gram neg | without difficulty | not cause | no further change |
        history of present illness | hx of present illness | social history | no acute change | not drain | not extend |
        not apparent | not significantly | no new | does not deny | doesn't deny | did not deny | prior to | previous to |
        history and physical | sign out | rule out risk | r/o risk | when asked | if any | if needed | as needed | if necessary |
        if desired | if possible | as above | past week | past few days | past several days | past month | past day |
        past 24 hours |
        past two weeks | past 2 weeks | past year | x ray | you have | you develop | you notice | you experience | you get | you feel |
        you are having | you start | you see | not on | not currently on | is not on | was not on | not taking | not resolved |
        has not resolved | have not resolved | not yet resolved | never resolved |
        not fully resolved | unresolved | relative risk | relative risks | relative to | past medical history | past medical hx |
        past surgical history | medical history |
        after starting | since starting | after beginning | after initiating | after initiation of | after being started on |
        after being placed on | after being put on | when started on | when he started | when she started | when first started |
        when he was started on | when she was started on""",
    ),  # a drug's start dates an event once ("developed SJS after starting lamotrigine"): a time, not a trigger
    *_cues(
        TERMINATE,
        BOTH,
        """but | however | although | though | yet | except | aside from | apart from | which | whose | since | because |
        due to | secondary to | cause of | caused by | as the cause | etiology | otherwise | other than | instead | while | whereas |
        nevertheless | given | during | in the setting of | in setting of | with residual | residual | in this | in a patient |
        in the patient""",
        ends=EVERY,
    ),
    *_cues(
        TERMINATE,
        BOTH,
        """reports | reported | complains | complaining | c/o | states | presents | presenting | presented | admits |
        endorses | notes | noted | currently | now | remains | still | then | in addition | additionally | also | found | shows |
        showed | demonstrates | revealed | reveals | p/w | presents with | presenting with | admitted with | admitted for | here for |
        seen for | now with""",
        ends=EXISTENCE | {HISTORICAL},
    ),
    *_cues(TERMINATE, BOTH, "has | have | had | has had | is having", ends=frozenset({NEGATED})),  # "denies fever, has cough"
    *_cues(
        TERMINATE,
        BOTH,
        "patient | pt | she | he | the patient | himself | herself | her own | his own | pt's | patient's",
        ends=frozenset({FAMILY}),
    ),
]
LEXICON: dict[str, tuple[Cue, ...]] = {}
for _phrase, _cue in LEXICON_ENTRIES:
    # a contraction as notes also write it, without its apostrophe: "doesnt have", "cant rule out"
    for _spelling in dict.fromkeys((_phrase, _phrase.replace("n't", "nt"))):
        LEXICON[_spelling] = LEXICON.get(_spelling, ()) + (_cue,)
# A mention that says its own absence ("Afebrile, VSS"): the span is its cue
SELF_NEGATED = frozenset({"afebrile"})
# A heading's cue (at a line's start, before a colon) modifies its whole section: a family history lists several relatives' illnesses;
# a past medical history is not one ("PMH: HTN" lists what the patient has now)
HEADINGS: dict[str, Cue] = {
    phrase: Cue(FAMILY, FORWARD) for phrase in ("family history", "family hx", "fam hx", "fhx", "fh", "family medical history")
}
# A relative who tells ("wife reports he has been confused", "per his mother") is the source, not the one who has it
REPORTING = frozenset(
    """reports reported states stated notes noted noticed says said thinks believes feels describes worries worried concerned
    brought brings bringing accompanies accompanied called calls""".split()
)
FILLERS = frozenset("has have had also".split())
TOKEN = re.compile(r"[A-Za-z0-9]+(?:[/'’][A-Za-z0-9]+)*")
_NOT_WORD = re.compile(r"[^A-Za-z0-9/'’]")
_WORD_CHARACTER = re.compile(r"[a-z0-9]|[/'][a-z0-9]")
# "?PE", "PE?": a question mark doubts the word it touches
_QUERY_BEFORE = re.compile(r"(?<![\w?])\? ?(?=[A-Za-z])")
_QUERY_AFTER = re.compile(r"(?<=\w)\?(?=\s|$|[,.;)])")
# a template's answer after the problem: "Fever: no.", "Chills: none", "fever - denies", "Fever? No"
_ANSWER = re.compile(r"\b(?:no|none|denies|denied|negative|neg|absent|nil)\b(?=[ \t]*(?:[.,;\n]|$))", re.IGNORECASE)
_ANSWER_LEAD = re.compile(r"[ \t]*[:,?-]?[ \t]*$")  # what may stand between the problem and its answer


QUERY = Cue(POSSIBLE, FORWARD, 4)  # a leading "?": its words, whatever the sentence splitter made of "? MI"
QUERY_AFTER = Cue(POSSIBLE, BACKWARD, 3)  # "PE?"
ANSWER = Cue(NEGATED, BACKWARD, 4)


def apart(match: Match) -> bool:
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


@lru_cache(maxsize=1)
def _automaton():
    """Every phrase, its words behind a space (" no evidence of"), in one Aho-Corasick automaton over the scanned copy."""
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for phrase in LEXICON:
        words = " ".join(TOKEN.findall(phrase))
        automaton.add_word(" " + words, (phrase, len(words)))
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
    for last, (phrase, length) in _automaton().iter(scanned):
        if not _WORD_CHARACTER.match(scanned, last + 1):  # the scanned copy's offset ``last`` is the text's last character + 1
            whole.append((last - length, last, phrase))
    found: list[Match] = []
    covered = 0
    for start, end, phrase in sorted(whole, key=lambda item: (item[0], -item[1])):
        if start >= covered:
            found.append(Match(start, end, phrase, LEXICON[phrase]))
            covered = end
    if "?" in text:
        found += [Match(m.start(), m.end(), "?", (QUERY,)) for m in _QUERY_BEFORE.finditer(text)]
        found += [Match(m.start(), m.end(), "?", (QUERY_AFTER,)) for m in _QUERY_AFTER.finditer(text)]
    for m in _ANSWER.finditer(text):
        lead = _ANSWER_LEAD.search(text, max(0, m.start() - 8), m.start())
        found.append(Match(lead.start() if lead else m.start(), m.end(), m.group().lower(), (ANSWER,)))
    return sorted(found, key=lambda m: m.start)

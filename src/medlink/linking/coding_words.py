"""How the coding rules read words: a mention's (its short forms spelled out, its sides in shorthand, what it says is
absent) and a code name's (the words that tell it apart, those it does not assert).

Why apart from ``coding_rules``: these read text alone, no code set; the rules and the coding mode share them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from medlink.align.predicates import NOT_TELLING, readings, telling_words, words

# words a code adds that say nothing about the condition ("Pneumonia, unspecified organism", "... of unspecified site")
VAGUE = frozenset({"organism", "site", "sites", "part", "parts", "nos", "unspecified", "specified", "not", "stated"})
ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}  # "type II diabetes" says what "type 2 diabetes" says
# ICD-10-CM's own words for what a clinician calls a cancer or a tumour (its index: "Carcinoma - see Neoplasm, malignant")
SAME_AS = {
    "cancer": ("malignant", "neoplasm"),
    "carcinoma": ("malignant", "neoplasm"),
    "malignancy": ("malignant", "neoplasm"),
    "tumor": ("neoplasm",),
    "tumour": ("neoplasm",),
    "intraductal": ("ductal",),  # "Intraductal carcinoma in situ of breast" (D05.1) is DCIS, "ductal carcinoma in situ"
    "rlq": ("right", "lower", "quadrant"),  # the abdomen's quadrants as clinicians write them ("abd pain RLQ": R10.31)
    "llq": ("left", "lower", "quadrant"),
    "ruq": ("right", "upper", "quadrant"),
    "luq": ("left", "upper", "quadrant"),
}


# what a name or a mention says is not there, or leaves open: "without hemorrhage or perforation", "w/o hematuria",
# "except renal pelvis", "unspecified as acute or chronic"
LEFT_OPEN = re.compile(r"\bunspecified as (?:to )?(\w+ (?:or|and) \w+)")
UNASSERTED = re.compile(
    r"(?:\bwithout|\bexcept|\bw/o) ((?:(?!\b(?:with|but)\b)[^,;(])+)|" + LEFT_OPEN.pattern
)  # up to "with", "but" or a comma
COVERED = re.compile(r"\bincluding\b[^,;(]*", re.IGNORECASE)  # what a code's name says it covers besides, up to a comma
# a side written in a clinician's shorthand: before the word it qualifies, with or without a full stop ("R great toe
# pain", "Lt. hip pain", "L CTS", "b/l knee pain", "LT hip pain"), in brackets ("(R) hip pain") or after a comma at the end
# ("hip pain, L"); "bilat" and "OU" (both eyes) anywhere. Not "2 L NC", "L-spine", "T-L junction", "RT" (radiotherapy).
# "R>L" or "R&L" says both
SIDE_SHORT_FORMS = {"r": "right", "rt": "right", "l": "left", "lt": "left", "bilat": "bilateral", "b/l": "bilateral", "ou": "bilateral"}
SIDE_SHORT_FORM = re.compile(
    r"(?<![\w/-])(?<!\d )(?:(?P<before>R|L|LT|[Rr]t|[Ll]t|[Bb]/[Ll])(?:\.|[- ]sided)?(?=\s+[A-Za-z])|(?P<anywhere>[Bb]ilat|OU))(?![\w/-])"
    r"|\((?P<bracketed>R|L)\)|,\s*(?P<after>R|L|Rt|Lt|bilat)\.?\s*$"
)
BOTH_SIDES = re.compile(r"(?<![\w/])R\s*[>&<]\s*L(?![\w/-])|(?<![\w/])L\s*[>&<]\s*R(?![\w/-])")


def stem(word: str) -> str:
    """A word as the rules compare it: a plural's singular ("seizures", "polyneuropathies"), a Roman numeral's digit ("II")."""
    word = ROMAN.get(word, word)
    if len(word) > 5 and word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")) else word


def compared(found: Iterable[str]) -> frozenset[str]:
    """Words as the rules compare them: stems, and a clinician's word for a cancer as ICD-10-CM's ("malignant neoplasm")."""
    out: set[str] = set()
    for word in map(stem, found):
        out.update(SAME_AS.get(word, (word,)))
    return frozenset(out)


# ICD-10-CM's limbs as a clinician names them ("Cellulitis of left lower limb" for "cellulitis of the left leg"); read on
# both sides, so "Pain in right lower leg" stays apart from "Pain in right leg"
LIMBS = re.compile(r"\b(lower|upper)\s+(?:limbs?|extremit(?:y|ies))\b", re.IGNORECASE)


# the parts of a limb as the rules compare them: ICD-10-CM often codes a site by its limb ("Malignant melanoma of right
# upper limb, including shoulder" for a forearm's)
LIMB_PARTS = {
    "arm": frozenset("shoulder elbow forearm wrist hand finger thumb".split()),
    "leg": frozenset("hip thigh knee calf shin ankle foot heel toe toes".split()),
}


def limbs_holding(said: frozenset[str]) -> frozenset[str]:
    """The limbs that hold a part the words say ("arm" for "forearm")."""
    return frozenset(limb for limb, parts in LIMB_PARTS.items() if parts & said)


def limbs_to_add(said: frozenset[str], code_words: Iterable[frozenset[str]]) -> frozenset[str]:
    """The limbs that hold a part the words say, where the code the words led to names no limb's part: "arm" for
    "melanoma of the R forearm" at C43.9, none for "toe pain" at "Pain in unspecified toe(s)"."""
    if frozenset().union(*code_words) & frozenset().union(*LIMB_PARTS.values()):
        return frozenset()
    return limbs_holding(said) - said


def limbs_named(text: str) -> str:
    """``text`` with ICD-10-CM's "lower limb" and "upper limb" (or "extremity") read as "leg" and "arm"."""
    return LIMBS.sub(lambda m: "leg" if m.group(1).lower() == "lower" else "arm", text)


def said_words(texts: Iterable[str | None]) -> frozenset[str]:
    """Every word of ``texts`` (a mention, what it was read as), as the rules compare them."""
    return compared(w for text in texts if text for w in words(limbs_named(text)))


def sides_written(mention: str) -> frozenset[str]:
    """The sides a mention writes in shorthand ("R", "Lt", "bilat", "OU": both eyes), as words: what a code's name says;
    right and left together are both sides."""
    sides = {SIDE_SHORT_FORMS[next(form for form in m.groups() if form).lower()] for m in SIDE_SHORT_FORM.finditer(mention)}
    return frozenset({"bilateral"}) if BOTH_SIDES.search(mention) or {"right", "left"} <= sides else frozenset(sides)


# a side written out ("left", "right-sided") or in shorthand ("R", "R>L", "OU")
SIDE_WORDS = re.compile(r"(?i:\b(?:left|right|bilateral|unilateral)(?:[- ]sided)?\b)|" + BOTH_SIDES.pattern + "|" + SIDE_SHORT_FORM.pattern)
# a cause written before the condition ("Chemo-induced", "opioid induced"): ICD-10-CM's "Drug-induced ..." codes, unless
# the cause is none ("alcohol induced" has codes of its own; "noise-induced", "exercise-induced" are no drugs)
CAUSE = re.compile(r"\b([A-Za-z]+)[- ]induced\b", re.IGNORECASE)
NOT_DRUGS = frozenset(
    "alcohol noise exercise radiation stress pregnancy ventilator trauma heat cold sun light diet infection virus surgery"
    " procedure transfusion cough effort contrast".split()
)
# what a mention says of the encounter ("right hip fracture, subsequent encounter") or of what is absent ("T2DM without
# complications"): which code, not which condition
ENCOUNTER_OR_ABSENT = re.compile(r",?\s*\b(?:(?:initial|subsequent)\s+encounter|sequela)\b|\b(?:without|w/o)\b[^,;]*", re.IGNORECASE)
TIED_AT_END = re.compile(r"(?:\s+(?:on|of|in|the))+$", re.IGNORECASE)  # "pain on the right" read without its side


def causes_written(mention: str) -> frozenset[str]:
    """ "drug" and "induced" where a mention names a drug as the cause ("Chemo-induced peripheral neuropathy",
    "Opioid-induced constipation"): ICD-10-CM names such codes "Drug-induced ..." or "Drug induced ..."."""
    found = [m.group(1).lower() for m in CAUSE.finditer(mention)]
    return frozenset({"drug", "induced"}) if any(cause not in NOT_DRUGS for cause in found) else frozenset()


def without_qualifiers(mention: str) -> str | None:
    """The mention with its sides, a drug it names as the cause, its encounter and what it says is absent left out
    ("knee osteoarthritis" for "left knee osteoarthritis", "peripheral neuropathy" for "Chemo-induced peripheral
    neuropathy", "T2DM" for "T2DM without complications"), None when it writes none of them or nothing else: they say
    which code, not which condition, and the linker's probability for the whole wording reads them as words no name
    has."""
    rest = ENCOUNTER_OR_ABSENT.sub(" ", SIDE_WORDS.sub(" ", mention))
    if causes_written(mention):
        rest = CAUSE.sub(" ", rest)
    if rest == mention:
        return None
    rest = TIED_AT_END.sub("", " ".join(rest.split()).strip(" ,;:-"))
    return rest or None


def left_open(name: str) -> frozenset[str]:
    """The alternatives a name leaves open ("acute", "chronic" of "..., unspecified as acute or chronic")."""
    return compared(w for m in LEFT_OPEN.finditer(name.lower()) for w in words(m.group(1)) if w not in NOT_TELLING)


def unasserted(name: str) -> frozenset[str]:
    """The words of a name that say what is absent or left open ("hemorrhage", "perforation" of "... without hemorrhage or
    perforation"; "acute", "chronic" of "..., unspecified as acute or chronic"): no words a mention must say."""
    found = [w for m in UNASSERTED.finditer(name.lower()) for part in m.groups() if part for w in words(part)]
    return compared(w for w in found if w not in NOT_TELLING)


def covered(name: str) -> frozenset[str]:
    """The words of a code's name that say what else it covers ("including", "shoulder" of "Malignant melanoma of upper
    limb, including shoulder"): no words a mention must say."""
    return compared(w for m in COVERED.finditer(name) for w in words(m.group()))


SHORT_FORM = re.compile(r"\b[A-Z]{2,6}s?\b")  # a mention's word in capitals: "SOB", "LUTS", "BPH"


def spelled_out(mention: str, names: Iterable[str]) -> frozenset[str]:
    """The words of ``names`` that a short form in ``mention`` spells by their initials ("SOB": "shortness of breath";
    "LUTS": "lower urinary tract symptoms"), with or without the small words between them, as the rules compare them."""
    shorts = {m.group().rstrip("s").lower() for m in SHORT_FORM.finditer(mention)}
    found: list[str] = []
    for name in names if shorts else ():
        said = words(name)
        for start, first in enumerate(said):
            if first in NOT_TELLING:
                continue
            every, content = "", ""
            for end in range(start, min(start + 8, len(said))):
                every += said[end][0]
                content += "" if said[end] in NOT_TELLING else said[end][0]
                if said[end] not in NOT_TELLING and (every in shorts or content in shorts):
                    found.extend(said[start : end + 1])
    return compared(found)


def left_out(name: frozenset[str], said: frozenset[str]) -> frozenset[str]:
    """The words of a name the words said leave out, a "non-" word aside: ICD-10-CM's index reads a condition named
    without one as the non- kind ("Insufficiency, mitral (nonrheumatic)"; "Hemorrhage, intracranial (nontraumatic)")."""
    return frozenset(word for word in name - said if not word.startswith("non"))


def name_word_sets(name: str, limbs: bool = True) -> list[frozenset[str]]:
    """The words that tell a name apart, for each of its readings (brackets and parentheses read with and without);
    ``limbs``: ICD-10-CM's limbs read as "leg" and "arm" (``limbs_named``)."""
    out: list[frozenset[str]] = []
    for reading in readings(limbs_named(name) if limbs else name):
        told = compared(telling_words(reading)) - VAGUE
        if told not in out:
            out.append(told)
    return out

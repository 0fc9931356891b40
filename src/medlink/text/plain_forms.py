"""What text says for a KB name that spells more: one rule, read by the dictionary finder and by exact linking.

A classification names the plain condition "X NOS" or "X, unspecified" ("Botulism NOS", "Heart disease, unspecified"),
puts nonessential words in parentheses ("Essential (primary) hypertension", "systolic (congestive) heart failure") and
another wording in brackets ("Heart failure with reduced ejection fraction [HFrEF]"), and
a note says "Parkinson's" for "Parkinson's disease". A finder that looked for the names as written would miss the text's
"heart disease", and exact linking would not meet "essential hypertension".
"""

from __future__ import annotations

import re

from medlink.text.normalize import GENERIC_HEADS

PLAIN_FORMS = 3  # what ``plain_form`` makes (1: no parentheses, NOS, ", unspecified"; a capitalised "X's"; 2: no brackets
# either, and not a lone generic head; 3: no last "not specified as ...", and "X due to Y" turned too): saved with what is
# built from them, so a default index of another version is rebuilt
NOT_SPECIFIED_AS = re.compile(r",?\s+not specified as [^,]+$", re.IGNORECASE)  # "Bronchitis, not specified as acute or chronic"
ASIDES = re.compile(r"\s(?:\([^()]*\)|\[[^\[\]]*\])")  # " (congestive)", " [croup]": words in parentheses or brackets after a word
# what an ASCII name needs for ``plain_form`` to change it: an aside's bracket, a possessive, a qualifier's words
ASCII_MARKS, ASCII_WORDS = ("(", "[", "'s"), ("specified", "nos")
POSSESSIVES = ("'s", "’s")  # not "Graves'": normalised, it is the noun "graves"
# "Fracture of hip", "Infection of the urinary tract", "Pneumonia due to COVID-19": one head word, "of" (an optional article)
# or "due to", one to three words
OF_PHRASE = re.compile(r"^([^\W\d][\w'-]*) (?:of (?:the |a |an )?|due to )([\w'-]+(?: [\w'-]+){0,2})$", re.IGNORECASE)
# words that make an "of" phrase a classification's slot rather than a condition text names ("Fracture of other part"),
# and the small words of a phrase text would not put before the noun ("Burn due to ferry-boat on fire")
NOT_INVERTED = frozenset(
    {
        "of",
        "on",
        "to",
        "in",
        "with",
        "without",
        "by",
        "for",
        "from",
        "and",
        "or",
        "at",
        "nos",
        "other",
        "unspecified",
        "specified",
        "multiple",
        "part",
        "parts",
        "site",
        "sites",
        "region",
        "regions",
        "unknown",
        "certain",
        "type",
        "types",
        "stage",
        "degree",
        "grade",
        "level",
        "history",
    }
)


def plain_form(name: str) -> str | None:
    """``name`` without words in parentheses or brackets, without the qualifiers a classification adds to the plain condition's name
    (a trailing "NOS", or ", unspecified" after a comma: "Botulism NOS" -> "Botulism", "CLL, unspecified" -> "CLL"; "Type
    Unspecified" stays; a last ", not specified as acute or chronic"), and an eponym's possessive without its generic
    head ("Parkinson's disease" -> "Parkinson's"; not "Graves' disease", whose "Graves'" reads as the noun "graves"); None
    when none of these applies, or when all that would stay is a generic head ("Disorder, unspecified" names no disorder)."""
    if name.isascii() and not any(mark in name for mark in ASCII_MARKS) and not any(word in name.lower() for word in ASCII_WORDS):
        return None  # nothing below can apply (most names): none read
    words = NOT_SPECIFIED_AS.sub("", ASIDES.sub("", name)).split()
    while len(words) > 1 and (words[-1].upper() == "NOS" or (words[-1].lower() == "unspecified" and words[-2].endswith(","))):
        words.pop()
        words[-1] = words[-1].rstrip(",")
    if len(words) > 1 and words[-1].lower() in GENERIC_HEADS and words[-2].endswith(POSSESSIVES):
        words.pop()
    plain = " ".join(words)
    if plain == " ".join(name.split()) or (len(words) == 1 and words[0].lower().rstrip("s") in GENERIC_HEADS):
        return None
    return plain


def inverted_form(name: str) -> str | None:
    """A name "X of Y" or "X due to Y" as text puts it before the noun, "Y X" ("Fracture of hip" -> "hip fracture", "Infection
    of the urinary tract" -> "urinary tract infection", "Pneumonia due to COVID-19" -> "COVID-19 pneumonia"); None unless
    the name is one head word, "of" or "due to", and one to three words that are not a classification's slot ("Fracture
    of other part", "Fracture of neck of femur" stay as written)."""
    match = OF_PHRASE.match(" ".join(name.split()))
    if not match:
        return None
    head, modifier = match.groups()
    if head.lower() in NOT_INVERTED or any(word.lower() in NOT_INVERTED for word in modifier.split()):
        return None
    return f"{modifier} {head.lower() if head[1:].islower() else head}"


def name_forms(name: str) -> tuple[list[str], list[str]]:
    """Every other way text says ``name`` (its plain form, then the name and its plain form inverted, each once), and
    which of them are inverted: "Fracture of hip NOS" -> (["Fracture of hip", "hip fracture"], ["hip fracture"])."""
    plain = plain_form(name)
    inverted = list(dict.fromkeys(form for form in (inverted_form(name), plain and inverted_form(plain)) if form and form != plain))
    return ([plain] if plain else []) + inverted, inverted


def text_forms(name: str) -> list[str]:
    """Every other way text says ``name`` (``name_forms``)."""
    return name_forms(name)[0]

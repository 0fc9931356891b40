"""Section headers are not mentions: "ONCOLOGY:", "Oncology:", "ASSESSMENT:" name a part of a note, not a condition.

Why a rule of its own: a specialty's name is a KB name too ("Oncology" is an ICD-10-CM synonym of a neoplasm code),
and the header at a note's line start was linked as a condition at p = 1.000. A span is a header when it is all that
stands between a line's start (or a bullet) and a colon, and either the colon ends the line or its words are a
section's name (``SECTION_WORDS``). A line of a section's name alone, no colon ("Oncology", "Infectious disease"), is
one too. A header stands at most 12 characters (a bullet, an indent) from its line's start. "Hypertension: controlled
on lisinopril", "CHF: stable" and a problem list's "Hypertension" line stay mentions.
"""

from __future__ import annotations

import re

SECTION_WORDS = frozenset(
    {
        "assessment",
        "plan",
        "impression",
        "findings",
        "history",
        "diagnosis",
        "diagnoses",
        "problem",
        "problems",
        "list",
        "oncology",
        "cardiology",
        "dermatology",
        "neurology",
        "psychiatry",
        "orthopedics",
        "orthopaedics",
        "ortho",
        "obstetrics",
        "gynecology",
        "pediatrics",
        "paediatrics",
        "radiology",
        "infectious",
        "disease",
        "diseases",
        "consult",
        "hpi",
        "ros",
        "exam",
        "examination",
        "medications",
        "allergies",
        "family",
        "social",
        "past",
        "medical",
        "surgical",
        "discharge",
        "admission",
        "chief",
        "complaint",
        "subjective",
        "objective",
        "labs",
        "imaging",
        "procedures",
    }
)
_LINE_START = re.compile(r"[ \t]*(?:[-*\u2022]|\d+[.)])?[ \t]*")  # what may stand before a header on its line: a bullet
_BEFORE_AT_MOST = 12  # characters of it read (a longer run is no header's)
_COLON_AFTER = re.compile(r"[ \t]*:")
_WORD = re.compile(r"[A-Za-z]+")


def is_section_header(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]`` a section header (the whole of a line's start before a colon, read as a header, or a
    line of section words alone)?"""
    line_start = text.rfind("\n", max(0, start - _BEFORE_AT_MOST - 1), start) + 1
    if start - line_start > _BEFORE_AT_MOST:
        return False
    if not _LINE_START.fullmatch(text, line_start, start):
        return False
    line_end = text.find("\n", end)
    rest = text[end : len(text) if line_end < 0 else line_end]
    colon = _COLON_AFTER.match(rest)
    if colon is None:  # the whole line, a section's words only
        return not rest.strip(" \t\r") and _section_words(text[start:end])
    return not rest[colon.end() :].strip(" \t\r") or _section_words(text[start:end])


def _section_words(span: str) -> bool:
    """Are all of ``span``'s words (one at least) a section's?"""
    words = _WORD.findall(span)
    return bool(words) and all(word.lower() in SECTION_WORDS for word in words)

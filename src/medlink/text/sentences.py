"""Sentence spans in biomedical and clinical text: a small rule-based splitter, linear in the text's length.

Why rules and not a model: the tagger only needs sentences as units of context, so a missed boundary
costs little (a long sentence is read in windows) while a false one can cut a mention in two. The
rules therefore split only where a sentence clearly ends: ``.``, ``!`` or ``?`` (and any closing
quotes or brackets) followed by white space and a capital letter, a digit or an opening bracket
or quote, unless the word before the full stop is an abbreviation ("e.g.", "Dr.", "Fig.", "et al."),
an initial ("J. Smith") or a dotted acronym ("U.S."), nor between a number and one ("EC 1. 1. 1. 49"); and at blank lines and list items, as clinical
notes use them. Decimal numbers ("2.5 mg") never split: no white space follows their point.
Spans exclude the white space around sentences; every other character lies in exactly one span.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from medlink.core import Document

# words (compared in lower case, without their final dot) that a full stop follows without ending the sentence
ABBREVIATIONS = frozenset(
    """
    al approx ca cf co corp dept dr drs e.g eg esp est etc ex fig figs i.e ie inc jr ltd mr mrs ms mt no nos nr p pp
    prof ref refs resp sr st subsp spp sp var vol vs viz wt ed eds eq eqs ch sec suppl dis med univ assoc
    jan feb mar apr jun jul aug sep sept oct nov dec
""".split()
)

# of those, words a note also ends a sentence with ("breast ca.", "gained wt."): an abbreviation only before a number ("ca. 1990")
BEFORE_NUMBERS = frozenset({"ca", "wt"})
_NUMBER_NEXT = re.compile(r"\.\s+\d")  # the full stop, then a number
_END = re.compile(r"[.!?]+[\"'”’»)\]}]*(?=\s)")  # a terminator, its closing quotes or brackets, then white space
# blank lines; a line that starts a list item ("- ", "2. ", "b) ") or a section heading ("HISTORY:", "Plan:")
_BREAK = re.compile(r"\n[ \t]*\n\s*|\n(?=[ \t]*(?:[-*•▪◦·]\s|\d{1,3}[.)]\s|[A-Za-z][.)]\s|[A-Z][A-Za-z /&-]{0,40}:))")
_GAP = re.compile(r"\s+[\"'“‘«(\[{]?")  # the white space after a terminator, and an opening quote or bracket
_INITIAL = re.compile(r"[A-Z]")
_DOTTED = re.compile(r"(?:[A-Za-z]{1,2}\.)+[A-Za-z]{1,2}")  # e.g, i.e, U.S, Ph.D, y.o (the final dot is the terminator)


def _is_abbreviation(text: str, end: int) -> bool:
    """Does the full stop at ``end`` close an abbreviation, an initial or a dotted acronym?"""
    start = end
    while start > 0 and not text[start - 1].isspace() and end - start < 40:
        start -= 1
    word = text[start:end].lstrip("\"'“‘«([{")
    if not word:
        return False
    if _INITIAL.fullmatch(word) or _DOTTED.fullmatch(word):
        return True
    if word.lower() in BEFORE_NUMBERS:
        return bool(_NUMBER_NEXT.match(text, end, end + 8))
    return word.lower() in ABBREVIATIONS


def _boundaries(text: str) -> list[int]:
    """Offsets at which a new sentence starts (after the white space that separates it from the last one)."""
    cuts: set[int] = set()
    for match in _BREAK.finditer(text):
        cuts.add(match.end())
    for match in _END.finditer(text):
        terminator = match.group()
        gap = _GAP.match(text, match.end())
        if gap is None or gap.end() >= len(text):
            continue
        first = text[gap.end()]
        if not (first.isupper() or first.isdigit()):  # "e.g. patients", "p53 ... in mice. p53": lower case never starts one
            continue
        if terminator[0] == "." and len(terminator.rstrip("\"'”’»)]}")) == 1:
            if _is_abbreviation(text, match.start()):
                continue
            if first.isdigit() and match.start() > 0 and text[match.start() - 1].isdigit():  # "EC 1. 1. 1. 49", "Table 2. 3 patients"
                continue
        cuts.add(match.end())  # the white space after it is trimmed from both sentences
    return sorted(cuts)


def sentence_breaks(text: str) -> list[int]:
    """Offsets where one sentence ends and the next begins, in order (a terminator's end, or past a blank line or a line
    break before a list item or heading; white space may follow): where a long document may be cut without cutting a
    sentence (``medlink.text.windows``)."""
    return _boundaries(text)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) character spans of the sentences of ``text``, in order, without surrounding white space."""
    spans: list[tuple[int, int]] = []
    starts = [0, *_boundaries(text), len(text)]
    for start, end in zip(starts, starts[1:]):
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append((start, end))
    return spans


def sentence_spans(document: Document) -> list[tuple[int, int]]:
    """Sentences of every passage, as offsets into ``document.text`` (a passage boundary always ends a sentence)."""
    return [
        (p.offset + start, p.offset + end)
        for p in sorted(document.passages, key=lambda p: p.offset)
        for start, end in split_sentences(p.text)
    ]

"""Abbreviation definitions found in a document, after Schwartz & Hearst (PSB 2003).

A document defines "myocardial infarction (MI)" once and then writes "MI"; a linker that sees only "MI" is
guessing, so the annotator links every later "MI" through its long form. :func:`find_abbreviations` finds the
definitions, :func:`abbreviation_occurrences` the later uses.

The algorithm, as the paper describes it (our own code, written from the description):

* Candidates sit around a parenthesis: ``long form (SF)``, or ``SF (long form)`` when the parenthesised text
  cannot be a short form (more than two words or more than 10 characters) or is longer than the text before it
  (the authors' rule; it catches "TNF (tumor necrosis factor)" at the start of a sentence).
* A short form has 2-10 characters, at most two words, at least one letter, and starts with a letter or digit;
  in the reversed pattern it must also contain a capital (as the authors' code asks), or every "cells (n = 12)"
  would be tried. Inside the parentheses only the text before the first ``;`` or ``,`` (or a nested parenthesis) counts:
  "(MI; ref 3)", "(HSF (ref))".
* The long form is searched in the last min(|A| + 5, |A| * 2) words before the parenthesis, |A| being the short
  form's length in characters: every letter and digit of the short form, right to left, must be found in order
  (case-insensitively), the first one at the start of a word; the long form starts at the word holding that
  match. Matching right to left from the parenthesis gives the shortest such long form.

Decisions where the paper leaves room (its input was one sentence per line; ours is a whole document):

* The long form never reaches back over another parenthesis, a sentence end (``.``, ``!`` or ``?`` then space
  and a capital letter) or a blank line, so a definition cannot borrow words from the previous sentence.
* The opening parenthesis must follow whitespace (as in the authors' code): "Ca(2+)" or "IL-2(+)" are not
  definitions. Parentheses are matched by nesting; an unclosed one is skipped. Only round brackets count.
* A long form is refused if it is shorter than its short form or contains it as a whole token ("the MI (MI)",
  "MI-like (MI)"); trailing ``,``, ``;`` and ``:`` are not part of it.
* A short form of 2-5 capitals whose letters are the initials of the words just before the parenthesis in another
  order ("Myotonic dystrophy (DM)", from Dystrophia Myotonica) is taken with those words as its long form: the
  paper's in-order match cannot find it, and such names are common in medicine.
* Parenthesised text over 400 characters (before any ``;``/``,``) is not a candidate: it bounds the work per
  parenthesis, so a document costs time linear in its length.
* A short form defined twice keeps its first definition for its occurrences (a document that redefines "MI"
  is rare and more often wrong than meaning two things); :func:`find_abbreviations` still reports both.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from medlink.text.normalize import SIGN_CHARACTERS

__all__ = ["Abbreviation", "abbreviation_occurrences", "find_abbreviations"]

MIN_SHORT_CHARS = 2
MAX_SHORT_CHARS = 10
MAX_SHORT_WORDS = 2
MAX_INSIDE_CHARS = 400  # parenthesised text longer than this is neither a short form nor a long form candidate

_PARENTHESES = re.compile(r"[()]")
_WORDS = re.compile(r"\S+")
_CUT = re.compile(r"[;,](?=[\s)])|\s+\(")  # "(MI; ref 3)", "(MI, 1998)", "(HSF (ref))"; not "(2,3-DPG)"
_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z])|\n\s*\n")
_TOKEN = re.compile(r"\w+")
_TRAILING = " \t\n\r\f\v,;:"


@dataclass(frozen=True, slots=True)
class Abbreviation:
    """One definition: where its short form and long form are, so both can be annotated or sliced back."""

    short: str  # "MI"
    long: str  # "myocardial infarction"
    short_start: int  # character offsets into the text given
    short_end: int
    long_start: int
    long_end: int

    @property
    def start(self) -> int:
        """Where the definition begins (the long form, or the short form in "SF (long form)")."""
        return min(self.short_start, self.long_start)

    @property
    def end(self) -> int:
        """Where the definition ends: uses of the short form count from here."""
        return max(self.short_end, self.long_end)


def find_abbreviations(text: str) -> list[Abbreviation]:
    """Definitions in text order."""
    found = [a for opening, closing, before in _parentheses(text) if (a := _definition(text, opening, closing, before))]
    found.sort(key=lambda a: (a.start, a.short_start))
    return found


def abbreviation_occurrences(text: str, abbreviations: Sequence[Abbreviation], offset: int = 0) -> list[tuple[int, int, Abbreviation]]:
    """Every later occurrence of each short form as a whole token (case-sensitive; after its definition; not the
    definition's own short form), in text order, as (start, end, abbreviation). ``text`` may be a window of a document
    that starts at ``offset`` in it: the abbreviations' offsets are the document's, the occurrences' the window's.

    A short form defined more than once keeps its first definition (in text order). Where two short forms could
    start at the same place ("IL" and "IL-2"), the longer wins; occurrences never overlap. One pass over the
    text's word tokens, so the cost does not grow with the number of short forms.
    """
    first: dict[str, Abbreviation] = {}
    for abbreviation in sorted(abbreviations, key=lambda a: (a.start, a.short_start)):
        first.setdefault(abbreviation.short, abbreviation)
    own = {(a.short_start, a.short_end) for a in abbreviations}
    # a whole-token short form begins with a word token that is exactly its own first run of word characters
    by_token: dict[str, list[str]] = {}
    for short in first:
        if (head := _TOKEN.match(short)) is not None:
            by_token.setdefault(head.group(), []).append(short)
    for shorts in by_token.values():
        shorts.sort(key=len, reverse=True)
    found: list[tuple[int, int, Abbreviation]] = []
    resume = 0
    for token in _TOKEN.finditer(text):
        start = token.start()
        if start < resume or token.group() not in by_token:
            continue
        for short in by_token[token.group()]:
            end = start + len(short)
            if not text.startswith(short, start) or (end < len(text) and _is_word(text[end])):
                continue
            # the longest short form written here is what is written: if it is no use (a definition's own short
            # form, or before its definition), a shorter one inside it ("IL" in "IL-2") is none either
            abbreviation = first[short]
            if start + offset >= abbreviation.end and (start + offset, end + offset) not in own:
                found.append((start, end, abbreviation))
            resume = end
            break
    return found


def _is_word(char: str) -> bool:
    """The same characters as the regex ``\\w``: a short form next to one is part of a longer token."""
    return char.isalnum() or char == "_"


def _parentheses(text: str) -> list[tuple[int, int, int]]:
    """(opening, closing, the parenthesis before the opening or -1) for each matched pair whose opening follows
    whitespace, in order of the opening. Nesting is respected; unmatched parentheses are skipped."""
    stack: list[tuple[int, int] | None] = []
    pairs: list[tuple[int, int, int]] = []
    previous = -1
    for match in _PARENTHESES.finditer(text):
        at = match.start()
        if text[at] == "(":
            stack.append((at, previous) if at > 0 and text[at - 1].isspace() else None)
        elif stack and (opened := stack.pop()) is not None:
            pairs.append((opened[0], at, opened[1]))
        previous = at
    pairs.sort()
    return pairs


def _definition(text: str, opening: int, closing: int, before: int) -> Abbreviation | None:
    """The definition around one pair of parentheses, or None."""
    inside = _inside(text, opening, closing)
    if inside is None:
        return None
    outside = _outside(text, before + 1, opening)
    if outside is None:
        return None
    inside_text = text[inside[0] : inside[1]]
    could_be_short = len(inside_text) <= MAX_SHORT_CHARS and len(inside_text.split()) <= MAX_SHORT_WORDS
    if could_be_short and len(inside_text) <= outside[1] - outside[0]:
        return _match(text, inside, outside, need_capital=False) or _reordered(text, inside, outside)  # long form (SF)
    word = outside[1]  # SF (long form): the short form is the word just before the parenthesis
    while word > outside[0] and not text[word - 1].isspace():
        word -= 1
    return _match(text, (word, outside[1]), inside, need_capital=True)


def _inside(text: str, opening: int, closing: int) -> tuple[int, int] | None:
    """The parenthesised text up to its first ";" or "," (stripped), or None if empty or too long."""
    limit = min(closing + 1, opening + 1 + MAX_INSIDE_CHARS)
    cut = _CUT.search(text, opening + 1, limit)
    end = cut.start() if cut else closing
    if end - opening - 1 > MAX_INSIDE_CHARS:
        return None
    return _strip(text, opening + 1, end, " \t\n\r\f\v")


def _outside(text: str, start: int, opening: int) -> tuple[int, int] | None:
    """The text before the parenthesis, from the last sentence end, parenthesis or blank line (stripped)."""
    for end in _SENTENCE_END.finditer(text, start, opening):
        start = end.end()
    return _strip(text, start, opening, " \t\n\r\f\v")


def _strip(text: str, start: int, end: int, chars: str) -> tuple[int, int] | None:
    """(start, end) narrowed past leading whitespace and trailing ``chars``; None if nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1] in chars:
        end -= 1
    return (start, end) if start < end else None


def _valid_short(short: str, need_capital: bool) -> bool:
    """The paper's short form: 2-10 characters, at most two words, a letter, a letter or digit first."""
    return (
        MIN_SHORT_CHARS <= len(short) <= MAX_SHORT_CHARS
        and len(short.split()) <= MAX_SHORT_WORDS
        and short[0].isalnum()
        and any(c.isalpha() for c in short)
        and (not need_capital or any(c.isupper() for c in short))
    )


def _match(text: str, short_span: tuple[int, int], window: tuple[int, int], need_capital: bool) -> Abbreviation | None:
    """The long form for the short form at short_span, found in window, or None."""
    short = text[short_span[0] : short_span[1]]
    if not _valid_short(short, need_capital):
        return None
    narrowed = _strip(text, window[0], window[1], _TRAILING)
    if narrowed is None:
        return None
    start, end = narrowed
    most = min(len(short) + 5, len(short) * 2)
    starts = deque((word.start() for word in _WORDS.finditer(text, start, end)), maxlen=most)
    first = _best_long_form(text, short, starts[0], end)
    if first is None:
        return None
    while first > starts[0] and not text[first - 1].isspace():  # back to the start of the word holding the match
        first -= 1
    long = text[first:end]
    bare = short.rstrip(SIGN_CHARACTERS)  # "ER-" after "ER+/PR+" restates a finding, it does not abbreviate one
    if len(long) < len(short) or re.search(rf"(?<!\w){re.escape(bare)}(?!\w)", long):
        return None
    return Abbreviation(short, long, short_span[0], short_span[1], first, end)


def _reordered(text: str, short_span: tuple[int, int], window: tuple[int, int]) -> Abbreviation | None:
    """ "Myotonic dystrophy (DM)": a short form in capitals whose letters are the initials of the words just before
    the parenthesis in another order (it abbreviates a Latin or reordered name: Dystrophia Myotonica). The paper's
    right-to-left match needs the letters in order, so it finds none; the words right before, one per letter, are
    the long form when their initials are the short form's letters."""
    short = text[short_span[0] : short_span[1]]
    if not (MIN_SHORT_CHARS <= len(short) <= 5 and short.isalpha() and short.isupper()):
        return None
    narrowed = _strip(text, window[0], window[1], _TRAILING)
    if narrowed is None:
        return None
    words = list(_WORDS.finditer(text, *narrowed))[-len(short) :]
    if len(words) < len(short) or not all(w.group()[0].isalpha() for w in words):
        return None
    if sorted(w.group()[0].lower() for w in words) != sorted(short.lower()):
        return None
    return Abbreviation(short, text[words[0].start() : narrowed[1]], short_span[0], short_span[1], words[0].start(), narrowed[1])


def _best_long_form(text: str, short: str, start: int, end: int) -> int | None:
    """Where the shortest long form in text[start:end] begins its match, matching short's letters and digits right
    to left, the first one at a word start (findBestLongForm in the paper); None if some character is missing."""
    at = end - 1
    for index in range(len(short) - 1, -1, -1):
        if not short[index].isalnum():
            continue
        wanted = short[index].lower()
        while at >= start and (text[at].lower() != wanted or (index == 0 and at > start and text[at - 1].isalnum())):
            at -= 1
        if at < start:
            return None
        at -= 1
    return at + 1

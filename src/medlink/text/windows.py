"""Where a long document is cut into windows that the annotator reads one at a time.

Why: finding, linking and assertion build structures per word and per character (tokens, cue scans, candidate lists);
read a window at a time, they take memory in proportion to the window, not the document. A cut must change nothing a
step sees, so it goes where every step already stops: at a blank line first (a paragraph, a note's section, an
abbreviation's long form and a sentence all end there), else at a sentence end that the sentence splitter and the
abbreviation finder both see (a full stop, white space, a capital), else at white space; never inside parentheses, and
never where ``can_cut`` says no (the annotator's test: no span a finder finds across the cut, no section running over it).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator

from medlink.core import Document, Passage
from medlink.text.sentences import sentence_breaks

WINDOW_CHARS = 1 << 18  # 262,144 characters a window (at most)
TRIES = 24  # candidate cuts tested per kind before the next kind is tried
_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"[.!?]\s+$")  # what the abbreviation finder stops at before a capital


def window_bounds(text: str, size: int = WINDOW_CHARS, can_cut: Callable[[int], bool] | None = None) -> list[tuple[int, int]]:
    """(start, end) of consecutive windows covering ``text``, each at most ``size`` characters unless no allowed cut
    exists in its second half (then the cut falls at ``size`` regardless)."""
    if size < 1:
        raise ValueError(f"a window holds at least one character, not {size}")
    bounds, start = [], 0
    while len(text) - start > size:
        end = _cut(text, start, size, can_cut or (lambda at: True))
        bounds.append((start, end))
        start = end
    bounds.append((start, len(text)))
    return bounds


def _cut(text: str, start: int, size: int, can_cut: Callable[[int], bool]) -> int:
    """The best allowed cut in the second half of the window from ``start``: the last one of the most preferred kind;
    failing any, the first allowed one in the next ``size`` characters (a longer window); failing that, ``size`` on."""
    low, high = start + max(1, size // 2), start + size
    beyond = min(len(text) - 1, high + size)
    depth = _parenthesis_depth(text, start, beyond)
    for first, last, latest in ((low, high, True), (high, beyond, False)):
        for kind in (_blank_lines, _sentence_ends, _spaces):
            found = kind(text, first, last)
            for tried, at in enumerate(found if latest else reversed(list(found))):
                if tried == TRIES:
                    break
                if depth(at) == 0 and can_cut(at):
                    return at
    return high


def _blank_lines(text: str, low: int, high: int) -> Iterator[int]:
    """Where a paragraph starts after a blank line, last first."""
    return reversed([m.end() for m in _BLANK_LINE.finditer(text, low - 1, high) if low <= m.end() <= high])


def _sentence_ends(text: str, low: int, high: int) -> Iterator[int]:
    """Where a sentence starts that both the sentence splitter and the abbreviation finder start there, last first."""
    margin = max(0, low - 64)  # the splitter reads a few characters back (an abbreviation before a full stop)
    starts = [_SPACE.match(text, at).end() if text[at].isspace() else at for at in (margin + b for b in sentence_breaks(text[margin:high]))]
    return (
        at for at in reversed(starts) if low <= at < high and "A" <= text[at] <= "Z" and _SENTENCE_END.search(text, max(0, at - 40), at)
    )


def _spaces(text: str, low: int, high: int) -> Iterator[int]:
    """Where a word starts after white space, last first."""
    return reversed([m.end() for m in _SPACE.finditer(text, low - 1, high) if low <= m.end() < high])


def _parenthesis_depth(text: str, start: int, high: int) -> Callable[[int], int]:
    """How many parentheses opened since ``start`` are still open at an offset (a closing one with none open is ignored,
    as the abbreviation finder pairs them)."""
    offsets, depths, depth = [], [], 0
    for match in re.finditer(r"[()]", text[start:high]):
        depth = depth + 1 if match.group() == "(" else max(0, depth - 1)
        offsets.append(start + match.start())
        depths.append(depth)

    def at(offset: int) -> int:
        before = bisect_right(offsets, offset - 1)
        return depths[before - 1] if before else 0

    return at


def window_document(document: Document, start: int, end: int) -> Document:
    """The part of ``document`` from ``start`` to ``end`` as a document of its own (offsets from ``start``; passages
    clipped, their kinds and infons kept), without annotations."""
    passages = [
        Passage(max(p.offset, start) - start, p.text[max(0, start - p.offset) : end - p.offset], p.kind, p.infons)
        for p in sorted(document.passages, key=lambda p: p.offset)
        if p.offset < end and p.end > start
    ]
    return Document(document.doc_id, [p for p in passages if p.text] or [Passage(0, "")], infons=document.infons)

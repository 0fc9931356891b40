"""Words of running text with their character offsets, normalised exactly as KB names are.

A KB name's normalised key is its words joined by single spaces; splitting a text where the
normaliser puts spaces (whitespace and its punctuation) and normalising each piece gives the
same words, so a run of text words equals a name exactly when its normalised words do, and the
run's characters are known.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from medlink.text.normalize import SIGN_WORDS, Normalizer, signs_in


@dataclass(frozen=True, slots=True)
class Token:
    """A normalised word and the characters of the text it came from."""

    start: int
    end: int
    norm: str


def respelt(text: str, tokens: Sequence[Token], spellings: Mapping[int, str] | None = None, cuts: Collection[int] = ()) -> str:
    """The text from the first of ``tokens`` to the last, each token at a position ``spellings`` holds written as given
    ("metastases" as "metastasis", "ca" as "cancer"), and a hyphen where a word was cut in two (``cuts``: "preeclampsia"
    read as "pre-eclampsia"): the reading a linker sees for a span found through such words."""
    spellings = spellings or {}
    pieces, at = [], tokens[0].start
    for position, token in enumerate(tokens):
        pieces.append(text[at : token.start] or ("-" if position and token.start in cuts else ""))
        pieces.append(spellings.get(position, text[token.start : token.end]))
        at = token.end
    return "".join(pieces)


@lru_cache(maxsize=8)
def _word_pattern(separators: str) -> re.Pattern:
    return re.compile(r"[^\s" + re.escape(separators) + r"]+")


def tokenize(text: str, normalize: Normalizer, offset: int = 0) -> list[Token]:
    """The words of ``text`` in order, their offsets moved by ``offset`` (a passage's place in its document); a piece
    that normalises to several words (NFKC) gives them the piece's span, and a sign the normaliser reads as a word
    ("HER2-": "her2 negative") is that word, spanning the sign."""
    tokens = []
    signs = sign_words(text, normalize)
    for match in _word_pattern(normalize.separators).finditer(text):
        norm = normalize.word(match.group())
        start, end = match.span()
        if " " not in norm:
            if norm:
                tokens.append(Token(start + offset, end + offset, norm))
        else:
            tokens.extend(Token(start + offset, end + offset, word) for word in norm.split())
        if end in signs:
            tokens.append(Token(end + offset, end + offset + 1, signs[end]))
    return tokens


def sign_words(text: str, normalize: Normalizer) -> dict[int, str]:
    """Where ``text`` has a sign closing a word that ``normalize`` reads as a word, and that word (by offset)."""
    if not normalize.signs_as_words:
        return {}
    return {match.start(2): SIGN_WORDS[match.group(2)] for match in signs_in(text, normalize.keep)}


def passage_tokens(document, normalize: Normalizer) -> list[list[Token]]:
    """The words of each passage of ``document`` (offsets into ``document.text``): where passages touch ("Chest pain"
    at 0, "MI today" at 10), the boundary still separates two words."""
    out = []
    for passage in sorted(document.passages, key=lambda p: p.offset):
        out.append(tokenize(passage.text, normalize, passage.offset))
    return out

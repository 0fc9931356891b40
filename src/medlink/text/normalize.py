"""One normalisation for KB names and mentions, so the same string maps to the same key on both sides.

The KB records the normaliser's configuration (``Normalizer.signature``) so that an index or a
lookup can check it normalises mentions exactly as the names were normalised.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from functools import cached_property

# the heads a name carries that people leave unsaid ("Crohn's" for "Crohn's disease"): the completion stage, the
# dictionary finder's plain forms and the shortened pseudo-mentions read the same three
GENERIC_HEADS = ("disease", "disorder", "syndrome")
# the words of a side, which a mention adds to a name without changing its concept ("right hip fracture"): the words
# stage, the heads' modifiers and the coding rules read the same three
SIDES = frozenset({"left", "right", "bilateral"})
# a "+" or "-" after a word ("HR+", "HER2-"): punctuation to the normaliser, which drops it, though it is the name's meaning
SIGNED = re.compile(r"[A-Za-z0-9][+-](?=\s|$)")
_PLURAL_SHORT_FORM = re.compile(r"\b([A-Z][A-Z0-9]*[A-Z])s\b")  # "UTIs", "DVTs", "MIs"; not "AIDS", "Is", "LCR22s"
_CAPITAL_S = re.compile(r"[A-Z]s\b")
# a sign closing a marker's name ("HER2-", "CD4+CD25+", "Rh-", "(ER-)", "HLA-B27+"): read as a word (``is_sign`` says which
# words are markers: not "2+ edema", "non-\nsmall", "X-linked", a hyphen at a line end ("HER2-\npositive"), nor the suspended
# hyphen of "B- or T-cells")
_MINUS = "-\u2010\u2011\u2013\u2212"  # hyphen, Unicode hyphens, en dash, minus sign
SIGN_AFTER_WORD = re.compile(
    rf"(?<!\w)(\w+)(\+|[{_MINUS}](?!\s+(?:and|or|to|&)\s+\w+[{_MINUS}]\w|[ \t]*\r?\n\s*[^\W\d_]))"
    rf"(?=$|[\s,;:./!?\"'\]}}>]|\)(?!\w)|(?<=\+)[A-Z])"
)
SIGN_WORDS = {"+": "positive", **{minus: "negative" for minus in _MINUS}}
SIGN_CHARACTERS = "".join(SIGN_WORDS)  # every character read as a sign
# two-letter names a sign follows in clinical text (ions, the Rhesus factor); longer words must be capitals or hold a digit
SIGNED_SYMBOLS = frozenset({"Rh", "Na", "Cl", "Ca", "Mg", "Fe", "Zn", "Cu", "Li"})


def may_have_signs(text: str) -> bool:
    """The cheap test before ``SIGN_AFTER_WORD``: most text has no sign character at all."""
    return "+" in text or "-" in text or (not text.isascii() and any(minus in text for minus in _MINUS[1:]))


def signs_in(text: str, keep: str = "") -> Iterator[re.Match]:
    """Each sign closing a marker's name in ``text`` (group 2; the name is group 1), a character in ``keep`` aside."""
    if may_have_signs(text):
        yield from (match for match in SIGN_AFTER_WORD.finditer(text) if is_sign(match, keep))


def read_signs(text: str, keep: str = "") -> str:
    """``text`` with each sign closing a marker's name written as its word ("HER2-" -> "HER2 negative "), the rest as it was."""
    if not may_have_signs(text):  # most text: no generator, no regular expression
        return text
    pieces, last = [], 0
    for match in signs_in(text, keep):
        pieces += [text[last : match.start(2)], f" {SIGN_WORDS[match.group(2)]} "]  # "CD4+CD25+": a space after too
        last = match.end(2)
    return "".join(pieces) + text[last:] if pieces else text


def is_sign(match: re.Match, keep: str = "") -> bool:
    """Whether a ``SIGN_AFTER_WORD`` match is a sign read as a word: after a marker's name as written ("HER2", "ER",
    "her2", "Rh": capitals, a digit, or an ion's symbol; not "non-" or "Anti-" at a line end), and not a kept character."""
    word, sign = match.groups()
    return sign not in keep and (word.isupper() or word in SIGNED_SYMBOLS or (any(c.isdigit() for c in word) and not word.isdigit()))


def _punctuation_table(keep: str) -> dict[int, str]:
    """Map every ASCII punctuation character (and the common Unicode dashes) to a space."""
    chars = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" + "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2018\u2019\u201c\u201d"
    return {ord(c): " " for c in chars if c not in keep}


@dataclass(frozen=True)
class Normalizer:
    """Configurable string normaliser.

    Defaults: Unicode NFKC, accents folded ("Behçet" meets "Behcet": terminologies spell eponyms both ways), a
    capitals short form's plural read as the short form ("UTIs" is "UTI"), case folding, punctuation and hyphens to
    spaces, whitespace collapsed, and a sign closing a word read as the word it stands for ("HER2-" is "her2 negative",
    as "HER2 negative" is, and not "her2", which "HER2+" would share: a sign is the name's meaning). ``keep`` lists
    punctuation characters to preserve (e.g. ``"+"`` for "HER2+").
    """

    nfkc: bool = True
    casefold: bool = True
    strip_punctuation: bool = True
    keep: str = ""
    fold_accents: bool = True
    singular_short_forms: bool = True  # "UTIs" -> "UTI": a capitals short form's plural is the short form
    signs_as_words: bool = True  # "HER2-" -> "her2 negative", "CD4+" -> "cd4 positive" (a "+" in ``keep`` stays a "+")

    @cached_property
    def _table(self) -> dict[int, str]:
        return _punctuation_table(self.keep) if self.strip_punctuation else {}

    @cached_property
    def _ascii_table(self) -> bytes:
        """``_table`` for ASCII text, as ``bytes.translate`` reads it (several times faster than ``str.translate``)."""
        return bytes(ord(self._table.get(code, chr(code))) for code in range(128)) + bytes(range(128, 256))

    def __call__(self, text: str) -> str:
        if not text.isascii():
            if self.nfkc:
                text = unicodedata.normalize("NFKC", text)
            if self.fold_accents:
                text = fold_accents(text)
        if self.singular_short_forms and _CAPITAL_S.search(text):  # the cheap test first: most names have no such word
            text = _PLURAL_SHORT_FORM.sub(r"\1", text)
        if self.signs_as_words:
            text = read_signs(text, self.keep)
        if self.casefold:
            text = text.casefold()
        if self._table:
            text = text.encode().translate(self._ascii_table).decode() if text.isascii() else text.translate(self._table)
        return " ".join(text.split())  # whitespace runs to one space, none at the ends

    def in_capitals(self, written: str) -> bool:
        """Whether ``written`` has no lower-case letter, as a short form is written ("MI", not "mi"), the plural's "s"
        aside where this normaliser reads "MIs" as "MI"."""
        if self.singular_short_forms:
            written = _PLURAL_SHORT_FORM.sub(r"\1", written)
        return not any(c.islower() for c in written)

    def word(self, piece: str) -> str:
        """``self(piece)`` for one word of running text, remembered (a corpus repeats its words endlessly)."""
        words = self._words
        found = words.get(piece)
        if found is None:
            if len(words) >= WORDS_KEPT:
                words.clear()
            found = words[piece] = self(piece)
        return found

    @cached_property
    def _words(self) -> dict[str, str]:
        return {}

    @property
    def separators(self) -> str:
        """The characters this normaliser turns into spaces: they split words (the dictionary finder tokenises by them)."""
        return "".join(chr(code) for code in self._table)

    @property
    def signature(self) -> str:
        """A stable description of this configuration, stored beside normalised keys."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_signature(cls, signature: str) -> Normalizer:
        """The normaliser a signature describes; a switch the signature does not name is off."""
        return cls(**{"fold_accents": False, "singular_short_forms": False, "signs_as_words": False, **json.loads(signature)})


# Latin letters with no decomposition into a base letter and a mark
_UNDECOMPOSABLE = str.maketrans(
    {"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ı": "i"}
)


def fold_accents(text: str) -> str:
    """Latin letters without their diacritics ("Sjögren" -> "Sjogren", "Følling" -> "Folling"); marks over other
    scripts' letters (Cyrillic й, kana's voicing marks) are part of the letter and kept."""
    kept: list[str] = []
    for char in unicodedata.normalize("NFD", text):
        if "\u0300" <= char <= "\u036f" and kept and kept[-1].isascii() and kept[-1].isalpha():
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept)).translate(_UNDECOMPOSABLE)


WORDS_KEPT = 200_000  # normalised words a Normalizer remembers
normalize = Normalizer()

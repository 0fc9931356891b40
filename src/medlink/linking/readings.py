"""What the stages search for a mention: its normalised words, a note's shortened words written out ("breast ca":
"breast cancer", as the dictionary finder reads them in running text), people's words for a symptom read as names
say them where only that reading matches a name ("sore muscles": "pain muscles"; a words stage's ``lay_reading``), and
a word no name has read as the name's word its spelling stage corrects it to, where only then the words match a name
("diabetis": "diabetes"; character n-grams alone found *Diabetic dermatitis*).

Why one place: ``link``, ``annotate``, coding and the calibration's fit read a mention alike, and what was read is said
(``LinkResult.read_as``).
"""

from __future__ import annotations

from collections.abc import Iterable

from medlink.text.finders.word_shorthand import shorthand_reading
from medlink.text.normalize import Normalizer


def mention_reading(text: str, normalize: Normalizer, stages: Iterable) -> tuple[str, str | None]:
    """The normalised text the ``stages`` search for ``text``, and that again where it is not ``text``'s own normalised
    words (None where it is)."""
    own = normalize(text)
    written = shorthand_reading(text, normalize)
    key = normalize(written) if written else own
    stages = list(stages)
    for stage in stages:
        if getattr(stage, "lay_words", False) and (read := stage.lay_reading(key)) is not None:
            key = read
            break
    key = spelt_reading(key, stages) or key
    return key, (key if key != own else None)


def spelt_reading(key: str, stages: Iterable) -> str | None:
    """``key`` with each word no name has read as the first spelling stage corrects it (``spells_words``), where a
    words stage says that reading's words match a name and the key's own match none ("diabetis": "diabetes"), or None.
    A corrected word inside a longer mention stays that stage's own reading: it may be a rare word, right as written."""
    stages = list(stages)
    speller = next((stage for stage in stages if getattr(stage, "spells_words", False)), None)
    words = next((stage for stage in stages if getattr(stage, "words", False) is True), None)
    read = speller.reading(key) if speller is not None and words is not None else None
    return read if read is not None and words.only_read_names(read, key) else None

"""What the stages search for a mention: its normalised words, a note's shortened words written out ("breast ca":
"breast cancer", as the dictionary finder reads them in running text), and people's words for a symptom read as names
say them where only that reading matches a name ("sore muscles": "pain muscles"; a words stage's ``lay_reading``).

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
    for stage in stages:
        if getattr(stage, "lay_words", False) and (read := stage.lay_reading(key)) is not None:
            key = read
            break
    return key, (key if key != own else None)

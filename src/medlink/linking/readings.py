"""What the stages search for a mention: its normalised words, a note's shortened words written out ("breast ca":
"breast cancer", as the dictionary finder reads them in running text), people's words for a symptom read as names
say them where only that reading matches a name ("sore muscles": "pain muscles"; a words stage's ``lay_reading``), and
a word derived from a name read as that name ("nephrotoxicity": "kidney diseases"; ``text.derived_names``).

Why one place: ``link``, ``annotate``, coding and the calibration's fit read a mention alike, and what was read is said
(``LinkResult.read_as``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from medlink.text.finders.word_shorthand import shorthand_reading
from medlink.text.normalize import Normalizer


def mention_reading(text: str, normalize: Normalizer, stages: Iterable, derived: Mapping[str, str] = {}) -> tuple[str, str | None]:
    """The normalised text the ``stages`` search for ``text``, and that again where it is not ``text``'s own normalised
    words (None where it is); ``derived``: derived words' keys and the names they are read as."""
    own = normalize(text)
    written = shorthand_reading(text, normalize)
    key = normalize(written) if written else own
    if key in derived:
        return (read := normalize(derived[key])), (read if read != own else None)
    for stage in stages:
        if getattr(stage, "lay_words", False) and (read := stage.lay_reading(key)) is not None:
            key = read
            break
    return key, (key if key != own else None)


def derived_words(finder, saved: Path | None) -> dict[str, str]:
    """The derived words a dictionary finder reads as names: the ``finder``'s in hand, else those of the one saved in
    ``saved`` (its description's, read once, without loading the finder); none where there is no current finder."""
    from medlink.text.finders.dictionary_files import current_description

    if finder is not None:
        return finder.derived
    derived = (current_description(saved) or {}).get("derived") if saved is not None else None
    return {str(key): str(name) for key, name in derived.items()} if isinstance(derived, dict) else {}

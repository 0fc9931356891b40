"""Common English words: a word a KB's names lack but everyone writes ("hurts", "month", "catch") is no misspelling.

Why: spelling correction reads a word the names lack as the most frequent name word one edit away, and many everyday
words are one edit from a name's word ("month" -> "mouth", "hurts" -> "hurst", "catch" -> "patch"). A correction of
such a word changes what the mention says. The word list is pyspellchecker's English frequencies (from OpenSubtitles),
read once per process the first time a correction is asked for; a word written at least ``COMMON`` times there is
common. Misspellings ("swolen", "diabetis", "arthritus") and British forms the names spell otherwise ("anaemia",
"haematuria") are rare or absent there, so they are still corrected.
"""

from __future__ import annotations

import gzip
import json
import threading
from functools import lru_cache
from importlib.resources import files

COMMON = 1000  # occurrences in the list: "shaky" 2,802 and "hives" 1,028 are common; "hart" 324, "anaemia" 66 are not
_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _common_words() -> frozenset[str]:
    with gzip.open(files("spellchecker") / "resources" / "en.json.gz", "rt", encoding="utf-8") as handle:
        counts = json.load(handle)
    return frozenset(word for word, count in counts.items() if count >= COMMON)


def is_common_english(word: str) -> bool:
    """Is ``word`` (lower case) a word English text commonly uses?"""
    with _LOCK:  # one reader of the list, however many threads correct at once
        return word in _common_words()

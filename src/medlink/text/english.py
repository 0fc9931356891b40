"""Common English words: a word a KB's names lack but everyone writes ("hurts", "month", "catch") is no misspelling.

Why: spelling correction reads a word the names lack as the most frequent name word one edit away, and many everyday
words are one edit from a name's word ("month" -> "mouth", "hurts" -> "hurst", "catch" -> "patch"). A correction of
such a word changes what the mention says. The word list is pyspellchecker's English frequencies (from OpenSubtitles),
read once per process the first time a correction is asked for (the common words kept in the cache directory: the
list itself takes a third of a second to read); a word written at least ``COMMON`` times there is common.
Misspellings ("swolen", "diabetis", "arthritus") and British forms the names spell otherwise ("anaemia",
"haematuria") are rare or absent there, so they are still corrected.
"""

from __future__ import annotations

import gzip
import json
import threading
from functools import lru_cache
from importlib.metadata import version
from importlib.resources import files

from medlink.directories import write_atomic
from medlink.settings import medlink_home

COMMON = 1000  # occurrences in the list: "shaky" 2,802 and "hives" 1,028 are common; "hart" 324, "anaemia" 66 are not
CACHE_NAME = "common-english.txt"  # in the cache directory: the recipe on its first line, then the words
_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _common_words() -> frozenset[str]:
    recipe, cache = f"pyspellchecker {version('pyspellchecker')}, at least {COMMON}", medlink_home() / CACHE_NAME
    try:
        lines = cache.read_text(encoding="utf-8").split("\n")
        if lines[0] == recipe:
            return frozenset(lines[1:])
    except OSError:
        pass  # none yet: made below
    with gzip.open(files("spellchecker") / "resources" / "en.json.gz", "rt", encoding="utf-8") as handle:
        words = sorted(word for word, count in json.load(handle).items() if count >= COMMON)
    try:
        write_atomic(cache, "\n".join([recipe, *words]))
    except OSError:
        pass  # a read-only cache directory: the list is read again next time
    return frozenset(words)


def is_common_english(word: str) -> bool:
    """Is ``word`` (lower case) a word English text commonly uses?"""
    with _LOCK:  # one reader of the list, however many threads correct at once
        return word in _common_words()

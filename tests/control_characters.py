"""Control characters put inside an id or a name of a KB reader's fixture, shared by the reader tests and the long
fuzzing run (benchmarks/robustness/fuzz_readers.py): where each format keeps ids and names, and how it writes a character.

A control character in a source is a real accident: an export that wrote a C string's NUL, a Windows-1252 file read as
Latin-1 (its dashes and quotes become C1 characters), a stray escape from a terminal.
"""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path

CHARACTERS = ("\x00", "\x01", "\x08", "\x0b", "\x1b", "\x1f", "\x7f", "\x85", "\x9f")
FIELDS = ("id", "name")
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")

# reader -> field -> patterns over the damaged file's text; group 1 of a match is a value of that field
PLACES: dict[str, dict[str, tuple[str, ...]]] = {
    "biosyn": {"id": (r"^([^|\n]+)\|",), "name": (r"\|\|([^|\n]+)",)},
    "obo": {"id": (r"^id: ([^\s!]+)", r"^is_a: ([^\s!]+)", r"^alt_id: ([^\s!]+)"),
            "name": (r"^name: (.+)$", r'^synonym: "([^"]+)"', r'^def: "([^"]+)"')},
    "mesh": {"id": (r"<DescriptorUI>([^<]+)</DescriptorUI>",), "name": (r"<String>([^<]+)</String>", r"<ScopeNote>([^<]+)</ScopeNote>")},
    "icd10cm": {"id": (r"<name>([^<]+)</name>",), "name": (r"<desc>([^<]+)</desc>", r"<inclusionTerm>\s*<note>([^<]+)</note>")},
    "tsv": {"id": (r"^(?!#|id\t)([^\t\n]+)\t",), "name": (r"^(?!#|id\t)[^\t\n]*\t([^\t\n]+)",)},
    "jsonl": {"id": (r'"id": "([^"]+)"', r'"parents": \["([^"]+)"', r'"alt_ids": \["([^"]+)"'),
              "name": (r'"name": "([^"]+)"', r'"synonyms": \["([^"]+)"', r'"definition": "([^"]+)"')},
    "askapatient": {"id": (r'^\s*"([^"]+)": \[',), "name": (r'"(?:primary|synonym|abbreviation)",\s*"([^"]+)"',)},
    "umls": {"id": (r"^(C\d+)\|",), "name": (r"^(?:[^|\n]*\|){14}([^|\n]+)\|",)},
    "snomed": {"id": (r"^\d+\t(?:[^\t\n]*\t){3}(\d+)\t",), "name": (r"^\d+\t(?:[^\t\n]*\t){6}([^\t\n]+)\t",)},
}
JSON_READERS = ("jsonl", "askapatient")
XML_READERS = ("mesh", "icd10cm")


def written(reader: str, character: str, rng: random.Random) -> str:
    """How ``character`` stands in ``reader``'s file: as itself, or as the format's escape (JSON's ``\\u0000``, XML's
    ``&#x0;``), which a parser turns into the character itself."""
    if reader in JSON_READERS and rng.random() < 0.75:
        return f"\\u{ord(character):04x}"
    if reader in XML_READERS and rng.random() < 0.5:
        return f"&#x{ord(character):X};"
    return character


def values(reader: str, text: str, field: str) -> list[re.Match]:
    """Every place of ``field`` in ``text``, in file order."""
    matches = [m for pattern in PLACES[reader][field] for m in re.finditer(pattern, text, re.MULTILINE)]
    return sorted(matches, key=lambda m: m.start(1))


def put_inside(reader: str, data: bytes, field: str, character: str, rng: random.Random | None = None, which: int = 0,
               mark: str | None = None) -> tuple[bytes, int]:
    """``data`` with ``character`` inside one value of ``field``: with ``rng`` a random value, place and spelling
    (``written``); without, the middle of the ``which``-th value, spelt ``mark`` (default: the character itself).
    Returns the damaged bytes and the line of the value."""
    text = data.decode("utf-8")
    places = values(reader, text, field)
    place = rng.choice(places) if rng else places[which]
    start, end = place.start(1), place.end(1)
    at = rng.randint(start, end) if rng else (start + end) // 2
    mark = written(reader, character, rng) if rng else (mark or character)
    return (text[:at] + mark + text[at:]).encode("utf-8"), text.count("\n", 0, start) + 1


def stored_control_characters(kb: Path) -> list[str]:
    """Every text cell of a built KB that holds a control character, as ``table.column: value`` (none is right)."""
    found = []
    with sqlite3.connect(kb) as connection:
        tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
            for row in connection.execute(f"SELECT {', '.join(columns)} FROM {table}"):
                found += [f"{table}.{column}: {value!r}" for column, value in zip(columns, row) if isinstance(value, str) and CONTROL.search(value)]
    return found

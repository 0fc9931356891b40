"""A dictionary finder's saved description (``dictionary.json``, beside its word automaton's files): what version of
the finder wrote it, and whether an index's finder is current or is rebuilt.

Why apart from ``dictionary``: the finder finds names; this says how its files are told apart from another version's.
"""

from __future__ import annotations

import json
from pathlib import Path

from medlink.errors import DamagedFileError
from medlink.text.plain_forms import PLAIN_FORMS

SIGNATURE = "medlink-dictionary-finder"
DESCRIPTION = "dictionary.json"
FORMAT = 3  # 3: one word automaton (exact and loose forms), saved as keys; 2 and 1 saved pyahocorasick automata
RULES = 6  # which names a finder leaves out or adds (1: names with a sign after a word, "HR+", left out; 3: "X of Y" also as "Y X"
# (``inverted_form``), and names with a sign kept where the normaliser reads it as a word; 4: words derived from names,
# ``text.derived_names``; 5: and "-pathy" words; 6: read as their names' normalised keys): a default index's older finder is rebuilt


def write_description(directory: Path, fields: dict) -> None:
    """``fields`` (options, normaliser, names, types, derived words) with this version's marks, into ``directory``."""
    description = {"signature": SIGNATURE, "format": FORMAT, **fields, "plain_forms": PLAIN_FORMS, "rules": RULES}
    (directory / DESCRIPTION).write_text(json.dumps(description, indent=2), encoding="utf-8")


def read_description(directory: Path) -> dict:
    """The saved description; one that is damaged or another format's is refused with its file's name."""
    described = directory / DESCRIPTION
    try:
        description = json.loads(described.read_text(encoding="utf-8"))
        if not isinstance(description, dict) or description.get("signature") != SIGNATURE or description.get("format") != FORMAT:
            raise ValueError(f"not a medlink dictionary finder of format {FORMAT}")
    except (OSError, ValueError) as error:
        raise DamagedFileError(described, error) from error
    return description


def current_description(directory: Path) -> dict | None:
    """The saved description of a finder of this version in ``directory``, else None (none there, damaged, or another
    version's: one without plain forms finds "Botulism NOS" and "Parkinson's disease" only; an index's is rebuilt)."""
    try:
        description = json.loads((directory / DESCRIPTION).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    current = (
        isinstance(description, dict)
        and description.get("signature") == SIGNATURE
        and description.get("format") == FORMAT
        and description.get("plain_forms") == PLAIN_FORMS
        and description.get("rules") == RULES
    )
    return description if current else None


def is_current(directory: Path) -> bool:
    """Is there a finder of this version in ``directory``? (An index whose finder is older gets rebuilt.)"""
    return current_description(directory) is not None

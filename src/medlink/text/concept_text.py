"""The text a dense encoder embeds for a concept name: the name alone, or paper 002's entity text.

Paper 002 represents an entity as "title [SEP] types [SEP] description", so that two concepts
sharing a name ("cold": the temperature, the infection) get different vectors and a name's
meaning is anchored by its category. Definitions are cut to a few words: names and mentions are
encoded in short sequences, and the first clause of a definition carries most of its signal.
"""

from __future__ import annotations

NAME = "name"
NAME_TYPES_DEFINITION = "name_types_definition"
CONCEPT_TEXTS = (NAME, NAME_TYPES_DEFINITION)


def entity_text(name: str, types: list[str], definition: str | None, separator: str = "[SEP]", definition_words: int = 24) -> str:
    """``name [SEP] type, type [SEP] the first words of the definition`` (empty parts stay empty)."""
    words = (definition or "").split()
    return f"{name} {separator} {', '.join(types)} {separator} {' '.join(words[:definition_words])}".strip()

"""The text a model reads for a concept: the name alone, or Varma et al. (2021)'s entity text (a dense encoder, a cross-encoder).

Varma et al. (2021) represents an entity as "title [SEP] types [SEP] description", so that two concepts
sharing a name ("cold": the temperature, the infection) get different vectors and a name's
meaning is anchored by its category. Definitions are cut to a few words: names and mentions are
encoded in short sequences, and the first clause of a definition carries most of its signal.
"""

from __future__ import annotations

NAME = "name"
NAME_TYPES_DEFINITION = "name_types_definition"
CONCEPT_TEXTS = (NAME, NAME_TYPES_DEFINITION)


def entity_text(name: str, types: list[str], definition: str | None, separator: str = "[SEP]", definition_words: int = 24) -> str:
    """``name [SEP] type, type [SEP] the first words of the definition``.

    Trailing empty parts are left out (a concept with no types and no definition is its name
    alone), so a KB that describes only some concepts does not give the others separator-only tails.
    """
    parts = [name, ", ".join(types), " ".join((definition or "").split()[:definition_words])]
    while len(parts) > 1 and not parts[-1]:
        parts.pop()
    return f" {separator} ".join(parts)


def entity_texts(kb) -> dict[str, str]:
    """Concept id -> Varma et al. (2021)'s entity text for every concept of ``kb`` that has types or a definition (the others are
    their names alone: callers fall back to the name)."""
    names = dict(kb.iter_concepts())
    return {
        cid: entity_text(names[cid], types, definition)
        for cid, types, definition in kb.iter_descriptions()
        if (types or definition) and cid in names
    }

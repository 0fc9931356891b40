"""What a Linker takes from its KB when it is built: descriptions for the generators that embed more than a name, each
concept's other ids, and the concepts the mention finder leaves out."""

from __future__ import annotations

from collections.abc import Sequence

from medlink.errors import MedlinkError
from medlink.kb.store import KB


def descriptions_of(kb: KB, position: dict[str, int]) -> dict[int, tuple[list[str], str | None]]:
    """Concept position -> (types, definition), for generators that embed more than the name."""
    return {position[cid]: (types, definition) for cid, types, definition in kb.iter_descriptions() if types or definition}


def alt_ids_of(kb: KB) -> dict[str, list[str]]:
    """Concept id -> its other ids (MEDIC's MeSH id beside an OMIM one), in the KB's order; replaced ids are not listed."""
    alt: dict[str, list[str]] = {}
    for alias, concept_id, reason in kb.iter_id_aliases():
        if reason != "replaced":
            ids = alt.setdefault(concept_id, [])
            if alias not in ids:  # HPO lists some alt ids twice
                ids.append(alias)
    return alt


def finder_skipped(kb: KB, roots: Sequence[str]) -> set[str]:
    """``roots`` and every concept under them (is_a, transitively): concepts that qualify a finding rather than name one
    (HPO's Clinical modifier: "Mild", "Left", "Acute onset"; SNOMED CT's qualifier values), which the mention finder
    must not report in running text; they are still linked when given as mention strings."""
    out: set[str] = set()
    frontier = []
    for root in roots:
        resolved = kb.resolve(root)
        if resolved is None:
            raise MedlinkError(f"--finder-skip {root}: no such concept in {kb.path}")
        frontier.append(resolved)
    while frontier:
        concept = frontier.pop()
        if concept not in out:
            out.add(concept)
            frontier.extend(kb.children(concept))
    return out

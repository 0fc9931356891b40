"""Labelled mentions: the record every corpus loader returns (BioSyn, AskAPatient, PubTator), and gold-id parsing.

Every loader returns ``LabeledMention`` records so that metrics and subpopulations never care
which format the data came from. Gold ids keep every alternative the annotators gave: ids are
split on ``|`` and ``+`` into one set, and a prediction counts when it matches any of them
(the BioSyn protocol). A composite mention ("breast and ovarian cancer") keeps its parts, each
linked separately; it is correct only when every part is.

Mentions annotated as unlinkable (id ``-1``, "CUI-less") are skipped unless ``keep_unlinked``,
as BioSyn's evaluation does; none of the bundled datasets has any. Duplicate mentions are kept:
the published NCBI Disease figures count all 960 test mentions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from medlink.core import Mention

UNLINKED = "-1"


@dataclass(frozen=True, slots=True)
class LabeledMention:
    """One gold-annotated mention: ``parts`` are linked separately (one part unless composite)."""

    text: str
    parts: tuple[str, ...]
    gold: frozenset[str]
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None
    semantic_type: str | None = None
    gold_name: str | None = None  # the annotators' concept name, when the format gives one (AskAPatient)
    part_ids: tuple[str, ...] = ()  # a composite's id for each part, in order, where the format pairs them (BC5CDR)

    @property
    def is_composite(self) -> bool:
        return len(self.parts) > 1

    def to_mention(self) -> Mention:
        """The unlabelled mention a linker sees (whole text, position kept for context)."""
        return Mention(self.text, self.doc_id, self.start, self.end)


def ordered_ids(field: str, strip_prefixes: tuple[str, ...] = ()) -> tuple[str, ...]:
    """``"D001943|D010051"`` or ``"D007674+D006222"`` -> its ids in the field's order, each once (alternatives and
    composite ids alike)."""
    ids: dict[str, None] = {}
    for raw in field.replace("+", "|").split("|"):
        raw = raw.strip()
        for prefix in strip_prefixes:
            if raw.startswith(prefix):
                raw = raw[len(prefix) :]
                break
        if raw:
            ids[raw] = None
    return tuple(ids)


def split_ids(field: str, strip_prefixes: tuple[str, ...] = ()) -> frozenset[str]:
    """``"D001943|D010051"`` or ``"D007674+D006222"`` -> the set of ids (alternatives and composite ids alike)."""
    return frozenset(ordered_ids(field, strip_prefixes))


def paired_ids(parts: tuple[str, ...], ids: Iterable[str]) -> tuple[str, ...]:
    """A composite's ids as its parts' own, in order ("hemorrhagic|cystitis" with "D006470|D003556"), or () when the
    counts differ: then no part is known to be which concept."""
    ids = tuple(ids)
    return ids if len(parts) > 1 and len(ids) == len(parts) else ()


def is_unlinked(gold: frozenset[str]) -> bool:
    return not gold or gold <= {UNLINKED}


def split_unlinked(mentions: Iterable[LabeledMention]) -> tuple[list[LabeledMention], list[LabeledMention]]:
    """Mentions annotated with a concept, and those annotated with none (id -1, "CUI-less": NIL examples)."""
    mentions = list(mentions)
    return [m for m in mentions if not is_unlinked(m.gold)], [m for m in mentions if is_unlinked(m.gold)]


def all_gold_ids(mentions: Iterable[LabeledMention]) -> set[str]:
    """Every gold id used by ``mentions`` (e.g. to check a KB covers the dataset)."""
    return {i for m in mentions for i in m.gold}

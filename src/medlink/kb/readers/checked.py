"""The one check every KB reader's records pass on their way to the KB (``read_source``): a control character in an id
is refused, in a name, definition or label replaced by a space and counted.

Why here and not in each reader: nine formats, one rule, and a reader added later gets it too. Records carry no file
or line; the reader's ``LocatedPolicy`` says where it is, so a refusal still names both (``file:line: ...``) and goes
through the build's policy: an error, or with ``--skip-invalid`` the records of that line (stanza, XML record) skipped
and counted once, as a malformed line is.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from medlink.kb.readers.files import LocatedPolicy
from medlink.kb.records import (
    FIELD_LABELS,
    IDENTIFIER_FIELDS,
    REQUIRED_TEXT_FIELDS,
    TEXT_FIELDS,
    ConceptRecord,
    IdAliasRecord,
    NameRecord,
    Record,
    RelationRecord,
    TypeRecord,
    XrefRecord,
    describe_character,
    first_control_character,
    without_control_characters,
)

log = logging.getLogger("medlink")

# The fast path of every build: is every checked field (IDENTIFIER_FIELDS + TEXT_FIELDS) printable? One f-string and one
# C-level isprintable per record, half the cost of a loop over the fields (None reads "None", printable).
ALL_PRINTABLE: dict[type, Callable[[Any], bool]] = {
    ConceptRecord: lambda r: f"{r.id}{r.name}{r.definition}{r.source}".isprintable(),
    NameRecord: lambda r: f"{r.concept_id}{r.text}{r.scope}{r.lang}{r.source}".isprintable(),
    TypeRecord: lambda r: f"{r.concept_id}{r.type}".isprintable(),
    RelationRecord: lambda r: f"{r.head}{r.relation}{r.tail}{r.source}".isprintable(),
    XrefRecord: lambda r: f"{r.concept_id}{r.xref}".isprintable(),
    IdAliasRecord: lambda r: f"{r.alias}{r.concept_id}".isprintable(),
}


def _shown(value: str) -> str:
    """A value as an error quotes it: escaped (a raw control character would be invisible) and cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _label(kind: type, field: str) -> str:
    return FIELD_LABELS.get((kind, field), field)


class RecordCheck:
    """Checks and cleans records in place; counts the text values it cleaned per file, for one warning per file."""

    def __init__(self, policy: LocatedPolicy):
        self.policy = policy
        self.replaced: Counter[str] = Counter()
        self.first_replaced: dict[str, str] = {}
        self._pending: list[str] = []  # files of the values cleaned in the records not yet let through
        self._refused_at: set[tuple[str, int | None]] = set()
        self._cleaned_here: tuple[int, set[str]] = (-1, set())  # values cleaned at the reader's current step: a preferred
        # name is in its concept's record and in its name's record, and counts once

    def refusal(self, record: Record) -> tuple[str, str] | None:
        """Why ``record`` cannot be stored (a control character in an id, a name of control characters only) and the
        field at fault, or None once its text fields are cleaned."""
        kind = type(record)
        for field in IDENTIFIER_FIELDS[kind]:
            value = getattr(record, field)
            character = first_control_character(value)
            if character is not None:
                why = f"{_label(kind, field)} {_shown(value)} holds the control character {describe_character(character)}, which no id may hold"
                return why, field
        for field in TEXT_FIELDS[kind]:
            value = getattr(record, field)
            character = first_control_character(value)
            if character is None:
                continue
            cleaned = without_control_characters(value)
            if not cleaned and (kind, field) in REQUIRED_TEXT_FIELDS:
                return f"{_label(kind, field)} {_shown(value)} holds nothing but control characters", field
            setattr(record, field, cleaned or None)
            self._note_replacement(kind, field, value, character)
        return None

    def _note_replacement(self, kind: type, field: str, value: str, character: str) -> None:
        step, values = self._cleaned_here
        if step != self.policy.step:
            step, values = self._cleaned_here = (self.policy.step, set())
        if value in values:
            return
        values.add(value)
        path = str(self.policy.path)
        self._pending.append(path)
        if path not in self.first_replaced:
            _, line = self.policy.where(field)
            where = f"line {line}: " if line is not None else ""
            self.first_replaced[path] = f"{where}{_label(kind, field)} {_shown(value)}, {describe_character(character)}"

    def commit(self) -> None:
        """The records checked since the last commit are kept: count their cleaned values."""
        self.replaced.update(self._pending)
        self._pending.clear()

    def discard(self) -> None:
        """The records checked since the last commit are skipped: their cleaned values are not counted."""
        self._pending.clear()

    def refuse(self, refusal: tuple[str, str]) -> None:
        """Hand a refusal (why, field) to the build's policy with the reader's file and line (raises unless skipping); a
        line refused before is not counted again (a parent's bad id also refuses the relations its children derive)."""
        why, field = refusal
        path, line = self.policy.where(field)
        if (str(path), line) in self._refused_at:
            return
        self._refused_at.add((str(path), line))
        self.policy.invalid(path, line, why)

    def warn(self) -> None:
        """One warning per file whose text values were cleaned: how many, and the first."""
        for path, count in self.replaced.items():
            log.warning(
                "%s: %s text value(s) (names, definitions, types) held control characters, each run replaced by a space (first: %s)",
                path,
                f"{count:,}",
                self.first_replaced[path],
            )


def checked_records(records: Iterable[Record], policy: LocatedPolicy) -> Iterator[Record]:
    """``records`` with control characters refused in ids and replaced in text, under ``policy`` (the reader's own)."""
    check = RecordCheck(policy)
    if policy.skip_invalid:
        yield from _skipping(records, check)
    else:  # the first refusal raises: records pass one by one, in this loop (the hot path of every build)
        printable = ALL_PRINTABLE
        for record in records:
            if not printable[type(record)](record):
                refusal = check.refusal(record)
                if refusal is not None:
                    check.refuse(refusal)
                check.commit()
            yield record
    check.warn()


def _skipping(records: Iterable[Record], check: RecordCheck) -> Iterator[Record]:
    """A refusal skips every record of its line (stanza, XML record), counted once: records wait until the reader moves on."""
    group: list[Record] = []
    step = None
    refused = False
    for record in records:
        if check.policy.step != step:
            if not refused:
                check.commit()
                yield from group
            group, step, refused = [], check.policy.step, False
        if refused:
            continue
        if not ALL_PRINTABLE[type(record)](record):
            refusal = check.refusal(record)
            if refusal is not None:
                refused = True
                check.discard()
                check.refuse(refusal)
                continue
        group.append(record)
    if not refused:
        check.commit()
        yield from group

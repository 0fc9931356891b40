"""What the linker says about a mention beside its candidates: why it cannot be linked, how a stage read it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from medlink.core import Candidate, Mention
from medlink.errors import MedlinkError


def checked(mentions: str | Mention | Sequence[str | Mention], k: int, caller: str) -> list[str | Mention]:
    """``mentions`` as a list (one string or ``Mention`` is one mention, not its characters), each a string or a
    ``Mention``, and ``k`` at least 1: a mistake is named before any work."""
    if isinstance(mentions, (str, Mention)):
        mentions = [mentions]
    mentions = list(mentions)
    wrong = [type(m).__name__ for m in mentions if not isinstance(m, (str, Mention))]
    if wrong:
        raise TypeError(f"{caller} takes strings or medlink.Mention objects, not {wrong[0]}")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise MedlinkError(f"k is how many candidates each mention gets: at least 1, not {k!r}")
    return mentions


def is_text(text: str) -> bool:
    """False for a string holding bytes that were not UTF-8 (a command-line argument decodes them as lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def mention_error(text: str, key: str) -> str | None:
    """Why a mention cannot be linked (``key``: its normalised form), or None: reported per mention, not for the batch."""
    if not is_text(text):
        return "not valid UTF-8 text (it holds bytes that are not UTF-8)"
    if not text.strip():
        return "empty mention"
    if not key:
        return "nothing to link after normalisation (only punctuation or symbols)"
    return None


def own_candidates(candidates: list[Candidate], fresh: bool, alt_ids: dict[str, list[str]]) -> list[Candidate]:
    """A mention's candidates, each with its concept's other ids: the objects made for its text where it is the first
    to take them (``fresh``), else copies (duplicates share the search, not the objects)."""
    if not fresh:
        return [c.copy(alt_ids=list(alt_ids.get(c.concept_id, ()))) for c in candidates]
    for candidate in candidates:
        candidate.alt_ids = candidate.alt_ids or list(alt_ids.get(candidate.concept_id, ()))
    return candidates


def note_readings_once(lists: Iterable[tuple[Sequence[Candidate], dict[str, dict[str, str]] | None]]) -> None:
    """``note_readings`` of each (candidates, readings), each candidate object once: lists that share objects (a text's,
    handed to its first mention and copied for the others) are noted once, and copies made after carry it."""
    noted: set[int] = set()
    for candidates, readings in lists:
        note_readings([c for c in candidates if id(c) not in noted], readings)
        noted.update(id(c) for c in candidates)


def note_readings(candidates: list[Candidate], readings: dict[str, dict[str, str]] | None) -> None:
    """Add to each candidate's evidence how the stages that found it read the mention (a spelling correction, a
    synonym: ``stage_readings``' entries), in place."""
    if not readings:
        return
    for candidate in candidates:
        candidate.evidence += [entry for stage, entry in readings.items() if stage in candidate.scores_by_stage]

"""Per-document consistency: one mention string, one meaning, everywhere in a document.

Two ideas, each switchable:

- **propagation**: a string found as a mention once is a mention at its every other occurrence in
  the same document (whole words; case aside, unless the string has no lower-case letter: "ALL"
  does not make "all" a mention), so a finder that misses the second "colorectal cancer" of an
  abstract does not lose it; an occurrence a sign closes ("HER2" in "HER2-") is not one: the sign is its meaning;
- **voting**: occurrences of one normalised string (and an abbreviation's occurrences) take one
  answer, the concept most of them ranked first (ties: the higher summed score), because a
  context-reading reranker may rank them differently and an abstract rarely means two things by
  one term.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

import ahocorasick

from medlink.core import READ_AS, Annotation, LinkResult
from medlink.text.derived_names import DERIVED_MATCH, qualifiers_dropped
from medlink.text.finders.base import follows_title, in_chemical_name, overlap_test, resolve_overlaps
from medlink.text.normalize import SIGN_WORDS, signs_in

CONSISTENCY_MODES = ("off", "propagate", "vote", "both")


def propagated(text: str, spans: Sequence[Annotation], source: str = "propagated") -> list[Annotation]:
    """New spans for the other whole-word occurrences of each span's exact text that overlap no span, and do not follow a
    person's title ("Parkinson's" found, "Dr. Parkinson's clinic" left alone) nor, in capitals, make part of a chemical's
    or a product's name ("MK-801", as the dictionary finder reads short forms); a derived word found again right before
    a span qualifies it, as the finder reads it (``derived_names.qualifiers_dropped``)."""
    lowered = text.lower()
    folded = len(lowered) == len(text)  # lower-casing kept every offset (it does not for a few characters, e.g. "İ")
    types: dict[str, str | None] = {}  # each string's type, from the first span that has one: an occurrence is typed as it
    readings: dict[str, str] = {}  # and the reading a finder gave it ("nonsmall ..." read as "non-small ...")
    derived: set[str] = set()  # strings a finder found as words derived from names: qualifiers where a span follows
    for span in spans:
        if span.text.strip():
            key = span.text.lower() if folded and _has_lower(span.text) else span.text
            if types.get(key) is None:
                types[key] = span.type
            if span.reading != span.text:
                readings.setdefault(key, span.reading)
            if span.infons.get("match") == DERIVED_MATCH:
                derived.add(key)
    strings = set(types)
    if not strings:
        return []
    automaton = ahocorasick.Automaton()
    for string in strings:
        automaton.add_word(string, len(string))
    automaton.make_automaton()
    taken = overlap_test(spans)  # prepared once: testing every span against every occurrence would be quadratic
    found: dict[tuple[int, int], Annotation] = {}
    for haystack in (text, lowered) if folded else (text,):
        for last, length in automaton.iter(haystack):
            start, end = last + 1 - length, last + 1
            if haystack is lowered and not _has_lower(text[start:end]) and text[start:end] in strings:
                continue  # an all-capitals occurrence of a string found in lower case elsewhere: found on the exact pass
            if (
                _word_bounded(text, start, end)
                and not taken(start, end)
                and not follows_title(text, start)
                and not _sign_closes(text, start, end)
                and not (text[start:end].isupper() and in_chemical_name(text, start, end))  # "MK-801" beside "MK"
            ):
                key = haystack[start:end]  # the automaton matched this key in this haystack
                infons = {READ_AS: readings[key]} if key in readings else {}
                if key in derived:
                    infons["match"] = DERIVED_MATCH
                found.setdefault((start, end), Annotation(start, end, text[start:end], type=types.get(key), source=source, infons=infons))
    new = resolve_overlaps(found.values(), "longest")
    if not derived:
        return new
    kept = {id(span) for span in qualifiers_dropped(text, [*spans, *new])}  # "Psoriatic arthritis" stays the arthritis
    return [span for span in new if id(span) in kept]


def _has_lower(string: str) -> bool:
    return any(c.islower() for c in string)


def _sign_closes(text: str, start: int, end: int) -> bool:
    """Whether a sign the normaliser reads as a word closes this occurrence ("HER2" in "HER2-"): the string found
    had none, so here it says something else (a negative status, not the receptor)."""
    return text[end : end + 1] in SIGN_WORDS and any(m.start(2) == end - start for m in signs_in(text[start : end + 40]))


def _word_bounded(text: str, start: int, end: int) -> bool:
    return (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum())


def vote(annotations: Sequence[Annotation], group_of: Callable[[Annotation], str]) -> None:
    """Give every annotation of a group the result its group voted for (in place; annotations without results skipped)."""
    groups: dict[str, list[Annotation]] = defaultdict(list)
    for annotation in annotations:
        if annotation.result is not None and annotation.result.best is not None:
            groups[group_of(annotation)].append(annotation)
    for members in groups.values():
        if len({m.result.best.concept_id for m in members}) < 2:
            continue
        winner = _winner(m.result for m in members)
        for member in members:
            if member.result.best.concept_id != winner.best.concept_id:
                member.result = winner.copy(member.result.mention)
                member.infons["consistency"] = "voted"


def _winner(results: Iterable[LinkResult]) -> LinkResult:
    votes: dict[str, int] = defaultdict(int)
    scores: dict[str, float] = defaultdict(float)
    chosen: dict[str, LinkResult] = {}
    for result in results:
        concept = result.best.concept_id
        votes[concept] += 1
        scores[concept] += result.best.score
        chosen.setdefault(concept, result)
    return chosen[max(votes, key=lambda c: (votes[c], scores[c]))]

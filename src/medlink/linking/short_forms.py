"""Spans a text's own wording adds to the found ones: a coordination widened over its conjuncts ("breast and ovarian
cancer"), and the short forms a document defines ("coronary artery disease (CAD)") found again where they recur and
linked through their long forms.

Why apart from the annotator: the windowed reading of a long document (``linking.windowed``) uses them window by window.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import replace

from medlink.core import Annotation, LinkResult, Mention
from medlink.text.abbreviations import Abbreviation, abbreviation_occurrences, find_abbreviations
from medlink.text.coordination import coordination_start
from medlink.text.finders.base import overlap_test


def widened_to_coordinations(text: str, spans: list[Annotation], is_name) -> list[Annotation]:
    """``spans`` (in text order) with each span that ends a coordination of names widened over it: a dictionary finds
    "ovarian cancer" in "breast and ovarian cancer", and the composite step needs the whole coordination to give it
    both concepts. A conjunct found on its own inside the widened part ("breast") is dropped."""
    out: list[Annotation] = []
    reach: list[int] = []  # reach[i]: the furthest end of out[:i + 1] (out is in start order): what a widening drops is after it
    for span in spans:
        begin = coordination_start(text, span.start, span.end, is_name)
        if begin is None:
            added = [span]
        else:
            first = bisect_right(reach, begin)  # out[:first] all end by begin: only the rest is looked at
            added = [kept for kept in out[first:] if kept.end <= begin]
            del out[first:], reach[first:]
            added.append(
                Annotation(
                    begin,
                    span.end,
                    text[begin : span.end],
                    type=span.type,
                    source=span.source,
                    infons={**span.infons, "widened": "coordination"},
                )
            )
        for kept in added:
            out.append(kept)
            reach.append(max(reach[-1], kept.end) if reach else kept.end)
    return out


def with_short_forms(text: str, spans: list[Annotation]) -> list[Annotation]:
    """``spans`` plus the short forms of abbreviations whose long form ends with a found span, each pointing at
    that span (``short_form_of``); a found span overlapping a short form occurrence gives way to it. A short form the
    document defines with a long form no span touches means something else here ("computer-aided design (CAD)",
    "heteroduplex (HD)"): its found occurrences are dropped (better NCBI Disease dev linking F1 on the chosen pipeline:
    docs/benchmark-history.md); one word in parentheses after a short form is too weak a sign ("r/o PE (pending)" would drop every PE)."""
    defined, other_meaning = short_form_definitions(text, spans)
    return with_defined_short_forms(text, spans, defined, other_meaning - {definition.short for definition, _, _ in defined})


Definition = tuple[Abbreviation, tuple[int, int], "str | None"]  # a definition, its long form's span and that span's type


def short_form_definitions(text: str, spans: list[Annotation], offset: int = 0) -> tuple[list[Definition], set[str]]:
    """What ``with_short_forms`` reads from the definitions in ``text``: those whose long form ends with a found span
    (with that span), in text order, and the short forms defined with a long form no span touches (before those
    defined elsewhere are taken out). With ``offset``, ``text`` is a window of a document that starts there, and the
    definitions' offsets are the document's."""
    by_end: dict[int, Annotation] = {}
    for span in sorted(spans, key=lambda s: (s.end, s.start)):
        by_end.setdefault(span.end, span)  # the longest span ending there (--overlap all keeps shorter ones beside it)
    touched = overlap_test(spans)
    defined: list[Definition] = []
    other_meaning = set()  # short forms the document defines with a long form that is no mention ("computer-aided design (CAD)")
    for abbreviation in find_abbreviations(text):
        long_span = by_end.get(abbreviation.long_end)
        if long_span is not None and long_span.start >= abbreviation.long_start:
            defined.append((_moved(abbreviation, offset), (long_span.start + offset, long_span.end + offset), long_span.type))
        elif not touched(abbreviation.long_start, abbreviation.long_end) and (
            abbreviation.long_start < abbreviation.short_start or len(abbreviation.long.split()) > 1
        ):
            other_meaning.add(abbreviation.short)  # one word in parentheses after it says too little: "r/o PE (pending)"
    return defined, other_meaning


def with_defined_short_forms(
    text: str, spans: list[Annotation], defined: Sequence[Definition], other_meaning: set[str], offset: int = 0
) -> list[Annotation]:
    """``spans`` less the found occurrences of ``other_meaning``, plus the occurrences in ``text`` of the short forms
    ``defined`` (the first definition of each counts), each linked through its long form. With ``offset``, ``text`` is a
    window of a document that starts there: ``defined`` holds the document's definitions in its offsets, ``spans`` and
    the spans returned are the window's (``short_form_of`` too: a long form in an earlier window lies before 0)."""
    if other_meaning:
        spans = [span for span in spans if span.text not in other_meaning]
    if not defined:
        return spans
    long_of: dict[str, tuple[int, int]] = {}
    occurrences = []
    for abbreviation, long_span, _type in defined:
        if abbreviation.short not in long_of:
            long_of[abbreviation.short] = long_span
            if 0 <= abbreviation.short_start - offset < len(text):
                occurrences.append((abbreviation.short_start - offset, abbreviation.short_end - offset))
    occurrences += [(start, end) for start, end, _ in abbreviation_occurrences(text, [a for a, _, _ in defined], offset)]
    type_of = {long_span: kind for _abbreviation, long_span, kind in defined}
    short_spans = [
        Annotation(
            start,
            end,
            text[start:end],
            type=type_of.get(long_of[text[start:end]]),
            source="abbreviation",
            short_form_of=(long_of[text[start:end]][0] - offset, long_of[text[start:end]][1] - offset),
        )
        for start, end in occurrences
        if text[start:end] in long_of
    ]
    covered = overlap_test(short_spans)
    kept = [span for span in spans if not covered(span.start, span.end)]
    return sorted(kept + short_spans, key=lambda a: (a.start, a.end))


def _moved(abbreviation: Abbreviation, offset: int) -> Abbreviation:
    """``abbreviation`` with its offsets ``offset`` further on."""
    if not offset:
        return abbreviation
    return replace(
        abbreviation,
        short_start=abbreviation.short_start + offset,
        short_end=abbreviation.short_end + offset,
        long_start=abbreviation.long_start + offset,
        long_end=abbreviation.long_end + offset,
    )


def linked_through(
    spans: Iterable[Annotation], long_forms: dict[tuple[int, int], LinkResult | None], keep_better: bool = False, offset: int = 0
) -> None:
    """Link each short form among ``spans`` through its long form's result (``long_forms``, by the long form's span in
    the document; ``spans`` are a window's from ``offset`` on, or the document's). ``keep_better``: a short form whose
    own first candidate scored higher keeps its own answer (``abbreviation_choice`` "best")."""
    for span in spans:
        if not span.short_form_of:
            continue
        at = (span.short_form_of[0] + offset, span.short_form_of[1] + offset)
        long_result = long_forms.get(at)
        if long_result is None or long_result.best is None:
            continue
        own = span.result
        if keep_better and own is not None and own.best is not None and own.best.score > long_result.best.score:
            continue
        span.result = shared_copy(long_result, own.mention if own is not None else None)
        span.infons["linked_through"] = f"{at[0]}-{at[1]}"


def shared_copy(result: LinkResult, mention: Mention | None = None) -> LinkResult:
    """``result`` for another occurrence of its string: its own mention and candidate list, the candidates themselves
    shared. Nothing changes a candidate in place (a stage that changes one makes a new one, ``Candidate.copy``), and a
    deep copy for each occurrence would hold a long document's candidates once per mention."""
    return replace(result, mention=mention or result.mention, candidates=list(result.candidates))

"""A long document annotated a window at a time (``medlink.text.windows``), so that what the annotator builds while
reading it (tokens, cue scans, mention lists) is bounded by the window, not the document.

The steps that read the text run per window; the steps that decide for the whole document keep a small state instead
of the text's intermediate structures. Three passes over the windows, because two decisions need every window first:

1. finding: each window's spans (the finders', coordinations widened) and its abbreviation definitions;
2. short forms: with every definition known, each window's short forms (a short form the document defines in another
   sense anywhere drops its found occurrences everywhere; the longest short form written at a place is the one read);
3. the rest, per window: every string found anywhere in the document becomes a mention at its occurrences here
   (propagation), other senses are dropped, the mentions are linked (their context read from the whole text),
   composites take their parts' concepts, short forms their long forms' answers (a map of the long forms' results),
   and assertion is marked.

Then the vote over the document's mentions (one string, one answer) and each mention's ids. The annotations are the
ones reading the document whole gives: a cut falls only where no step reads across it (``windows``, ``can_cut``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from medlink.core import READ_AS, Annotation, Document, LinkResult, Mention
from medlink.linking.consistency import propagated
from medlink.linking.drug_caused import caused_by_drugs
from medlink.linking.joined import joined_conditions
from medlink.linking.partial import widen_or_discount
from medlink.linking.short_forms import short_form_definitions, with_defined_short_forms
from medlink.progress import bar
from medlink.text.abbreviations import find_abbreviations
from medlink.text.assertion import assertions, mark_assertions, section_runs_over
from medlink.text.finders.other_senses import sense_here, without_other_senses
from medlink.text.windows import window_bounds, window_document

PROGRESS_CHARS = 1 << 20  # a document longer than this shows its progress on stderr, in characters
REACH = 300  # characters either side of a cut read to see whether a step reads across it (``can_cut``)
_PAST_ANY_WINDOW = 1 << 62  # where the propagation seeds lie: after every window's text, so they overlap no occurrence


def annotate_windowed(annotator: Any, document: Document, progress: bool = False) -> Document:
    """``document`` with its annotations replaced by the linked spans found in it, read a window at a time.
    ``annotator``: a ``linking.annotator.Annotator`` (typed loosely: that module imports this one)."""
    options, text = annotator.options, document.text
    bounds = window_bounds(text, options.window, lambda at: can_cut(annotator, document, text, at))
    shown = progress and len(text) > PROGRESS_CHARS
    found: list[list[Annotation]] = []
    defined, other_meaning = [], set()
    with bar(enabled=shown, total=len(text), desc=f"annotate {document.doc_id}: finding", unit="char", unit_scale=True) as finding:
        for start, end in bounds:
            spans = annotator.found_in(window_document(document, start, end))
            if options.abbreviations:
                window_defined, window_other = short_form_definitions(text[start:end], spans, start)
                defined += window_defined
                other_meaning |= window_other
            found.append(spans)
            finding.update(end - start)
    if options.abbreviations:
        other_meaning -= {abbreviation.short for abbreviation, _, _ in defined}
        found = [
            with_defined_short_forms(text[start:end], spans, defined, other_meaning, start) for (start, end), spans in zip(bounds, found)
        ]
    seeds = propagation_seeds(found, text) if options.consistency in ("propagate", "both") else None
    long_spans = {long_span for _abbreviation, long_span, _type in defined}
    long_forms: dict[tuple[int, int], LinkResult | None] = {}  # the results short forms link through, by their long forms' spans
    composite: dict[int, tuple[str, ...]] = {}
    annotations: list[Annotation] = []
    with bar(enabled=shown, total=len(text), desc=f"annotate {document.doc_id}: linking", unit="char", unit_scale=True) as linking:
        for index, (start, end) in enumerate(bounds):
            spans, found[index] = found[index], []
            piece = text[start:end]
            if seeds is not None:
                spans = sorted(spans + propagated(piece, seeds + spans), key=lambda a: (a.start, a.end))
            spans = without_other_senses(piece, spans)
            mentions = [_mention(document.doc_id, text, span, start, options.context) for span in spans]
            for span, result in zip(spans, annotator.link_mentions(mentions)):
                span.result = result
            # heads of longer phrases, as the annotator reads them
            spans = [_moved(span, start) for span in spans]  # read in the whole text: a phrase may run past the window
            spans = widen_or_discount(
                text, spans, annotator.link_mentions, annotator.known_word, options.modifiers_mode, annotator.linker.key
            )
            finder = annotator.dictionary
            caused_by_drugs([(text, spans)], annotator.link_mentions, annotator.linker.key, finder and finder.is_name)  # a drug's effects
            spans = [_moved(span, -start) for span in spans]
            if options.composites:
                spans, joined = joined_conditions(piece, spans, [(a - start, b - start) for a, b in long_spans])
                composite.update(joined)
                composite.update(annotator.composite_ids(spans))
            long_forms.update(
                ((span.start + start, span.end + start), span.result)
                for span in spans
                if span.short_form_of is None and (span.start + start, span.end + start) in long_spans
            )
            annotator.resolve_short_forms(spans, long_forms, start)
            if options.assertion:
                mark_assertions(piece, spans)
            annotations += (_moved(span, start) for span in spans)
            linking.update(end - start)
    annotator.decide(annotations, composite)
    return replace(document, annotations=annotations)


def can_cut(annotator: Any, document: Document, text: str, at: int) -> bool:
    """Whether the document may be cut at ``at``: read ``REACH`` characters either side, the finders find no span across
    it (coordinations widened as the annotator widens them), no abbreviation's definition runs over it ("long form" and
    "(SF)" parted by a cut at white space), no heading's section, and the spans near it keep their other senses and
    assertions when the two sides are read apart ("Rash? No" reads back over a sentence end)."""
    low, high = max(0, at - REACH), min(len(text), at + REACH)
    snippet, cut = text[low:high], at - low
    spans = [span.span for span in annotator.found_in(window_document(document, low, high))]
    if any(start < cut < end for start, end in spans):
        return False
    if annotator.options.abbreviations and any(d.start < cut < d.end for d in find_abbreviations(snippet)):
        return False
    if annotator.options.assertion and section_runs_over(text, at):
        return False
    left = [span for span in spans if span[1] <= cut]
    right = [(start - cut, end - cut) for start, end in spans if start >= cut]
    return _readings(snippet, spans, annotator.options.assertion) == (
        _readings(snippet[:cut], left, annotator.options.assertion) + _readings(snippet[cut:], right, annotator.options.assertion)
    )


def _readings(text: str, spans: list[tuple[int, int]], assertion: bool) -> list[tuple]:
    """What the steps that read around a span make of each of ``spans``: its other sense, and its assertion."""
    senses = [sense_here(text, start, end) for start, end in spans]
    return list(zip(senses, assertions(text, spans) if assertion else [None] * len(spans)))


def propagation_seeds(found: list[list[Annotation]], text: str) -> list[Annotation]:
    """One span for each string found anywhere in the document, with the type and the reading propagation gives its
    occurrences (the first found in text order), placed after every window: handed to ``propagated`` beside a window's
    own spans, they make it propagate the whole document's strings there (it reads its strings from the spans given)."""
    folded = len(text.lower()) == len(text)
    text_of: dict[str, str] = {}
    types: dict[str, str | None] = {}
    readings: dict[str, str] = {}
    for spans in found:
        for span in spans:
            if span.text.strip():
                key = span.text.lower() if folded and any(c.islower() for c in span.text) else span.text
                text_of.setdefault(key, span.text)
                if types.get(key) is None:
                    types[key] = span.type
                if span.reading != span.text and key not in readings:
                    readings[key], text_of[key] = span.reading, span.text
    return [
        Annotation(
            _PAST_ANY_WINDOW,
            _PAST_ANY_WINDOW + len(written),
            written,
            type=types[key],
            infons={READ_AS: readings[key]} if key in readings else {},
        )
        for key, written in text_of.items()
    ]


def _mention(doc_id: str, text: str, span: Annotation, offset: int, context: int) -> Mention:
    """What the linker sees for a window's span: as ``Document.mention`` gives it, in the document's offsets."""
    start, end = span.start + offset, span.end + offset
    left = text[max(0, start - context) : start] if context else None
    right = text[end : end + context] if context else None
    return Mention(span.reading, doc_id, start, end, left, right)


def _moved(span: Annotation, offset: int) -> Annotation:
    """A window's span in the document's offsets (in place)."""
    span.start += offset
    span.end += offset
    if span.short_form_of is not None:
        span.short_form_of = (span.short_form_of[0] + offset, span.short_form_of[1] + offset)
    return span

"""Linking in running text: find mention spans, resolve abbreviations, link, make each document consistent. The steps,
each a component of its own and each switchable (``AnnotateOptions``):

1. finders (``medlink.text.finders``: the dictionary over the KB's names, a trained tagger, or both) give spans (less
   a short form whose context gives it a sense that is no condition, "98% on RA": ``finders/other_senses.py``); with
   both, ``combine`` says which are kept (every span, or the tagger's spans that the dictionary confirms, optionally
   with the dictionary's where the tagger found nothing, or those a span selector fitted on annotated documents
   chooses); overlaps are resolved by the finders' policy;
2. abbreviations (Schwartz-Hearst, ``medlink.text.abbreviations``): where a found mention is the long form of a "long
   form (SF)" definition, the SF there and at every later occurrence becomes a mention linked through that long form
   (``abbreviation_choice``: ``long`` always takes the long form's answer; ``best`` keeps whichever scored higher);
3. each span becomes a ``Mention`` with ``context`` characters of text either side, and the linker ranks candidates for
   all mentions of a batch of documents at once (a repeated string is searched once); a head of a longer phrase
   ("diabetes" in "Juvenile diabetes") is widened to the phrase where the phrase links, else marked a partial match at a
   lower probability (``linking.partial``); a condition a drug is said to cause takes the KB's drug-induced concept of
   it (``linking.drug_caused``);
4. per-document consistency (``medlink.linking.consistency``): other occurrences of a found string become mentions
   too, and one string takes one answer per document;
5. composite mentions (``medlink.text.coordination``): a coordination that is not itself a name ("breast and ovarian
   cancer") takes the concepts of its spelt-out conjuncts, one id each; a condition's adjective found before another
   condition ("hemorrhagic cystitis", ``linking.joined``) is one span of both;
6. assertion status (``medlink.text.assertion``, ConText): whether the text says the patient has each mention's
   condition ("denies chest pain": absent; "r/o PE": possible; "mother had breast cancer": someone else's), and whether
   it is past, in the span's infons.

A front end (CLI, REST, spaCy, batch) only turns its input into ``Document``s and renders what comes back.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from medlink.collector import collection_paused
from medlink.core import Annotation, Document, LinkResult, Mention
from medlink.errors import MedlinkError
from medlink.kb.readers.files import decoded_lines, require_file
from medlink.linking.codes import code_spans
from medlink.linking.consistency import CONSISTENCY_MODES, propagated, vote
from medlink.linking.drug_caused import caused_by_drugs
from medlink.linking.joined import joined_conditions
from medlink.linking.linker import Linker
from medlink.linking.partial import MODIFIER_MODES, phrase_heads, widen_or_discount
from medlink.linking.short_forms import linked_through, shared_copy, widened_to_coordinations, with_short_forms
from medlink.text.assertion import mark_assertions
from medlink.text.coordination import expand_coordination
from medlink.text.finders.base import COMBINE_POLICIES, DEFAULT_COMBINE, OVERLAP_POLICIES, MentionFinder, find_all_in
from medlink.text.finders.dictionary import DictionaryFinder
from medlink.text.finders.exclusions import read_exclusions
from medlink.text.finders.given import GIVEN, GivenSpans
from medlink.text.finders.other_senses import without_other_senses
from medlink.text.finders.selector.wiring import dictionary_signature, with_selector
from medlink.text.windows import WINDOW_CHARS

log = logging.getLogger(__name__)
FINDER_CHOICES = ("dictionary", "tagger", "both", "given")  # given: the spans the documents carry
RESULTS_KEPT = 100_000  # link results remembered by an annotator (by normalised mention text)
ABBREVIATION_CHOICES = ("long", "best")


@dataclass(frozen=True)
class AnnotateOptions:
    """What ``Annotator`` does besides finding and linking (see the module docstring)."""

    k: int = 5
    context: int = 0
    abbreviations: bool = True
    abbreviation_choice: str = "long"
    consistency: str = "both"
    composites: bool = True
    assertion: bool = True
    overlap: str = "longest"
    combine: str = DEFAULT_COMBINE  # with several finders
    generators: tuple[str, ...] | None = None
    batch_documents: int = 32
    window: int = WINDOW_CHARS  # characters: a longer document is read a window at a time (``linking.windowed``)
    span_threshold: float | None = None  # the span selector's (learned combination): None keeps the one fitted with it
    target_namespace: str | None = None  # coding mode: each span's codes of this namespace (``linking.coding``)
    mappings: tuple[str, ...] = ()  # coding mode: SSSOM files of mappings into it, beside medlink's own
    # heads of longer phrases (``linking.partial``): widen, phrase, partial (never widened) or off; None: phrase in coding
    # mode, where clinical notes mark the whole phrase and its words choose the code (side, type), else the index's own
    # (the default indexes: phrase), else partial (corpora such as NCBI Disease mark the head alone)
    modifiers: str | None = None

    @property
    def modifiers_mode(self) -> str:
        """``modifiers``, or its default: phrase in coding mode, partial otherwise."""
        return self.modifiers or ("phrase" if self.target_namespace else "partial")

    def __post_init__(self) -> None:
        for value, choices, what in (
            (self.consistency, CONSISTENCY_MODES, "consistency"),
            (self.combine, COMBINE_POLICIES, "combine policy"),
            (self.abbreviation_choice, ABBREVIATION_CHOICES, "abbreviation choice"),
            (self.overlap, OVERLAP_POLICIES, "overlap policy"),
            (self.modifiers_mode, MODIFIER_MODES, "modifiers mode"),
        ):
            if value not in choices:
                raise MedlinkError(f"unknown {what} {value!r}; known: {', '.join(choices)}")
        if self.k < 1 or self.context < 0 or self.batch_documents < 1 or self.window < 1:
            raise MedlinkError("k, batch_documents and window must be >= 1, context >= 0")
        if self.span_threshold is not None and not 0.0 <= self.span_threshold <= 1.0:
            raise MedlinkError(f"span threshold {self.span_threshold} is outside [0, 1]")


def own_modifiers(options: AnnotateOptions, manifest: dict) -> AnnotateOptions:
    """``options`` with the index's own heads-of-phrases mode where they name none and code nothing (the default indexes'
    phrase: ``linking.index.CLINICAL_MODIFIERS``)."""
    mode = (manifest.get("dictionary") or {}).get("modifiers")
    return replace(options, modifiers=mode) if mode and options.modifiers is None and not options.target_namespace else options


LONG_RUN = 100  # documents annotated (before a batch) from which loading the compiled stages pays for itself


class Annotator:
    """Finders + a linker: documents in, documents with linked annotations out."""

    def __init__(self, linker: Linker, finders: Sequence[MentionFinder], options: AnnotateOptions | None = None):
        if not finders:
            raise MedlinkError("an annotator needs at least one mention finder")
        self.linker = linker
        self.finders = list(finders)
        self.options = own_modifiers(options or AnnotateOptions(), getattr(linker, "manifest", None) or {})
        self.dictionary = next(
            (f for f in (getattr(f, "dictionary", f) for f in self.finders) if isinstance(f, DictionaryFinder)), None
        )  # tells a name (composites)
        self._results: OrderedDict[str, LinkResult] = OrderedDict()  # by normalised text, across batches (LRU)
        self._heads: dict[str, str] = {}  # a batch's phrases, each with the head it was found around
        self._prepared, self._documents = False, 0  # for a long run (``_prepare_for_a_long_run``)

    @classmethod
    def load(
        cls,
        index: Path | str,
        finder: str = "dictionary",
        tagger: Path | str | None = None,
        options: AnnotateOptions | None = None,
        exclude_names: Path | str | None = None,
        selector: Path | str | None = None,
        nil_threshold: float | None = None,
    ) -> Annotator:
        """An index folder's (or ``default`` / ``default-dense``) linker with the finders asked for (``tagger``: a folder from ``medlink train tagger``;
        ``exclude_names``: a file of names the dictionary finder must not report, one per line; ``selector``: a span
        selector from ``medlink train selector``, default the tagger folder's, for ``combine`` learned;
        ``nil_threshold``: instead of the index's own)."""
        options = options or AnnotateOptions()
        if finder not in FINDER_CHOICES:
            raise MedlinkError(f"unknown finder {finder!r}; known: {', '.join(FINDER_CHOICES)}")
        if finder in ("tagger", "both") and tagger is None:
            raise MedlinkError(f"--finder {finder} needs a tagger folder (--tagger DIR, trained with 'medlink train tagger')")
        if (options.combine == "learned" or selector is not None or options.span_threshold is not None) and finder != "both":
            raise MedlinkError("a span selector chooses between the tagger's and the dictionary's spans: it needs --finder both")
        from medlink.linking.index import resolve_index  # 'default' / 'default-dense' as the CLI reads them

        linker = (
            Linker.load(resolve_index(index)).with_decisions(nil_threshold).prepare()
        )  # prepared: a corpus's first documents do not pay for it
        finders: list[MentionFinder] = [GivenSpans()] if finder == GIVEN else []
        if finder in ("tagger", "both"):
            from medlink.text.finders.tagger import TaggerFinder  # needs torch: imported only when asked for

            finders.append(TaggerFinder.load(Path(tagger)))
        if finder in ("dictionary", "both"):
            dictionary = linker.dictionary_finder()
            if exclude_names is not None:
                path = require_file(exclude_names, "names to exclude")
                dictionary.excluded = read_exclusions((line for _number, line in decoded_lines(path, None)), linker.normalize)
            finders.append(dictionary.prepare())
        if finder == "both":
            finders = with_selector(finders, Path(tagger), selector, options, lambda: dictionary_signature(linker.manifest, exclude_names))
        return cls(linker, finders, options)

    # -- annotating ---------------------------------------------------------------------------
    def annotate_text(self, text_or_document: str | Document) -> Document:
        """One text (or document), annotated."""
        document = Document.from_text(text_or_document) if isinstance(text_or_document, str) else text_or_document
        return next(self.annotate([document]))

    def annotate(self, documents: Iterable[Document], progress: bool = False) -> Iterator[Document]:
        """Each document with its annotations replaced by the linked spans found in it, in input order. A document longer
        than ``options.window`` characters is read a window at a time (``linking.windowed``: the same spans, memory
        bounded by the window); with ``progress``, one over a megabyte shows on stderr how far it got, in characters."""
        batch: list[Document] = []
        for document in documents:
            if self._windowed(document):
                yield from self._annotate_batch(batch)
                batch = []
                from medlink.linking.windowed import annotate_windowed  # it builds on this module

                yield annotate_windowed(self, document, progress)
                continue
            batch.append(document)
            if len(batch) == self.options.batch_documents:
                yield from self._annotate_batch(batch)
                batch = []
        yield from self._annotate_batch(batch)

    def _prepare_for_a_long_run(self, documents: int) -> None:
        """After ``LONG_RUN`` documents the run is a long one: the linker's compiled stages are loaded once
        (``Linker.prepare``), so that a batch's call of 64 distinct mentions or more takes them; a short run (a request,
        a spaCy doc, a hundred abstracts) never pays for loading them."""
        if not self._prepared and self._documents >= LONG_RUN:
            self.linker.prepare(compiled=True)
            self._prepared = True
        self._documents += documents

    def _windowed(self, document: Document) -> bool:
        """Whether ``document`` is read a window at a time: longer than a window, spans to find (not ``--finder given``)."""
        return not isinstance(self.finders[0], GivenSpans) and max((p.end for p in document.passages), default=0) > self.options.window

    def _annotate_batch(self, documents: list[Document]) -> list[Document]:
        if not documents:
            return []
        self._prepare_for_a_long_run(len(documents))
        with collection_paused():  # the batch's spans and results all live on (``medlink.collector``)
            return self._annotate_paused(documents)

    def _annotate_paused(self, documents: list[Document]) -> list[Document]:
        annotated = [replace(document, annotations=spans) for document, spans in zip(documents, self.spans_in(documents))]
        mentions = [(document, span) for document in annotated for span in document.annotations]
        texts = {id(document): document.text for document in annotated}
        spans = [document.mention(span, self.options.context, texts[id(document)]) for document, span in mentions]
        results = self.link_mentions([*spans, *self._phrases_of(annotated)])[: len(spans)]  # one call for both
        for (_document, span), result in zip(mentions, results):
            span.result = result
        link, key = self.link_mentions, self.linker.key
        for document in annotated:  # heads of longer phrases: widened to the phrase, or partial matches
            text = texts[id(document)]
            document.annotations = widen_or_discount(text, document.annotations, link, self.known_word, self.options.modifiers_mode, key)
        caused_by_drugs([(texts[id(d)], d.annotations) for d in annotated], link, key, self.dictionary and self.dictionary.is_name)
        composite = {}
        if self.options.composites:
            for document in annotated:  # "hemorrhagic cystitis": both conditions
                document.annotations, joined = joined_conditions(texts[id(document)], document.annotations)
                composite.update(joined)
            composite.update(self.composite_ids([span for document in annotated for span in document.annotations]))
        for document in annotated:
            self._resolve_short_forms(document)
            if self.options.target_namespace:  # a pregnancy code's trimester, a combination code: what the note tells
                from medlink.linking.note_codes import codes_from_the_note

                codes_from_the_note(texts[id(document)], document.annotations, self._codes)
            self.decide(document.annotations, composite)
            if self.options.assertion:
                mark_assertions(texts[id(document)], document.annotations)
        return annotated

    def _phrases_of(self, documents: Sequence[Document]) -> list[Mention]:
        """The longer phrases around the documents' spans that the modifiers step will link (``linking.partial``), to
        be linked with the spans: remembered results, not a call per document. None where a reranker reads context
        (no result is remembered there) or the step is off. Each phrase's head is kept: coding reads its concepts."""
        if self.options.modifiers_mode == "off":
            return []
        self._heads = phrase_heads([(d.text, d.annotations) for d in documents], self.known_word)
        return [] if self._reads_context else [Mention(text) for text in sorted(self._heads)]

    @cached_property
    def _codes(self):
        """Coding mode's code set (``linking.coding``), for the steps that read a whole note."""
        from medlink.linking.coding import coder_for

        return coder_for(self.linker, self.options.target_namespace, self.options.mappings).codes

    @cached_property
    def _reads_context(self) -> bool:
        return any(getattr(reranker, "reads_context", False) for reranker in self.linker.rerankers)

    def decide(self, annotations: Sequence[Annotation], composite: dict[int, tuple[str, ...]]) -> None:
        """A document's decisions once all its spans are linked: one string, one answer (the vote), then each span's ids
        (a composite span's from ``composite``, by ``id(span)``)."""
        if self.options.consistency in ("vote", "both"):
            vote(annotations, lambda a: self.linker.key(a.reading))  # "c/o CP" read as chest pain votes apart
        for span in annotations:
            best = span.result.best if span.result is not None else None
            span.ids = composite.get(id(span)) or ((best.concept_id,) if best is not None else ())

    def composite_ids(self, spans: list[Annotation]) -> dict[int, tuple[str, ...]]:
        """The concepts of each coordinated span ("breast and ovarian cancer": breast cancer's and ovarian cancer's),
        by ``id(span)``: its conjuncts spelt out (``medlink.text.coordination``) and linked. A span whose first
        candidate's alias spells it whole ("Hereditary Breast and Ovarian Cancer"), or an exact stage found it ("Major
        depressive disorder, single episode": *..., single episode, unspecified*), is a name, not a coordination."""
        parts: dict[int, list[str]] = {}
        for span in spans:
            expanded = expand_coordination(span.text) if span.result is not None and span.short_form_of is None else None
            if expanded and not self._names_whole(span):
                parts[id(span)] = expanded
                span.infons["composite"] = " | ".join(expanded)
        if not parts:
            return {}
        texts = list(dict.fromkeys(part for expanded in parts.values() for part in expanded))
        linked = dict(zip(texts, self.link_mentions([Mention(text) for text in texts])))
        out = {}
        for span in spans:
            if id(span) not in parts:
                continue
            results = [linked[part] for part in parts[id(span)]]
            out[id(span)] = tuple(dict.fromkeys(r.best.concept_id for r in results if r.best is not None))
            if out[id(span)] and span.result.nil is not None:  # the parts decide, not the whole string's own (NIL) ranking
                probabilities = [r.probability for r in results if r.best is not None]
                span.result = replace(span.result, nil=False, probability=min(probabilities) if None not in probabilities else None)
        return out

    def known_word(self, word: str) -> bool:
        """Do the KB's names use ``word`` (the dictionary finder's vocabulary; every word without one)?"""
        if self.dictionary is None:
            return True
        words = self.dictionary.normalize(word).split()
        return bool(words) and all(w in self.dictionary.automaton.frequencies for w in words)

    @cached_property
    def _exact_stages(self) -> set[str]:
        """The linker's exact generators: a score of 1 there says a name spells the mention, word for word."""
        return {g.name for g in self.linker.config.generators if g.type == "exact"}

    def _names_whole(self, span: Annotation) -> bool:
        """Whether ``span``'s first candidate names all of its text (its alias is the span, or an exact stage scored it 1)."""
        best = span.result.best if span.result is not None else None
        return best is not None and (
            (best.matched_name is not None and self.linker.key(best.matched_name) == self.linker.key(span.text))
            or any(best.scores_by_stage.get(stage) == 1.0 for stage in self._exact_stages)
        )

    def link_mentions(self, mentions: list[Mention]) -> list[LinkResult]:
        """Link results for ``mentions``; without a context-reading reranker a string's result is the same in every
        document, so results are remembered across batches (a corpus repeats its disease names endlessly)."""
        link = lambda batch: self.linker.link(batch, self.options.k, self.options.generators)  # noqa: E731
        if self.options.target_namespace:
            from medlink.linking.coding import link_coded

            namespace, mappings = self.options.target_namespace, self.options.mappings
            link = lambda batch: link_coded(  # noqa: E731
                self.linker, batch, self.options.k, namespace, self.options.generators, mappings, [self._heads.get(m.text) for m in batch]
            )
        if self._reads_context:
            return link(mentions)
        keys = [self.linker.key(m.text) if m.text.strip() else "" for m in mentions]
        missing = {key: m for key, m in zip(keys, mentions) if key and key not in self._results}
        for key, result in zip(missing, link(list(missing.values())) if missing else []):
            self._results[key] = result
        while len(self._results) > RESULTS_KEPT:
            self._results.popitem(last=False)
        out = []
        for key, mention in zip(keys, mentions):
            found = self._results.get(key) if key else None
            if found is None:
                out.extend(link([mention]))
            else:
                self._results.move_to_end(key)
                out.append(shared_copy(found, mention))
        return out

    def spans_in(self, documents: Sequence[Document]) -> list[list[Annotation]]:
        """Every span to link in each document (finders, then abbreviations, then propagation), in text order; given
        spans (``--finder given``) exactly as given, a short form among them linked through its long form."""
        if isinstance(self.finders[0], GivenSpans):
            return [self._given(document) for document in documents]
        found = find_all_in(self.finders, documents, self.options.overlap, self.options.combine)
        return [self._completed(text, self._widened(text, spans)) for text, spans in ((d.text, f) for d, f in zip(documents, found))]

    def found_in(self, document: Document) -> list[Annotation]:
        """The finders' spans in one document (or window), coordinations widened: what the later steps start from."""
        return self._widened(document.text, find_all_in(self.finders, [document], self.options.overlap, self.options.combine)[0])

    def _widened(self, text: str, spans: list[Annotation]) -> list[Annotation]:
        """The finders' spans with the index's codes written in the text ("HTN (I10)") added, coordinations widened."""
        codes = code_spans(text, self.linker.codes, spans) if any(c.isdigit() for c in text) else []
        spans = sorted(spans + codes, key=lambda a: (a.start, a.end)) if codes else spans
        if self.options.composites and self.dictionary is not None:
            return widened_to_coordinations(text, spans, self.dictionary.is_name)
        return spans

    def _given(self, document: Document) -> list[Annotation]:
        given = self.finders[0].find(document)
        if self.options.abbreviations:
            short = {s.span: s.short_form_of for s in with_short_forms(document.text, given) if s.short_form_of is not None}
            given = [replace(s, short_form_of=short[s.span]) if s.span in short else s for s in given]
        return given

    def _completed(self, text: str, spans: list[Annotation]) -> list[Annotation]:
        """The spans found (coordinations widened) with short forms and repeated strings added, other senses dropped."""
        if self.options.abbreviations:
            spans = with_short_forms(text, spans)
        if self.options.consistency in ("propagate", "both"):
            spans = sorted(spans + propagated(text, spans), key=lambda a: (a.start, a.end))
        return without_other_senses(text, spans)  # "98% on RA": room air, whichever finder or occurrence found it

    def _resolve_short_forms(self, document: Document) -> None:
        long_forms = {span.span: span.result for span in document.annotations if span.short_form_of is None}
        self.resolve_short_forms(document.annotations, long_forms)

    def resolve_short_forms(
        self, spans: Iterable[Annotation], long_forms: dict[tuple[int, int], LinkResult | None], offset: int = 0
    ) -> None:
        """Link each short form among ``spans`` through its long form's result (``short_forms.linked_through``)."""
        linked_through(spans, long_forms, self.options.abbreviation_choice == "best", offset)

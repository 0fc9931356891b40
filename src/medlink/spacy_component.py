"""medlink as a spaCy pipeline component: ``nlp.add_pipe("medlink", config={"index": ..., "finder": ...})``.

The component turns spaCy docs into medlink ``Document``s, lets an ``Annotator`` find (``dictionary``) or take
(``ents``: the doc's entities, from any NER earlier in the pipeline) the spans and link them, and writes the results
back as span extension attributes. ``nlp.pipe`` hands the annotator a batch of docs at once, so linking is batched
across documents as ``medlink annotate`` batches it.

Why attribute names per component: spaCy keeps a span's extension values by the span's character offsets alone, so two
linkers writing one attribute name would overwrite each other on the same span. The component named ``medlink`` writes
``span._.kb_ents`` (scispaCy's name), ``span._.medlink``, ``span._.medlink_ids`` and ``span._.medlink_assertion``; one
named ``hpo`` writes ``span._.hpo_kb_ents``, ``span._.hpo``, ``span._.hpo_ids`` and ``span._.hpo_assertion``.

Why nothing is saved by ``to_disk``: the config keeps the index (a folder, ``default`` or ``default-dense``) and the
settings, and ``spacy.load`` loads the index again from them; no medlink object is pickled into the pipeline folder.
"""

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Optional

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import minibatch

from medlink.core import Annotation, Assertion, Candidate, Document, LinkResult, Mention
from medlink.linking.annotator import AnnotateOptions, Annotator
from medlink.linking.index import resolve_index

FINDERS = ("dictionary", "ents")
DEFAULT_NAME = "medlink"
STORE = "medlink"  # doc.user_data keys: (STORE, component name, start_char, end_char) -> the span's results, as plain data
SCISPACY_KB_ENTS = "kb_ents"  # the attribute scispaCy's linker fills: code written for it reads this component's too


def attribute_names(name: str) -> dict[str, str]:
    """The span extension attributes the component called ``name`` writes, by what they hold."""
    if not name.isidentifier():
        raise ValueError(f"a medlink component's name names its span attributes (span._.{name}): use letters, digits and _, not {name!r}")
    return {
        "kb_ents": SCISPACY_KB_ENTS if name == DEFAULT_NAME else f"{name}_kb_ents",
        "result": name,
        "ids": f"{name}_ids",
        "assertion": f"{name}_assertion",
    }


@Language.factory(
    "medlink",
    default_config={
        "index": "default",
        "finder": "dictionary",
        "k": 5,
        "nil_threshold": None,
        "assertion": True,
        "abbreviations": True,
        "consistency": "both",
        "composites": True,
        "context": 0,
        "overlap": "longest",
        "exclude_names": None,
        "labels": [],
        "label": "ENTITY",
        "spans_key": None,
        "batch_size": 32,
        "split_tokens": True,
    },
)
def make_medlink_component(
    nlp: Language,
    name: str,
    index: str,
    finder: str,
    k: int,
    nil_threshold: Optional[float],  # noqa: UP045 - spaCy validates the config against these hints with pydantic
    assertion: bool,
    abbreviations: bool,
    consistency: str,
    composites: bool,
    context: int,
    overlap: str,
    exclude_names: Optional[str],  # noqa: UP045
    labels: list[str],
    label: str,
    spans_key: Optional[str],  # noqa: UP045
    batch_size: int,
    split_tokens: bool,
) -> "MedlinkComponent":
    """The ``medlink`` factory (spaCy's ``spacy_factories`` entry point): loads the index once for the component.

    ``finder``: ``dictionary`` finds mentions in the KB's names; ``ents`` links the doc's entities (only those whose
    label is in ``labels``, when given). ``label``: the label of the spans ``dictionary`` finds. ``spans_key``: the
    ``doc.spans`` group (default: the component's name). ``split_tokens``: split a token a found span starts or ends
    inside ("FHL" in "FHL-1"), so the span is the one ``medlink annotate`` finds. The rest are ``medlink annotate``'s."""
    if finder not in FINDERS:
        raise ValueError(f"unknown medlink finder {finder!r}; known: {', '.join(FINDERS)}")
    attribute_names(name)  # refused before an index is loaded
    options = AnnotateOptions(
        k=k,
        context=context,
        abbreviations=abbreviations,
        consistency=consistency,
        composites=composites,
        assertion=assertion,
        overlap=overlap,
        batch_documents=batch_size,
    )
    annotator = Annotator.load(
        resolve_index(index), "dictionary" if finder == "dictionary" else "given", None, options, exclude_names, None, nil_threshold
    )
    return MedlinkComponent(
        name, annotator, finder, label=label, labels=labels, spans_key=spans_key or name, batch_size=batch_size, split_tokens=split_tokens
    )


class MedlinkComponent:
    """Finds or takes a doc's spans, links them, and writes each span's results under this component's attributes."""

    def __init__(
        self,
        name: str,
        annotator: Annotator,
        finder: str = "dictionary",
        *,
        label: str = "ENTITY",
        labels: Iterable[str] = (),
        spans_key: str | None = None,
        batch_size: int = 32,
        split_tokens: bool = True,
    ):
        self.name, self.annotator, self.finder, self.label = name, annotator, finder, label
        self.split_tokens = split_tokens
        self.labels = frozenset(labels)
        self.spans_key = spans_key or name
        self.batch_size = batch_size
        self.attributes = attribute_names(name)
        for what, attribute in self.attributes.items():
            Span.set_extension(attribute, getter=stored(name, what), force=True)

    def __call__(self, doc: Doc) -> Doc:
        self.annotate([doc])
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int | None = None) -> Iterator[Doc]:
        """The docs of ``stream`` in order, linked a batch at a time (every mention of a batch in one linker call)."""
        for batch in minibatch(stream, size=batch_size or self.batch_size):
            self.annotate(batch)
            yield from batch

    def annotate(self, docs: list[Doc]) -> None:
        """Link the spans of ``docs`` together and write the results onto them."""
        documents = [self.document(doc, str(number)) for number, doc in enumerate(docs, 1)]
        for doc, annotated in zip(docs, self.annotator.annotate(documents)):
            self.write(doc, annotated.annotations)

    def document(self, doc: Doc, doc_id: str) -> Document:
        """The medlink document of ``doc``: its text, and with ``ents`` its entities as the spans to link."""
        document = Document.from_text(doc.text, doc_id)
        if self.finder == "ents":
            document.annotations = [
                Annotation(ent.start_char, ent.end_char, ent.text, type=ent.label_)
                for ent in doc.ents
                if not self.labels or ent.label_ in self.labels
            ]
        return document

    def write(self, doc: Doc, annotations: list[Annotation]) -> None:
        """Each annotation's results on its span; the spans in ``doc.spans``, and (``dictionary``) in ``doc.ents`` where
        no entity is there already."""
        if self.split_tokens and self.finder == "dictionary":
            split_inside(doc, {offset for a in annotations for offset in (a.start, a.end)})
        spans = []
        for annotation in annotations:
            span = doc.char_span(annotation.start, annotation.end, label=annotation.type or self.label, alignment_mode="expand")
            if span is None or not len(span):
                continue
            doc.user_data[(STORE, self.name, span.start_char, span.end_char)] = span_data(annotation)
            spans.append(span)
        doc.spans[self.spans_key] = spans
        if self.finder == "dictionary":
            doc.set_ents(unclaimed(doc, spans), default="unmodified")


def span_data(annotation: Annotation) -> dict:
    """What a span keeps of its annotation, as plain data (``doc.to_bytes``, ``DocBin`` and ``nlp.pipe(n_process=...)``
    write ``doc.user_data`` with msgpack, which takes no medlink objects): the getters below make the objects again."""
    result, said = annotation.result, annotation.assertion
    return {
        "kb_ents": kb_ents(result),
        "result": None if result is None else result_data(result),
        "ids": list(annotation.ids),
        "assertion": None if said is None else [said.status, said.historical, said.cue, said.historical_cue],
    }


def result_data(result: LinkResult) -> list:
    """A ``LinkResult`` as lists, field by field (``dataclasses.asdict`` copies deeply and costs a tenth of the linking)."""
    m = result.mention
    candidates = [
        [c.concept_id, c.score, c.matched_name, c.scores_by_stage, c.evidence, c.name, c.alt_ids, c.probability] for c in result.candidates
    ]
    return [
        [m.text, m.doc_id, m.start, m.end, m.left, m.right],
        candidates,
        result.error,
        result.nil,
        result.probability,
        result.nil_threshold,
    ]


def link_result(data: list) -> LinkResult:
    """``result_data`` read back (msgpack gives lists back as tuples)."""
    mention, candidates, error, nil, probability, nil_threshold = data
    return LinkResult(
        Mention(*mention),
        [Candidate(c[0], c[1], c[2], dict(c[3]), [dict(e) for e in c[4]], c[5], list(c[6]), c[7]) for c in candidates],
        error,
        nil,
        probability,
        nil_threshold,
    )


def stored(name: str, what: str) -> Callable[[Span], Any]:
    """The getter of span attribute ``what`` of component ``name``: its data, read back as the objects it was."""

    def get(span: Span) -> Any:
        data = span.doc.user_data.get((STORE, name, span.start_char, span.end_char))
        value = data.get(what) if data is not None else None
        return None if value is None else READ[what](value)

    return get


READ: dict[str, Callable[[Any], Any]] = {
    "kb_ents": lambda value: [(concept, score) for concept, score in value],
    "result": link_result,
    "ids": tuple,
    "assertion": lambda value: Assertion(*value),
}


def kb_ents(result: LinkResult | None) -> list[tuple[str, float]]:
    """scispaCy's ``kb_ents``: (concept id, probability, or the score where the index is not calibrated), best first;
    empty for a mention judged NIL, as scispaCy leaves a mention no candidate passed its threshold."""
    if result is None or result.nil:
        return []
    return [(c.concept_id, c.probability if c.probability is not None else c.score) for c in result.candidates]


def split_inside(doc: Doc, offsets: set[int]) -> None:
    """Split each token that one of ``offsets`` falls inside of (spaCy's tokens end at "FHL-1", medlink's span at "FHL"),
    leaving the doc's entities' tokens as they are. Each piece but the last depends on the last, which takes the
    token's head, as spaCy's retokenizer asks."""
    if not offsets or not len(doc):
        return
    starts = doc.to_array("IDX")
    inside: dict[int, list[int]] = {}
    for offset in sorted(offsets):
        i = int(numpy.searchsorted(starts, offset, side="right")) - 1
        if i >= 0 and starts[i] < offset < starts[i] + len(doc[i].text):
            inside.setdefault(i, []).append(offset - int(starts[i]))
    entities = {i for ent in doc.ents for i in range(ent.start, ent.end)}
    cuts = [(doc[i], within) for i, within in inside.items() if i not in entities]
    if not cuts:
        return
    with doc.retokenize() as retokenizer:
        for token, within in cuts:
            bounds = [0, *within, len(token.text)]
            pieces = [token.text[a:b] for a, b in zip(bounds, bounds[1:])]
            heads = [(token, len(pieces) - 1)] * (len(pieces) - 1) + [token.head]
            retokenizer.split(token, pieces, heads=heads)


def unclaimed(doc: Doc, spans: list[Span]) -> list[Span]:
    """The spans that overlap no entity of ``doc`` nor an earlier (longer first, at one start) span kept."""
    taken = {i for ent in doc.ents for i in range(ent.start, ent.end)}
    kept = []
    for span in sorted(spans, key=lambda s: (s.start, -len(s))):
        if not taken.intersection(range(span.start, span.end)):
            kept.append(span)
            taken.update(range(span.start, span.end))
    return kept

"""Metrics for linking in running text: gold documents against predicted documents (``core.Document``).

Three measures, each as counts (tp, fp, fn) and precision / recall / F1, micro-averaged over documents:

- ``mentions``: mention finding, strict span. A unit is a distinct span (start, end) of a document; a
  predicted span is a true positive when a gold annotation has exactly that span. A span predicted
  twice (with the same or different ids) counts once.
- ``linking``: end to end, strict. A unit is a span with its ids; a prediction is a true positive when
  its span equals a gold span and one of its ids matches that gold annotation's ids (``id_matches``:
  the id itself, or an id equivalent to it through ``equivalent_ids``). Gold and predicted units are
  paired one to one at each span, so two predictions at one gold span give at most one true positive
  (the other is a false positive), and an exact duplicate prediction (same span, same ids) counts
  once. A prediction's ids are read as one concept's ids (its id and its alternatives, as
  ``Candidate.ids`` gives them): any of them may match. Gold ids are lenient as in the PubTator
  reader: a composite gold annotation ``D001943|D010051`` is matched by either id. A predicted
  annotation without ids (found, not linked / NIL) is no linking claim: it counts for mention finding only.
- ``concepts``: document-level concepts (the BioCreative measure): per document, the set of predicted
  concept ids against the set of gold concept ids. Every gold id counts, so a composite
  ``D001943|D010051`` contributes two concepts. Alternatives of one concept must not count twice, so
  every id, gold and predicted, is first collapsed to one canonical id per concept (``canonical_ids``):
  a KB concept id stands for itself and an alias (MEDIC: the MeSH id beside an OMIM one) for its
  concept. Without ``equivalent_ids`` ids are compared as written, and alternatives the gold gives
  for one concept (``OMIM:201400|C535668``) then count as two concepts: pass the KB's equivalences.

Documents are matched by ``doc_id``. A gold document missing from the predictions predicts nothing
(all its gold units are false negatives); a predicted document that is not among the gold ones, or a
doc id given twice on one side, is an error (ValueError): a mismatch of ids should not pass silently.
A rate whose denominator is 0 is 0.0 (as scikit-learn's ``zero_division=0``).

``document_errors`` lists the false positives and negatives behind the counts (for error analysis);
``evaluate_documents`` counts the same list, so the two always agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from medlink.core import Annotation, Document
from medlink.eval.metrics import EquivalentIds, id_matches

MEASURES: tuple[str, ...] = ("mentions", "linking", "concepts")


@dataclass(frozen=True)
class Score:
    """Counts of one measure and the rates they give."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __add__(self, other: Score) -> Score:
        return Score(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    def to_dict(self) -> dict[str, Any]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": self.precision, "recall": self.recall, "f1": self.f1}


@dataclass(frozen=True)
class DocumentScores:
    """The three measures over a set of documents (see the module docstring)."""

    mentions: Score
    linking: Score
    concepts: Score
    documents: int  # gold documents evaluated
    documents_without_predictions: int  # of those, how many the predictions did not include
    intervals: dict[str, dict[str, Any]] = field(default_factory=dict)  # measure -> 95% intervals of P / R / F1, documents resampled

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "documents_without_predictions": self.documents_without_predictions,
            **{measure: getattr(self, measure).to_dict() for measure in MEASURES},
            **({"intervals": self.intervals} if self.intervals else {}),
        }


@dataclass(frozen=True)
class DocumentError:
    """One false positive (``kind`` "fp") or false negative ("fn") of one measure.

    ``start`` / ``end`` / ``text`` are None for the ``concepts`` measure (a concept of the document, not a span).
    ``ids`` are the erring side's ids; ``other_ids`` what the other side has at the same span (a wrong id at a
    correct span shows as a linking fp whose ``other_ids`` are the gold ids, and an fn with the predicted ones).
    """

    measure: str
    kind: str
    doc_id: str
    start: int | None
    end: int | None
    text: str | None
    ids: tuple[str, ...]
    other_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "kind": self.kind,
            "doc_id": self.doc_id,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "ids": list(self.ids),
            "other_ids": list(self.other_ids),
        }


def canonical_ids(equivalent_ids: EquivalentIds | None) -> dict[str, str]:
    """Id -> the one id that stands for its concept, from ``equivalent_ids`` (concept id -> its ids).

    A concept id maps to itself; an alias of exactly one concept, that is not itself a concept id, maps to that
    concept. An alias shared by several concepts, or one that is also a concept (BioSyn dictionaries have
    ``114480|D001943`` beside ``D001943``), stays as written: collapsing it would merge distinct concepts.
    Ids not in the mapping stand for themselves.
    """
    if not equivalent_ids:
        return {}
    owners: dict[str, set[str]] = {}
    for concept, group in equivalent_ids.items():
        for alias in group:
            owners.setdefault(alias, set()).add(concept)
    mapping = {concept: concept for concept in equivalent_ids}
    for alias, concepts in owners.items():
        if alias not in mapping and len(concepts) == 1:
            mapping[alias] = next(iter(concepts))
    return mapping


def evaluate_documents(
    gold: Iterable[Document], predicted: Iterable[Document], *, equivalent_ids: EquivalentIds | None = None
) -> DocumentScores:
    """Mention finding, end-to-end linking and document-level concept scores of ``predicted`` against ``gold``, with
    their 95% intervals over resampled documents (``document_scores``: the counts alone, document by document)."""
    per_document, documents, missing = document_scores(gold, predicted, equivalent_ids=equivalent_ids)
    totals = {measure: sum(scores, Score(0, 0, 0)) for measure, scores in per_document.items()}
    return DocumentScores(
        totals["mentions"],
        totals["linking"],
        totals["concepts"],
        documents,
        missing,
        {measure: _intervals(scores) for measure, scores in per_document.items()},
    )


def document_scores(
    gold: Iterable[Document], predicted: Iterable[Document], *, equivalent_ids: EquivalentIds | None = None
) -> tuple[dict[str, list[Score]], int, int]:
    """Each measure's counts document by document (in gold order), the gold documents, and how many of them the
    predictions left out."""
    gold_docs, predicted_docs = _by_id(gold, "gold"), _by_id(predicted, "predicted")
    _refuse_unknown(gold_docs, predicted_docs)
    canonical = canonical_ids(equivalent_ids)
    per_document: dict[str, list[Score]] = {measure: [] for measure in MEASURES}
    for doc_id, document in gold_docs.items():
        tps, errors = _compare(document, predicted_docs.get(doc_id), equivalent_ids, canonical)
        for measure in MEASURES:
            fp = sum(1 for e in errors if e.measure == measure and e.kind == "fp")
            fn = sum(1 for e in errors if e.measure == measure and e.kind == "fn")
            per_document[measure].append(Score(tps[measure], fp, fn))
    return per_document, len(gold_docs), sum(1 for doc_id in gold_docs if doc_id not in predicted_docs)


def compare_documents(
    gold: Sequence[Document], predicted: Sequence[Document], baseline: Sequence[Document], *, equivalent_ids: EquivalentIds | None = None
) -> dict[str, dict[str, Any]]:
    """Per measure, ``predicted``'s F1 minus ``baseline``'s on the same gold documents, with the difference's 95% interval
    (paired: both F1s from the same resampled documents, so what the documents share cancels out)."""
    from medlink.eval.intervals import f1, paired_difference, rounded

    ours, _, _ = document_scores(gold, predicted, equivalent_ids=equivalent_ids)
    theirs, _, _ = document_scores(gold, baseline, equivalent_ids=equivalent_ids)
    out = {}
    for measure in MEASURES:
        statistics = [f1([s.tp for s in side], [s.fp for s in side], [s.fn for s in side]) for side in (ours[measure], theirs[measure])]
        difference = sum(ours[measure], Score(0, 0, 0)).f1 - sum(theirs[measure], Score(0, 0, 0)).f1
        out[measure] = {"f1_difference": difference, "interval": rounded(paired_difference(*statistics, list(range(len(ours[measure])))))}
    return out


def document_errors(
    gold: Iterable[Document],
    predicted: Iterable[Document],
    *,
    equivalent_ids: EquivalentIds | None = None,
    measures: Sequence[str] = MEASURES,
) -> list[DocumentError]:
    """Every false positive and false negative of ``measures``, document by document (gold order), spans in text order."""
    unknown = set(measures) - set(MEASURES)
    if unknown:
        raise ValueError(f"unknown measure(s) {sorted(unknown)}; expected some of {list(MEASURES)}")
    gold_docs, predicted_docs = _by_id(gold, "gold"), _by_id(predicted, "predicted")
    _refuse_unknown(gold_docs, predicted_docs)
    canonical = canonical_ids(equivalent_ids)
    out: list[DocumentError] = []
    for doc_id, document in gold_docs.items():
        _tps, errors = _compare(document, predicted_docs.get(doc_id), equivalent_ids, canonical)
        out.extend(e for e in errors if e.measure in measures)
    return out


# -- internals ---------------------------------------------------------------------------------------------------------


def _intervals(scores: Sequence[Score]) -> dict[str, Any]:
    """95% intervals of one measure's precision / recall / F1, documents resampled (``eval.intervals``)."""
    from medlink.eval.intervals import prf_intervals, rounded

    counts = [[s.tp for s in scores], [s.fp for s in scores], [s.fn for s in scores]]
    return {name: rounded(bounds) for name, bounds in prf_intervals(*counts, clusters=list(range(len(scores)))).items()}


def _by_id(documents: Iterable[Document], side: str) -> dict[str, Document]:
    out: dict[str, Document] = {}
    for document in documents:
        if document.doc_id in out:
            raise ValueError(
                f"{side} documents: doc id {document.doc_id!r} given twice (PubTator training files repeat a "
                "document: load them with skip_duplicate_documents)"
            )
        out[document.doc_id] = document
    return out


def _refuse_unknown(gold: Mapping[str, Document], predicted: Mapping[str, Document]) -> None:
    unknown = [doc_id for doc_id in predicted if doc_id not in gold]
    if unknown:
        shown = ", ".join(repr(d) for d in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise ValueError(f"{len(unknown)} predicted document(s) not among the gold documents: {shown}")


def _spans(annotations: Iterable[Annotation]) -> dict[tuple[int, int], list[Annotation]]:
    """Span -> the annotations at it, in the order given."""
    out: dict[tuple[int, int], list[Annotation]] = {}
    for annotation in annotations:
        out.setdefault(annotation.span, []).append(annotation)
    return out


def _distinct_ids(annotations: Iterable[Annotation]) -> list[tuple[str, ...]]:
    """The distinct non-empty id tuples of the annotations at one span (exact duplicates count once)."""
    out: list[tuple[str, ...]] = []
    for annotation in annotations:
        ids = tuple(annotation.ids)
        if ids and ids not in out:
            out.append(ids)
    return out


def _matches(predicted: tuple[str, ...], gold: tuple[str, ...], equivalent_ids: EquivalentIds | None, canonical: Mapping[str, str]) -> bool:
    """One of the predicted ids matches the gold ones: through ``id_matches``, or both standing for one concept
    (``canonical_ids``), whichever side wrote a concept's alternative id."""
    gold_set = frozenset(gold)
    if any(id_matches(i, gold_set, equivalent_ids) for i in predicted):
        return True
    return bool(canonical) and not {canonical.get(i, i) for i in gold}.isdisjoint(canonical.get(i, i) for i in predicted)


def _pair(
    gold: list[tuple[str, ...]], predicted: list[tuple[str, ...]], equivalent_ids: EquivalentIds | None, canonical: Mapping[str, str]
) -> list[tuple[int, int]]:
    """A largest one-to-one pairing (gold index, predicted index) of matching id tuples at one span (augmenting paths)."""
    owner: dict[int, int] = {}  # predicted index -> gold index

    def place(g: int, seen: set[int]) -> bool:
        for p, ids in enumerate(predicted):
            if p in seen or not _matches(ids, gold[g], equivalent_ids, canonical):
                continue
            seen.add(p)
            if p not in owner or place(owner[p], seen):
                owner[p] = g
                return True
        return False

    for g in range(len(gold)):
        place(g, set())
    return sorted((g, p) for p, g in owner.items())


def _compare(
    gold: Document, predicted: Document | None, equivalent_ids: EquivalentIds | None, canonical: Mapping[str, str]
) -> tuple[dict[str, int], list[DocumentError]]:
    """True-positive counts per measure and the errors, for one document."""
    doc_id = gold.doc_id
    gold_spans = _spans(gold.annotations)
    predicted_spans = _spans(predicted.annotations if predicted is not None else ())
    tps = dict.fromkeys(MEASURES, 0)
    errors: list[DocumentError] = []

    def error(measure: str, kind: str, span: tuple[int, int], ids: tuple[str, ...], other: tuple[str, ...], at: list[Annotation]) -> None:
        errors.append(DocumentError(measure, kind, doc_id, span[0], span[1], at[0].text, ids, other))

    for span in sorted(set(gold_spans) | set(predicted_spans)):
        gold_at, predicted_at = gold_spans.get(span, []), predicted_spans.get(span, [])
        gold_ids, predicted_ids = _distinct_ids(gold_at), _distinct_ids(predicted_at)
        if gold_at and predicted_at:
            tps["mentions"] += 1
        elif predicted_at:
            error("mentions", "fp", span, predicted_ids[0] if predicted_ids else (), (), predicted_at)
        else:
            error("mentions", "fn", span, gold_ids[0] if gold_ids else (), (), gold_at)
        pairs = _pair(gold_ids, predicted_ids, equivalent_ids, canonical)
        tps["linking"] += len(pairs)
        paired_gold, paired_predicted = {g for g, _ in pairs}, {p for _, p in pairs}
        gold_other = tuple(i for ids in gold_ids for i in ids)
        predicted_other = tuple(i for ids in predicted_ids for i in ids)
        for p, ids in enumerate(predicted_ids):
            if p not in paired_predicted:
                error("linking", "fp", span, ids, gold_other, predicted_at)
        for g, ids in enumerate(gold_ids):
            if g not in paired_gold:
                error("linking", "fn", span, ids, predicted_other, gold_at)

    gold_concepts = _concepts(gold.annotations, canonical)
    predicted_concepts = _concepts(predicted.annotations if predicted is not None else (), canonical)
    tps["concepts"] = len(gold_concepts & predicted_concepts)
    errors += [DocumentError("concepts", "fp", doc_id, None, None, None, (c,)) for c in sorted(predicted_concepts - gold_concepts)]
    errors += [DocumentError("concepts", "fn", doc_id, None, None, None, (c,)) for c in sorted(gold_concepts - predicted_concepts)]
    return tps, errors


def _concepts(annotations: Iterable[Annotation], canonical: Mapping[str, str]) -> set[str]:
    return {canonical.get(i, i) for annotation in annotations for i in annotation.ids}

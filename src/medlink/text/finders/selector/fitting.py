"""Fitting a span selector (``medlink.text.finders.selector.model``) on annotated documents: ``medlink train selector``.

The documents must be ones the tagger did not learn from, and whose mentions the index's memory does not hold: on
its own training documents a tagger is sure of every gold word and the dictionary finds every remembered mention,
and a selector fitted there would learn to trust both blindly. A development split is the natural choice. The
threshold is chosen out of fold (documents split in ``folds``), then the model is fitted on every document. When the
gold spans carry concept ids and a linker is given, the threshold is the one with the best linking F1 (a span counts
when it is gold and the linker's first candidate is one of its ids: what ``medlink annotate`` is for; spans a
tagger finds that no KB name spells are often mentions the linker gets wrong); else the best strict-span F1. The
report sets the fixed policies (confirmed, union) beside it on the same documents, by both measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medlink.core import Annotation, Document
from medlink.errors import MedlinkError
from medlink.logistic import fit_logistic, logistic
from medlink.progress import bar
from medlink.text.finders.base import resolve_overlaps
from medlink.text.finders.selector.model import FEATURES, SpanSelector, choose, document_candidates

THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.05, 0.96, 0.05))


@dataclass
class Candidates:
    """One document's candidate spans, their features, which are gold spans (``labels``), which of those the linker
    links right (``linked``, None without a linker or ids), and how many gold spans it has."""

    spans: list[Annotation]
    features: np.ndarray
    labels: np.ndarray
    gold: int
    linked: np.ndarray | None = None


def collect(tagger, dictionary, documents: Sequence[Document], progress: bool = True, linker=None) -> list[Candidates]:
    """Every document's candidates, labelled by its gold annotations (a candidate is right when its span is one), and,
    with a ``linker`` and gold ids, whether the linker's first candidate for a gold span is one of its ids."""
    out = []
    for document in bar(progress, iterable=documents, desc="selector: reading documents", unit="doc"):
        spans, features = document_candidates(tagger, dictionary, document)
        gold = {a.span for a in document.annotations}
        out.append(Candidates(spans, features, np.array([s.span in gold for s in spans], np.int8), len(gold)))
    if linker is not None and any(a.ids for d in documents for a in d.annotations):
        label_links(out, documents, linker)
    return out


def label_links(labelled: Sequence[Candidates], documents: Sequence[Document], linker) -> None:
    """Fill each document's ``linked``: its gold-span candidates whose linked concept (id or alt id) is a gold id there;
    each distinct text is linked once."""
    texts = sorted({span.text for d, document in zip(labelled, documents) for span, right in zip(d.spans, d.labels) if right})
    best = {text: result.best for text, result in zip(texts, linker.link(texts, 1))} if texts else {}
    for d, document in zip(labelled, documents):
        ids = {a.span: set(a.ids) for a in document.annotations}
        linked = []
        for span, right in zip(d.spans, d.labels):
            top = best.get(span.text) if right else None
            linked.append(top is not None and bool(({top.concept_id} | set(top.alt_ids or ())) & ids.get(span.span, set())))
        d.linked = np.array(linked, np.int8)


def scores(kept: Sequence[Sequence[Annotation]], documents: Sequence[Candidates], measure: str = "spans") -> dict:
    """Precision / recall / F1 of ``kept`` spans (one list per document): strict span (``spans``), or strict span and
    the linker's concept right (``linking``)."""
    found = sum(len(spans) for spans in kept)
    right = 0
    for spans, labelled in zip(kept, documents):
        values = labelled.labels if measure == "spans" else labelled.linked
        label = {id(span): int(value) for span, value in zip(labelled.spans, values)}
        right += sum(label[id(span)] for span in spans)
    gold = sum(d.gold for d in documents)
    precision, recall = right / found if found else 0.0, right / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "found": found,
        "right": int(right),
        "gold": gold,
    }


def selected(documents: Sequence[Candidates], probabilities: Sequence[np.ndarray], threshold: float) -> list[list[Annotation]]:
    return [[d.spans[i] for i in choose(d.spans, p, threshold)] for d, p in zip(documents, probabilities)]


def fixed_policies(documents: Sequence[Candidates], measures: Sequence[str]) -> dict:
    """What ``--combine confirmed`` and ``union`` keep of the same candidates, by each measure, for the report."""
    tagger, overlapped = FEATURES.index("from_tagger"), FEATURES.index("overlaps_dictionary")
    confirmed = [resolve_overlaps([s for s, row in zip(d.spans, d.features) if row[tagger] and row[overlapped]]) for d in documents]
    union = [resolve_overlaps(d.spans) for d in documents]
    return {
        name: {measure: scores(kept, documents, measure) for measure in measures}
        for name, kept in (("confirmed", confirmed), ("union", union))
    }


def fit_span_selector(
    tagger,
    dictionary,
    documents: Sequence[Document],
    tagger_sha256: str,
    *,
    folds: int = 5,
    seed: int = 0,
    progress: bool = True,
    fitted_on: dict | None = None,
    linker=None,
) -> tuple[SpanSelector, dict]:
    """A selector for ``tagger`` (a ``TaggerFinder``) beside ``dictionary`` (a ``DictionaryFinder``), fitted on
    ``documents`` (gold annotations), and its report; with ``linker`` (and gold ids) the threshold serves linking."""
    labelled = collect(tagger, dictionary, documents, progress, linker)
    rows = np.vstack([d.features for d in labelled]) if labelled else np.zeros((0, len(FEATURES)))
    labels = np.concatenate([d.labels for d in labelled]) if labelled else np.zeros(0, np.int8)
    positives = int(labels.sum())
    if positives == 0 or positives == len(labels):
        what = "is a gold mention span" if positives == 0 else "is wrong"
        raise MedlinkError(
            f"cannot fit a span selector: none of the {len(labels):,} candidate spans in {len(labelled)} documents {what}; "
            "the documents need gold mentions the finders find, and spans they find that are not mentions"
        )
    if len(labelled) < 2:
        raise MedlinkError("cannot fit a span selector on one document: the threshold is chosen out of fold (give at least 2)")
    folds = min(folds, len(labelled))
    fold_of = np.random.RandomState(seed).permutation(len(labelled)) % folds
    held_out: list[np.ndarray | None] = [None] * len(labelled)
    for fold in range(folds):
        train = [d for d, f in zip(labelled, fold_of) if f != fold]
        train_labels = np.concatenate([d.labels for d in train])
        if train_labels.min() == train_labels.max():  # a fold with one class only: score its documents with the prior
            parameters = None
        else:
            parameters = fit_logistic(np.vstack([d.features for d in train]), train_labels)
        for i in np.flatnonzero(fold_of == fold):
            held_out[i] = (
                logistic(labelled[i].features, *parameters) if parameters else np.full(len(labelled[i].spans), train_labels.mean())
            )
    # linking F1 decides when the linker gets some gold span right (ids in another namespace than the KB's: spans decide)
    linked = all(d.linked is not None for d in labelled) and any(d.linked.any() for d in labelled)
    measures = ("spans", "linking") if linked else ("spans",)
    by_threshold = {t: {m: scores(kept, labelled, m) for m in measures} for t in THRESHOLDS for kept in [selected(labelled, held_out, t)]}
    threshold = max(THRESHOLDS, key=lambda t: (by_threshold[t][measures[-1]]["f1"], -abs(t - 0.5)))
    selector = SpanSelector(*fit_logistic(rows, labels), threshold, tagger_sha256)
    report = {
        "documents": len(labelled),
        "candidates": len(labels),
        "gold_mentions": sum(d.gold for d in labelled),
        "gold_among_candidates": positives,
        "folds": folds,
        "threshold": threshold,
        "threshold_for": measures[-1],
        "out_of_fold": by_threshold[threshold],
        **fixed_policies(labelled, measures),
    }
    selector.fitted_on = {**(fitted_on or {}), **report}
    return selector, report


def fitting_documents(
    specs: Sequence[str], tagger_info: dict, memory_sources: Sequence[str], types: frozenset[str] | None = None
) -> tuple[list[Document], list[dict], int]:
    """The annotated documents of ``specs`` (FORMAT:PATH, any number of corpora) to fit a selector on, only their
    annotations of ``types`` (None: all; the other spans are no mentions to the selector), their source records, and
    how many repeated documents were dropped (the same text twice would sit in a training fold and a held-out one).
    Refused: documents without one annotated mention, and any document the tagger was trained on (``tagger_info``'s
    records) or whose mentions the index holds as memory (``memory_sources``' document files): a whole file, a copy or
    a subset of one, known by each document's text."""
    from medlink.training.tagger_data import TRAINING_FORMATS, document_hash, document_hashes, read_annotated

    train_records = tagger_info.get("data", {}).get("train", [])
    learned = {h for record in train_records for h in record.get("document_sha256", [])}
    learned_files = {record.get("sha256") for record in train_records}
    remembered: set[str] = set()
    for source in memory_sources:
        format_name, _, path = source.partition(":")
        if format_name in TRAINING_FORMATS and Path(path).is_file():
            remembered |= document_hashes(read_annotated(source)[0])
    documents: list[Document] = []
    records, seen, repeated = [], set(), 0
    for spec in specs:
        found, record = read_annotated(spec, types)
        if not found:
            raise MedlinkError(f"--documents {spec}: no documents in it")
        if not any(d.annotations for d in found):
            raise MedlinkError(
                f"--documents {spec}: no annotated mention{' of the --types given' if types else ''} in its {len(found)} documents; "
                "a selector learns from gold spans"
            )
        hashes = [document_hash(d) for d in found]
        tagger_saw = sum(h in learned for h in hashes) or (len(found) if record["sha256"] in learned_files else 0)
        if tagger_saw:
            raise MedlinkError(
                f"--documents {spec}: the tagger was trained on {tagger_saw} of its {len(found)} documents; fit the selector "
                "on documents it did not learn from (a dev split)"
            )
        in_memory = sum(h in remembered for h in hashes)
        if in_memory:
            raise MedlinkError(
                f"--documents {spec}: the index holds the mentions of {in_memory} of its {len(found)} documents as memory; "
                "fit the selector on other documents (a dev split)"
            )
        for document, digest in zip(found, hashes):
            if digest in seen:
                repeated += 1
                continue
            seen.add(digest)
            documents.append(document)
        records.append({key: value for key, value in record.items() if key != "document_sha256"})
    return documents, records, repeated

"""A learned span selector: which of the tagger's and the dictionary's spans are mentions (``--combine learned``).

Why: the fixed policies leave recall on the table. "confirmed" keeps the tagger's spans that a dictionary match
overlaps (on NCBI dev, precise but missing mentions), the union keeps everything (the reverse). What tells
a right span from a wrong one is mostly in the tagger's own probabilities, which the argmax throws away: a
dictionary match whose words the tagger gave 40% "mention" is usually one, a tagger span whose first word barely
beat "outside" and that no KB name overlaps usually is not. A logistic regression over those probabilities, where
each finder's spans lie and the span's shape, fitted on annotated documents the tagger did not learn from
(``medlink train selector``), scores every candidate span; the best-scoring spans that do not overlap one another
are kept while they score at least the threshold chosen out of fold for linking (on NCBI dev, spans as found, above
confirmed in strict-span and linking F1: docs/benchmark-history.md, the learned span selector). After abbreviations
and consistency, and linked, NCBI Disease did not gain from it (BENCHMARKS.md, Documents): the spans it adds are mostly
ones no KB name spells, which link poorly; it is there for corpora whose dictionary and tagger disagree more.

A selector is a small JSON file (``span_selector.json`` in the tagger folder by default): plain numbers, no pickle.
It belongs to one tagger (the ``medlink_tagger.json`` it was fitted with is fingerprinted) and refuses another.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medlink.core import Annotation, Document
from medlink.directories import file_checksum, write_atomic
from medlink.errors import MedlinkError
from medlink.logistic import logistic, rounded
from medlink.text.finders.base import OVERLAP_POLICIES, overlap_test

SELECTOR_FILE = "span_selector.json"
SELECTOR_FORMAT = "medlink-span-selector"
SELECTOR_VERSION = 1
FEATURES = (
    "from_tagger",
    "from_dictionary",
    "approximate_match",
    "overlaps_tagger",
    "overlaps_dictionary",
    "first_word_begins",
    "first_word_inside",
    "mean_mention",
    "least_mention",
    "next_word_inside",
    "previous_word_mention",
    "later_words_inside",
    "words",
    "capitals",
    "digits",
    "characters",
    "bracket_before",
    "bracket_after",
)


def tagger_fingerprint(tagger_folder: Path) -> str:
    """sha256 of the tagger's ``medlink_tagger.json`` (its training record: a retrained tagger has another)."""
    from medlink.text.finders.tagger import TAGGER_FILE

    return file_checksum(Path(tagger_folder) / TAGGER_FILE)


def is_selector_file(path: Path) -> bool:
    """Is ``path`` a span selector medlink wrote (the one kind of file ``medlink train selector`` may replace)?"""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("format") == SELECTOR_FORMAT


def word_features(words, starts: list[int], start: int, end: int) -> list[float]:
    """What the tagger thought of the words of [start, end) and of the words either side (``words``: its
    ``TaggedWord``s in text order, ``starts`` their start offsets)."""
    first = bisect.bisect_left(starts, start)
    last = bisect.bisect_left(starts, end, lo=first)
    inside = words[first:last]
    if not inside:
        return [0.0] * 8
    mention = [1.0 - w.outside for w in inside]
    after = words[last].inside if last < len(words) else 0.0
    before = 1.0 - words[first - 1].outside if first > 0 else 0.0
    later = float(np.mean([w.inside for w in inside[1:]])) if len(inside) > 1 else 1.0
    return [inside[0].begins, inside[0].inside, float(np.mean(mention)), min(mention), after, before, later, float(len(inside))]


def candidate_spans(
    text: str, tagger_spans: Sequence[Annotation], dictionary_spans: Sequence[Annotation], words
) -> tuple[list[Annotation], np.ndarray]:
    """Every distinct span either finder found (the tagger's first), and its row of ``FEATURES``."""
    found: dict[tuple[int, int], Annotation] = {}
    kinds: dict[tuple[int, int], set[str]] = {}
    for span in tagger_spans:
        found.setdefault(span.span, span)
        kinds.setdefault(span.span, set()).add("tagger")
    for span in dictionary_spans:
        found.setdefault(span.span, span)
        kinds.setdefault(span.span, set()).add("approximate" if span.infons.get("match") == "approximate" else "dictionary")
    in_tagger, in_dictionary = overlap_test(tagger_spans), overlap_test(dictionary_spans)
    starts = [w.start for w in words]
    rows = np.zeros((len(found), len(FEATURES)), np.float64)
    for row, (start, end) in enumerate(found):
        piece, kind = text[start:end], kinds[(start, end)]
        rows[row] = [
            float("tagger" in kind),
            float("dictionary" in kind),
            float("approximate" in kind),
            float(in_tagger(start, end)),
            float(in_dictionary(start, end)),
            *word_features(words, starts, start, end),
            float(piece.isupper()),
            float(any(c.isdigit() for c in piece)),
            float(len(piece)),
            float(text[start - 1 : start] == "("),
            float(text[end : end + 1] == ")"),
        ]
    return list(found.values()), rows


def document_candidates(tagger, dictionary, document: Document) -> tuple[list[Annotation], np.ndarray]:
    """Both finders' spans in ``document`` (``tagger``: a ``TaggerFinder``; ``dictionary``: a ``DictionaryFinder``) and
    their features."""
    tagger_spans, words = tagger.tag(document)
    return candidate_spans(document.text, tagger_spans, dictionary.find(document), words)


def choose(spans: Sequence[Annotation], probabilities: np.ndarray, threshold: float, overlap: str = "longest") -> list[int]:
    """Indices of the spans kept, in text order: at least ``threshold``, and under ``longest`` the most probable first
    with no two overlapping (``all``: every span at the threshold, overlaps kept as alternatives)."""
    if overlap not in OVERLAP_POLICIES:
        raise ValueError(f"unknown overlap policy {overlap!r}; known: {', '.join(OVERLAP_POLICIES)}")
    order = sorted((i for i in range(len(spans)) if probabilities[i] >= threshold), key=lambda i: (-probabilities[i], spans[i].start))
    if overlap == "all":
        return sorted(order, key=lambda i: spans[i].start)
    kept: list[int] = []
    taken: list[tuple[int, int]] = []  # kept spans by start, disjoint
    for i in order:
        start, end = spans[i].span
        at = bisect.bisect_left(taken, (end, -1))
        if (at == 0 or taken[at - 1][1] <= start) and (at == len(taken) or taken[at][0] >= end):
            kept.append(i)
            taken.insert(at, (start, end))
    return sorted(kept, key=lambda i: spans[i].start)


@dataclass
class SpanSelector:
    """Standardised ``FEATURES`` -> logistic regression -> P(span is a mention); spans kept from ``threshold``."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float
    tagger: str  # the fingerprint of the tagger it was fitted with
    fitted_on: dict | None = None

    def predict(self, features: np.ndarray) -> np.ndarray:
        return logistic(features, self.mean, self.scale, self.coef, self.intercept)

    def to_dict(self) -> dict:
        return {
            "format": SELECTOR_FORMAT,
            "version": SELECTOR_VERSION,
            "features": list(FEATURES),
            "mean": rounded(self.mean),
            "scale": rounded(self.scale),
            "coef": rounded(self.coef),
            "intercept": round(self.intercept, 8),
            "threshold": round(self.threshold, 4),
            "tagger_sha256": self.tagger,
            "fitted_on": self.fitted_on or {},
        }

    def save(self, path: Path) -> Path:
        return write_atomic(Path(path), json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path | str) -> SpanSelector:
        """A file written by ``medlink train selector``; anything else is refused with the reason."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise MedlinkError(f"span selector not found: {path} (fit one with 'medlink train selector')") from None
        except (OSError, ValueError, RecursionError) as error:
            raise MedlinkError(f"{path}: not a span selector ({error})") from error
        if not isinstance(data, dict) or data.get("format") != SELECTOR_FORMAT:
            raise MedlinkError(f"{path}: not a span selector written by 'medlink train selector'")
        if data.get("version") != SELECTOR_VERSION or data.get("features") != list(FEATURES):
            raise MedlinkError(
                f"{path}: the span selector was fitted by a medlink with other features; fit it again ('medlink train selector')"
            )
        try:
            arrays = [np.asarray(data[key], np.float64) for key in ("mean", "scale", "coef")]
            intercept, threshold, tagger = float(data["intercept"]), float(data["threshold"]), str(data["tagger_sha256"])
        except (KeyError, TypeError, ValueError) as error:
            raise MedlinkError(f"{path}: damaged span selector ({error!r}); fit it again ('medlink train selector')") from error
        if not 0.0 <= threshold <= 1.0:
            raise MedlinkError(f"{path}: the span selector's threshold {threshold} is outside [0, 1] (edited or damaged); fit it again")
        if (
            any(a.shape != (len(FEATURES),) for a in arrays)
            or not np.all(arrays[1] > 0)
            or not all(np.all(np.isfinite(a)) for a in arrays)
            or not np.isfinite(intercept)
        ):
            raise MedlinkError(
                f"{path}: the span selector's numbers do not fit its {len(FEATURES)} features (edited or damaged); fit it again"
            )
        return cls(*arrays, intercept, threshold, tagger, data.get("fitted_on"))


class SelectingFinder:
    """A tagger and a dictionary finder whose spans a ``SpanSelector`` chooses from; itself a ``MentionFinder``."""

    name = "tagger+dictionary"

    def __init__(self, tagger, dictionary, selector: SpanSelector, overlap: str = "longest", threshold: float | None = None):
        self.tagger = tagger
        self.dictionary = dictionary
        self.selector = selector
        self.overlap = overlap
        self.threshold = selector.threshold if threshold is None else threshold

    def read_ahead(self, documents: Sequence[Document], within: Sequence[Sequence[tuple[int, int]]] | None = None) -> None:
        """The tagger reads the batch together (``TaggerFinder.read_ahead``), everywhere whatever ``within`` says: the
        selector weighs every word."""
        reader = getattr(self.tagger, "read_ahead", None)
        if reader is not None:
            reader(documents)

    def find(self, document: Document) -> list[Annotation]:
        spans, features = document_candidates(self.tagger, self.dictionary, document)
        probabilities = self.selector.predict(features)
        kept = []
        for i in choose(spans, probabilities, self.threshold, self.overlap):
            span = spans[i]
            kept.append(
                Annotation(
                    span.start,
                    span.end,
                    span.text,
                    span.type,
                    source=span.source,
                    infons={**span.infons, "span_probability": f"{probabilities[i]:.3f}"},
                )
            )
        return kept

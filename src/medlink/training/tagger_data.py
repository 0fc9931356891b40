"""What the mention tagger trains on and is judged by: annotated documents, their BIO windows, strict-span scores.

Documents are ``medlink.core.Document``s with gold ``Annotation``s (type = the corpus's mention type), read from
PubTator, BioC (XML or JSON) or JSONL, any number of files, so the tagger is judged through the same ``find`` a
pipeline calls. Every annotation is kept, those without a concept too (a span annotated without one is still a
mention the tagger should find), unless a ``types`` filter leaves out other entity types (BC5CDR's Chemical spans
for a disease tagger; ``corpora.entity_types``: untyped spans pass).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from medlink.core import Document
from medlink.corpora.entity_types import describe_counts, entity_type, has_type, type_counts
from medlink.directories import file_checksum
from medlink.errors import MedlinkError
from medlink.text.bio import IGNORE, SINGLE_TYPE, Span, encode_labels, pack, tokenize_sentences
from medlink.text.finders.base import resolve_overlaps
from medlink.text.sentences import sentence_spans

TRAINING_FORMATS = ("pubtator", "bioc", "bioc-json", "jsonl")


def read_annotated(spec: str, types: frozenset[str] | None = None) -> tuple[list[Document], dict]:
    """Documents with gold annotations from ``FORMAT:PATH`` (``TRAINING_FORMATS``), only the annotations of ``types``
    (``entity_types.parse_types``; None: all), and a record of the source (path, sha256, counts by type, the types
    kept) for the signature file of what is trained on them."""
    from medlink.corpora.document_files import read_documents

    format_name, sep, path = spec.partition(":")
    if format_name not in TRAINING_FORMATS or not sep or not path:
        raise MedlinkError(
            f"{spec!r}: write FORMAT:PATH with FORMAT one of {', '.join(TRAINING_FORMATS)} (documents with annotated mention spans)"
        )
    documents = list(read_documents(path, format_name))
    read = type_counts(a.type for d in documents for a in d.annotations)
    for document in documents:
        document.annotations = [a for a in document.annotations if a.end > a.start and has_type(a.type, types)]
    record = {
        "format": format_name,
        "path": str(Path(path).resolve()),
        "sha256": file_checksum(Path(path)),
        "documents": len(documents),
        "mentions": sum(len(d.annotations) for d in documents),
        "mentions_by_type": describe_counts(type_counts(a.type for d in documents for a in d.annotations)),
        **(
            {"types": sorted(types), "left_out": describe_counts(read - type_counts(a.type for d in documents for a in d.annotations))}
            if types
            else {}
        ),
        "document_sha256": sorted(document_hashes(documents)),
    }
    return documents, record


def document_hash(document: Document) -> str:
    """The first 16 hex digits of sha256 over a document's text: the same abstract in another file (a copy, a
    subset) is known again, whatever its id."""
    return hashlib.sha256(document.text.encode("utf-8")).hexdigest()[:16]


def document_hashes(documents: Iterable[Document]) -> set[str]:
    return {document_hash(document) for document in documents}


def gold_spans(document: Document, collapsed: str | None) -> list[Span]:
    """The document's gold spans as the tagger learns them: each labelled ``collapsed``, or (None) by its entity type
    (an untyped span by ``SINGLE_TYPE``); nested or overlapping spans reduced to the longest (BIO cannot hold both)."""
    spans = [a for a in document.annotations if a.end > a.start]
    kept = resolve_overlaps(spans, "longest")
    return [Span(a.start, a.end, collapsed or entity_type(a.type) or SINGLE_TYPE) for a in kept]


def collapsed_type(documents: Iterable[Document]) -> str:
    """The one label a tagger that collapses types learns: the documents' entity type when they have one (a
    Chemical-only corpus tags Chemical), else ``SINGLE_TYPE``."""
    kinds = {entity_type(a.type) for d in documents for a in d.annotations} - {None}
    return kinds.pop() if len(kinds) == 1 else SINGLE_TYPE


def mention_types(documents: Sequence[Document], collapse_types: bool) -> list[str]:
    """The types a tagger learns: one (``collapsed_type``), or each entity type of the documents."""
    if collapse_types:
        return [collapsed_type(documents)]
    return sorted({entity_type(a.type) or SINGLE_TYPE for d in documents for a in d.annotations})


@dataclass
class Example:
    """One training window: sub-token ids (no special tokens yet) and their label ids."""

    ids: list[int]
    labels: list[int]


def build_examples(
    documents: Sequence[Document], tokenizer, label_ids: dict[str, int], collapsed: str | None, body: int, overlap: int
) -> tuple[list[Example], dict]:
    """The windows a tagger reads (``pack``: whole consecutive sentences of a document) with their labels, and counts
    (sentences, windows, spans learnt, spans that BIO or the sentence split cannot hold)."""
    examples: list[Example] = []
    counts = {"documents": len(documents), "sentences": 0, "windows": 0, "spans": 0, "spans_not_learnable": 0}
    for document in documents:
        text, spans = document.text, gold_spans(document, collapsed)  # in text order, none overlapping
        counts["spans_not_learnable"] += len(document.annotations) - len(spans)  # nested / overlapping ones
        sentences = sentence_spans(document)
        stream: list[int] = []
        labels: list[int] = []
        lengths: list[int] = []
        at = 0
        for (start, end), sentence in zip(sentences, tokenize_sentences(tokenizer, text, sentences)):
            inside = []
            while at < len(spans) and spans[at].start < end:
                if spans[at].start >= start and spans[at].end <= end:
                    inside.append(spans[at])
                else:  # across a sentence boundary (or between sentences): BIO within a sentence cannot hold it
                    counts["spans_not_learnable"] += 1
                at += 1
            counts["spans"] += len(inside)
            stream += sentence.ids
            labels += encode_labels(sentence, inside, label_ids)
            lengths.append(len(sentence.ids))
        counts["spans_not_learnable"] += len(spans) - at
        counts["sentences"] += len(sentences)
        examples += [Example(stream[first:last], labels[first:last]) for first, last, _, _ in pack(lengths, body, overlap)]
    counts["windows"] = len(examples)
    return examples, counts


def length_batches(examples: Sequence[Example], batch_size: int, rng: random.Random, pool: int = 50) -> list[list[Example]]:
    """Shuffled batches of similar length: examples shuffled, sorted by length within pools of ``pool`` batches, the
    batches shuffled again. Why: sentences run from 5 to 120+ tokens, and padding every batch to its longest
    at random would spend much of the work on padding."""
    order = list(examples)
    rng.shuffle(order)
    batches = []
    for first in range(0, len(order), batch_size * pool):
        chunk = sorted(order[first : first + batch_size * pool], key=lambda e: len(e.ids))
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


def collate(batch: Sequence[Example], template: tuple[list[int], list[int]], pad: int) -> dict:
    """Model inputs of a batch: the ``special_template``'s tokens around each window (labelled ``IGNORE``), padded
    with ``pad`` to the batch's longest."""
    import torch

    before, after = template
    prefix = len(before)
    rows = [before + e.ids + after for e in batch]
    width = max(map(len, rows))
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), IGNORE, dtype=torch.long)
    for line, (row, example) in enumerate(zip(rows, batch)):
        ids[line, : len(row)] = torch.tensor(row)
        mask[line, : len(row)] = 1
        labels[line, prefix : prefix + len(example.labels)] = torch.tensor(example.labels, dtype=torch.long)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}

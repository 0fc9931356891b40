"""What the mention tagger trains on and is judged by: annotated documents, their BIO windows, strict-span scores.

Documents are ``medlink.core.Document``s with gold ``Annotation``s (type = the corpus's mention type),
so the tagger is judged through the same ``find`` a pipeline calls. PubTator is read with
``keep_unlinked``: a span annotated without a concept is still a mention the tagger should find.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from medlink.core import Annotation, Document
from medlink.directories import file_checksum
from medlink.errors import MedlinkError
from medlink.text.bio import IGNORE, SINGLE_TYPE, Span, encode_labels, pack, tokenize_sentences
from medlink.text.finders.base import resolve_overlaps
from medlink.text.sentences import sentence_spans

TRAINING_FORMATS = ("pubtator",)


def read_annotated(spec: str) -> tuple[list[Document], dict]:
    """Documents with gold annotations from ``FORMAT:PATH`` (only ``pubtator`` so far), and a record of the source
    (path, sha256, counts) for the tagger's signature file."""
    from medlink.corpora.pubtator import load_pubtator_documents

    format_name, sep, path = spec.partition(":")
    if format_name not in TRAINING_FORMATS or not sep or not path:
        raise MedlinkError(
            f"{spec!r}: write FORMAT:PATH with FORMAT one of {', '.join(TRAINING_FORMATS)} (documents with annotated mention spans)"
        )
    documents = []
    for source in load_pubtator_documents(path, keep_unlinked=True):
        document = Document.from_title_abstract(source.doc_id, source.title, source.abstract)
        text = document.text
        document.annotations = [
            Annotation(m.start, m.end, text[m.start : m.end], m.semantic_type, ids=tuple(sorted(m.gold)), source="gold")
            for m in source.mentions
        ]
        documents.append(document)
    record = {
        "format": format_name,
        "path": str(Path(path).resolve()),
        "sha256": file_checksum(Path(path)),
        "documents": len(documents),
        "mentions": sum(len(d.annotations) for d in documents),
        "document_sha256": sorted(document_hashes(documents)),
    }
    return documents, record


def document_hash(document: Document) -> str:
    """The first 16 hex digits of sha256 over a document's text: the same abstract in another file (a copy, a
    subset) is known again, whatever its id."""
    return hashlib.sha256(document.text.encode("utf-8")).hexdigest()[:16]


def document_hashes(documents: Iterable[Document]) -> set[str]:
    return {document_hash(document) for document in documents}


def gold_spans(document: Document, collapse_types: bool) -> list[Span]:
    """The document's gold spans as the tagger learns them: types collapsed (or an untyped span given one), nested
    or overlapping spans reduced to the longest (BIO cannot hold both)."""
    spans = [a for a in document.annotations if a.end > a.start]
    kept = resolve_overlaps(spans, "longest")
    return [Span(a.start, a.end, SINGLE_TYPE if collapse_types or not a.type else a.type) for a in kept]


def mention_types(documents: Iterable[Document], collapse_types: bool) -> list[str]:
    if collapse_types:
        return [SINGLE_TYPE]
    return sorted({a.type or SINGLE_TYPE for d in documents for a in d.annotations})


@dataclass
class Example:
    """One training window: sub-token ids (no special tokens yet) and their label ids."""

    ids: list[int]
    labels: list[int]


def build_examples(
    documents: Sequence[Document], tokenizer, label_ids: dict[str, int], collapse_types: bool, body: int, overlap: int
) -> tuple[list[Example], dict]:
    """The windows a tagger reads (``pack``: whole consecutive sentences of a document) with their labels, and counts
    (sentences, windows, spans learnt, spans that BIO or the sentence split cannot hold)."""
    examples: list[Example] = []
    counts = {"documents": len(documents), "sentences": 0, "windows": 0, "spans": 0, "spans_not_learnable": 0}
    for document in documents:
        text, spans = document.text, gold_spans(document, collapse_types)  # in text order, none overlapping
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

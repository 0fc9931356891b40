"""A trained mention tagger as a MentionFinder: token classification (BIO) over sentences, spans out.

A tagger folder is a Hugging Face token-classification model with its tokenizer and
``medlink_tagger.json`` (what ``medlink train tagger`` writes): the labels, the window length, and
how it was trained. That file is the folder's signature: a folder without it is not loaded as a
tagger, and training refuses to replace a folder that has none. Text is split into sentences
(``medlink.text.sentences``), each passage on its own; a window holds as many whole consecutive
sentences as fit and a longer sentence is read in overlapping windows (``medlink.text.bio.pack``), so a
1 MB document costs about what its pieces would. A batch of documents' windows are read together, sorted by length
(``read_ahead``). bf16 weights only where this CPU runs them faster
(``medlink.encoders.precision``).
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medlink.core import Annotation, Document
from medlink.encoders import precision as precisions
from medlink.encoders.precision import Bf16Copy
from medlink.errors import MedlinkError, MissingInputError
from medlink.text.bio import Span, constrained_labels, decode_labels, pack, special_template, tokenize_sentences
from medlink.text.finders.base import is_plausible_mention
from medlink.text.sentences import sentence_spans

TAGGER_FILE = "medlink_tagger.json"
TAGGER_FORMAT = "medlink-tagger"
INFER_BATCH = 64  # windows per forward pass
SENTENCE_GROUP = 1024  # sentences tokenised and batched together: bounds memory on a huge document


@dataclass(frozen=True)
class TaggedWord:
    """A word the tagger read (characters [start, end) of the text) and its label probabilities, summed over types."""

    start: int
    end: int
    outside: float
    begins: float
    inside: float


def is_tagger_signature(path: Path) -> bool:
    """Is ``path`` a ``medlink_tagger.json`` that medlink wrote (its format tag and labels)?"""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("format") == TAGGER_FORMAT and isinstance(data.get("labels"), list)


def read_tagger_info(folder: Path) -> dict:
    """The folder's ``medlink_tagger.json``, or a clear error saying why the folder is not a tagger."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MissingInputError(f"tagger folder not found: {folder}")
    if not is_tagger_signature(folder / TAGGER_FILE):
        raise MedlinkError(f"{folder} is not a medlink tagger (no valid {TAGGER_FILE}); train one with 'medlink train tagger --out DIR'")
    info = json.loads((folder / TAGGER_FILE).read_text(encoding="utf-8"))
    if not all(isinstance(label, str) for label in info["labels"]) or info["labels"][:1] != ["O"]:
        raise MedlinkError(f"{folder / TAGGER_FILE}: 'labels' must be a list of strings starting with 'O'")
    if not isinstance(info.get("max_length"), int) or info["max_length"] < 8:
        raise MedlinkError(f"{folder / TAGGER_FILE}: 'max_length' must be an integer of at least 8")
    return info


def overlapped(sentences: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list[bool]:
    """For each sentence (start, end), whether one of ``spans`` overlaps it."""
    ends = sorted(end for _start, end in spans)
    starts = sorted(start for start, _end in spans)
    # a span overlaps [a, b) unless it ends by a or starts at b or later: count those that do neither
    return [bisect.bisect_left(starts, b) - bisect.bisect_right(ends, a) > 0 for a, b in sentences]


DECODINGS = ("constrained", "argmax")  # medlink.text.bio.constrained_labels, or each word alone


class TaggerFinder:
    """Finds mentions with a token-classification model; ``source`` and ``name`` are "tagger"."""

    name = "tagger"

    def __init__(
        self,
        model,
        tokenizer,
        labels: Sequence[str],
        max_length: int,
        overlap: int | None = None,
        precision: str = "fp32",
        batch_size: int = INFER_BATCH,
    ):
        """``model``/``tokenizer``: a loaded token-classification model and its fast tokenizer (training evaluates
        the model it is training through this); ``precision`` fp32 or bf16 (already resolved)."""
        if not getattr(tokenizer, "is_fast", False):
            raise MedlinkError("the tagger needs a fast tokenizer (tokenizer.json): character offsets come from it")
        if int(model.config.num_labels) != len(labels):
            raise MedlinkError(f"the model has {model.config.num_labels} outputs but {len(labels)} labels were given")
        self.model = model
        self.tokenizer = tokenizer
        self.labels = list(labels)
        self.begin_labels = [i for i, label in enumerate(self.labels) if label.startswith("B-")]  # summed in TaggedWord
        self.inside_labels = [i for i, label in enumerate(self.labels) if label.startswith("I-")]
        self.max_length = max_length
        self.before, self.after = special_template(tokenizer)  # [CLS], [SEP]
        self.body = max_length - len(self.before) - len(self.after)  # sub-tokens of text per window
        self.overlap = self.body // 4 if overlap is None else overlap
        self.precision = precision
        self.batch_size = batch_size
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self._bf16 = Bf16Copy()
        self._ahead: dict[int, tuple[Document, tuple]] = {}  # read_ahead's batch: id(document) -> (document, _read_together's reading)
        self.decoding = "constrained"

    @property
    def decoding(self) -> str:
        """How label probabilities become spans (DECODINGS): each sentence's best legal sequence, or each word's argmax."""
        return self._decoding

    @decoding.setter
    def decoding(self, value: str) -> None:
        if value not in DECODINGS:
            raise MedlinkError(f"tagger decoding must be one of {', '.join(DECODINGS)}, not {value!r}")
        self._decoding = value

    @classmethod
    def load(
        cls, folder: str | Path, precision: str | None = None, batch_size: int = INFER_BATCH, threads: int | None = None
    ) -> TaggerFinder:
        """A tagger folder written by ``medlink train tagger``; ``precision`` None: the folder's setting (auto: decided
        on this machine). ``threads`` sets torch's threads for the process (as ``Encoder`` does): on a CPU shared with
        other busy processes one thread is steadier than two, which wait for each other."""
        from medlink.encoders.transformer import check_model_dir, load_pretrained, require_dense_extra

        require_dense_extra()
        if threads:
            import torch

            torch.set_num_threads(threads)
        from transformers import AutoModelForTokenClassification, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        transformers_logging.set_verbosity_error()
        folder = Path(folder)
        info = read_tagger_info(folder)
        check_model_dir(folder)
        tokenizer = load_pretrained(folder, "tokenizer", AutoTokenizer.from_pretrained)
        model = load_pretrained(folder, "model", AutoModelForTokenClassification.from_pretrained)
        model.eval()
        requested = precisions.check_precision(precision or info.get("precision") or "auto", "precision")
        return cls(model, tokenizer, info["labels"], info["max_length"], info.get("overlap"), precisions.resolve(requested), batch_size)

    def find(self, document: Document) -> list[Annotation]:
        """Spans in ``document.text``, in text order; each passage is split into sentences on its own. A span with no
        word of two letters that is not a stop word ("of", "D", "2") is dropped."""
        return self.tag(document, words=False)[0]

    def read_ahead(self, documents: Sequence[Document], within: Sequence[Sequence[tuple[int, int]]] | None = None) -> None:
        """Read a batch of documents' windows together before ``find`` / ``tag`` asks for them one by one.

        Why: an abstract is a few windows, so one document at a time makes many small forward passes, each padded to its
        own longest window; read together and sorted by length across documents, the windows fill fewer, fuller passes
        (the annotator calls this per batch of documents). A document of more than ``SENTENCE_GROUP`` sentences is left
        to be read on its own, group by group, as ``find`` reads it; what is remembered is only this batch's.
        ``within`` (one list per document): character spans outside whose sentences no span found will be kept (the
        confirmed combination keeps only the tagger's spans another finder's span overlaps); only the windows holding
        those sentences are read, and ``find`` / ``tag`` report nothing elsewhere."""
        self._ahead = {}
        chunk: list[tuple[Document, list[tuple[int, int]], list[bool] | None]] = []
        held = 0  # sentences in chunk
        for at, document in enumerate(documents):
            sentences = sentence_spans(document)
            if len(sentences) > SENTENCE_GROUP:
                continue
            needed = None if within is None else overlapped(sentences, within[at])
            if held + len(sentences) > SENTENCE_GROUP:
                self._remember(chunk)
                chunk, held = [], 0
            chunk.append((document, sentences, needed))
            held += len(sentences)
        if chunk:
            self._remember(chunk)

    def _remember(self, chunk: Sequence[tuple[Document, list[tuple[int, int]], list[bool] | None]]) -> None:
        """Read ``chunk``'s documents together and keep each one's reading for ``tag``."""
        readings = self._read_together([(document.text, sentences) for document, sentences, _n in chunk], [needed for *_, needed in chunk])
        self._ahead.update((id(document), (document, reading)) for (document, *_), reading in zip(chunk, readings))

    def tag(self, document: Document, words: bool = True) -> tuple[list[Annotation], list[TaggedWord]]:
        """``find``'s spans, and (``words``) every word read with its label probabilities: what a span selector weighs
        (``medlink.text.finders.selector.model``) to keep a dictionary match the tagger nearly found, or drop a doubtful span."""
        text = document.text
        ahead = self._ahead.get(id(document))
        if ahead is not None and ahead[0] is document:
            spans, tagged = self._decode(text, *ahead[1], words)
        else:
            spans, tagged = self.tag_text(text, sentence_spans(document), words)
        return [
            Annotation(span.start, span.end, text[span.start : span.end], span.type, source=self.name)
            for span in spans
            if is_plausible_mention(text[span.start : span.end])
        ], tagged

    def tag_text(self, text: str, sentences: Sequence[tuple[int, int]], words: bool = True) -> tuple[list[Span], list[TaggedWord]]:
        """Typed spans of ``text`` found in the given sentence spans (consecutive ones, in text order), and (``words``) the words read,
        each with P(outside), P(begins), P(inside a mention)."""
        found: list[Span] = []
        tagged: list[TaggedWord] = []
        for first in range(0, len(sentences), SENTENCE_GROUP):
            spans, words_read = self._decode(text, *self._read_together([(text, sentences[first : first + SENTENCE_GROUP])])[0], words)
            found += spans
            tagged += words_read
        return found, tagged

    def _read_together(
        self, units: Sequence[tuple[str, Sequence[tuple[int, int]]]], needed: Sequence[Sequence[bool] | None] | None = None
    ) -> list[tuple[list, np.ndarray, Sequence[bool] | None]]:
        """Each (text, sentences) unit tokenised, and its tokens' label probabilities, the units' windows read in shared
        forward passes (a window never crosses from one unit into another). ``needed`` (per unit, per sentence; None:
        all): a window owning no token of a needed sentence is not read, and its tokens' probabilities stay 0."""
        tokenized = [tokenize_sentences(self.tokenizer, text, sentences) for text, sentences in units]
        needed = needed or [None] * len(units)
        stream: list[int] = []
        items: list[tuple[int, int, int, int]] = []
        bounds = [0]
        for sentences, wanted in zip(tokenized, needed):
            base = len(stream)
            stream += [token for sentence in sentences for token in sentence.ids]
            windows = pack([len(s.ids) for s in sentences], self.body, self.overlap)
            if wanted is not None:
                starts = np.cumsum([0] + [len(s.ids) for s in sentences])
                ranges = [(starts[i], starts[i + 1]) for i, w in enumerate(wanted) if w]
                windows = [w for w in windows if any(first < w[3] and w[2] < last for first, last in ranges)]
            items += [(start + base, end + base, owned_start + base, owned_end + base) for start, end, owned_start, owned_end in windows]
            bounds.append(len(stream))
        probabilities = self.probabilities(stream, items)
        return [(sentences, probabilities[bounds[i] : bounds[i + 1]], needed[i]) for i, sentences in enumerate(tokenized)]

    def _decode(
        self, text: str, tokenized: list, probabilities: np.ndarray, needed: Sequence[bool] | None, words: bool
    ) -> tuple[list[Span], list[TaggedWord]]:
        """Spans (and the words read) from one unit's tokenised sentences and their tokens' label probabilities (only
        the ``needed`` sentences: None, all)."""
        found: list[Span] = []
        tagged: list[TaggedWord] = []
        predicted = probabilities.argmax(-1)
        at = 0
        for number, sentence in enumerate(tokenized):
            if needed is not None and not needed[number]:
                at += len(sentence.ids)
                continue
            if self.decoding == "constrained":  # one label sequence per sentence, read at its words' first tokens
                first = [at + i for i in sentence.first_tokens()]
                predicted[first] = constrained_labels(probabilities[first], self.labels)
            found += decode_labels(sentence, predicted[at : at + len(sentence.ids)], self.labels, text)
            if words:
                tagged += [
                    TaggedWord(
                        sentence.offsets[i][0],
                        sentence.word_end[i],
                        float(probabilities[at + i, 0]),
                        float(probabilities[at + i, self.begin_labels].sum()),
                        float(probabilities[at + i, self.inside_labels].sum()),
                    )
                    for i in sentence.first_tokens()
                ]
            at += len(sentence.ids)
        return found, tagged

    def probabilities(self, stream: Sequence[int], items: Sequence[tuple[int, int, int, int]]) -> np.ndarray:
        """The label probabilities of every token of ``stream`` (sub-token ids; one row each, float32), each read from
        the window of ``items`` ((start, end, owned_start, owned_end), as ``pack`` gives them) that owns it."""
        import torch

        out = np.zeros((len(stream), len(self.labels)), dtype=np.float32)
        items = sorted(items, key=lambda item: item[1] - item[0])
        was_training = self.model.training
        if was_training:  # evaluated during training: no dropout while predicting
            self.model.eval()
        model = self._bf16.of(self.model) if self.precision == "bf16" else self.model
        try:
            with torch.inference_mode():
                for at in range(0, len(items), self.batch_size):
                    batch = items[at : at + self.batch_size]
                    rows = [self.before + list(stream[start:end]) + self.after for start, end, _, _ in batch]
                    width = max(map(len, rows))
                    ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
                    mask = torch.zeros((len(rows), width), dtype=torch.long)
                    for line, row in enumerate(rows):
                        ids[line, : len(row)] = torch.tensor(row, dtype=torch.long)
                        mask[line, : len(row)] = 1
                    read = model(input_ids=ids, attention_mask=mask).logits.float().softmax(-1).numpy()
                    for line, (start, _end, owned_start, owned_end) in enumerate(batch):
                        first = len(self.before) + owned_start - start
                        out[owned_start:owned_end] = read[line, first : first + owned_end - owned_start]
        finally:
            if was_training:
                self.model.train()
        return out

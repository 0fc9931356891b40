"""Training a mention tagger (token classification, BIO) on annotated documents, on the CPU.

A token-classification head on the packaged MiniLM (or any local transformer folder) learns
B-/I-/O per word (``medlink.text.bio``) over sentence windows; AdamW with linear warm-up and decay,
a few epochs, strict-span F1 on ``dev`` after each epoch through the same ``TaggerFinder.find`` a
pipeline calls, and the best epoch's weights kept. Mention types are collapsed to one label (the
documents' one entity type, else "Disease") by default: linking needs the span, not NCBI's subtype; kept, each
entity type (``corpora.entity_types``: BC5CDR's Disease and Chemical) is a label of its own. Precision comes from
``medlink.encoders.precision`` (bf16 autocast only where this CPU runs bf16 faster).
The output folder is built aside and swapped in whole at the end, with ``medlink_tagger.json``
as its signature: an interruption (Ctrl-C, a crash) leaves the folder as it was, and a folder
that is not a tagger is refused before any work. No resume: a run takes minutes, not hours.
"""

from __future__ import annotations

import json
import platform
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import version
from pathlib import Path

import numpy as np

from medlink.core import Document
from medlink.directories import require_replaceable, staged_directory, with_default_mode
from medlink.encoders import precision as precisions
from medlink.errors import MedlinkError
from medlink.progress import bar as progress_bar
from medlink.text.bio import labels_for
from medlink.text.finders.tagger import TAGGER_FILE, TAGGER_FORMAT, TaggerFinder, is_tagger_signature
from medlink.training.layers import check_layers, keep_layers
from medlink.training.run import check_training_numbers
from medlink.training.tagger_data import build_examples, collate, length_batches, mention_types

TAGGER_WHAT = "a medlink tagger folder"


@dataclass
class TaggerConfig:
    epochs: int = 4
    batch_size: int = 8  # windows (whole consecutive sentences, up to max_length sub-tokens) per step
    learning_rate: float = 2e-4  # chosen with the epochs on NCBI dev (docs/training-recipes.md, the tagger)
    warmup: float = 0.1
    weight_decay: float = 0.01
    max_length: int = 128  # sub-tokens per window, specials included: nearly every NCBI sentence fits whole, short ones share one
    overlap: int | None = None  # sub-tokens shared by consecutive windows of a long sentence (None: a quarter of a window)
    collapse_types: bool = True  # one label for every mention type (``tagger_data.collapsed_type``)
    seed: int = 13
    precision: str = "auto"  # auto | fp32 | bf16 (autocast); auto: bf16 only where this CPU runs it faster
    layers: int | None = None  # the base model's first N transformer layers only (None: all): a faster tagger on CPUs without bf16

    def __post_init__(self) -> None:
        precisions.check_precision(self.precision, "precision (--precision)")
        check_layers(self.layers)
        check_training_numbers(
            self.learning_rate,
            self.warmup,
            1,
            at_least={"epochs": (self.epochs, 1), "batch_size": (self.batch_size, 1), "max_length": (self.max_length, 8)},
        )
        if self.weight_decay < 0:
            raise MedlinkError(f"weight_decay must be 0 or more, not {self.weight_decay}")
        if self.overlap is not None and not 0 <= self.overlap < self.max_length // 2:
            raise MedlinkError(f"overlap must be in [0, max_length / 2), not {self.overlap}")


@dataclass
class TaggerReport:
    """What ``medlink_tagger.json`` records beside the labels: settings, data, epochs, the epoch kept, time."""

    config: dict
    epochs: list[dict] = field(default_factory=list)
    best_epoch: int | None = None
    seconds: float = 0.0
    examples: dict = field(default_factory=dict)
    training_precision: str | None = None  # what the config's precision resolved to for training (fp32 or bf16)


def check_tagger_output(out: Path) -> None:
    """``out`` must be new, empty or an earlier tagger folder: anything else is left alone (before any work)."""
    require_replaceable(out, TAGGER_FILE, TAGGER_WHAT, signed=is_tagger_signature)


def _load_base(base_model: str | Path | None, labels: list[str]):
    from medlink.encoders.transformer import check_model_dir, default_model_dir, load_pretrained, require_dense_extra

    require_dense_extra()
    from transformers import AutoModelForTokenClassification, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # medlink shows its own progress
    transformers_logging.set_verbosity_error()  # a new classification head is expected, not worth a warning
    path = Path(base_model) if base_model else default_model_dir()
    check_model_dir(path)
    tokenizer = load_pretrained(path, "tokenizer", AutoTokenizer.from_pretrained)
    if not tokenizer.is_fast:
        raise MedlinkError(f"{path}: the tagger needs a fast tokenizer (tokenizer.json) for character offsets")
    model = load_pretrained(
        path,
        "model",
        AutoModelForTokenClassification.from_pretrained,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
        ignore_mismatched_sizes=True,
    )
    return path, tokenizer, model


def _optimizer(model, config: TaggerConfig, total_steps: int):
    """AdamW (no decay on biases and LayerNorm weights) with linear warm-up then linear decay to zero."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    decay, no_decay = [], []
    for parameter in model.parameters():  # biases and LayerNorm weights are the one-dimensional ones
        (no_decay if parameter.ndim < 2 else decay).append(parameter)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}], lr=config.learning_rate
    )
    return optimizer, get_linear_schedule_with_warmup(optimizer, int(config.warmup * total_steps), total_steps)


def evaluate(finder: TaggerFinder, documents: Sequence[Document], progress: bool = False, desc: str = "dev") -> dict:
    """Strict-span precision / recall / F1 of ``finder`` on ``documents`` (their annotations are the gold; types are
    not compared), counted as ``medlink.eval.documents`` counts mention finding. Documents are scored one by one, so
    a file that repeats a document id (NCBI's training file does) is scored as written."""
    from medlink.eval.documents import Score, document_scores

    bar = progress_bar(progress, total=len(documents), desc=desc, unit="doc", leave=False)
    total = Score(0, 0, 0)
    for document in documents:
        found = Document(document.doc_id, document.passages, finder.find(document))
        total = total + document_scores([document], [found])[0]["mentions"][0]
        bar.update(1)
    bar.close()
    return {key: round(value, 4) if isinstance(value, float) else value for key, value in total.to_dict().items()}


def train_tagger(
    train: Sequence[Document],
    out: Path,
    *,
    dev: Sequence[Document] = (),
    base_model: str | Path | None = None,
    config: TaggerConfig | None = None,
    sources: dict | None = None,
    progress: bool = True,
) -> TaggerReport:
    """Train a tagger on ``train`` (documents with gold annotations) and write its folder at ``out``, whole.

    ``dev``: documents scored after every epoch; the best epoch's weights are kept (without dev: the last).
    ``sources``: what to record about the data (paths, checksums) in the signature file.
    """
    config = config if config is not None else TaggerConfig()
    import torch

    check_tagger_output(out)
    if not any(d.annotations for d in train):
        raise MedlinkError("nothing to train on: the training documents have no annotated mentions")
    started = time.perf_counter()
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)  # the new head's initial weights and dropout
    types = mention_types(train, config.collapse_types)
    labels = labels_for(types)
    path, tokenizer, model = _load_base(base_model, labels)
    keep_layers(model, config.layers)
    if config.max_length > model.config.max_position_embeddings:
        raise MedlinkError(f"--max-length {config.max_length} is longer than the model's {model.config.max_position_embeddings} positions")
    trained_precision = precisions.resolve(config.precision)
    finder = TaggerFinder(model, tokenizer, labels, config.max_length, config.overlap, trained_precision)
    label_ids = {label: i for i, label in enumerate(labels)}
    examples, counts = build_examples(train, tokenizer, label_ids, types[0] if config.collapse_types else None, finder.body, finder.overlap)
    rng = random.Random(config.seed)
    steps = -(-len(examples) // config.batch_size)
    optimizer, scheduler = _optimizer(model, config, steps * config.epochs)
    report = TaggerReport(asdict(config), examples=counts, training_precision=trained_precision)
    best_state, best_f1 = None, -1.0
    with staged_directory(out) as staging:  # holds the output lock for the whole run
        check_tagger_output(out)  # again, under the lock
        for epoch in range(config.epochs):
            losses = _train_epoch(
                model,
                finder,
                length_batches(examples, config.batch_size, rng),
                optimizer,
                scheduler,
                trained_precision == "bf16",
                f"epoch {epoch + 1}/{config.epochs}",
                progress,
            )
            record = {"epoch": epoch + 1, "loss": round(float(np.mean(losses)), 5), "steps": len(losses)}
            if dev:
                record["dev"] = evaluate(finder, dev, progress)
            record["seconds"] = round(time.perf_counter() - started, 1)
            report.epochs.append(record)
            if progress:
                print(json.dumps(record), flush=True)
            f1 = record["dev"]["f1"] if dev else epoch
            if f1 > best_f1:  # ties keep the earlier epoch
                best_f1, report.best_epoch = f1, epoch + 1
                best_state = {name: tensor.detach().clone() for name, tensor in model.state_dict().items()} if dev else None
        if best_state is not None:
            model.load_state_dict(best_state)
        report.seconds = round(time.perf_counter() - started, 1)
        _save(staging, model, tokenizer, labels, finder, config, report, path, base_model, sources or {})
    return report


def _train_epoch(model, finder: TaggerFinder, batches, optimizer, scheduler, bf16: bool, desc: str, progress: bool) -> list[float]:
    import torch

    model.train()
    losses: list[float] = []
    bar = progress_bar(progress, total=len(batches), desc=desc, unit="batch")
    try:
        for batch in batches:
            inputs = collate(batch, (finder.before, finder.after), finder.pad_id)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                loss = model(**inputs).loss
            if not torch.isfinite(loss):
                raise MedlinkError(
                    f"training diverged: the loss is {loss.item()} after {len(losses)} steps of {desc}; train again with a lower --lr"
                )
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.item())
            bar.update(1)
            bar.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}", refresh=False)  # a log gets a line every 30 s, not one per step
    finally:
        bar.close()
        model.eval()
    return losses


def _save(
    folder: Path,
    model,
    tokenizer,
    labels: list[str],
    finder: TaggerFinder,
    config: TaggerConfig,
    report: TaggerReport,
    path: Path,
    base_model: str | Path | None,
    sources: dict,
) -> None:
    """Weights, tokenizer, then the signature file (into the staging folder that replaces ``out`` whole)."""
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    with_default_mode(*folder.glob("*.safetensors"))
    signature = {
        "format": TAGGER_FORMAT,
        "version": 1,
        "labels": labels,
        "max_length": config.max_length,
        "overlap": finder.overlap,
        "collapse_types": config.collapse_types,
        "precision": config.precision,
        "base_model": str(path.resolve()) if base_model else f"default ({path.resolve()})",
        "data": sources,
        **asdict(report),
        "medlink_version": version("medlink"),
        "machine": _machine(),
    }
    (folder / TAGGER_FILE).write_text(json.dumps(signature, indent=2), encoding="utf-8")


def _machine() -> dict:
    """Where the run's ``seconds`` were measured: the CPU's model name and torch's threads."""
    import torch

    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            name = next((line.partition(":")[2].strip() for line in info if line.startswith("model name")), name)
    except OSError:
        pass
    return {"cpu": name, "threads": torch.get_num_threads()}

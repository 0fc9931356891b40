"""Training a bi-encoder on the CPU: in-batch + dynamic hard negatives, optional KG auxiliary loss.

One loop serves the three regimes of papers 000 and 004:
- KG pre-training / zero-shot: examples are KB-mined pairs (synonym, graph tasks), in-batch negatives;
- supervised fine-tuning: examples are annotated mentions with a KB name of their concept drawn
  each epoch, plus ``p`` hard negatives refreshed every epoch with the current model;
- both: the KG pairs as an auxiliary loss added (times ``kg_weight``) at every step.
Checkpoints (model, optimizer, scheduler, position) are written atomically every
``checkpoint_every`` steps and at each epoch's end; ``resume`` continues from the last one.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from medlink.encoders.precision import check_precision
from medlink.encoders.transformer import Encoder
from medlink.errors import MedlinkError
from medlink.kb.store import KB
from medlink.params import POOLINGS
from medlink.training.examples import ConceptNames, Example, mentions_by_concept, sample_examples
from medlink.training.losses import contrastive_loss
from medlink.training.negatives import NameIndex, dev_pool, hard_negatives
from medlink.training.run import TrainingRun, TrainReport, check_training_numbers


@dataclass
class TrainConfig:
    epochs: int = 1
    batch_size: int = 64
    learning_rate: float = 2e-5
    tau: float = 0.05
    hard_negatives: int = 0
    mention_positives: bool = False  # positives drawn from the concept's names and its other training mentions
    distinct_mentions: bool = False  # one example per distinct (mention, concept), not per annotation
    kg_weight: float = 1.0
    warmup: float = 0.1
    seed: int = 13
    precision: str = "auto"  # auto | fp32 | bf16 (autocast); auto: bf16 only where this CPU runs it faster
    pooling: str | None = None  # None: what the base model folder declares (else mean)
    max_length: int = 32
    checkpoint_every: int = 100
    max_steps_per_epoch: int | None = None
    dev_pool: int = 32  # per-epoch --dev Acc@1 among gold + this many lexical candidates per mention (0: the whole KB)

    def __post_init__(self) -> None:
        check_precision(self.precision, "precision (--precision)")
        check_training_numbers(
            self.learning_rate,
            self.warmup,
            self.checkpoint_every,
            tau=self.tau,
            at_least={"epochs": (self.epochs, 1), "batch_size": (self.batch_size, 2), "max_length": (self.max_length, 2)},
        )
        if self.kg_weight < 0:
            raise MedlinkError(f"kg_weight (--kg-weight) must be 0 (off) or more, not {self.kg_weight}")
        if self.pooling not in (None, *POOLINGS):
            raise MedlinkError(f"pooling (--pooling) must be one of {', '.join(POOLINGS)}, not {self.pooling!r}")
        if self.hard_negatives < 0:
            raise MedlinkError(f"hard_negatives (--hard-negatives) must be 0 or more, not {self.hard_negatives}")
        if self.dev_pool < 0:
            raise MedlinkError(f"dev_pool (--dev-pool) must be 0 (the whole KB) or more, not {self.dev_pool}")
        if self.max_steps_per_epoch is not None and self.max_steps_per_epoch < 1:
            raise MedlinkError(f"max_steps_per_epoch (--max-steps-per-epoch) must be at least 1, not {self.max_steps_per_epoch}")


def _batches(examples: list[Example], size: int) -> list[list[Example]]:
    return [examples[i : i + size] for i in range(0, len(examples), size) if len(examples[i : i + size]) > 1]


def dev_accuracy(encoder: Encoder, index: NameIndex, dev: list[tuple[str, str]]) -> float | None:
    """Acc@1 of nearest-name retrieval over the whole KB (a quick per-epoch signal, dev data only)."""
    if not dev:
        return None
    top = index.top_concepts(encoder.encode([text for text, _ in dev]), 1)
    return float(np.mean([bool(t) and t[0] == gold for t, (_, gold) in zip(top, dev)]))


def pair_dev_accuracy(encoder: Encoder, pairs: list[Example], limit: int = 5000) -> float | None:
    """Acc@1 of held-out KB pairs (Kong et al. (2021)'s 80:20 node split): is each left name's nearest right name one of its partner's?

    The right names of the dev pairs are the candidates, so concepts kept out of training are
    judged among themselves; a left name never retrieves its own string. At most ``limit`` pairs
    (spread evenly over the file) keep the per-epoch cost to seconds.
    """
    if not pairs:
        return None
    pairs = list(pairs)
    sample = [pairs[i] for i in np.unique(np.linspace(0, len(pairs) - 1, min(limit, len(pairs))).round().astype(int))]
    targets = list(dict.fromkeys((e.positive, e.positive_id) for e in sample))
    texts = list(dict.fromkeys(text for text, _ in targets))  # each distinct text encoded once: equal texts score exactly equal
    row_of = {text: i for i, text in enumerate(texts)}
    scores = (encoder.encode([e.anchor for e in sample]) @ encoder.encode(texts).T)[:, [row_of[text] for text, _ in targets]]
    positions: dict[str, list[int]] = {}
    for i, (text, _) in enumerate(targets):
        positions.setdefault(text, []).append(i)
    for row, example in enumerate(sample):
        scores[row, positions.get(example.anchor, [])] = -np.inf
    best = scores.argmax(axis=1)
    found = np.isfinite(scores[np.arange(len(sample)), best])  # a left name whose only candidate was itself finds nothing
    return float(np.mean([ok and targets[b][1] == e.positive_id for b, e, ok in zip(best, sample, found)]))


def train_bi_encoder(
    kb: KB,
    out: Path,
    *,
    mentions: list[tuple[str, str]] = (),
    kg_examples: list[Example] = (),
    dev: list[tuple[str, str]] = (),
    kg_dev: list[Example] = (),
    base_model: str | Path | None = None,
    config: TrainConfig | None = None,
    resume: bool = False,
    progress: bool = True,
) -> TrainReport:
    """Train and save a model folder at ``out`` (usable as a dense generator's ``model``).

    The per-epoch dev figure comes from ``dev`` mentions when given, else from ``kg_dev`` (held-out KB pairs).
    """
    config = config if config is not None else TrainConfig()
    if not mentions and not kg_examples:
        raise MedlinkError("nothing to train on: no annotated mention has its gold concept in the KB, and no KB pairs were given")
    run = TrainingRun(out, resume, config.seed, progress, divergence_hint="a lower --lr or a higher --tau")
    encoder = Encoder(run.model_folder(base_model), config.pooling, config.max_length, precision=config.precision)
    config = replace(config, pooling=encoder.pooling)  # the pooling the folder declared, recorded (and resumed) as resolved
    names = ConceptNames.from_kb(kb)
    mentions, kg_examples = list(mentions), list(kg_examples)
    if config.distinct_mentions:
        mentions = list(dict.fromkeys(mentions))
    primary_count = len(mentions) or len(kg_examples)
    steps_per_epoch = max(1, math.ceil(primary_count / config.batch_size))
    if config.max_steps_per_epoch:
        steps_per_epoch = min(steps_per_epoch, config.max_steps_per_epoch)
    # dev judged among a pool of candidates unless hard negatives re-encode the whole KB each epoch anyway
    dev_names = dev_pool(names, list(dev), config.dev_pool) if (dev and config.dev_pool and not config.hard_negatives) else names
    run.prepare(
        encoder,
        config.learning_rate,
        config.warmup,
        steps_per_epoch * config.epochs,
        asdict(config),
        {"mentions": len(mentions), "kg_pairs": len(kg_examples), "dev": len(dev)}
        | ({"kg_dev": len(kg_dev)} if kg_dev else {})
        | ({"dev_concepts": len(dev_names.names)} if dev else {}),
    )
    index: NameIndex | None = None
    for epoch in run.epochs(config.epochs):
        rng = random.Random(config.seed + epoch)
        other_mentions = mentions_by_concept(mentions) if config.mention_positives else None
        primary = sample_examples(mentions, names, rng, other_mentions) if mentions else list(kg_examples)
        rng.shuffle(primary)
        auxiliary = list(kg_examples) if mentions else []
        rng.shuffle(auxiliary)
        negatives = None
        if config.hard_negatives and mentions:
            drawn = run.resumed_epoch_data(epoch)  # mined at this epoch's start, before the checkpoint's steps changed the model
            if drawn is None:
                index = index or NameIndex(encoder, names, progress=progress)
                drawn = {"negatives": hard_negatives(encoder, index, primary, config.hard_negatives)}
            run.epoch_data = drawn
            negatives = dict(zip(map(id, primary), [[tuple(pair) for pair in row] for row in drawn["negatives"]]))
        index = None  # the model changes from here on
        batches = _batches(primary, config.batch_size)[:steps_per_epoch]
        auxiliary_batches = _batches(auxiliary, config.batch_size) if len(auxiliary) > 1 else None

        def step_loss(
            step: int, batches: list = batches, negatives: dict | None = negatives, auxiliary_batches: list | None = auxiliary_batches
        ):
            loss = _batch_loss(encoder, batches[step], negatives, config)
            if auxiliary_batches is not None:  # by step, not drawn in turn: a resumed epoch takes the same ones
                loss = loss + config.kg_weight * _batch_loss(encoder, auxiliary_batches[step % len(auxiliary_batches)], None, config)
            return loss

        losses = run.train_epoch(epoch, config.epochs, len(batches), step_loss, config.checkpoint_every)
        index = NameIndex(encoder, names, progress=progress) if config.hard_negatives else None  # next epoch's negatives
        if dev:
            judged = index or NameIndex(encoder, dev_names, progress=progress)
            figure = dev_accuracy(encoder, judged, list(dev))
        else:
            figure = pair_dev_accuracy(encoder, list(kg_dev))
        run.end_epoch(epoch, losses, figure)
    return run.finish(kb, base_model)


def _batch_loss(encoder: Encoder, batch: list[Example], negatives: dict | None, config: TrainConfig):
    import torch

    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=encoder.precision == "bf16"):
        anchors = encoder.forward(encoder.tokenize([e.anchor for e in batch]))
        positives = encoder.forward(encoder.tokenize([e.positive for e in batch]))
        negative_vectors, negative_ids = None, None
        if negatives is not None:
            chosen = [negatives[id(e)] for e in batch]
            negative_vectors = encoder.forward(encoder.tokenize([text for row in chosen for text, _ in row]))
            negative_ids = [[concept for _, concept in row] for row in chosen]
    return contrastive_loss(anchors, positives, [e.positive_id for e in batch], config.tau, negative_vectors, negative_ids)

"""Training Schumacher et al. (2020)'s pairwise neural ranker on the CPU, on candidate lists an index retrieved (``ranker_data``).

Each step scores, for a batch of mentions, the gold candidate and ``negatives`` wrong ones drawn from the mention's
retrieved list, and applies the adaptive hinge loss to the hardest of them. Optionally the ranker is first
pre-trained on KB synonym pairs (a non-preferred name as the query, its concept's preferred name as the positive, the
index's other candidates for it as negatives), with the retrieval features zeroed: retrieval matched the synonym
itself, so its scores would teach nothing, and the name representations are what pre-training is for. With dev
mentions, the epoch with the best dev Acc@1 (ranker order over the retrieved list) is kept, else the last.
The folder is built aside and swapped in whole (``medlink_ranker.json`` last, as its signature): an interruption
leaves the previous folder as it was. No resume: a run takes minutes.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from medlink.directories import require_replaceable, staged_directory
from medlink.errors import MedlinkError
from medlink.progress import bar as progress_bar
from medlink.rerank.pairwise_model import POOLINGS, SPEC_FILE, PairBatch, PairwiseModel, RankerSpec, is_ranker_spec, parameter_count
from medlink.training.losses import adaptive_hinge_loss
from medlink.training.ranker_data import Group
from medlink.training.run import check_training_numbers

RANKER_WHAT = "a medlink ranker folder"


@dataclass
class RankerConfig:
    pooling: str = "attention"  # max | attention (Schumacher et al. (2020)'s two poolings)
    dim: int = 128
    hidden: list[int] = field(
        default_factory=lambda: [256, 128]
    )  # Schumacher et al. (2020): [1024, 512]; smaller keeps it well under 2 ms / mention
    negatives: int = 10  # n sampled negatives per mention; the loss uses the hardest (Schumacher et al. (2020): 10)
    margin: float = 1.0
    epochs: int = 8
    batch_size: int = 32
    learning_rate: float = 1e-3
    dropout: float = 0.1
    top: int = 32  # retrieved candidates per mention: the negatives' pool, and what the features are computed over
    pretrain_synonyms: bool = False
    pretrain_epochs: int = 2
    pretrain_pairs: int = 20_000  # synonym pairs drawn from the KB at most
    folds: int = 5  # cross-fitted retrieval when the index's memory holds the training mentions
    max_tokens: int = 16
    seed: int = 13

    def __post_init__(self) -> None:
        if self.pooling not in POOLINGS:
            raise MedlinkError(f"pooling (--pooling) must be one of {', '.join(POOLINGS)}, not {self.pooling!r}")
        check_training_numbers(
            self.learning_rate,
            0.0,
            1,
            at_least={
                "epochs": (self.epochs, 1),
                "batch_size": (self.batch_size, 1),
                "negatives": (self.negatives, 1),
                "top": (self.top, 2),
                "dim": (self.dim, 1),
                "pretrain_epochs": (self.pretrain_epochs, 1),
                "pretrain_pairs": (self.pretrain_pairs, 1),
                "folds": (self.folds, 2),
                "max_tokens": (self.max_tokens, 1),
            },
        )
        if self.margin <= 0 or not 0 <= self.dropout < 1:
            raise MedlinkError(f"margin must be above 0 and dropout in [0, 1) (got {self.margin}, {self.dropout})")


@dataclass
class RankerReport:
    """What the spec's ``training`` records: settings, data, epochs, the epoch kept, time, machine."""

    config: dict
    data: dict = field(default_factory=dict)
    pretraining: list[dict] = field(default_factory=list)
    epochs: list[dict] = field(default_factory=list)
    best_epoch: int | None = None
    seconds: float = 0.0
    machine: dict = field(default_factory=dict)


def check_ranker_output(out: Path) -> None:
    """``out`` must be new, empty or an earlier ranker folder: anything else is left alone (before any work)."""
    require_replaceable(out, SPEC_FILE, RANKER_WHAT, signed=is_ranker_spec)


def with_features(model: PairwiseModel, groups: Sequence[Group]) -> list[Group]:
    """Each group's feature rows, computed once over its whole retrieved list."""
    for group in groups:
        if group.features is None:
            group.features = model.features(group.mention, group.candidates)
    return list(groups)


def _draw(group: Group, n: int, rng: random.Random) -> list[int]:
    """The gold's position, then up to ``n`` wrong candidates drawn from the list."""
    wrong = [i for i in range(len(group.candidates)) if i != group.gold]
    return [group.gold, *rng.sample(wrong, min(n, len(wrong)))]


def step_loss(model: PairwiseModel, groups: Sequence[Group], config: RankerConfig, rng: random.Random, features: bool = True):
    """The adaptive hinge loss of one batch (gold vs the hardest of its sampled negatives)."""
    import torch

    picks = [_draw(g, config.negatives, rng) for g in groups]
    neutral = model.net.feature_mean.numpy()  # standardised to zeros: pre-training leaves the feature weights untouched
    rows = [g.features[p] if features else np.tile(neutral, (len(p), 1)) for g, p in zip(groups, picks)]
    batch = PairBatch.of(
        model.tokens, [g.mention for g in groups], [[g.candidates[i] for i in p] for g, p in zip(groups, picks)], rows, matched=features
    )
    flat = model.forward(batch)
    positive = torch.stack([flat[start] for start in np.cumsum([0, *batch.sizes[:-1]])])
    negatives = torch.full((len(groups), config.negatives), 0.0)
    mask = torch.zeros((len(groups), config.negatives), dtype=torch.bool)
    start = 0
    for row, size in enumerate(batch.sizes):
        negatives[row, : size - 1] = flat[start + 1 : start + size]
        mask[row, : size - 1] = True
        start += size
    return adaptive_hinge_loss(positive, negatives, config.margin, mask)


def dev_accuracy(model: PairwiseModel, groups: Sequence[Group]) -> float | None:
    """Acc@1 of the ranker's order over each dev mention's retrieved list (a gold not retrieved is a miss)."""
    if not groups:
        return None
    scores = model.score_groups([g.mention for g in groups], [g.candidates for g in groups])
    return float(np.mean([len(s) > 0 and g.gold >= 0 and int(np.argmax(s)) == g.gold for g, s in zip(groups, scores)]))


def _epoch(
    model: PairwiseModel,
    optimizer,
    groups: list[Group],
    config: RankerConfig,
    rng: random.Random,
    desc: str,
    progress: bool,
    features: bool = True,
) -> list[float]:
    import torch

    order = list(range(len(groups)))
    rng.shuffle(order)
    steps = range(0, len(order), config.batch_size)
    bar = progress_bar(progress, total=len(steps), desc=desc, unit="step")
    losses: list[float] = []
    model.net.train()
    try:
        for start in steps:
            loss = step_loss(model, [groups[i] for i in order[start : start + config.batch_size]], config, rng, features)
            if not torch.isfinite(loss):
                raise MedlinkError(
                    f"training diverged: the loss is {loss.item()} after {len(losses)} steps of {desc}; train again with a lower --lr"
                )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            bar.update(1)
            bar.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}", refresh=False)
    finally:
        bar.close()
        model.net.eval()
    return losses


def train_ranker(
    groups: Sequence[Group],
    out: Path,
    stages: Sequence[str],
    *,
    dev: Sequence[Group] = (),
    synonyms: Sequence[Group] = (),
    config: RankerConfig | None = None,
    base_model: Path | None = None,
    data: dict | None = None,
    progress: bool = True,
) -> RankerReport:
    """Train on ``groups`` (mentions with their retrieved candidates; those whose gold was not retrieved teach nothing
    and are left out), pre-train first on ``synonyms`` when given, and write the ranker folder at ``out``, whole."""
    config = config if config is not None else RankerConfig()
    import torch

    from medlink.training.tagger import _machine

    check_ranker_output(out)
    usable = [g for g in groups if g.gold >= 0 and len(g.candidates) > 1]
    if not usable:
        raise MedlinkError("nothing to train on: no training mention has its gold concept among its retrieved candidates")
    started = time.perf_counter()
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    spec = RankerSpec(config.pooling, config.dim, list(config.hidden), list(stages), config.max_tokens, config.dropout)
    model = PairwiseModel.new(spec, base_model)
    usable, dev = with_features(model, usable), with_features(model, dev)
    model.fit_feature_scale(np.concatenate([g.features for g in usable]))
    report = RankerReport(
        asdict(config),
        {
            **(data or {}),
            "groups": len(groups),
            "used": len(usable),
            "dev": len(dev),
            "synonyms": len(synonyms),
            "parameters": parameter_count(model),
        },
    )
    optimizer = torch.optim.Adam([p for p in model.net.parameters() if p.requires_grad], lr=config.learning_rate)
    best_state, best = None, -1.0
    with staged_directory(out) as staging:  # holds the output lock for the whole run
        check_ranker_output(out)  # again, under the lock
        pretrain = [g for g in synonyms if g.gold >= 0 and len(g.candidates) > 1]
        for epoch in range(config.pretrain_epochs if pretrain else 0):
            losses = _epoch(
                model, optimizer, pretrain, config, rng, f"synonyms {epoch + 1}/{config.pretrain_epochs}", progress, features=False
            )
            report.pretraining.append(_record(epoch, losses, model, dev, started, progress))
        for epoch in range(config.epochs):
            losses = _epoch(model, optimizer, usable, config, rng, f"epoch {epoch + 1}/{config.epochs}", progress)
            record = _record(epoch, losses, model, dev, started, progress)
            report.epochs.append(record)
            score = record.get("dev_acc@1", epoch)
            if score > best:  # ties keep the earlier epoch
                best, report.best_epoch = score, epoch + 1
                best_state = {k: v.detach().clone() for k, v in model.net.state_dict().items()} if dev else None
        if best_state is not None:
            model.net.load_state_dict(best_state)
        report.seconds = round(time.perf_counter() - started, 1)
        report.machine = _machine()
        model.save(staging, {k: v for k, v in asdict(report).items()})
    return report


def _record(epoch: int, losses: list[float], model: PairwiseModel, dev: Sequence[Group], started: float, progress: bool) -> dict:
    record = {"epoch": epoch + 1, "loss": round(float(np.mean(losses)), 5), "steps": len(losses)}
    accuracy = dev_accuracy(model, dev)
    if accuracy is not None:
        record["dev_acc@1"] = round(accuracy, 5)
    record["seconds"] = round(time.perf_counter() - started, 1)
    if progress:
        print(json.dumps(record), flush=True)
    return record


def retrieval_accuracy(groups: Sequence[Group]) -> float:
    """Acc@1 of the retrieved order itself (the baseline the ranker must beat)."""
    return float(np.mean([g.gold == 0 for g in groups])) if groups else 0.0

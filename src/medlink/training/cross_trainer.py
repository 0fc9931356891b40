"""Training a cross-encoder reranker on annotated mentions (papers 002 and 003), on the CPU.

Each training mention forms a group: its gold concept's preferred name (or, with ``concept_text =
"alias"``, any of its KB names, drawn each epoch; with "entity", Varma et al. (2021)'s "name [SEP] types [SEP] definition") and ``candidates - 1``
names of wrong concepts drawn (afresh each epoch) from the ones a bi-encoder ranks highest for it
over the KB's names: the close calls a reranker exists to settle. The loss is a softmax over the
group with the gold first (listwise cross-entropy, as Varma et al. (2021)'s reranker). KB names only, never
the mention memory: a training mention would find itself there and teach nothing.
Checkpoints and ``resume`` work as for the bi-encoder.

With ``context`` > 0 the model learns to read each mention in its text (``left [START] mention [END]
right``): the training mentions are then every gold annotation of PubTator documents with the text
around it (``pubtator_mentions``), not the distinct strings.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from medlink.core import Mention
from medlink.corpora.pubtator import iter_pubtator
from medlink.encoders.cross import CONTEXT_MAX_LENGTH, MAX_LENGTH, CrossEncoder
from medlink.encoders.precision import check_precision
from medlink.errors import MedlinkError
from medlink.kb.store import KB
from medlink.text.concept_text import entity_texts
from medlink.training.examples import ConceptNames
from medlink.training.run import TrainingRun, TrainReport, check_training_numbers

CROSS_CONCEPT_TEXTS = ("name", "alias", "entity")


@dataclass
class CrossTrainConfig:
    epochs: int = 2
    batch_size: int = 16  # mentions per step; each brings ``candidates`` pairs
    candidates: int = 8  # the gold name + (candidates - 1) wrong concepts
    learning_rate: float = 3e-5
    warmup: float = 0.1
    seed: int = 13
    precision: str = "auto"  # auto | fp32 | bf16 (autocast); auto: bf16 only where this CPU runs it faster
    max_length: int | None = None  # None: MAX_LENGTH, or CONTEXT_MAX_LENGTH with context
    checkpoint_every: int = 100
    concept_text: str = "name"  # "name": the preferred name; "alias": a random KB name of the concept, drawn each epoch;
    # "entity": "name [SEP] types [SEP] definition" (Varma et al. (2021); the name alone for a concept the KB does not describe)
    context: int = 0  # characters of text each side of the mention the model reads (0: the mention alone)

    def __post_init__(self) -> None:
        check_precision(self.precision, "precision (--precision)")
        if self.context < 0:
            raise MedlinkError(f"context (--context) must be 0 or more characters, not {self.context}")
        if self.max_length is None:
            self.max_length = CONTEXT_MAX_LENGTH if self.context else MAX_LENGTH
        check_training_numbers(
            self.learning_rate,
            self.warmup,
            self.checkpoint_every,
            at_least={
                "epochs": (self.epochs, 1),
                "batch_size": (self.batch_size, 1),
                "candidates": (self.candidates, 2),
                "max_length": (self.max_length, 2),
            },
        )
        if self.concept_text not in CROSS_CONCEPT_TEXTS:
            raise MedlinkError(f"concept_text (--concept-text) must be one of {', '.join(CROSS_CONCEPT_TEXTS)}, not {self.concept_text!r}")


def pubtator_mentions(kb: KB, path: Path | str, context: int) -> tuple[list[tuple[Mention, str]], Counter]:
    """Every gold annotation of a PubTator file as (normalised mention with ``context`` characters each side, KB concept),
    each distinct (mention, context, concept) once; and how many were left out and why.

    An annotation whose ids resolve to one concept (MEDIC's OMIM and MeSH ids of one disease) is kept; one whose ids
    name several concepts (a composite, "breast or ovarian cancer") is left out: no one concept name is its answer, and
    the text does not say where it splits."""
    mentions: dict[tuple, tuple[Mention, str]] = {}
    skipped: Counter = Counter()
    for document in iter_pubtator(path):
        text = document.text
        for annotation in document.annotations:
            concepts = {c for c in map(kb.resolve, annotation.ids) if c}
            if len(concepts) != 1:
                reason = (
                    "composite (ids of several concepts)" if concepts else "gold concept not in the KB" if annotation.ids else "no concept"
                )
                skipped[reason] += 1
                continue
            # the window the annotator gives a mention with the same ``context`` (``medlink annotate --context N``)
            seen = document.mention(annotation, context, text) if context else Mention(annotation.text, document.doc_id)
            mention = Mention(kb.normalize(annotation.text), document.doc_id, annotation.start, annotation.end, seen.left, seen.right)
            concept = concepts.pop()
            mentions.setdefault((mention.text, mention.left, mention.right, concept), (mention, concept))
    return list(mentions.values()), skipped


def retrieved_negatives(
    kb: KB, mentions: Sequence[tuple[str | Mention, str]], model: str | Path | None, depth: int = 16
) -> list[list[str]]:
    """For each (mention, gold), the ``depth`` wrong concepts a bi-encoder ranks highest over the KB's names."""
    from medlink.linking.config import LinkerConfig
    from medlink.linking.linker import Linker

    config = {
        "generators": [{"name": "dense", "type": "dense", "names": "kb", "params": {"model": str(model) if model else None}}],
        "k_per_generator": depth + 1,
    }
    linker = Linker.build(kb, LinkerConfig.from_dict(config))
    ranked = linker.link([Mention.of(mention).text for mention, _ in mentions], k=depth + 1, rerank=False)
    return [[c.concept_id for c in result.candidates if c.concept_id != gold][:depth] for result, (_, gold) in zip(ranked, mentions)]


def _group(gold: str, negatives: list[str], size: int, all_concepts: list[str], rng: random.Random) -> list[str]:
    """The gold concept then ``size - 1`` wrong ones: sampled from the retrieved, topped up at random."""
    chosen = rng.sample(negatives, min(size - 1, len(negatives)))
    taken = {gold, *chosen}
    while len(chosen) < size - 1:
        concept = rng.choice(all_concepts)
        if concept not in taken:
            chosen.append(concept)
            taken.add(concept)
    return [gold, *chosen]


def in_contexts(examples: Sequence[tuple[str | Mention, str, list[str]]], model: CrossEncoder) -> list[tuple[list[str], str, list[str]]]:
    """One example per distinct (mention text, concept), holding what the model reads for each of its occurrences: an
    epoch draws one of them, so a string annotated a hundred times weighs no more than without context, and an epoch
    costs the same number of steps."""
    grouped: dict[tuple[str, str], tuple[dict[str, None], list[str]]] = {}
    for mention, gold, negatives in examples:
        variants, _ = grouped.setdefault((Mention.of(mention).text, gold), ({}, negatives))
        variants[model.reads(mention)] = None
    return [(list(variants), gold, negatives) for (_, gold), (variants, negatives) in grouped.items()]


def _one(variants: list[str], rng: random.Random) -> str:
    """This epoch's reading of an example (no draw for a single one: a context-free run's random stream is unchanged)."""
    return variants[0] if len(variants) == 1 else rng.choice(variants)


def dev_accuracy(
    model: CrossEncoder, names: dict[str, str], dev: Sequence[tuple[str | Mention, str]], dev_negatives: Sequence[list[str]], size: int
) -> float | None:
    """How often the gold name outscores the dev mention's top ``size - 1`` retrieved wrong concepts (dev data only)."""
    if not dev:
        return None
    groups = [[names[c] for c in (gold, *negatives[: size - 1])] for (_, gold), negatives in zip(dev, dev_negatives)]
    scores = model.score_groups([model.reads(mention) for mention, _ in dev], groups)
    return float(np.mean([int(np.argmax(s)) == 0 for s in scores]))


def train_cross_encoder(
    kb: KB,
    out: Path,
    mentions: Sequence[tuple[str | Mention, str]],
    negatives: Sequence[list[str]],
    *,
    dev: Sequence[tuple[str | Mention, str]] = (),
    dev_negatives: Sequence[list[str]] = (),
    base_model: str | Path | None = None,
    config: CrossTrainConfig | None = None,
    resume: bool = False,
    progress: bool = True,
) -> TrainReport:
    """Train and save a cross-encoder folder at ``out`` (a ``cross-encoder`` reranker's ``model``). A mention is a
    normalised string, or a ``Mention`` whose left / right context the model reads when ``config.context`` > 0."""
    config = config if config is not None else CrossTrainConfig()
    import torch

    names = dict(kb.iter_concepts())
    if config.concept_text == "entity":
        names |= entity_texts(kb)  # what the model reads for each concept, gold and wrong alike
    aliases = ConceptNames.from_kb(kb).names if config.concept_text == "alias" else {}
    if len(names) < 2:
        raise MedlinkError(f"{kb.path}: a cross-encoder needs at least two concepts to tell apart, the KB has {len(names)}")
    if len(mentions) != len(negatives):
        raise ValueError(f"{len(mentions)} mentions but {len(negatives)} negative lists")
    examples = [(text, gold, negs) for (text, gold), negs in zip(mentions, negatives) if gold in names]
    if not examples:
        raise MedlinkError("no training mention has a gold concept in the KB")
    size = min(config.candidates, len(names))
    run = TrainingRun(out, resume, config.seed, progress)
    model = CrossEncoder(run.model_folder(base_model), config.max_length, config.precision, context=config.context)
    occurrences = len(examples)
    examples = in_contexts(examples, model) if config.context else [([model.reads(m)], gold, negs) for m, gold, negs in examples]
    steps_per_epoch = math.ceil(len(examples) / config.batch_size)
    run.prepare(
        model,
        config.learning_rate,
        config.warmup,
        steps_per_epoch * config.epochs,
        asdict(config),
        {"mentions": len(examples), "occurrences": occurrences, "dev": len(dev), "group": size},
    )
    all_concepts = list(names)
    for epoch in run.epochs(config.epochs):
        rng = random.Random(config.seed + epoch)
        order = list(range(len(examples)))
        rng.shuffle(order)
        groups = [(_one(examples[i][0], rng), _group(examples[i][1], examples[i][2], size, all_concepts, rng)) for i in order]
        texts = [[rng.choice(aliases[c]) if aliases.get(c) else names[c] for c in group] for _, group in groups]

        def step_loss(step: int, groups: list = groups, texts: list = texts):  # this epoch's draws, bound now
            rows = slice(step * config.batch_size, (step + 1) * config.batch_size)
            batch = groups[rows]
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=model.precision == "bf16"):
                scores = model.forward([text for text, group in batch for _ in group], [t for row in texts[rows] for t in row])
            return torch.nn.functional.cross_entropy(scores.view(len(batch), size), torch.zeros(len(batch), dtype=torch.long))

        losses = run.train_epoch(epoch, config.epochs, steps_per_epoch, step_loss, config.checkpoint_every)
        run.end_epoch(epoch, losses, dev_accuracy(model, names, dev, dev_negatives, size))
    return run.finish(kb, base_model, kind="cross-encoder")

"""Training the aligner's cross-encoder (Rahimi et al. 2020): each gold (source, target) pair against the candidate
generators' top wrong targets, a binary loss (is this the source's target?), on the CPU.

The pair texts are what scoring reads (``SourceQueries.text`` / ``TargetIndex.text``), and the negatives are what the
aligner will have to beat: the wrong targets among each source's first ``depth`` fused candidates (ancestors of strong
candidates included), drawn afresh each epoch. The training mappings also teach the sources' words in the target's
vocabulary ("cancer" -> "malignant neoplasm", ``align.substitutions``): every query is read with them, here and when
aligning. After training, the held-out gold (``dev``) fits the calibration and
the threshold (``scoring.fit_calibration``), saved beside the model in ``medlink_aligner.json``. Model, optimiser,
checkpoints and the final save are ``TrainingRun``'s, as for every medlink trainer.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from medlink.align import substitutions
from medlink.align.candidates import CandidateSet, SourceQueries, TargetIndex, generate
from medlink.align.dense import QUALIFIERS, dense_similarity, with_dense_candidates
from medlink.align.evidence import cross_logits
from medlink.align.scoring import CHOICES, Calibration, fit_calibration
from medlink.encoders.cross import CrossEncoder
from medlink.encoders.precision import check_precision
from medlink.errors import MedlinkError
from medlink.kb.store import KB
from medlink.training.layers import check_layers, keep_layers
from medlink.training.run import TrainingRun, TrainReport, check_training_numbers

LOSSES = ("binary", "listwise")


@dataclass
class AlignerTrainConfig:
    # defaults: the recipe measured best on DO -> ICD-10-CM (docs/training-recipes.md; 16 candidates and 7 negatives,
    # the earlier defaults, were 0.4 points lower out of fold there)
    epochs: int = 2
    batch_size: int = 8  # source concepts per step; each brings 1 + negatives pairs
    negatives: int = 3
    depth: int = 8  # candidates per source the negatives are drawn from, and that the aligner reads
    learning_rate: float = 1e-4
    warmup: float = 0.1
    max_length: int = 48
    seed: int = 13
    precision: str = "auto"
    checkpoint_every: int = 200
    max_steps: int | None = None  # cap the steps of each epoch (tests, quick trials)
    cross_encoder: bool = True  # False: only the calibration over lexical and structural evidence (seconds, no torch)
    bi_encoder: str | None = None  # "packaged" or a bi-encoder folder: its similarities join the calibration (align.dense)
    dense_candidates: bool = True  # with a bi-encoder: its nearest target names join the candidates too
    dense_strip: str | None = QUALIFIERS  # with a bi-encoder: the qualifier it leaves out of target names (align.dense)
    calibration: str = "auto"  # logistic | trees | auto (the better out of fold; scoring.fit_calibration)
    loss: str = "binary"  # binary: each pair right or wrong (Rahimi et al. 2020); listwise: softmax over a source's gold and negatives
    target_synonyms: int = 0  # the target's own other names used as extra training queries (Kong et al. (2021): pairs from the KB)
    substitutions: bool = True  # learn word -> phrase substitutions from the mappings; sources read with them (align.substitutions)
    hierarchy_negatives: bool = False  # a gold target's parent or child may be a negative too (_examples)
    layers: int | None = None  # the base model's first N transformer layers only (None: all): a faster aligner (training.layers)

    def __post_init__(self) -> None:
        check_precision(self.precision, "precision (--precision)")
        check_layers(self.layers)
        check_training_numbers(
            self.learning_rate,
            self.warmup,
            self.checkpoint_every,
            at_least={
                "epochs": (self.epochs, 1),
                "batch_size": (self.batch_size, 1),
                "negatives": (self.negatives, 1),
                "depth": (self.depth, 2),
                "max_length": (self.max_length, 8),
                "target_synonyms": (self.target_synonyms, 0),
            },
        )
        if self.loss not in LOSSES:
            raise MedlinkError(f"loss (--loss) must be one of {', '.join(LOSSES)}, not {self.loss!r}")
        if self.calibration not in CHOICES:
            raise MedlinkError(f"calibration (--calibration) must be one of {', '.join(CHOICES)}, not {self.calibration!r}")


def gold_positions(queries: SourceQueries, target: TargetIndex, gold: dict[str, set[str]]) -> dict[int, set[int]]:
    """Gold as positions: source position -> target positions (pairs naming a concept either KB lacks are dropped)."""
    source = {c: i for i, c in enumerate(queries.concept_ids)}
    index = {c: i for i, c in enumerate(target.concept_ids)}
    out: dict[int, set[int]] = {}
    for s, targets in gold.items():
        found = {index[t] for t in targets if t in index}
        if s in source and found:
            out[source[s]] = found
    return out


def _hierarchy_neighbours(target: TargetIndex, concepts: set[int]) -> set[int]:
    """The parents and children of ``concepts``."""
    out: set[int] = set()
    for c in concepts:
        out.update(int(p) for p in target.parents[target.parent_indptr[c] : target.parent_indptr[c + 1]])
    children = np.flatnonzero(np.isin(target.parents, list(concepts)))
    heads = np.searchsorted(target.parent_indptr, children, side="right") - 1
    return out | {int(h) for h in heads}


@dataclass
class Example:
    """One training query: what the model reads for it, its gold targets, the wrong targets it must beat, and a
    name the gold target's text leaves out (a target synonym asked about must not be copied from the answer)."""

    left: str
    positives: list[int]
    wrong: list[int]
    hide: str | None = None


def _examples(
    candidates: CandidateSet, gold: dict[int, set[int]], depth: int, synonyms: bool = False, hierarchy: bool = False
) -> list[Example]:
    """The examples of gold sources: wrong targets among each one's first ``depth`` candidates (``synonyms``: the
    queries are target names, hidden from their own concept's text).

    A gold target's parent or child is not taken as a wrong target: known mappings often name a category that the
    target has since split (DO 2016's Q87.1 for Prader-Willi; ICD-10-CM 2026's Q87.11 carries the name), so such a
    "negative" would teach the model that an exact name is wrong. The calibration's depth features learn the level.
    With ``hierarchy`` they are negatives like any other: the model then learns the level the known mappings choose."""
    hits, queries = candidates.hits, candidates.queries
    out = []
    for i in range(hits.n_queries):
        if i not in gold:
            continue
        unclear = set() if hierarchy else _hierarchy_neighbours(candidates.target, gold[i])
        wrong = [int(c) for c in hits.concepts[hits.row(i)][:depth] if int(c) not in gold[i] and int(c) not in unclear]
        if wrong:
            out.append(Example(queries.text(i), sorted(gold[i]), wrong, queries.alias_sets[i][0] if synonyms else None))
    return out


def target_synonym_queries(target: KB, index: TargetIndex, count: int, seed: int) -> tuple[SourceQueries, dict[int, set[int]]]:
    """Up to ``count`` of the target's own non-preferred names (seeded sample), each a one-alias query whose gold is its
    concept: pairs mined from the KB itself (Kong et al. 2021) that teach the reranker the target's own distinctions
    ("Classical cholera" is A00.0, not its siblings), beside the known mappings. A target with none gives none (the
    training report counts what was used; a synonym whose candidates hold no wrong target teaches nothing and is dropped)."""
    position = {c: i for i, c in enumerate(index.concept_ids)}
    names = sorted({(cid, text) for cid, text, kind in target.iter_names() if kind != "preferred" and text != index.names[position[cid]]})
    picked = [
        (cid, text, key) for cid, text in random.Random(seed).sample(names, min(count, len(names))) if (key := target.normalize(text))
    ]
    queries = SourceQueries(
        [f"{cid}#{text}" for cid, text, _ in picked],
        [text for _, text, _ in picked],
        [key for *_, key in picked],
        np.arange(len(picked), dtype=np.int64),
        [[text] for _, text, _ in picked],
    )
    return queries, {i: {position[cid]} for i, (cid, _, _) in enumerate(picked)}


def train_aligner(
    source: KB,
    target: KB,
    gold: dict[str, set[str]],
    out: Path,
    *,
    dev: dict[str, set[str]] | None = None,
    base_model: str | Path | None = None,
    config: AlignerTrainConfig | None = None,
    resume: bool = False,
    progress: bool = True,
    dev_fraction: float = 0.2,
) -> tuple[TrainReport, Calibration]:
    """Train and save an aligner folder at ``out``; ``dev`` (else ``dev_fraction`` of the gold sources, seeded) fits
    the calibration and threshold and is never trained on."""
    config = config if config is not None else AlignerTrainConfig()
    if dev is None:
        if len(gold) < 2:
            raise MedlinkError(
                f"{len(gold)} known source concept(s): too few to train on and hold {dev_fraction:.0%} out for the calibration; "
                "give more known mappings, or held-out ones with --dev"
            )
        ids = sorted(gold)
        random.Random(config.seed).shuffle(ids)
        held = set(ids[: max(1, int(dev_fraction * len(ids)))])
        dev, gold = {s: gold[s] for s in held}, {s: t for s, t in gold.items() if s not in held}
    target_index = with_dense_candidates(
        TargetIndex.build(target), config.bi_encoder if config.dense_candidates else None, config.dense_strip
    )
    queries = SourceQueries.from_kb(source, target.normalize)
    positions = {c: i for i, c in enumerate(queries.concept_ids)}
    train_rows = sorted(positions[s] for s in gold if s in positions)
    dev_rows = sorted(positions[s] for s in dev if s in positions)
    if not train_rows:
        raise MedlinkError("no gold mapping names a source concept of --source: check the gold file's subject ids")
    train_queries, dev_queries = queries.subset(train_rows), queries.subset(dev_rows)
    train_gold = gold_positions(train_queries, target_index, gold)
    learned = substitutions.learn(train_queries, target_index, train_gold, target.normalize) if config.substitutions else {}
    train_queries, dev_queries = substitutions.expand(train_queries, learned), substitutions.expand(dev_queries, learned)
    train_candidates = generate(target_index, train_queries, progress=progress)
    if not config.cross_encoder:
        return None, _lexical_aligner(
            out,
            train_candidates,
            gold,
            generate(target_index, dev_queries, progress=progress) if dev_rows else None,
            dev,
            config,
            learned,
            progress,
        )
    examples = _examples(train_candidates, train_gold, config.depth, hierarchy=config.hierarchy_negatives)
    if not examples:
        raise MedlinkError("no gold mapping names a target concept of --target: check the gold file's object ids")
    mined = 0
    if config.target_synonyms:
        synonym_queries, synonym_gold = target_synonym_queries(target, target_index, config.target_synonyms, config.seed)
        extra = (
            _examples(
                generate(target_index, synonym_queries, progress=progress),
                synonym_gold,
                config.depth,
                synonyms=True,
                hierarchy=config.hierarchy_negatives,
            )
            if synonym_gold
            else []
        )
        examples, mined = examples + extra, len(extra)
    import torch

    run = TrainingRun(out, resume, config.seed, progress)
    model = CrossEncoder(run.model_folder(base_model), config.max_length, config.precision)
    if not run.resuming:  # a checkpoint is already cut; prepare() refuses a --layers it was not trained with
        keep_layers(model.model, config.layers)
    steps = math.ceil(len(examples) / config.batch_size)
    if config.max_steps:
        steps = min(steps, config.max_steps)
    run.prepare(
        model,
        config.learning_rate,
        config.warmup,
        steps * config.epochs,
        asdict(config),
        {"sources": len(examples) - mined, "target_synonyms": mined, "dev": len(dev_rows), "substitutions": len(learned)},
    )
    loss_function = torch.nn.BCEWithLogitsLoss()
    for epoch in run.epochs(config.epochs):
        rng = random.Random(config.seed + epoch)
        order = list(range(len(examples)))
        rng.shuffle(order)
        pairs: list[list[tuple[str, str, float]]] = []
        for i in order:
            example = examples[i]
            group = [(example.left, target_index.text(rng.choice(example.positives), hide=example.hide), 1.0)]
            group += [
                (example.left, target_index.text(c), 0.0) for c in rng.sample(example.wrong, min(config.negatives, len(example.wrong)))
            ]
            pairs.append(group)

        def step_loss(step: int, pairs: list = pairs):  # this epoch's pairs, bound now
            groups = pairs[step * config.batch_size : (step + 1) * config.batch_size]
            batch = [pair for group in groups for pair in group]
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=model.precision == "bf16"):
                scores = model.forward([p[0] for p in batch], [p[1] for p in batch])
            if config.loss == "listwise":  # each group's gold pair comes first
                split = torch.split(scores.float(), [len(group) for group in groups])
                return torch.stack([torch.logsumexp(g, 0) - g[0] for g in split]).mean()
            return loss_function(scores, torch.tensor([p[2] for p in batch]))

        losses = run.train_epoch(epoch, config.epochs, steps, step_loss, config.checkpoint_every)
        run.end_epoch(epoch, losses, None)
    report = run.finish(source, base_model, kind="aligner", target={"path": str(target.path), "checksum": target.checksum})
    calibration = Calibration({"cross": 1.0, "fused": 0.0, "tfidf": 0.0}, 0.0, 0.5, config.depth)
    if dev_rows:
        dev_candidates = generate(target_index, dev_queries, progress=progress)
        calibration = fit_calibration(
            dev_candidates,
            cross_logits(model, dev_candidates, config.depth, progress),
            dev,
            config.depth,
            **_evidence(dev_candidates, config, progress),
        )
    calibration.substitutions, calibration.dense_strip = learned, _recorded_strip(calibration, config)
    calibration.save(out)
    return report, calibration


def _evidence(candidates: CandidateSet, config: AlignerTrainConfig, progress: bool) -> dict:
    """``fit_calibration``'s keywords beyond the candidates: the model kind, and the bi-encoder's similarities over
    ``candidates`` with the setting behind them (none without a bi-encoder)."""
    out = {"model": config.calibration, "dense_candidates": config.dense_candidates}
    if config.bi_encoder is None:
        return out
    return {**out, "dense": dense_similarity(candidates, config.bi_encoder, progress, config.dense_strip), "bi_encoder": config.bi_encoder}


def _recorded_strip(calibration: Calibration, config: AlignerTrainConfig) -> str | None:
    """The qualifier the aligner's bi-encoder leaves out of target names, recorded with it (none without a bi-encoder)."""
    return config.dense_strip if calibration.bi_encoder else None


def _lexical_aligner(
    out: Path,
    train: CandidateSet,
    gold: dict[str, set[str]],
    dev: CandidateSet | None,
    dev_gold: dict[str, set[str]],
    config: AlignerTrainConfig,
    learned: dict[str, str],
    progress: bool = False,
) -> Calibration:
    """An aligner without a cross-encoder: the calibration fitted on the training mappings, its threshold on dev's."""
    from medlink.directories import staged_directory

    if dev is not None:  # one candidate set holding both, so the fit and the threshold see the same features
        both = train.followed_by(dev)
        calibration = fit_calibration(both, None, gold, config.depth, threshold_gold=dev_gold, **_evidence(both, config, progress))
    else:
        calibration = fit_calibration(train, None, gold, config.depth, **_evidence(train, config, progress))
    calibration.substitutions, calibration.dense_strip = learned, _recorded_strip(calibration, config)
    with staged_directory(out) as staging:
        calibration.save(staging)
    return calibration

"""``medlink train``: mine KB pairs, train bi-encoders, cross-encoders, pairwise rankers, mention taggers and span selectors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

from medlink.cli.common import PRECISION_HELP, fail, new_app, open_kb, quiet_option, quiet_phases, use_precision
from medlink.cli.train_inputs import CONFIG_HELP, DOCUMENTS, cross_mentions, settings_from, training_mentions
from medlink.encoders.precision import ENV

app = new_app("Mine training pairs from a KB and train bi-encoders, cross-encoders, pairwise rankers, mention taggers and span selectors.")


@app.command("pairs")
def train_pairs(
    kb: str = typer.Option(..., "--kb", help="KB file, or 'default'."),
    out: Path = typer.Option(..., "--out", help="Directory for pairs.train.tsv, pairs.dev.tsv, negatives.tsv, pairs.json."),
    tasks: str = typer.Option("syn,graph", "--tasks", help="Comma-separated: syn, graph, icd, comb."),
    per_concept: int = typer.Option(10, "--per-concept", help="Cap of pairs per concept and task."),
    seed: int = typer.Option(
        13, "--seed", help="Random seed (sampling, shuffling, initialisation): the same seed and data give the same run."
    ),
    dev_fraction: float = typer.Option(0.2, "--dev-fraction", help="Share of concepts held out (node-level split)."),
    quiet: bool = quiet_option(),
) -> None:
    """Mine synonym / graph / ICD-10 pairs from a KB (knowledge-graph training pairs), split 80:20 by concept."""
    quiet_phases(quiet)
    from medlink.training.pairs import mine_pairs

    report = mine_pairs(open_kb(kb), out, tasks, max_pairs_per_concept=per_concept, seed=seed, dev_fraction=dev_fraction)
    typer.echo(report.summary())


@app.command("bi-encoder")
def train_bi_encoder_command(
    ctx: typer.Context,
    kb: str = typer.Option(..., "--kb", help="KB the concepts come from (positives and hard negatives)."),
    out: Path = typer.Option(..., "--out", help="Model folder to write (usable as a dense generator's model)."),
    train: list[str] = typer.Option([], "--train", help="Annotated mentions FORMAT:PATH (repeatable): supervised examples."),
    pairs: Path | None = typer.Option(
        None, "--pairs", help="A 'medlink train pairs' directory: KG examples (alone: zero-shot; with --train: auxiliary loss)."
    ),
    dev: list[str] = typer.Option(
        [],
        "--dev",
        help="Dev mentions FORMAT:PATH for per-epoch Acc@1 (never test data); without it, --pairs' held-out pairs.dev.tsv is the dev set.",
    ),
    model: Path | None = typer.Option(None, "--model", help="Base model folder (default: packaged all-MiniLM-L6-v2)."),
    epochs: int = typer.Option(1, "--epochs", min=1, help="Passes over the training examples."),
    batch_size: int = typer.Option(
        64, "--batch-size", min=2, help="Examples per step; the other examples of a batch are its in-batch negatives."
    ),
    learning_rate: float = typer.Option(2e-5, "--lr", help="Peak learning rate (AdamW, linear warm-up and decay)."),
    tau: float = typer.Option(0.05, "--tau", help="Softmax temperature of the contrastive loss."),
    hard_negatives: int = typer.Option(0, "--hard-negatives", help="p dynamic hard negatives per mention, refreshed every epoch."),
    mention_positives: bool = typer.Option(
        False, "--mention-positives", help="Draw positives from the gold concept's names and its other training mentions."
    ),
    distinct_mentions: bool = typer.Option(
        False,
        "--distinct-mentions",
        help="One example per distinct (mention, concept) instead of one per annotation: "
        "shorter epochs on corpora that repeat the same mentions (AskAPatient).",
    ),
    kg_weight: float = typer.Option(1.0, "--kg-weight", help="Weight of the KG auxiliary loss."),
    dev_pool_size: int = typer.Option(
        32,
        "--dev-pool",
        min=0,
        help="Judge --dev each epoch among the gold concepts and this many "
        "lexical candidates per mention, encoded each epoch instead of the whole KB (0: the whole KB).",
    ),
    max_steps: int | None = typer.Option(
        None, "--max-steps-per-epoch", help="Cap the steps of each epoch (quick trials; default: all examples)."
    ),
    seed: int = typer.Option(
        13, "--seed", help="Random seed (sampling, shuffling, initialisation): the same seed and data give the same run."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUT/checkpoint after an interruption."),
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    no_bf16: bool = typer.Option(False, "--no-bf16", hidden=True, help="Same as --precision fp32 (kept for old scripts)."),
    config_file: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    pooling: str | None = typer.Option(None, "--pooling", help="mean or cls (default: what the base model folder declares, else mean)."),
    quiet: bool = quiet_option(),
) -> None:
    """Train a bi-encoder: in-batch + dynamic hard negatives, KG pairs as zero-shot or auxiliary task."""
    quiet_phases(quiet)
    from medlink.encoders.transformer import require_dense_extra

    require_dense_extra()
    from medlink.training.examples import pair_examples
    from medlink.training.pairs_io import read_pairs
    from medlink.training.run import check_training_output
    from medlink.training.trainer import TrainConfig, train_bi_encoder

    config = settings_from(
        ctx,
        TrainConfig,
        config_file,
        {
            "epochs": ("epochs", epochs),
            "batch_size": ("batch_size", batch_size),
            "learning_rate": ("learning_rate", learning_rate),
            "tau": ("tau", tau),
            "hard_negatives": ("hard_negatives", hard_negatives),
            "mention_positives": ("mention_positives", mention_positives),
            "distinct_mentions": ("distinct_mentions", distinct_mentions),
            "kg_weight": ("kg_weight", kg_weight),
            "seed": ("seed", seed),
            "precision": ("no_bf16", "fp32") if no_bf16 else ("precision", precision or os.environ.get(ENV) or "auto"),
            "max_steps_per_epoch": ("max_steps", max_steps),
            "dev_pool": ("dev_pool_size", dev_pool_size),
            "pooling": ("pooling", pooling),
        },
    )
    use_precision(config.precision)
    check_training_output(out, {"--model": model})  # before any data is read
    store = open_kb(kb)
    if not train and pairs is None:
        fail("nothing to train on: give --train FORMAT:PATH (annotated mentions) and/or --pairs DIR (KB pairs)")
    if pairs is not None and not pairs.is_dir():
        fail(f"--pairs expects the folder 'medlink train pairs --out' wrote, not {pairs}")
    if hard_negatives and not train:
        typer.echo("note: --hard-negatives applies to --train mentions; with --pairs alone it is not used", err=True)
    mentions = training_mentions(store, train, "--train")
    kg = pair_examples(read_pairs(pairs / "pairs.train.tsv")) if pairs else []
    dev_mentions = training_mentions(store, dev, "--dev", required=True)
    held_out = pairs / "pairs.dev.tsv" if pairs else None
    kg_dev = (
        pair_examples(read_pairs(held_out)) if (held_out and not dev and held_out.is_file()) else []
    )  # no --dev: judge on held-out concepts
    report = train_bi_encoder(
        store, out, mentions=mentions, kg_examples=kg, dev=dev_mentions, kg_dev=kg_dev, base_model=model, config=config, resume=resume
    )
    typer.echo(f"wrote {out} in {report.seconds / 60:.1f} min; epochs: {json.dumps(report.epochs)}")


@app.command("cross-encoder")
def train_cross_encoder_command(
    ctx: typer.Context,
    kb: str = typer.Option(..., "--kb", help="KB the concepts and their preferred names come from."),
    out: Path = typer.Option(..., "--out", help="Model folder to write (a 'cross-encoder' reranker's model)."),
    train: list[str] = typer.Option(
        ...,
        "--train",
        help="Annotated mentions FORMAT:PATH (repeatable); each distinct (mention, concept) once "
        "(with --context: each annotation in its text). In PubTator files an "
        "annotation whose ids name several concepts (a composite) is left out.",
    ),
    dev: list[str] = typer.Option([], "--dev", help="Dev mentions FORMAT:PATH for per-epoch accuracy (never test data)."),
    context: int = typer.Option(
        0,
        "--context",
        min=0,
        help="Characters of text each side of the mention the model reads with it "
        "(0: the mention alone). Needs documents: pubtator:PATH for --train and --dev. "
        "Annotate with at least as much --context.",
    ),
    max_length: int | None = typer.Option(
        None,
        "--max-length",
        min=8,
        help="Word pieces of a (mention, concept) pair, special tokens "
        "included (default: 48; 128 with --context, which holds "
        "100 characters each side).",
    ),
    candidates_model: str | None = typer.Option(
        None, "--candidates-model", help="Bi-encoder folder that retrieves the wrong concepts to train against (default: packaged MiniLM)."
    ),
    model: Path | None = typer.Option(
        None, "--model", help="Base model folder (default: packaged all-MiniLM-L6-v2, with a new score head)."
    ),
    epochs: int = typer.Option(2, "--epochs", min=1, help="Passes over the training mentions."),
    batch_size: int = typer.Option(16, "--batch-size", min=1, help="Mentions per step."),
    candidates: int = typer.Option(8, "--candidates", min=2, help="Group size: the gold name and candidates-1 retrieved wrong concepts."),
    learning_rate: float = typer.Option(3e-5, "--lr", help="Peak learning rate (AdamW, linear warm-up and decay)."),
    concept_text: str = typer.Option(
        "name",
        "--concept-text",
        help="'name': read mentions against preferred names; 'alias': against any KB name of the concept "
        "(for a reranker with text 'matched'); 'entity': against 'name [SEP] types [SEP] definition' "
        "(for a reranker with text 'entity'; a KB with types and definitions, e.g. after kb augment).",
    ),
    seed: int = typer.Option(
        13, "--seed", help="Random seed (sampling, shuffling, initialisation): the same seed and data give the same run."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUT/checkpoint after an interruption."),
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    no_bf16: bool = typer.Option(False, "--no-bf16", hidden=True, help="Same as --precision fp32 (kept for old scripts)."),
    config_file: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    quiet: bool = quiet_option(),
) -> None:
    """Train a cross-encoder reranker on annotated mentions against a bi-encoder's close calls."""
    quiet_phases(quiet)
    from medlink.encoders.transformer import require_dense_extra

    require_dense_extra()
    from medlink.training.cross_trainer import CrossTrainConfig, retrieved_negatives, train_cross_encoder
    from medlink.training.run import check_training_output

    config = settings_from(
        ctx,
        CrossTrainConfig,
        config_file,
        {
            "epochs": ("epochs", epochs),
            "batch_size": ("batch_size", batch_size),
            "candidates": ("candidates", candidates),
            "learning_rate": ("learning_rate", learning_rate),
            "seed": ("seed", seed),
            "concept_text": ("concept_text", concept_text),
            "context": ("context", context),
            "max_length": ("max_length", max_length),
            "precision": ("no_bf16", "fp32") if no_bf16 else ("precision", precision or os.environ.get(ENV) or "auto"),
        },
    )
    without_text = [spec for spec in [*train, *dev] if not spec.startswith(f"{DOCUMENTS}:")]
    if config.context and without_text:
        fail(
            f"--context needs PubTator documents ({DOCUMENTS}:PATH) for --train and --dev: {', '.join(without_text)} "
            "give(s) mentions without the text around them; train without --context, or give PubTator files"
        )
    use_precision(config.precision)
    check_training_output(out, {"--model": model, "--candidates-model": candidates_model})
    store = open_kb(kb)
    mentions = cross_mentions(store, train, "--train", config.context)
    if not mentions:
        fail("no training mention has a gold concept in the KB")
    dev_mentions = cross_mentions(store, dev, "--dev", config.context, required=True)
    retriever = None if candidates_model in (None, "default") else candidates_model
    depth = max(16, 2 * candidates)
    retrieved = retrieved_negatives(store, mentions + dev_mentions, retriever, depth)  # one index serves both
    negatives, dev_negatives = retrieved[: len(mentions)], retrieved[len(mentions) :]
    report = train_cross_encoder(
        store, out, mentions, negatives, dev=dev_mentions, dev_negatives=dev_negatives, base_model=model, config=config, resume=resume
    )
    typer.echo(f"wrote {out} in {report.seconds / 60:.1f} min; epochs: {json.dumps(report.epochs)}")


@app.command("ranker")
def train_ranker_command(
    ctx: typer.Context,
    index: Path = typer.Option(
        ...,
        "--index",
        help="Index folder whose retrieval the ranker learns to reorder: its top candidates are the "
        "negatives, its per-stage scores the features.",
    ),
    train: list[str] = typer.Option(
        ...,
        "--train",
        help="Annotated mentions FORMAT:PATH (repeatable). When the index's memory holds "
        "them, each is retrieved with its own occurrence left out of the memory "
        "(cross-fitted, --folds rebuilds).",
    ),
    out: Path = typer.Option(..., "--out", help="Ranker folder to write, replaced whole at the end (a 'pairwise' reranker's model)."),
    dev: list[str] = typer.Option(
        [], "--dev", help="Dev mentions FORMAT:PATH: Acc@1 after each epoch, the best epoch kept (never test data)."
    ),
    pretrain_synonyms: bool = typer.Option(
        False,
        "--pretrain-synonyms",
        help="Pre-train on the KB's synonyms first: a non-preferred name as the query, its concept's preferred name as the answer.",
    ),
    pooling: str = typer.Option(
        "attention",
        "--pooling",
        metavar="max|attention",
        help="How a mention or name becomes one vector: max pooling or single-head attention pooling.",
    ),
    epochs: int = typer.Option(8, "--epochs", min=1, help="Passes over the training mentions."),
    negatives: int = typer.Option(10, "--negatives", min=1, help="n negatives drawn per mention; the loss uses the hardest."),
    top: int = typer.Option(32, "--top", min=2, help="Retrieved candidates per mention the negatives are drawn from."),
    batch_size: int = typer.Option(32, "--batch-size", min=1, help="Mentions per step."),
    learning_rate: float = typer.Option(1e-3, "--lr", help="Learning rate (Adam)."),
    folds: int = typer.Option(5, "--folds", min=2, help="Memory folds of the cross-fitted retrieval."),
    seed: int = typer.Option(
        13, "--seed", help="Random seed (folds, negatives, initialisation): the same seed and data give the same run."
    ),
    threads: int | None = typer.Option(
        None, "--threads", min=1, help="torch threads (default: torch's; 1 on a CPU shared with other work)."
    ),
    config_file: Path | None = typer.Option(
        None,
        "--config",
        help="A JSON file of training settings (keys as in medlink_ranker.json's "
        "training 'config'); flags given on the command line win over it.",
    ),
    quiet: bool = quiet_option(),
) -> None:
    """Train a pairwise neural ranker (feed-forward scorer, adaptive hinge loss) to reorder an index's candidate lists."""
    quiet_phases(quiet)
    from medlink.encoders.transformer import require_dense_extra

    require_dense_extra()
    import torch

    from medlink.linking.index import index_with_kb
    from medlink.training.ranker import RankerConfig, check_ranker_output, retrieval_accuracy, train_ranker
    from medlink.training.ranker_data import cross_fitted_groups, memory_holds, retrieved_groups, synonym_queries

    config = settings_from(
        ctx,
        RankerConfig,
        config_file,
        {
            "pooling": ("pooling", pooling),
            "epochs": ("epochs", epochs),
            "negatives": ("negatives", negatives),
            "top": ("top", top),
            "batch_size": ("batch_size", batch_size),
            "learning_rate": ("learning_rate", learning_rate),
            "folds": ("folds", folds),
            "seed": ("seed", seed),
            "pretrain_synonyms": ("pretrain_synonyms", pretrain_synonyms),
        },
    )
    check_ranker_output(out)  # before any data is read
    if threads:
        torch.set_num_threads(threads)
    store, linker = index_with_kb(index)
    mentions = training_mentions(store, train, "--train", required=True)
    if not mentions:
        fail("--train: no mentions in it")
    dev_mentions = training_mentions(store, dev, "--dev", required=True)
    memory = linker.memory_entries()
    cross_fitted = memory_holds(store, memory, mentions)
    if cross_fitted:
        typer.echo(
            f"the index's memory holds the {len(mentions):,} training mentions: each is retrieved with its own occurrence left "
            f"out ({config.folds} rebuilds)",
            err=True,
        )
        groups = cross_fitted_groups(store, linker, memory, mentions, config.top, config.folds, config.seed)
    else:
        groups = retrieved_groups(linker, mentions, config.top)
    if memory_holds(store, memory, dev_mentions):
        typer.echo("note: the index's memory holds the --dev mentions, so dev accuracy flatters the ranker", err=True)
    dev_groups = retrieved_groups(linker, dev_mentions, config.top)
    synonyms = (
        retrieved_groups(linker, synonym_queries(store, config.pretrain_pairs, config.seed), config.top) if config.pretrain_synonyms else []
    )
    if config.pretrain_synonyms and not synonyms:
        typer.echo("note: --pretrain-synonyms: the KB has no synonyms (one name per concept): no pre-training", err=True)
    data = {
        "index": str(index.resolve()),
        "train": list(train),
        "dev": list(dev),
        "cross_fitted": cross_fitted,
        "retrieval_train_acc@1": round(retrieval_accuracy(groups), 5),
        "retrieval_dev_acc@1": round(retrieval_accuracy(dev_groups), 5),
    }
    report = train_ranker(groups, out, linker.stages(), dev=dev_groups, synonyms=synonyms, config=config, data=data)
    best = next((e for e in report.epochs if e["epoch"] == report.best_epoch), {})
    kept = f"epoch {report.best_epoch}" + (
        f" (dev Acc@1 {best['dev_acc@1']:.4f}, retrieval alone {data['retrieval_dev_acc@1']:.4f})" if "dev_acc@1" in best else ""
    )
    typer.echo(f"wrote {out} in {report.seconds / 60:.1f} min; kept {kept}")

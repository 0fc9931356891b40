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

    from medlink.cli.common import index_and_kb
    from medlink.training.ranker import RankerConfig, check_ranker_output, retrieval_accuracy, train_ranker
    from medlink.training.ranker_data import cross_fitted_groups, index_memory, memory_holds, retrieved_groups, synonym_queries

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
    store, linker = index_and_kb(index, None)
    mentions = training_mentions(store, train, "--train", required=True)
    if not mentions:
        fail("--train: no mentions in it")
    dev_mentions = training_mentions(store, dev, "--dev", required=True)
    memory = index_memory(index)
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


@app.command("tagger")
def train_tagger_command(
    ctx: typer.Context,
    train: list[str] = typer.Option(
        ..., "--train", help="Documents with annotated mention spans FORMAT:PATH (repeatable; FORMAT: pubtator)."
    ),
    out: Path = typer.Option(
        ..., "--out", help="Tagger folder to write, replaced whole at the end (a new or empty folder, or an earlier tagger's)."
    ),
    dev: list[str] = typer.Option(
        [],
        "--dev",
        help="Annotated documents FORMAT:PATH scored (strict-span F1) after each epoch; the best "
        "epoch is kept (never test data). Without it, the last epoch is kept.",
    ),
    model: Path | None = typer.Option(
        None, "--model", help="Base model folder (default: packaged all-MiniLM-L6-v2, with a new tagging head)."
    ),
    epochs: int = typer.Option(4, "--epochs", min=1, help="Passes over the training sentences."),
    batch_size: int = typer.Option(
        8, "--batch-size", min=1, help="Windows (whole consecutive sentences, up to --max-length sub-words) per step."
    ),
    learning_rate: float = typer.Option(2e-4, "--lr", help="Peak learning rate (AdamW, linear warm-up and decay)."),
    max_length: int = typer.Option(
        128,
        "--max-length",
        min=8,
        help="Sub-word tokens per window, special tokens included; a longer sentence is read in overlapping windows.",
    ),
    collapse_types: bool = typer.Option(
        True,
        "--collapse-types/--keep-types",
        help="Learn one mention type ('Disease') for all the "
        "corpus's types (the default: linking needs the span, not the subtype), or keep each type.",
    ),
    seed: int = typer.Option(
        13, "--seed", help="Random seed (shuffling, the new head, dropout): the same seed and data give the same run."
    ),
    layers: int | None = typer.Option(
        None,
        "--layers",
        min=1,
        help="Keep only the base model's first N transformer layers: a faster "
        "tagger for a little accuracy (MiniLM has 6; with 3, NCBI abstracts were tagged about 1.8x as fast on an "
        "AVX2-only AMD EPYC, docs/training-recipes.md). Default: all.",
    ),
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    config_file: Path | None = typer.Option(
        None,
        "--config",
        help="A JSON file of training settings (keys as in medlink_tagger.json's "
        "'config'; an earlier tagger's medlink_tagger.json works); flags given on the command line win over it.",
    ),
    quiet: bool = quiet_option(),
) -> None:
    """Train a mention tagger (BIO token classification) on documents with annotated mention spans."""
    quiet_phases(quiet)
    from medlink.encoders.transformer import require_dense_extra

    require_dense_extra()
    from medlink.training.tagger import TaggerConfig, check_tagger_output, train_tagger
    from medlink.training.tagger_data import read_annotated

    config = settings_from(
        ctx,
        TaggerConfig,
        config_file,
        {
            "epochs": ("epochs", epochs),
            "batch_size": ("batch_size", batch_size),
            "learning_rate": ("learning_rate", learning_rate),
            "max_length": ("max_length", max_length),
            "collapse_types": ("collapse_types", collapse_types),
            "seed": ("seed", seed),
            "layers": ("layers", layers),
            "precision": ("precision", precision or os.environ.get(ENV) or "auto"),
        },
    )
    use_precision(config.precision)
    check_tagger_output(out)  # before any data is read
    documents, sources = {"train": [], "dev": []}, {"train": [], "dev": []}
    for split, specs in (("train", train), ("dev", dev)):
        for spec in specs:
            read, record = read_annotated(spec)
            if not read:
                fail(f"--{split} {spec}: no documents in it")
            documents[split] += read
            sources[split].append(record)
    if not any(d.annotations for d in documents["train"]):
        fail("--train: the documents have no annotated mention spans to learn from")
    report = train_tagger(
        documents["train"], out, dev=documents["dev"], base_model=model, config=config, sources=sources, progress=not quiet
    )
    best = next((e for e in report.epochs if e["epoch"] == report.best_epoch), {})
    kept = f"epoch {report.best_epoch}" + (f" (dev strict-span F1 {best['dev']['f1']:.4f})" if "dev" in best else "")
    typer.echo(f"wrote {out} in {report.seconds / 60:.1f} min ({report.training_precision}); kept {kept}")


@app.command("selector")
def train_selector_command(
    tagger: Path = typer.Option(
        ..., "--tagger", help="Tagger folder from 'medlink train tagger' whose spans, beside the dictionary's, are chosen from."
    ),
    documents: list[str] = typer.Option(
        ...,
        "--documents",
        help="Annotated documents FORMAT:PATH the tagger did not learn from and the index's memory "
        "does not hold, e.g. a dev split (repeatable; FORMAT: pubtator).",
    ),
    index: str = typer.Option(
        "default",
        "--index",
        help="The index you will annotate with: its dictionary finder's spans are the "
        "selector's candidates ('default': the embedded KB's).",
    ),
    exclude_names: Path | None = typer.Option(
        None, "--exclude-names", help="The names file you will give 'medlink annotate --exclude-names', if any."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Selector file to write (default: span_selector.json in the tagger folder, which "
        "'medlink annotate --finder both --combine learned' then uses).",
    ),
    folds: int = typer.Option(5, "--folds", min=2, help="Document folds the threshold is chosen over (out of fold)."),
    quiet: bool = quiet_option(),
) -> None:
    """Fit the span selector that chooses between a tagger's and the dictionary's spans (annotate --combine learned). Its
    threshold is the one with the best linking F1 out of fold (span and the index's concept right) when the documents
    carry concept ids, else the best strict-span F1."""
    quiet_phases(quiet)
    from medlink.encoders.transformer import require_dense_extra

    require_dense_extra()
    from medlink.directories import require_replaceable_file
    from medlink.linking.annotator import AnnotateOptions, Annotator
    from medlink.linking.index import resolve_index
    from medlink.linking.manifest import index_memory_sources
    from medlink.linking.selecting import dictionary_signature
    from medlink.text.finders.selection import SELECTOR_FILE, is_selector_file, tagger_fingerprint
    from medlink.text.finders.tagger import read_tagger_info
    from medlink.training.span_selector import fit_span_selector, fitting_documents

    info = read_tagger_info(tagger)
    target = out or Path(tagger) / SELECTOR_FILE
    require_replaceable_file(target, "a span selector", is_selector_file, [Path(spec.partition(":")[2]) for spec in documents])
    index_folder = resolve_index(index)
    read, records, repeated = fitting_documents(documents, info, index_memory_sources(index_folder))
    annotator = Annotator.load(index_folder, "both", tagger, AnnotateOptions(combine="confirmed"), exclude_names)
    fitted_on = {
        "documents_files": records,
        "repeated_documents_dropped": repeated,
        "dictionary": dictionary_signature(index_folder, exclude_names),
    }
    selector, report = fit_span_selector(
        *annotator.finders, read, tagger_fingerprint(tagger), folds=folds, fitted_on=fitted_on, linker=annotator.linker
    )
    selector.save(target)
    measure = {"spans": "strict-span", "linking": "linking"}[report["threshold_for"]]
    typer.echo(
        f"wrote {target}: threshold {report['threshold']:.2f} (the best {measure} F1 out of fold); "
        + selector_summary(report, folds, repeated)
    )


def selector_summary(report: dict, folds: int, repeated: int) -> str:
    """The fit's out-of-fold figures beside the fixed policies', in one line."""

    def figures(by_measure: dict) -> str:
        spans = by_measure["spans"]
        text = f"spans P / R / F1 {spans['precision']:.4f} / {spans['recall']:.4f} / {spans['f1']:.4f}"
        return text + (f", linking F1 {by_measure['linking']['f1']:.4f}" if "linking" in by_measure else "")

    notes = [f"{repeated} repeated document(s) dropped"] * bool(repeated)
    notes += [f"{report['folds']} folds: one per document"] * (report["folds"] < folds)
    return (
        f"on {report['documents']} documents {figures(report['out_of_fold'])} (confirmed: {figures(report['confirmed'])}; union: "
        f"{figures(report['union'])}; {report['gold_among_candidates']} of {report['gold_mentions']} gold spans among the candidates)"
        + "".join(f"; {note}" for note in notes)
    )


from medlink.cli.align import register_train  # noqa: E402  (medlink train aligner: defined with the alignment commands)

register_train(app)

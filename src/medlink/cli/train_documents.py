"""``medlink train tagger`` and ``medlink train selector``: the models that find mentions in running text."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from medlink.cli.common import PRECISION_HELP, fail, new_app, quiet_option, quiet_phases, use_precision
from medlink.cli.train_inputs import settings_from
from medlink.encoders.precision import ENV

app = new_app()  # its commands join ``medlink train``
TYPES_HELP = (
    "Learn only from mentions of these entity types (Disease,Chemical; NCBI's four disease classes are Disease: "
    "docs/annotate.md#entity-types); other spans are left out of every document read, untyped ones kept. Repeatable, or comma-separated."
)


@app.command("tagger")
def train_tagger_command(
    ctx: typer.Context,
    train: list[str] = typer.Option(
        ...,
        "--train",
        help="Documents with annotated mention spans FORMAT:PATH (repeatable: several corpora together; FORMAT: "
        "pubtator, bioc, bioc-json or jsonl).",
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
        help="Learn one mention type for all the corpus's types (the default: linking needs the span, not the subtype; "
        "the label is their one entity type, else 'Disease'), or keep each entity type (Disease, Chemical...).",
    ),
    types: list[str] = typer.Option([], "--types", help=TYPES_HELP),
    seed: int = typer.Option(
        13, "--seed", help="Random seed (shuffling, the new head, dropout): the same seed and data give the same run."
    ),
    layers: int | None = typer.Option(
        None,
        "--layers",
        min=1,
        help="Keep only the base model's first N transformer layers: a faster "
        "tagger for a little accuracy (MiniLM has 6; on a CPU without fast bf16, 3 tag NCBI abstracts much faster: "
        "docs/training-recipes.md). Default: all.",
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
    from medlink.corpora.entity_types import entity_type, parse_types
    from medlink.text.bio import SINGLE_TYPE
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
    wanted = parse_types(types)
    documents, sources = {"train": [], "dev": []}, {"train": [], "dev": []}
    for split, specs in (("train", train), ("dev", dev)):
        for spec in specs:
            read, record = read_annotated(spec, wanted)
            if not read:
                fail(f"--{split} {spec}: no documents in it")
            documents[split] += read
            sources[split].append(record)
            typer.echo(f"--{split} {spec}: {record['documents']:,} documents, {record['mentions_by_type'] or 'no'} mentions", err=True)
    if not any(d.annotations for d in documents["train"]):
        fail("--train: the documents have no annotated mention spans to learn from" + (" of the --types given" if wanted else ""))
    kinds = sorted(filter(None, {entity_type(a.type) for d in documents["train"] for a in d.annotations}))
    if config.collapse_types and len(kinds) > 1:
        typer.echo(
            f"note: the --train mentions are of {len(kinds)} entity types ({', '.join(kinds)}), all learned as one "
            f"('{SINGLE_TYPE}'); --types with one of them learns those only, --keep-types each apart",
            err=True,
        )
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
        "does not hold, e.g. a dev split (repeatable: several corpora together; FORMAT: pubtator, bioc, bioc-json or jsonl).",
    ),
    types: list[str] = typer.Option([], "--types", help=TYPES_HELP),
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
    from medlink.corpora.entity_types import parse_types
    from medlink.directories import require_replaceable_file
    from medlink.linking.annotator import AnnotateOptions, Annotator
    from medlink.linking.index import resolve_index
    from medlink.linking.manifest import index_memory_sources
    from medlink.text.finders.selector.fitting import fit_span_selector, fitting_documents
    from medlink.text.finders.selector.model import SELECTOR_FILE, is_selector_file, tagger_fingerprint
    from medlink.text.finders.selector.wiring import dictionary_signature
    from medlink.text.finders.tagger import read_tagger_info

    info = read_tagger_info(tagger)
    target = out or Path(tagger) / SELECTOR_FILE
    require_replaceable_file(target, "a span selector", is_selector_file, [Path(spec.partition(":")[2]) for spec in documents])
    index_folder = resolve_index(index)
    read, records, repeated = fitting_documents(documents, info, index_memory_sources(index_folder), parse_types(types))
    annotator = Annotator.load(index_folder, "both", tagger, AnnotateOptions(combine="confirmed"), exclude_names)
    fitted_on = {
        "documents_files": records,
        "repeated_documents_dropped": repeated,
        "dictionary": dictionary_signature(annotator.linker.manifest, exclude_names),
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


@app.command("exclusions")
def train_exclusions_command(
    documents: list[str] = typer.Option(
        ...,
        "--documents",
        help="Annotated documents FORMAT:PATH whose gold spans show which names annotators mark (repeatable: several "
        "corpora are pooled; FORMAT: pubtator, bioc, bioc-json or jsonl). A training split: never the test documents.",
    ),
    out: Path = typer.Option(..., "--out", help="Names file to write, for 'medlink annotate --exclude-names' (replaced atomically)."),
    index: str = typer.Option(
        "default",
        "--index",
        help="The index you will annotate with: its dictionary finder's matches are counted ('default': the embedded KB's).",
    ),
    types: list[str] = typer.Option([], "--types", help=TYPES_HELP),
    min_seen: int = typer.Option(2, "--min-seen", min=1, help="A name is judged once the finder matched it this many times."),
    max_rate: float = typer.Option(
        0.34,
        "--max-rate",
        min=0.0,
        max=1.0,
        help="Excluded when at most this share of its matches overlap a gold span (the documents benchmark's value).",
    ),
    quiet: bool = quiet_option(),
) -> None:
    """Learn the names the dictionary finder should not report: those it matches in annotated documents that annotators
    seldom marked ("found", "disease", "death" in MEDIC), written one per line for 'medlink annotate --exclude-names'."""
    quiet_phases(quiet)
    from medlink.corpora.entity_types import parse_types
    from medlink.directories import require_replaceable_file, write_replaced
    from medlink.linking.index import resolve_index
    from medlink.linking.linker import Linker
    from medlink.text.finders.exclusions import EXCLUSIONS_HEADER, is_exclusions_file, rarely_annotated
    from medlink.training.tagger_data import read_annotated

    wanted = parse_types(types)
    require_replaceable_file(out, "a names file of 'medlink train exclusions'", is_exclusions_file, [spec_file(spec) for spec in documents])
    read = []
    for spec in documents:
        found, record = read_annotated(spec, wanted)
        if not any(d.annotations for d in found):
            fail(f"--documents {spec}: no annotated mention{' of the --types given' if wanted else ''} in its {len(found):,} documents")
        typer.echo(f"--documents {spec}: {record['documents']:,} documents, {record['mentions_by_type']} mentions", err=True)
        read += found
    linker = Linker.load(resolve_index(index))
    names = rarely_annotated(linker.dictionary_finder(), read, linker.normalize, min_seen=min_seen, max_rate=max_rate)
    said = f"from {', '.join(documents)}" + (f", types {','.join(types)}" if wanted else "")
    lines = [f"{EXCLUSIONS_HEADER} {said}; index {index}; min seen {min_seen}, max rate {max_rate:g}", *names]
    write_replaced(out, "".join(f"{line}\n" for line in lines))
    typer.echo(f"wrote {out}: {len(names):,} names excluded" + (f" (first: {', '.join(names[:5])})" if names else ""))


def spec_file(spec: str) -> Path:
    """The PATH of ``FORMAT:PATH``."""
    return Path(spec.partition(":")[2] or spec)


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

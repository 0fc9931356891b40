"""``medlink train tagger`` and ``medlink train selector``: the models that find mentions in running text."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from medlink.cli.common import PRECISION_HELP, fail, new_app, quiet_option, quiet_phases, use_precision
from medlink.cli.train_inputs import settings_from
from medlink.encoders.precision import ENV

app = new_app()  # its commands join ``medlink train``


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
    from medlink.text.finders.selector.fitting import fit_span_selector, fitting_documents
    from medlink.text.finders.selector.model import SELECTOR_FILE, is_selector_file, tagger_fingerprint
    from medlink.text.finders.selector.wiring import dictionary_signature
    from medlink.text.finders.tagger import read_tagger_info

    info = read_tagger_info(tagger)
    target = out or Path(tagger) / SELECTOR_FILE
    require_replaceable_file(target, "a span selector", is_selector_file, [Path(spec.partition(":")[2]) for spec in documents])
    index_folder = resolve_index(index)
    read, records, repeated = fitting_documents(documents, info, index_memory_sources(index_folder))
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

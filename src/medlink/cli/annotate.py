"""``medlink annotate``: find and link the mentions in running text (a top-level command, no group)."""

from __future__ import annotations

from pathlib import Path

import typer

from medlink.cli.common import (
    PRECISION_HELP,
    fail,
    files_named,
    new_app,
    one_input,
    quiet_option,
    quiet_phases,
    use_precision,
)
from medlink.cli.linking import NIL_HELP, a_probability
from medlink.text.windows import WINDOW_CHARS

app = new_app()  # its command joins the main app's top level


@app.command("annotate")
def annotate(
    text: list[str] = typer.Argument(None, help="Texts to annotate, one document each; none: read --input or stdin."),
    index: str = typer.Option(
        "default", "--index", help="Index directory, 'default' (ICD-10-CM + HPO, lexical, built on first use) or 'default-dense'."
    ),
    input_paths: list[Path] = typer.Option([], "--input", help="File of documents (see --format); '-' or none: stdin."),
    input_format: str | None = typer.Option(
        None, "--format", help="text | lines | jsonl | pubtator | bioc | bioc-json (default: from the file suffix; text for stdin)."
    ),
    output_format: str | None = typer.Option(
        None, "--output-format", help="text (readable lines) | jsonl | pubtator | bioc | bioc-json (default: text; jsonl with --json)."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help=(
            "Write the output to this file (atomically) instead of stdout. An existing file is replaced only if "
            "'medlink annotate' wrote it (a PubTator file carries no such mark: only an empty one is replaced)."
        ),
    ),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per document: spans with their candidates."),
    k: int = typer.Option(5, "--top-k", "--k", min=1, help="Candidates kept per mention."),
    finder: str = typer.Option(
        "dictionary",
        "--finder",
        help="dictionary (the KB's names) | tagger (a trained model, --tagger) | both | given "
        "(link the spans the input already carries, PubTator / BioC / JSONL annotations, exactly as given).",
    ),
    tagger: Path | None = typer.Option(None, "--tagger", help="Tagger folder from 'medlink train tagger' (for --finder tagger|both)."),
    context: int = typer.Option(
        0,
        "--context",
        min=0,
        help="Characters of text each side of a mention given to the linker (a context-trained cross-encoder reads them).",
    ),
    abbreviations: bool = typer.Option(
        True, "--abbreviations/--no-abbreviations", help="Link 'long form (SF)' short forms through their long form."
    ),
    abbreviation_choice: str = typer.Option(
        "long", "--abbreviation-choice", help="long (a short form takes its long form's answer) | best (the higher-scoring of the two)."
    ),
    consistency: str = typer.Option(
        "both",
        "--consistency",
        help="Per document: propagate (every occurrence of a found string is a mention) | vote (one string, one answer) | both | off.",
    ),
    composites: bool = typer.Option(
        True,
        "--composites/--no-composites",
        help=(
            "A coordination that is no name itself ('breast and ovarian cancer') takes the concepts of its "
            "spelt-out parts (breast cancer, ovarian cancer); a dictionary match that ends one ('ovarian "
            "cancer') is widened over it when every part is a KB name."
        ),
    ),
    assertion: bool = typer.Option(
        True,
        "--assertion/--no-assertion",
        help=(
            "Mark each mention's assertion status (present | absent | possible | conditional | hypothetical | "
            "someone_else, and historical), read from the cue phrases around it ('denies', 'r/o', 'mother had')."
        ),
    ),
    exclude_names: Path | None = typer.Option(
        None,
        "--exclude-names",
        help="File of names (one per line) the dictionary finder must not report: KB names that are ordinary words in your texts.",
    ),
    combine: str = typer.Option(
        "confirmed",
        "--combine",
        help=(
            "With --finder both: union (every span of both finders) | confirmed (the tagger's spans that a "
            "dictionary match overlaps) | confirmed+missed (those, plus dictionary matches where the tagger "
            "found nothing) | learned (a span selector from 'medlink train selector' chooses: the best mention "
            "F1; confirmed linked best on NCBI)."
        ),
    ),
    selector: Path | None = typer.Option(
        None,
        "--selector",
        help="Span selector file from 'medlink train selector' for --combine learned (default: the tagger folder's span_selector.json).",
    ),
    span_threshold: float | None = typer.Option(
        None,
        "--span-threshold",
        min=0.0,
        max=1.0,
        help=(
            "Keep a span the selector scores at least this (default: the threshold fitted with it, the best "
            "linking F1 on its documents; lower: more spans, for mention finding alone)."
        ),
    ),
    overlap: str = typer.Option(
        "longest", "--overlap", help="Overlapping spans: longest (keep the longest) | all (keep every span as an alternative)."
    ),
    modifiers: str | None = typer.Option(
        None,
        "--modifiers",
        help="A head inside a longer phrase ('diabetes' in 'juvenile diabetes'): widen (link the phrase where a name says "
        "its modifiers, else mark the head partial) | phrase (as widen, and else the span is the phrase all the same, a partial match at 0.8 of its "
        "probability) | partial (keep the head, marked partial, at 0.8 of its probability) | off. Default: phrase with "
        "--target-namespace or on the default indexes, else partial (docs/annotate.md).",
    ),
    generators: str | None = typer.Option(None, "--generators", help="Comma-separated generator names to use (default: all)."),
    types: list[str] = typer.Option(
        [],
        "--types",
        help="Keep only spans of these entity types in the output (Disease,Chemical; repeatable or comma-separated; "
        "NCBI's four disease classes are Disease: docs/annotate.md#entity-types); spans without a type are kept.",
    ),
    prefer_prefix: list[str] = typer.Option(
        [], "--prefer-prefix", help="Show a concept under its id in this namespace when it has one (e.g. MESH); repeatable."
    ),
    target_namespace: str | None = typer.Option(
        None,
        "--target-namespace",
        help="Coding mode: each mention's codes of this namespace (ICD10CM), matched directly or reached through mappings "
        "(the path in each candidate's evidence); a mention no candidate leads to a code of is NIL, its candidates listed.",
    ),
    mappings: list[Path] = typer.Option(
        [], "--mappings", help="With --target-namespace: an SSSOM TSV of mappings into it, beside medlink's own; repeatable."
    ),
    batch_size: int = typer.Option(32, "--batch-size", min=1, help="Documents linked per call."),
    skip_invalid: bool = typer.Option(
        False, "--skip-invalid", help="Skip malformed records (counted and reported) instead of stopping at the first."
    ),
    nil_threshold: float | None = typer.Option(None, "--nil-threshold", parser=a_probability, help=NIL_HELP),
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    window_chars: int = typer.Option(
        WINDOW_CHARS,
        "--window-chars",
        min=1,
        help=(
            "A document longer than this many characters is read a window at a time (cut at blank lines or "
            "sentence ends): the same mentions, memory bounded by the window."
        ),
    ),
    max_document_mb: float = typer.Option(
        32.0,
        "--max-document-mb",
        help="Refuse a document whose text is over this many MB (1,048,576 characters each), naming it; with --skip-invalid it is skipped and counted.",
    ),
    engine: str = typer.Option(
        "local",
        "--engine",
        help="local (this process, or --workers processes on this machine) | ray (Ray Data over an actor pool, the index loaded once "
        "per actor: pip install 'medlink[ray]').",
    ),
    address: str | None = typer.Option(
        None, "--address", help="With --engine ray: the Ray cluster to run on (ADDR:PORT, or 'auto'); default: Ray started on this machine."
    ),
    workers: int | None = typer.Option(
        None,
        "--workers",
        help="Processes annotating at once, each with its own loaded index: with --engine local, worker processes on this machine "
        "(default 1: this process alone); with --engine ray, actors (default: one per CPU Ray sees). Either way --out is resumable.",
    ),
    quiet: bool = quiet_option(),
) -> None:
    """Find the medical mentions in text and link each to ranked concepts."""
    from medlink.batch import ENGINES, AnnotateJob, run
    from medlink.corpora.document_files import DOCUMENT_FORMATS
    from medlink.corpora.document_io import MB
    from medlink.corpora.entity_types import known_types
    from medlink.errors import MedlinkError
    from medlink.linking.annotator import AnnotateOptions
    from medlink.linking.partial import MODIFIER_MODES
    from medlink.text.finders.base import OVERLAP_POLICIES

    input_path = one_input(input_paths, text or (), "nothing was annotated")
    if out is not None and str(out) == "-":  # as for --input: stdout
        out = None
    if text == ["-"] and input_path is None:  # "medlink annotate -": stdin, as the convention goes
        text, input_path = [], Path("-")
    for named in files_named(text or ()):  # a script would go on with an empty answer: refused, as the mistake it almost always is
        fail(f"{named!r} is a file's name: give --input {named} to annotate the file (nothing was annotated)")
    if text and input_path is not None:
        fail(f"give texts as arguments or --input {input_path}, not both (nothing was annotated)")
    if as_json and output_format not in (None, "jsonl"):
        fail(f"--json writes JSONL; it cannot be combined with --output-format {output_format}")
    output_format = output_format or ("jsonl" if as_json else "text")
    for value, known, option in (
        (input_format, DOCUMENT_FORMATS, "--format"),
        (output_format, ("text",) + tuple(f for f in DOCUMENT_FORMATS if f not in ("text", "lines")), "--output-format"),
        (overlap, OVERLAP_POLICIES, "--overlap"),
        (modifiers, MODIFIER_MODES, "--modifiers"),
        (engine, ENGINES, "--engine"),
    ):
        if value is not None and value not in known:
            fail(f"unknown {option} {value!r}; known: {', '.join(known)}")
    if mappings and not target_namespace:
        fail("--mappings are read in coding mode only: give --target-namespace too (nothing was annotated)")
    try:
        wanted = known_types(types)
    except MedlinkError as error:
        fail(f"--types: {error} (nothing was annotated)")
    if max_document_mb <= 0:
        fail(f"--max-document-mb must be above 0, not {max_document_mb:g}")
    quiet_phases(quiet)
    use_precision(precision)
    options = AnnotateOptions(
        k=k,
        context=context,
        abbreviations=abbreviations,
        abbreviation_choice=abbreviation_choice,
        consistency=consistency,
        composites=composites,
        assertion=assertion,
        overlap=overlap,
        combine=combine,
        span_threshold=span_threshold,
        generators=tuple(generators.split(",")) if generators else None,
        batch_documents=batch_size,
        window=window_chars,
        target_namespace=target_namespace,
        mappings=tuple(str(path) for path in mappings),
        modifiers=modifiers,
    )
    job = AnnotateJob(
        index=index,
        finder=finder,
        tagger=tagger,
        options=options,
        exclude_names=exclude_names,
        selector=selector,
        nil_threshold=nil_threshold,
        texts=tuple(text or ()),
        input_path=input_path,
        input_format=input_format,
        output_format=output_format,
        out=out,
        prefer_prefix=tuple(prefer_prefix),
        skip_invalid=skip_invalid,
        max_chars=round(max_document_mb * MB),
        quiet=quiet,
        types=tuple(sorted(wanted or ())),
    )
    status = run(job, engine, address, workers)
    if status:
        raise typer.Exit(status)

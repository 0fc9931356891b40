"""``medlink link``, ``medlink eval`` and ``medlink tune``: use an index (top-level commands, no group)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from medlink.cli.common import (
    PRECISION_HELP,
    fail,
    hold_writer_lock,
    new_app,
    one_input,
    quiet_option,
    quiet_phases,
    use_precision,
)

app = new_app()  # its commands join the main app's top level
NIL_HELP = (
    "Link a mention only when its first candidate's probability (after any backoff) reaches this (0-1); under it the mention is NIL, "
    "its candidates still listed. Default: the index's own threshold (chosen on dev, or on the KB's pseudo-mentions)."
)


def a_probability(text: str) -> float:
    """--nil-threshold's reading: a number in [0, 1], the value quoted back when it is not one ("nan" passes a range
    check that reads "<= 1", so the check says what it wants)."""
    try:
        value = float(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a number: give a probability from 0 to 1, such as 0.5") from None
    if not 0.0 <= value <= 1.0:
        raise typer.BadParameter(f"{value} is not a probability: give a number from 0 to 1")
    return value


@app.command("link")
def link(
    mentions: list[str] = typer.Argument(None, help="Mentions to link; none: read --input or stdin."),
    index: str = typer.Option(
        "default",
        "--index",
        help="Index directory, 'default' (ICD-10-CM + HPO, lexical, built on first use) or 'default-dense' (+ the packaged MiniLM; the dense extra).",
    ),
    k: int = typer.Option(5, "--top-k", "--k", min=1, help="Candidates per mention."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per mention."),
    input_paths: list[Path] = typer.Option([], "--input", help="File of mentions (plain lines, .tsv, .jsonl)."),
    input_format: str | None = typer.Option(None, "--format", help="lines | tsv | jsonl (default: from the file suffix)."),
    column: int = typer.Option(0, "--column", min=0, help="TSV column holding the mention (0-based)."),
    generators: str | None = typer.Option(None, "--generators", help="Comma-separated generator names to use (default: all)."),
    prefer_prefix: list[str] = typer.Option(
        [],
        "--prefer-prefix",
        help="Show a concept under its id in this namespace when it has one "
        "(e.g. MESH for MEDIC, whose concepts may be filed under an OMIM id); repeatable, first wins.",
    ),
    header: bool = typer.Option(False, "--header", help="The --input file's first line is a header (TSV column names): skip it."),
    batch_size: int = typer.Option(2048, "--batch-size", min=1, help="Mentions linked per call (memory stays flat on long inputs)."),
    nil_threshold: float | None = typer.Option(None, "--nil-threshold", parser=a_probability, help=NIL_HELP),
    explain: bool = typer.Option(
        False,
        "--explain",
        help="Say why: for each candidate the alias that matched, each stage's score, "
        "the training mentions that voted, its probability, and the NIL decision.",
    ),
    target_namespace: str | None = typer.Option(
        None,
        "--target-namespace",
        help="Coding mode: answer each mention with codes of this namespace (ICD10CM), matched directly or reached through "
        "mappings, the path shown; a mention no candidate leads to a code of is NIL, its candidates listed.",
    ),
    mappings: list[Path] = typer.Option(
        [],
        "--mappings",
        help="With --target-namespace: an SSSOM TSV (or TSV of subject and object ids) of mappings into it, beside medlink's own "
        "(HPO -> ICD-10-CM for the default KB) and the KB's xrefs; repeatable.",
    ),
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    quiet: bool = quiet_option(),
) -> None:
    """Link mentions to ranked concepts."""
    from medlink.linking.calibration import calibration_stage, say_if_uncalibrated
    from medlink.linking.index import resolve_index
    from medlink.linking.linker import Linker
    from medlink.linking.output import explanation_lines, link_stream, result_json, result_lines

    if input_format or not mentions:  # the mention files' readers (with the corpora package) only where a file is read
        from medlink.corpora.mention_files import FORMATS, guess_format, read_mentions
    if input_format and input_format not in FORMATS:
        fail(f"unknown --format {input_format!r}; known: {', '.join(FORMATS)}")
    input_path = one_input(input_paths, mentions or (), "nothing was linked")
    if mentions and input_path is not None:
        fail(f"give mentions as arguments or --input {input_path}, not both (nothing was linked)")
    if mappings and not target_namespace:
        fail("--mappings are read in coding mode only: give --target-namespace too (nothing was linked)")
    quiet_phases(quiet)
    use_precision(precision)
    linker = Linker.load(resolve_index(index)).with_decisions(nil_threshold)
    if not as_json:  # JSON shows no probability field; plain text would read as certainty
        say_if_uncalibrated(linker)
    selected = generators.split(",") if generators else None
    if selected is not None and set(linker.stages(selected)) != set(linker.stages()) and calibration_stage(linker) is not None:
        typer.echo(
            f"note: this index's probabilities were fitted on all its stages ({', '.join(linker.stages())}); with "
            "--generators the candidates have scores only, and no mention is NIL",
            err=True,
        )
    if mentions:
        stream = iter(mentions)
    else:
        if input_path is None and sys.stdin.isatty():
            fail("no mentions: give them as arguments, with --input FILE, or on stdin")
        chosen_format = input_format or guess_format(input_path)
        if column and chosen_format != "tsv":
            typer.echo(
                f"note: --column {column} is for TSV input; this input is read as {chosen_format} (one mention per "
                f"{'line' if chosen_format == 'lines' else 'JSON object'}): give --format tsv to pick a column",
                err=True,
            )
        stream = read_mentions(input_path, chosen_format, column, header)
    unlinked: list[int] = []  # positions (1-based, input order) of the mentions not linked
    blank: list[int] = []  # those of them that are blank (empty or whitespace only): nothing to link, so never a failure
    position = 0
    if target_namespace:
        results, render = _coding(linker, stream, k, target_namespace, selected, batch_size, mappings, as_json, explain)
    else:
        results = link_stream(linker, stream, k, selected, batch_size, prefer_prefix)
        render = (lambda r: json.dumps(result_json(r, explain), ensure_ascii=False)) if as_json else None
        render = render or (lambda r: "\n".join(explanation_lines(r) if explain else result_lines(r)))
    for position, result in enumerate(results, 1):
        if result.error is not None and not (target_namespace and result.nil):  # NIL for coding is an answer
            unlinked.append(position)
            if not result.mention.text.strip():
                blank.append(position)
        typer.echo(render(result))
    source = "the arguments" if mentions else str(input_path or "stdin")
    status = say_what_was_not_linked(position, unlinked, blank, source)
    if status:
        raise typer.Exit(status)


def _coding(linker, stream, k, namespace, generators, batch_size, mappings, as_json, explain):
    """Coding mode's results and how each is written (the coder built first: an index with no code of the namespace,
    or a mappings file that is not one, fails before any mention)."""
    from medlink.linking.coding import coded_stream, coder_for
    from medlink.linking.coding_output import coded_explanation, coded_json, coded_lines

    coder_for(linker, namespace, mappings)
    results = coded_stream(linker, stream, k, namespace, generators, batch_size, mappings)
    if as_json:
        return results, lambda r: json.dumps(coded_json(r, namespace, explain), ensure_ascii=False)
    return results, lambda r: "\n".join(coded_explanation(r) if explain else coded_lines(r))


def _numbers(positions: list[int]) -> str:
    """``2, 5, 9``: the first ten positions, then "..."."""
    return ", ".join(map(str, positions[:10])) + (", ..." if len(positions) > 10 else "")


def say_what_was_not_linked(read: int, unlinked: list[int], blank: list[int], source: str) -> int:
    """Say on stderr which mentions were not linked and why; returns the exit status: 1 only when some mention held text
    and none of those could be linked, since a blank one has nothing to link (an input of blanks only is an empty input)."""
    if read == len(blank):
        if read:
            typer.echo(
                f"no mentions to link in {source}: {read} blank one(s), empty or whitespace only (number {_numbers(blank)} "
                "in input order), each marked 'error: empty mention' in the output",
                err=True,
            )
        else:
            typer.echo(f"no mentions read from {source}", err=True)
        return 0
    if not unlinked:
        return 0
    reasons = [f"{len(blank)} blank (empty or whitespace only)"] if blank else []
    if len(unlinked) > len(blank):
        reasons.append(f"{len(unlinked) - len(blank)} not UTF-8 or with nothing left after normalisation")
    typer.echo(
        f"{len(unlinked)} mention(s) not linked (number {_numbers(unlinked)} in input order): {', '.join(reasons)}; "
        "marked 'error' in the output",
        err=True,
    )
    return 1 if len(unlinked) == read else 0


@app.command("eval")
def evaluate_command(
    index: str = typer.Option(..., "--index", help="Index directory, 'default' or 'default-dense'."),
    dataset: str = typer.Option(..., "--dataset", help="FORMAT:PATH of the labelled mentions (biosyn, askapatient, pubtator)."),
    train: list[str] = typer.Option([], "--train", help="Training data FORMAT:PATH for seen/unseen subpopulations (repeatable)."),
    kb: str | None = typer.Option(None, "--kb", help="KB for id equivalence and direct-match subpopulation (default: the index's)."),
    k: int = typer.Option(64, "--top-k", "--k", min=1, help="Candidates per mention (recall@k is reported up to k)."),
    generators: str | None = typer.Option(None, "--generators", help="Comma-separated generator names to use (default: all)."),
    out: Path | None = typer.Option(None, "--out", help="Directory for report.json, report.md, subpopulations.png, records.jsonl."),
    baseline: Path | None = typer.Option(
        None,
        "--baseline",
        help="A folder an earlier 'eval --out' wrote on the same --dataset: Acc@k and MRR differences from it, with paired 95% intervals.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a Markdown table."),
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    quiet: bool = quiet_option(),
) -> None:
    """Evaluate an index on labelled mentions: Acc@k, Recall@k, MRR, normalised recall, subpopulations."""
    quiet_phases(quiet)
    from medlink.eval.report import require_report_folder, save_report
    from medlink.eval.run import evaluate_index
    from medlink.linking.index import resolve_index

    if out is not None:
        require_report_folder(out, {"--baseline": baseline})  # before the evaluation, not after it
        hold_writer_lock(out)
    use_precision(precision)
    selected = generators.split(",") if generators else None
    evaluation = evaluate_index(resolve_index(index), dataset, kb=kb, train=train, k=k, generators=selected, baseline=baseline)
    for line in evaluation.warnings:
        typer.echo(f"warning: {line}", err=True)
    for line in evaluation.notes:
        typer.echo(f"note: {line}", err=True)
    if out:
        save_report(evaluation.report, out)
    typer.echo(evaluation.report.to_json(indent=None) if as_json else evaluation.report.to_markdown())


@app.command("tune")
def tune_command(
    index: str = typer.Option(..., "--index", help="Index directory to tune (its generators and rerankers are used as built)."),
    dev: list[str] = typer.Option(..., "--dev", help="Labelled dev mentions FORMAT:PATH (repeatable); never test data."),
    search: str = typer.Option(
        "fusion,rerankers",
        "--search",
        help="What to choose, in order, comma-separated: fusion (weights, "
        "weighted or RRF), rerankers (each one's settings), one reranker type the index has (knn, cross-encoder, pairwise), "
        "calibration (probabilities: the same as --calibrate).",
    ),
    out: Path | None = typer.Option(None, "--out", help="Write the chosen config here (JSON, with the dev figures that chose it)."),
    apply: bool = typer.Option(
        False, "--apply", help="Also make the chosen config the index's own (no rebuild: only weights and settings change)."
    ),
    kb: str | None = typer.Option(None, "--kb", help="KB for id equivalence (default: the index's)."),
    calibrate: bool = typer.Option(
        False,
        "--calibrate",
        help="Also fit the index's probabilities on the dev mentions (after the other "
        "searches): P(right) per candidate, the NIL threshold, backoff and order (same as adding 'calibration' to --search; "
        "--cross-fit adds the index memory's mentions).",
    ),
    nil_target: str = typer.Option(
        "f1",
        "--nil-target",
        help="With --calibrate, how the NIL threshold is chosen on dev: f1 (best linking F1), nil-f1 (best F1 "
        "of the NIL decisions; for dev data with mentions of concepts not in the KB) or precision=P (the lowest "
        "threshold whose links are right at least P of the time).",
    ),
    backoff: bool = typer.Option(
        True,
        "--backoff/--no-backoff",
        help="With --calibrate, let dev choose a probability under which the candidate whose alias "
        "spells the mention most closely goes first.",
    ),
    cross_fit: int = typer.Option(
        0,
        "--cross-fit",
        help="With --calibrate, on an index built with --memory: also fit the probabilities on "
        "the memory's mentions, split into this many folds, each fold linked by an index built without that fold "
        "(one index build per fold; the NIL threshold is still dev's). Worth it when the memory is much larger "
        "than dev; 0 (the default): dev alone.",
    ),
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    quiet: bool = quiet_option(),
) -> None:
    """Choose fusion weights, reranker settings and probabilities on dev data: each stage retrieves once, settings are tried over the cache."""
    quiet_phases(quiet)
    from medlink.directories import make_parent, require_replaceable_file, write_atomic
    from medlink.linking.config import is_tuned_config
    from medlink.linking.index import DEFAULT_INDEXES, apply_config, resolve_index
    from medlink.tune_run import TuneRequest, tune_index, tune_summary

    if out is None and not apply:
        fail("say where the chosen config goes: --out CONFIG and/or --apply")
    request = TuneRequest.parse(search, calibrate, nil_target, backoff, cross_fit)
    if apply and index in DEFAULT_INDEXES:
        fail(
            f"the '{index}' index is rebuilt from its preset whenever its config differs: write the choice with --out CONFIG "
            "and build your own index with it (medlink index build --config CONFIG)"
        )
    if out is not None:
        require_replaceable_file(out, "a config 'medlink tune' wrote (JSON with 'generators' and 'tuned')", is_tuned_config)
        hold_writer_lock(out)
    if apply:
        hold_writer_lock(Path(index))  # the index's own writer: an 'index build' to it, or another tune --apply
    use_precision(precision)
    directory = resolve_index(index)
    tuned = tune_index(directory, dev, request, kb)
    for line in tuned.warnings:
        typer.echo(f"warning: {line}", err=True)
    for line in tuned.notes:
        typer.echo(f"note: {line}", err=True)
    if out is not None:
        make_parent(out)
        write_atomic(out, json.dumps(tuned.config.to_dict(), indent=2) + "\n")
    if apply:
        apply_config(directory, tuned.config)
    for line in tune_summary(tuned, cross_fit):
        typer.echo(line)
    for where in ([str(out)] if out else []) + ([f"{directory} (applied)"] if apply else []):
        typer.echo(f"wrote {where}")

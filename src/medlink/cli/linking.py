"""``medlink link``, ``medlink eval`` and ``medlink tune``: use an index (top-level commands, no group)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from medlink.cli.common import PRECISION_HELP, fail, hold_writer_lock, index_and_kb, new_app, quiet_option, quiet_phases, use_precision

app = new_app()  # its commands join the main app's top level
NIL_HELP = (
    "Link a mention only when its first candidate's probability (after any backoff) reaches this (0-1); under it the mention is NIL, "
    "its candidates still listed. Default: the index's own threshold (chosen on dev, or on the KB's pseudo-mentions)."
)


FEW_DEV_MENTIONS = 50  # under this, 'medlink tune --calibrate' says its probabilities are rough (the KB's own fit wants 200)


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
    input_path: Path | None = typer.Option(None, "--input", help="File of mentions (plain lines, .tsv, .jsonl)."),
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
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    quiet: bool = quiet_option(),
) -> None:
    """Link mentions to ranked concepts."""
    from medlink.corpora.mention_files import FORMATS, guess_format, read_mentions
    from medlink.linking.calibration import say_if_uncalibrated, with_decisions
    from medlink.linking.index import resolve_index
    from medlink.linking.linker import Linker
    from medlink.linking.output import explanation_lines, link_stream, result_json, result_lines

    if input_format and input_format not in FORMATS:
        fail(f"unknown --format {input_format!r}; known: {', '.join(FORMATS)}")
    if mentions and input_path is not None:
        fail(f"give mentions as arguments or --input {input_path}, not both (nothing was linked)")
    quiet_phases(quiet)
    use_precision(precision)
    linker = Linker.load(resolve_index(index))
    with_decisions(linker, nil_threshold)
    if not as_json:  # JSON shows no probability field; plain text would read as certainty
        say_if_uncalibrated(linker)
    selected = generators.split(",") if generators else None
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
    for position, result in enumerate(link_stream(linker, stream, k, selected, batch_size, prefer_prefix), 1):
        if result.error is not None:
            unlinked.append(position)
            if not result.mention.text.strip():
                blank.append(position)
        if as_json:
            typer.echo(json.dumps(result_json(result, explain), ensure_ascii=False))
        else:
            typer.echo("\n".join(explanation_lines(result) if explain else result_lines(result)))
    source = "the arguments" if mentions else str(input_path or "stdin")
    status = say_what_was_not_linked(position, unlinked, blank, source)
    if status:
        raise typer.Exit(status)


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
    from medlink.corpora.mentions import split_unlinked
    from medlink.eval import evaluate, load_dataset
    from medlink.eval.harness import gold_outside_kb
    from medlink.eval.metrics import equivalent_ids_from_kb
    from medlink.eval.report import require_report_folder, save_report
    from medlink.linking.index import resolve_index

    if out is not None:
        require_report_folder(out, {"--baseline": baseline})  # before the evaluation, not after it
        hold_writer_lock(out)
    use_precision(precision)
    directory = resolve_index(index)
    store, linker = index_and_kb(directory, kb)
    mentions, cuiless = split_unlinked(load_dataset(dataset, keep_unlinked=True))
    if baseline is not None:
        from medlink.eval.compare import baseline_ranks

        earlier = baseline_ranks(baseline, mentions)  # before the linking: a wrong folder is said at once
    outside = gold_outside_kb(mentions, store)
    if outside:
        typer.echo(f"warning: --dataset {dataset}: {outside}", err=True)
    train_mentions = [m for spec in train for m in load_dataset(spec)] or None
    selected = generators.split(",") if generators else None
    kept: list = []  # the link results evaluate scores, for the NIL figures

    def link(texts: list[str]) -> list:
        kept.extend(linker.link(texts, k=k, generators=selected))
        return kept[-len(texts) :]

    equivalent_ids = equivalent_ids_from_kb(store)
    report = evaluate(link, mentions, equivalent_ids=equivalent_ids, train=train_mentions, kb=store)
    if baseline is not None:
        from medlink.eval.compare import rank_differences

        ranks = [float("inf") if r["rank"] is None else float(r["rank"]) for r in report.records[: len(mentions)]]
        report.against_baseline = rank_differences(ranks, earlier, mentions, (1, 5))
    if cuiless:
        from medlink.eval.harness import cuiless_records
        from medlink.eval.nil import annotated_nil

        in_kb_results = list(kept)
        cuiless_results = link([m.text for m in cuiless])
        report.nil_all = annotated_nil(mentions, in_kb_results, cuiless_results, equivalent_ids)
        report.records += cuiless_records(cuiless, cuiless_results, store)  # correct@1: said NIL
        if report.nil_all is None:
            typer.echo(
                f"note: {len(cuiless):,} mentions annotated without a concept (-1) are not scored: this index has no NIL "
                "threshold (fit one: medlink tune --calibrate)",
                err=True,
            )
    report.meta.update(
        {
            "index": str(directory),
            "dataset": dataset,
            "train": list(train),
            "kb": str(store.path),
            "k": k,
            "generators": selected or list(linker.generators),
            "precision": linker.precisions(),
        }
    )
    if out:
        save_report(report, out)
    typer.echo(report.to_json(indent=None) if as_json else report.to_markdown())


def memory_holds_dev(store, memory, mentions) -> bool:
    """Was the index's ``memory`` built from these dev mentions (every single-part one's text and concept among its entries)?"""
    from medlink.training.ranker_data import memory_holds

    pairs = [
        (store.normalize(m.text), concept)
        for m in mentions
        if len(m.parts) == 1
        for concept in sorted({store.resolve(gold) for gold in m.gold} - {None})
    ]
    return memory_holds(store, memory, pairs)


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
    from medlink.corpora.mentions import split_unlinked
    from medlink.directories import require_replaceable_file
    from medlink.eval import load_dataset
    from medlink.eval.harness import gold_outside_kb
    from medlink.eval.metrics import equivalent_ids_from_kb
    from medlink.linking.config import is_tuned_config
    from medlink.linking.index import DEFAULT_INDEXES, apply_config, resolve_index
    from medlink.tuning import tune

    if out is None and not apply:
        fail("say where the chosen config goes: --out CONFIG and/or --apply")
    searches = [s.strip() for s in search.split(",") if s.strip()] + (["calibration"] if calibrate and "calibration" not in search else [])
    if not searches:
        fail("--search names nothing to tune: fusion, rerankers or a reranker type")
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
    if cross_fit < 0 or cross_fit == 1:
        fail(f"--cross-fit takes a number of folds, at least 2 (or 0 for dev alone), not {cross_fit}")
    if cross_fit and "calibration" not in searches:
        fail("--cross-fit adds data to the probabilities fitted here: add --calibrate")
    if "calibration" in searches:
        from medlink.linking.calibration_fit import check_nil_target

        check_nil_target(nil_target)  # before retrieval and fitting, not after them
    else:
        given = [name for name, default in (("--nil-target", nil_target == "f1"), ("--no-backoff", backoff)) if not default]
        if given:  # they shape a fit this run would not make: refused, as --cross-fit is, rather than ignored
            fail(
                f"{' and '.join(given)} choose{'s' if len(given) == 1 else ''} how probabilities fitted here decide: add --calibrate "
                "(without it the index's probabilities are kept, or re-fitted with their own settings)"
            )
    use_precision(precision)
    directory = resolve_index(index)
    store, linker = index_and_kb(directory, kb)
    from medlink.linking.cross_fit import MIN_MENTIONS, index_memory, memory_mentions, too_few_mentions

    memory = index_memory(linker) if (linker.manifest.get("memory") or {}).get("entries") else None  # read once, for both checks
    if cross_fit:  # refused before retrieval and fitting, not after them
        if memory is None:
            fail(
                f"--cross-fit fits on the index memory's mentions, and {directory} was built without --memory: leave out --cross-fit, "
                "or rebuild it with --memory FORMAT:PATH"
            )
        count = len(memory_mentions(memory))
        if count < MIN_MENTIONS:
            fail(
                f"--cross-fit: {too_few_mentions(count)}: leave out --cross-fit, or rebuild the index with more annotated mentions "
                "(medlink index build --memory FORMAT:PATH)"
            )
    mentions = [m for spec in dev for m in load_dataset(spec, keep_unlinked=True)]  # CUI-less ones: NIL examples for the calibration
    if memory is not None and memory_holds_dev(store, memory, mentions):
        typer.echo(
            "note: the index's memory holds the --dev mentions, so dev accuracy and the fitted probabilities flatter it: "
            "tune on mentions it was not built with",
            err=True,
        )
    outside = gold_outside_kb(split_unlinked(mentions)[0], store)
    if outside:
        typer.echo(f"warning: --dev: {outside}", err=True)
    config, report = tune(
        linker,
        mentions,
        searches,
        equivalent_ids_from_kb(store),
        ",".join(dev),
        calibration={"nil_target": nil_target, "backoff": backoff, "cross_fit": cross_fit},
        kb=store,
    )
    if out is not None:
        from medlink.directories import make_parent, write_atomic

        make_parent(out)
        write_atomic(out, json.dumps(config.to_dict(), indent=2) + "\n")
    if apply:
        apply_config(directory, config)
    before, after = report.before, report.after
    typer.echo(
        f"dev Acc@1 {before['acc@1']:.4f} -> {after['acc@1']:.4f}, MRR {before['mrr']:.4f} -> {after['mrr']:.4f} "
        f"({len(report.trials)} settings tried in {report.seconds:.0f}s)"
    )
    typer.echo(f"fusion: {json.dumps(config.to_dict()['fusion'])}")
    for settings in config.rerankers:
        shown = {k: v for k, v in settings.items() if k != "model"} if settings["type"] == "calibration" else settings
        typer.echo(f"reranker: {json.dumps(shown)}")
    if report.calibration:
        oof = report.calibration["dev_out_of_fold"]
        at = oof["at_threshold"]
        nil_f1 = f", NIL F1 {at['nil_f1']:.3f}" if report.calibration["in_kb"] < report.calibration["mentions"] else ""
        extra = report.calibration.get("extra_mentions", 0)
        also = f" and {extra:,} memory mentions cross-fitted ({cross_fit} folds)" if extra else ""
        typer.echo(
            f"probabilities: fitted on {report.calibration['mentions']:,} dev mention parts{also}; out of fold: Acc@1 {oof['acc@1']:.4f}; "
            f"at NIL threshold {at['threshold']:.2f}: linking precision {at['precision']:.3f}, recall {at['recall']:.3f}{nil_f1}"
        )
    if report.calibration and report.calibration["mentions"] < FEW_DEV_MENTIONS:
        typer.echo(
            f"note: probabilities fitted on {report.calibration['mentions']} dev mention parts: expect them to be rough and the "
            "NIL threshold to move with a few mentions more (a few hundred give steady ones)"
        )
    if report.calibration and report.calibration["chosen"]["nil_threshold"] == 0:
        typer.echo(
            "note: NIL threshold 0: on these dev mentions any threshold cost linking F1, so every mention is linked; "
            "--nil-target precision=P (or nil-f1, with dev mentions of concepts the KB lacks) sets one"
        )
    if report.calibration_note:
        typer.echo(report.calibration_note)
    for where in ([str(out)] if out else []) + ([f"{directory} (applied)"] if apply else []):
        typer.echo(f"wrote {where}")

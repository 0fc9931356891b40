"""``medlink score``: score annotated documents against gold ones, whichever program annotated them.

Why a command of its own: ``medlink eval`` links mentions with an index; a user comparing medlink with PubTator,
scispaCy or QuickUMLS has their outputs as files, and wants every system measured the same way: strict mention
spans, end-to-end linking, and the document-level concepts (``medlink.eval.documents``), each with its 95% interval.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from medlink.cli.common import fail, hold_writer_lock, new_app

app = new_app()

MEASURE_NAMES = {
    "mentions": "mention finding (strict span)",
    "linking": "linking (span and concept)",
    "concepts": "concepts per document (BioCreative)",
}


@app.command("score")
def score(
    gold: str = typer.Option(..., "--gold", help="Gold documents: [FORMAT:]PATH (pubtator, bioc, bioc-json or jsonl; else from the file)."),
    predicted: str = typer.Option(
        ...,
        "--predicted",
        help="Annotated documents to score, the same documents by id: [FORMAT:]PATH (medlink annotate's output or any tool's).",
    ),
    kb: str | None = typer.Option(
        None,
        "--kb",
        help="KB whose alternative ids count as one concept (MEDIC: a MeSH id and its OMIM alias); without it ids are compared as written.",
    ),
    baseline: str | None = typer.Option(
        None,
        "--baseline",
        help="Another system's annotated documents, [FORMAT:]PATH: F1's difference from it per measure, with a paired 95% interval.",
    ),
    types: list[str] = typer.Option(
        [],
        "--types",
        help="Score only mentions of these entity types, on both sides (Disease,Chemical; NCBI's four disease classes "
        "are Disease: docs/evaluate.md); a span without a type is kept. Repeatable, or comma-separated.",
    ),
    errors: Path | None = typer.Option(None, "--errors", help="Write every false positive and negative here (JSON Lines, atomically)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a Markdown table."),
    skip_invalid: bool = typer.Option(
        False, "--skip-invalid", help="Skip malformed records (counted and reported) instead of stopping at the first."
    ),
) -> None:
    """Score annotated documents against gold ones: mention, linking and concept P / R / F1 with 95% intervals."""
    from medlink.cli.common import open_kb
    from medlink.corpora.document_io import NamedSkips
    from medlink.corpora.entity_types import parse_types
    from medlink.directories import write_replaced
    from medlink.eval.documents import compare_documents, document_errors, evaluate_documents
    from medlink.eval.metrics import equivalent_ids_from_kb

    if errors is not None:
        from medlink.directories import require_replaceable_file

        inputs = [spec_path(spec) for spec in (gold, predicted, baseline) if spec] + ([Path(kb)] if kb else [])
        require_replaceable_file(errors, "an --errors file of 'medlink score'", is_errors_file, inputs)
        hold_writer_lock(errors)
    policy = NamedSkips(skip_invalid=skip_invalid)
    gold_documents, predicted_documents = read_side(gold, "--gold", policy), read_side(predicted, "--predicted", policy)
    if not gold_documents:
        fail(f"--gold {gold}: no documents in it")
    if not predicted_documents:
        typer.echo(f"note: --predicted {predicted} holds no documents: every gold mention counts as missed", err=True)
    check_same_texts(gold_documents, predicted_documents)
    other = read_side(baseline, "--baseline", policy) if baseline else None
    if other is not None:
        check_same_texts(gold_documents, other, "--baseline")
    wanted = parse_types(types)
    if wanted is not None:
        for option, documents in (("--gold", gold_documents), ("--predicted", predicted_documents), ("--baseline", other or [])):
            note = restrict_types(documents, wanted)
            if note:
                typer.echo(f"note: {option}: {note}", err=True)
    equivalent = equivalent_ids_from_kb(open_kb(kb)) if kb else None
    try:
        scores = evaluate_documents(gold_documents, predicted_documents, equivalent_ids=equivalent)
        listed = document_errors(gold_documents, predicted_documents, equivalent_ids=equivalent) if errors else []
        compared = compare_documents(gold_documents, predicted_documents, other, equivalent_ids=equivalent) if other is not None else None
    except ValueError as error:  # a document id repeated, or predicted but not gold
        fail(str(error))
    if errors is not None:
        try:
            write_replaced(errors, "".join(json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in listed).encode("utf-8"))
        except OSError as error:
            fail(f"--errors {errors}: {error.strerror or error}")
    result = scores.to_dict() | {"skipped_records": policy.total_skipped} | ({"against_baseline": compared} if compared else {})
    if wanted is not None:
        result["types"] = sorted(wanted)
    typer.echo(json.dumps(result) if as_json else markdown(result))
    if result["linking"]["fp"] and not result["linking"]["tp"] and not result["concepts"]["tp"]:
        typer.echo(
            "note: no predicted id matched a gold id: do both files use the same terminology's ids? (--kb makes a "
            "KB's alternative ids one concept)",
            err=True,
        )
    for line in policy.report():
        typer.echo(f"  {line}", err=True)


def restrict_types(documents: list, wanted: frozenset[str]) -> str | None:
    """Keep each document's annotations of the ``wanted`` types (and untyped ones); what was dropped and kept untyped,
    in words, when there is something to say."""
    from medlink.corpora.entity_types import describe_counts, entity_type, has_type, type_counts

    dropped, untyped = type_counts([]), 0
    for document in documents:
        kept = [a for a in document.annotations if has_type(a.type, wanted)]
        dropped += type_counts(a.type for a in document.annotations if not has_type(a.type, wanted))
        untyped += sum(entity_type(a.type) is None for a in kept)
        document.annotations = kept
    said = [f"left out {describe_counts(dropped)} span(s)"] if dropped else []
    said += [f"kept {untyped:,} span(s) without a type (nothing says they are of another type)"] if untyped else []
    return "; ".join(said) or None


def is_errors_file(path: Path) -> bool:
    """Did 'medlink score --errors' write ``path``? Empty, or its first line one of the errors it lists: only such a
    file is replaced (a gold file named by mistake is not)."""
    try:
        with open(path, encoding="utf-8") as stream:
            first = stream.readline(1 << 16)
        record = json.loads(first) if first else {}  # an empty file; a blank first line is not medlink's
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(record, dict) and (not first or {"measure", "kind", "doc_id", "ids"} <= set(record))


def spec_format(spec: str) -> str | None:
    """The FORMAT of ``[FORMAT:]PATH``, if given."""
    from medlink.corpora.document_files import DOCUMENT_FORMATS

    prefix, _, rest = spec.partition(":")
    return prefix if rest and prefix in DOCUMENT_FORMATS else None


def spec_path(spec: str) -> Path:
    """The PATH of ``[FORMAT:]PATH``."""
    return Path(spec.partition(":")[2]) if spec_format(spec) else Path(spec)


def read_side(spec: str, option: str, policy) -> list:
    """The documents of ``[FORMAT:]PATH`` (the format from the file when not given), read whole."""
    from medlink.corpora.document_files import guess_document_format, read_documents

    fmt, path = spec_format(spec), spec_path(spec)
    if not path.is_file():
        fail(f"{option} {path}: no such file")
    fmt = fmt or guess_document_format(path)
    if fmt in ("text", "lines"):
        fail(
            f"{option} {path}: plain text carries no annotations to score; give a pubtator, bioc, bioc-json or jsonl file "
            "(as FORMAT:PATH if its name does not say)"
        )
    return list(read_documents(path, fmt, policy=policy))


def check_same_texts(gold: list, predicted: list, option_name: str = "--predicted") -> None:
    """Each side names a document once, and a predicted document has its gold one's text: offsets mean nothing against
    another text."""
    for documents, option in ((gold, "--gold"), (predicted, option_name)):
        seen: set[str] = set()
        twice = [d.doc_id for d in documents if d.doc_id in seen or seen.add(d.doc_id)]
        if twice:
            fail(
                f"{option}: {len(twice)} document id(s) given twice, so it is unclear which to score: "
                + ", ".join(repr(d) for d in twice[:5])
                + (", ..." if len(twice) > 5 else "")
            )
    texts = {d.doc_id: d.text for d in gold}
    differ = [d.doc_id for d in predicted if d.doc_id in texts and d.text != texts[d.doc_id]]
    if differ:
        fail(
            f"{option_name}: {len(differ)} document(s) whose text differs from the gold one's, so their offsets cannot be compared: "
            + ", ".join(repr(d) for d in differ[:5])
            + (", ..." if len(differ) > 5 else "")
        )


def markdown(result: dict) -> str:
    """One row per measure: counts, P / R / F1 and the F1's 95% interval (documents resampled)."""
    from medlink.eval.intervals import REPLICATES, percent_range, signed_points  # the scoring modules: only for a report

    lines = [
        "| measure | tp | fp | fn | precision | recall | F1 | F1 95% interval |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for measure, name in MEASURE_NAMES.items():
        s = result[measure]
        bounds = (result.get("intervals") or {}).get(measure, {}).get("f1")
        spread = percent_range(bounds) if bounds else "-"
        lines.append(
            f"| {name} | {s['tp']:,} | {s['fp']:,} | {s['fn']:,} | {100 * s['precision']:.1f} | {100 * s['recall']:.1f} | "
            f"{100 * s['f1']:.1f} | {spread} |"
        )
    missing, skipped = result["documents_without_predictions"], result.get("skipped_records")
    lines += [
        "",
        f"{result['documents']:,} gold document(s)"
        + (f", {missing:,} of them absent from the predictions (scored as finding nothing)" if missing else "")
        + (f"; {skipped:,} malformed record(s) skipped" if skipped else "")
        + f"; intervals: the documents resampled {REPLICATES:,} times.",
    ]
    if result.get("against_baseline"):
        lines += [
            "",
            "Against --baseline, F1 difference in points (paired 95% interval: an interval that holds 0 is no "
            "difference these documents can tell): "
            + "; ".join(
                f"{MEASURE_NAMES[m].split(' (')[0]} {100 * c['f1_difference']:+.1f}{signed_points(c['interval'])}"
                for m, c in result["against_baseline"].items()
            )
            + ".",
        ]
    return "\n".join(lines)

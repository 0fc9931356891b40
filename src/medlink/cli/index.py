"""``medlink index build``: a KB (+ mention memory) and a config into an index folder; ``medlink index verify``: is it
still the folder that was built?"""

from __future__ import annotations

from pathlib import Path

import typer

from medlink.cli.common import PRECISION_HELP, fail, new_app, open_kb, quiet_option, quiet_phases, use_precision

app = new_app("Build linker indices (lexical generators, mention memory, manifest) and verify them.")


@app.command("build")
def index_build(
    kb: str = typer.Option(..., "--kb", help="KB file, or 'default'."),
    out: Path = typer.Option(..., "--out", help="Index directory to write (replaced atomically)."),
    config: str | None = typer.Option(
        None,
        "--config",
        help="JSON linker config file (generators, fusion, reranker), or a preset: "
        "'default' (exact names and word sets + a thesaurus of HPO's synonyms + completions + TF-IDF + BM25) "
        "or 'default-dense' (those + the packaged MiniLM; the dense extra).",
    ),
    memory: list[str] = typer.Option(
        [],
        "--memory",
        help="Annotated mentions FORMAT:PATH to memorise (repeatable: several corpora together; FORMAT: pubtator, bioc, "
        "bioc-json, jsonl, biosyn or askapatient).",
    ),
    memory_types: list[str] = typer.Option(
        [],
        "--memory-types",
        help="Memorise only the --memory mentions of these entity types (Disease,Chemical; NCBI's four disease classes "
        "are Disease: docs/annotate.md#entity-types); untyped ones kept. Repeatable, or comma-separated.",
    ),
    memory_new_concepts: bool = typer.Option(
        False,
        "--memory-new-concepts",
        help="Keep a --memory mention whose concept the KB lacks (an id newer than the KB's release), as a concept of the "
        "index named by its mentions; without it such mentions are counted and left out.",
    ),
    calibrate: str = typer.Option(
        "kb",
        "--calibrate",
        metavar="kb|memory|none",
        help="kb: fit the probabilities and NIL threshold on pseudo-mentions drawn from the KB "
        "(synonyms held out of the index); memory: on the --memory mentions, each fifth of them linked by an index "
        "built without that fifth (real wording; no dev set needed); none: no probabilities. Re-fit on dev data with "
        "'medlink tune --calibrate'.",
    ),
    finder_skip: list[str] = typer.Option(
        [],
        "--finder-skip",
        help="A concept id whose names, and its descendants', the mention finder "
        "('medlink annotate') leaves out: qualifiers that are no finding (HPO's Clinical modifier "
        "HP:0012823: 'Mild', 'Left'; SNOMED CT's qualifier values). Still linked when given as mentions. Repeatable.",
    ),
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    quiet: bool = quiet_option(),
) -> None:
    """Build an index directory for 'medlink link' and 'medlink eval'.

    On two cores, a lexical index fits its probabilities in a second process beside the build (the same index, sooner;
    memory holds both). MEDLINK_FIT_ASIDE=0 keeps it to one process."""
    import time

    from medlink.corpora.entity_types import parse_types
    from medlink.linking.calibration import TYPE as CALIBRATION
    from medlink.linking.index import build_index

    quiet_phases(quiet)
    use_precision(precision)
    started = time.perf_counter()
    wanted = parse_types(memory_types)
    if wanted and not memory:
        fail("--memory-types chooses among the --memory mentions: give --memory too (nothing was built)")
    if memory_new_concepts and not memory:
        fail("--memory-new-concepts keeps concepts the --memory mentions bring: give --memory too (nothing was built)")
    linker = build_index(open_kb(kb), out, config, memory, calibrate, finder_skip, wanted, memory_new_concepts)
    summary = ", ".join(f"{name}: {len(t):,} names" for name, t in linker.tables.items())
    typer.echo(f"wrote {out} in {time.perf_counter() - started:.1f}s ({summary})")
    if linker.memory is not None:
        m = linker.memory.summary()
        typer.echo(
            f"memory: {m['entries']:,} entries"
            + (f" of types {', '.join(m['types'])}" if m.get("types") else "")
            + f"; skipped {m['skipped_composite']:,} composite and {m['skipped_unknown_concept']:,} with no KB concept"
            + (f"; {new_concepts(linker)}" if m.get("new_concepts") else ""),
            err=True,
        )
    stage = next((r for r in linker.config.rerankers if r["type"] == CALIBRATION), None)
    if stage is not None:
        fitted = stage["model"].get("fitted_on") or {}
        typer.echo(
            f"probabilities: fitted on {fitted.get('source', 'labelled mentions')} ({fitted.get('mentions', 0):,} mentions); NIL "
            f"threshold {stage['nil_threshold']:.2f}"
            + (
                " (none of them of a concept the KB lacks: the threshold has not learnt to refuse "
                "text the KB does not name; set one with --nil-threshold or fit on dev with "
                "'medlink tune --calibrate')"
                if calibrate == "memory"
                else ""
            ),
            err=True,
        )


def new_concepts(linker, shown: int = 5) -> str:
    """The concepts the KB lacks that --memory-new-concepts kept, the first few by id with the name the index gave them."""
    added = linker.memory.new_concepts
    listed = ", ".join(f"{concept} ({linker.name_of(concept)!r})" for concept in added[:shown])
    more = f" and {len(added) - shown:,} more" if len(added) > shown else ""
    return f"{len(added):,} concept(s) the KB lacks kept (--memory-new-concepts): {listed}{more}"


@app.command("verify")
def index_verify(index: str = typer.Argument(..., help="Index folder, or 'default' / 'default-dense'.")) -> None:
    """Check every file of an index against the sizes and checksums its manifest recorded, large arrays included
    (loading checks sizes, and the CRC-32 of files up to 64 MB; this, the sha256 of every file). A file that differs is named, and the exit status is not 0."""
    from medlink.linking.index import resolve_index
    from medlink.linking.manifest import FILES, check_index_files, read_manifest

    directory = resolve_index(index)
    manifest = read_manifest(directory)
    if not check_index_files(directory, manifest, full=True):
        fail(
            f"{directory}: built by an older medlink, whose manifest records no file checksums; rebuild it to have them "
            f"(medlink index build --kb KB --out {directory})"
        )
    total = sum(f["size"] for f in manifest[FILES].values())
    typer.echo(f"{directory}: all {len(manifest[FILES]):,} files as built ({total / 1e6:,.1f} MB checked)")

"""``medlink kb``: build a KB and look into one (info, show, search); carry facts into it through mappings (augment) and undo that
(unaugment)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from medlink.cli.common import fail, new_app, open_kb, quiet_option, quiet_phases

app = new_app("Build and inspect knowledge bases (one SQLite file per KB).")


@app.command("build")
def kb_build(
    arguments: list[str] = typer.Argument(
        ...,
        help="The KB file to write (unless --out names it), then its sources FORMAT[=PREFIX]:PATH; "
        "formats: biosyn obo icd10cm umls snomed mesh jsonl tsv askapatient default",
    ),
    out: Path | None = typer.Option(None, "--out", help="The KB file to write (SQLite), as 'index build --out' names its folder."),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Skip malformed lines (counted and reported) instead of failing."),
    quiet: bool = quiet_option(),
    keep: str = typer.Option("", "--keep-punctuation", help="Punctuation characters that normalisation keeps (e.g. '+' for 'HER2+')."),
    keep_case: bool = typer.Option(False, "--keep-case", help="Do not case-fold names and mentions (e.g. to tell 'AIDS' from 'aids')."),
    no_nfkc: bool = typer.Option(False, "--no-nfkc", help="Skip Unicode NFKC normalisation."),
    keep_accents: bool = typer.Option(
        False, "--keep-accents", help="Do not fold accents on Latin letters (by default 'Behçet' and 'Behcet' meet)."
    ),
) -> None:
    """Build a KB from one or more sources (several make a composite KB with namespaced ids).

    The normalisation chosen here is recorded in the KB; every index and lookup over it normalises
    mentions the same way.
    """
    quiet_phases(quiet)
    from medlink.kb.build import build_kb
    from medlink.text.normalize import Normalizer

    if out is None:
        if len(arguments) < 2:
            fail("give the KB file to write and at least one source: medlink kb build OUT FORMAT:PATH (or --out OUT FORMAT:PATH)")
        out, arguments = Path(arguments[0]), arguments[1:]
    sources = arguments
    normalizer = Normalizer(nfkc=not no_nfkc, casefold=not keep_case, keep=keep, fold_accents=not keep_accents)
    report = build_kb(out, sources, skip_invalid=skip_invalid, progress=not quiet, normalizer=normalizer)
    for source, count in report.records.items():
        typer.echo(f"{source}: {count:,} records read (a concept, a name, an id or a relation each)", err=True)
    finish = report.finish
    for label, value in (
        ("concepts without a preferred name, named by their first name", finish.named_from_first_name),
        ("concepts without any name dropped", finish.nameless_concepts_dropped),
        ("relations to unknown concepts dropped", finish.dangling_relations_dropped),
        ("rows of unknown concepts dropped", finish.orphan_rows_dropped),
        ("preferred names of a repeated id kept as synonyms", finish.repeated_preferred_as_synonyms),
        ("preferred names of a repeated id given again, kept once", finish.repeated_preferred_merged),
    ):
        if value:
            typer.echo(f"{label}: {value:,}", err=True)
    if report.total_skipped:
        for source, count in report.skipped.items():
            typer.echo(f"skipped {count:,} invalid lines in {source}", err=True)
        for reason in report.skip_reasons.values():
            typer.echo(f"  first: {reason}", err=True)
    from medlink.kb.store import KB

    with KB.open(out) as built:
        held = f"{len(built):,} concepts, {built.name_count():,} names"
    typer.echo(f"wrote {out} in {report.seconds:.1f}s: {held} (checksum {report.checksum})")


@app.command("info")
def kb_info(
    kb: str = typer.Argument(..., help="KB file, or 'default'."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Counts of concepts, names, relations, xrefs and sources."""
    with open_kb(kb) as store:
        stats = store.stats()
        augmented = store.augmentation_summary()
    if as_json:
        typer.echo(json.dumps({**stats, "augmentation": augmented}))
        return
    for key in (
        "path",
        "checksum",
        "concepts",
        "names",
        "distinct_normalized_names",
        "relations",
        "xrefs",
        "types",
        "id_aliases",
        "with_definition",
    ):
        typer.echo(f"{key:26} {stats[key]:,}" if isinstance(stats[key], int) else f"{key:26} {stats[key]}")
    typer.echo(
        "normalisation:     "
        + ", ".join(f"{k} {v!r}" if k == "keep" else f"{k} {'on' if v else 'off'}" for k, v in stats["normalizer"].items())
    )
    typer.echo("names by kind:     " + ", ".join(f"{k} {v:,}" for k, v in stats["names_by_kind"].items()))
    if stats["relations_by_type"]:
        typer.echo("relations by type: " + ", ".join(f"{k} {v:,}" for k, v in stats["relations_by_type"].items()))
    for source in stats["sources"]:
        typer.echo(
            f"source: {source['format']}:{source['path'] or '(packaged)'} prefix={source['prefix']!r} "
            f"records={source['records']:,} skipped={source['skipped']:,}"
        )
    if augmented:
        facts = ", ".join(f"{count:,} {field}s" for field, count in augmented["facts"].items()) or "no facts"
        typer.echo(
            f"augmented:         {facts} carried into {augmented['concepts']:,} concepts (see 'medlink kb show'; undo: "
            "'medlink kb unaugment')"
        )
        typer.echo(f"augmented from:    {augmented['augmented_from']}")
        for number, round_ in enumerate(augmented["rounds"], 1):
            typer.echo(f"augmentation {number}:    {round_}")


@app.command("show")
def kb_show(
    kb: str = typer.Argument(..., help="KB file, or 'default'."),
    concept_id: str = typer.Argument(
        ..., help="The concept's id (an alt or replaced id finds it too, and a CURIE whose local part the KB keeps: MESH:D008228)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Everything the KB knows about one concept (facts 'kb augment' carried in: marked, with their mapping)."""
    from dataclasses import asdict

    with open_kb(kb) as store:
        from medlink.align.sssom import resolve  # a CURIE as 'medlink align' writes an id the KB keeps bare

        found = resolve(store, concept_id)  # the id as given, else a CURIE's local part
        concept = store.concept(found) if found is not None else None
        if concept is None:
            meant = store.ids_ending(concept_id)
            fail(f"no concept {concept_id!r} in {store.path}" + (f"; its ids carry a prefix: {', '.join(meant)}" if meant else ""), code=1)
        children = store.children(concept.id)
        names = {cid: store.name_of(cid) for cid in concept.parents + children + [t for _, t in concept.relations]}
        carried = store.augmentations(concept.id)
    if as_json:
        typer.echo(json.dumps({**asdict(concept), "children": children, "augmented": carried}))
        return
    marks = {(fact["field"], fact["value"]): _carried_mark(fact) for fact in carried}
    typer.echo(f"{concept.id}  {concept.name}" + (f"  (requested {concept_id})" if concept.id != concept_id else ""))
    if concept.source:
        typer.echo(f"  source:     {concept.source}")
    own_types = [t for t in concept.types if ("type", t) not in marks]
    if own_types:
        typer.echo(f"  types:      {', '.join(own_types)}")
    for type_ in concept.types:
        if ("type", type_) in marks:
            typer.echo(f"  type:       {type_}  {marks['type', type_]}")
    if concept.definition:
        typer.echo(
            f"  definition: {concept.definition}"
            + (f"  {marks['definition', concept.definition]}" if ("definition", concept.definition) in marks else "")
        )
    for text, kind in concept.synonyms:
        mark = f"  {marks['synonym', text]}" if ("synonym", text) in marks else ""
        typer.echo(f"  {kind + ':':<{max(12, len(kind) + 2)}}{text}{mark}")  # a long kind ("abbreviation") keeps a space before the name
    for parent in concept.parents:
        typer.echo(f"  parent:     {parent}  {names.get(parent) or ''}")
    for child in children[:20]:
        typer.echo(f"  child:      {child}  {names.get(child) or ''}")
    if len(children) > 20:
        typer.echo(f"  ... {len(children) - 20} more children")
    for relation, tail in concept.relations:
        typer.echo(f"  {relation}: {tail}  {names.get(tail) or ''}")
    if concept.xrefs:
        typer.echo(f"  xrefs:      {' '.join(concept.xrefs)}")
    if concept.alt_ids:
        typer.echo(f"  alt ids:    {' '.join(concept.alt_ids)}")


@app.command("search")
def kb_search(
    kb: str = typer.Argument(..., help="KB file, or 'default'."),
    texts: list[str] = typer.Argument(..., help="Names to look up (exact after normalisation)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per name looked up."),
) -> None:
    """Exact lookup by normalised name (fuzzy search is 'medlink link')."""
    with open_kb(kb) as store:
        for text in texts:
            hits = store.lookup(text)
            if as_json:
                typer.echo(
                    json.dumps(
                        {"query": text, "matches": [{"id": c, "name": store.name_of(c), "matched": n, "kind": k} for c, n, k in hits]}
                    )
                )
                continue
            if not hits:
                typer.echo(f"{text}: no exact match")
            for concept_id, name, kind in hits:
                typer.echo(f"{text}\t{concept_id}\t{store.name_of(concept_id)}\t(matched {kind} '{name}')")


def _carried_mark(fact: dict) -> str:
    confidence = "" if fact["confidence"] is None else f" {fact['confidence']:.4f}"
    line = f":{fact['line']}" if fact["line"] is not None else ""
    return f"[carried: {fact['object_id']} {fact['predicate_id']}{confidence}; {fact['mapping_file']}{line}]"


@app.command("augment")
def kb_augment(
    kb: str = typer.Argument(..., help="The KB to augment (the mappings' subject side)."),
    mappings: Path = typer.Option(..., "--from", help="SSSOM TSV of mappings from KB to --with (e.g. 'medlink align' output)."),
    other: str = typer.Option(..., "--with", help="The KB the mappings point into; its metadata is carried across."),
    out: Path = typer.Option(..., "--out", help="The augmented KB file to write (atomically; never KB or --with)."),
    min_confidence: float = typer.Option(
        0.0, "--min-confidence", min=0.0, max=1.0, help="Carry only mappings with at least this confidence (choose it on dev data)."
    ),
    carry: str = typer.Option(
        "definitions,types,ancestors,synonyms", "--carry", help="What to carry, comma-separated: definitions, types, ancestors, synonyms."
    ),
    shared_synonyms: bool = typer.Option(
        False,
        "--shared-synonyms",
        help="Also carry the synonyms of a target concept that "
        "several KB concepts map to (by default they would make those concepts tie, so they are not).",
    ),
    quiet: bool = quiet_option(),
) -> None:
    """Carry definitions, types / ancestors and synonyms from another KB through mappings, each with its provenance."""
    quiet_phases(quiet)
    from medlink.align.augment import augment_kb

    report = augment_kb(
        kb,
        mappings,
        other,
        out,
        min_confidence=min_confidence,
        carry=[c.strip() for c in carry.split(",") if c.strip()],
        progress=not quiet,
        shared_synonyms=shared_synonyms,
    )
    typer.echo(f"wrote {out}: {report.summary()}")


@app.command("unaugment")
def kb_unaugment(
    kb: str = typer.Argument(..., help="A KB 'medlink kb augment' wrote."),
    out: Path = typer.Option(..., "--out", help="The KB file to write (atomically; never KB itself)."),
) -> None:
    """Undo 'kb augment': write KB without every fact it carried in (all rounds), as it was before.

    The checksum is recomputed from what is left, so it is the original KB's again and indexes built
    for that KB fit the result.
    """
    from medlink.kb.edits import unaugment

    report = unaugment(kb, out)
    typer.echo(f"wrote {out}: {report.summary()}")

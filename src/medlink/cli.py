"""The ``medlink`` command: one sub-command per job, each a thin shell over the library."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer

from medlink.errors import MedlinkError

app = typer.Typer(help="Link medical mentions to concepts in medical terminologies.", no_args_is_help=True, add_completion=False)
kb_app = typer.Typer(help="Build and inspect knowledge bases (one SQLite file per KB).", no_args_is_help=True)
app.add_typer(kb_app, name="kb")
index_app = typer.Typer(help="Build linker indices (lexical generators, mention memory, manifest).", no_args_is_help=True)
app.add_typer(index_app, name="index")
train_app = typer.Typer(help="Mine training pairs from a KB and train bi-encoders and cross-encoders.", no_args_is_help=True)
app.add_typer(train_app, name="train")
cache_app = typer.Typer(help="See and prune the cache of encoded names ($MEDLINK_HOME/encode-cache).", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


PRECISION_HELP = ("Number format of neural models: auto (bf16 where this CPU runs it faster, measured once per machine; "
                  "else float32), fp32 or bf16. Default: the index's or model's setting (auto); also MEDLINK_PRECISION.")


def _use_precision(precision: Optional[str]) -> None:
    """--precision: every encoder of this process (index build, queries, training) uses it."""
    from medlink.encoders.precision import force

    force(precision)


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@kb_app.command("build")
def kb_build(
    out: Path = typer.Argument(..., help="KB file to write (SQLite)."),
    sources: List[str] = typer.Argument(..., help="FORMAT[=PREFIX]:PATH ... formats: biosyn obo icd10cm umls snomed mesh jsonl tsv default"),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Skip malformed lines (counted and reported) instead of failing."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    keep: str = typer.Option("", "--keep-punctuation", help="Punctuation characters that normalisation keeps (e.g. '+' for 'HER2+')."),
    keep_case: bool = typer.Option(False, "--keep-case", help="Do not case-fold names and mentions (e.g. to tell 'AIDS' from 'aids')."),
    no_nfkc: bool = typer.Option(False, "--no-nfkc", help="Skip Unicode NFKC normalisation."),
) -> None:
    """Build a KB from one or more sources (several make a composite KB with namespaced ids).

    The normalisation chosen here is recorded in the KB; every index and lookup over it normalises
    mentions the same way.
    """
    from medlink.kb.build import build_kb
    from medlink.text.normalize import Normalizer

    normalizer = Normalizer(nfkc=not no_nfkc, casefold=not keep_case, keep=keep)
    report = build_kb(out, sources, skip_invalid=skip_invalid, progress=not quiet, normalizer=normalizer)
    for source, count in report.records.items():
        typer.echo(f"{source}: {count:,} records", err=True)
    finish = report.finish
    for label, value in (
        ("concepts named from their first name", finish.named_from_first_name),
        ("concepts without any name dropped", finish.nameless_concepts_dropped),
        ("relations to unknown concepts dropped", finish.dangling_relations_dropped),
        ("rows of unknown concepts dropped", finish.orphan_rows_dropped),
    ):
        if value:
            typer.echo(f"{label}: {value:,}", err=True)
    if report.total_skipped:
        for source, count in report.skipped.items():
            typer.echo(f"skipped {count:,} invalid lines in {source}", err=True)
        for reason in report.skip_reasons.values():
            typer.echo(f"  first: {reason}", err=True)
    typer.echo(f"wrote {out} in {report.seconds:.1f}s (checksum {report.checksum})")


def _open_kb(kb: str):
    from medlink.kb.store import KB

    return KB.open(kb)


@kb_app.command("info")
def kb_info(kb: str = typer.Argument(..., help="KB file, or 'default'."), as_json: bool = typer.Option(False, "--json")) -> None:
    """Counts of concepts, names, relations, xrefs and sources."""
    with _open_kb(kb) as store:
        stats = store.stats()
    if as_json:
        typer.echo(json.dumps(stats))
        return
    for key in ("path", "checksum", "concepts", "names", "distinct_normalized_names", "relations", "xrefs", "types", "id_aliases", "with_definition"):
        typer.echo(f"{key:26} {stats[key]:,}" if isinstance(stats[key], int) else f"{key:26} {stats[key]}")
    typer.echo("names by kind:     " + ", ".join(f"{k} {v:,}" for k, v in stats["names_by_kind"].items()))
    typer.echo("relations by type: " + ", ".join(f"{k} {v:,}" for k, v in stats["relations_by_type"].items()))
    for source in stats["sources"]:
        typer.echo(f"source: {source['format']}:{source['path'] or '(packaged)'} prefix={source['prefix']!r} records={source['records']:,} skipped={source['skipped']:,}")


@kb_app.command("show")
def kb_show(kb: str = typer.Argument(..., help="KB file, or 'default'."), concept_id: str = typer.Argument(...), as_json: bool = typer.Option(False, "--json")) -> None:
    """Everything the KB knows about one concept."""
    from dataclasses import asdict

    with _open_kb(kb) as store:
        concept = store.concept(concept_id)
        if concept is None:
            _fail(f"no concept {concept_id!r} in {store.path}", code=1)
        children = store.children(concept.id)
        names = {cid: store.name_of(cid) for cid in concept.parents + children + [t for _, t in concept.relations]}
    if as_json:
        typer.echo(json.dumps({**asdict(concept), "children": children}))
        return
    typer.echo(f"{concept.id}  {concept.name}" + (f"  (requested {concept_id})" if concept.id != concept_id else ""))
    if concept.source:
        typer.echo(f"  source:     {concept.source}")
    if concept.types:
        typer.echo(f"  types:      {', '.join(concept.types)}")
    if concept.definition:
        typer.echo(f"  definition: {concept.definition}")
    for text, kind in concept.synonyms:
        typer.echo(f"  {kind + ':':12}{text}")
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


@kb_app.command("search")
def kb_search(
    kb: str = typer.Argument(..., help="KB file, or 'default'."),
    texts: List[str] = typer.Argument(..., help="Names to look up (exact after normalisation)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Exact lookup by normalised name (fuzzy search is 'medlink link')."""
    with _open_kb(kb) as store:
        for text in texts:
            hits = store.lookup(text)
            if as_json:
                typer.echo(json.dumps({"query": text, "matches": [{"id": c, "name": store.name_of(c), "matched": n, "kind": k} for c, n, k in hits]}))
                continue
            if not hits:
                typer.echo(f"{text}: no exact match")
            for concept_id, name, kind in hits:
                typer.echo(f"{text}\t{concept_id}\t{store.name_of(concept_id)}\t(matched {kind} '{name}')")


@index_app.command("build")
def index_build(
    kb: str = typer.Option(..., "--kb", help="KB file, or 'default'."),
    out: Path = typer.Option(..., "--out", help="Index directory to write (replaced atomically)."),
    config: Optional[str] = typer.Option(None, "--config", help="JSON linker config file (generators, fusion, reranker), or a preset: "
                                         "'default' (exact + TF-IDF + BM25) or 'default-dense' (those + the packaged MiniLM; the dense extra)."),
    memory: List[str] = typer.Option([], "--memory", help="Annotated dataset FORMAT:PATH to memorise (repeatable)."),
    precision: Optional[str] = typer.Option(None, "--precision", help=PRECISION_HELP),
) -> None:
    """Build an index directory for 'medlink link' and 'medlink eval'."""
    import time

    from medlink.linking.index import build_index

    _use_precision(precision)
    started = time.perf_counter()
    linker = build_index(_open_kb(kb), out, config, memory)
    summary = ", ".join(f"{name}: {len(t):,} names" for name, t in linker.tables.items())
    typer.echo(f"wrote {out} in {time.perf_counter() - started:.1f}s ({summary})")
    if linker.memory is not None:
        m = linker.memory.summary()
        typer.echo(f"memory: {m['entries']:,} entries; skipped {m['skipped_composite']:,} composite and {m['skipped_unknown_concept']:,} with no KB concept", err=True)


@app.command("link")
def link(
    mentions: List[str] = typer.Argument(None, help="Mentions to link; none: read --input or stdin."),
    index: str = typer.Option("default", "--index", help="Index directory, 'default' (ICD-10-CM + HPO, lexical, built on first use) or 'default-dense' (+ the packaged MiniLM; the dense extra)."),
    k: int = typer.Option(5, "--k", min=1, help="Candidates per mention."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per mention."),
    input_path: Optional[Path] = typer.Option(None, "--input", help="File of mentions (plain lines, .tsv, .jsonl)."),
    input_format: Optional[str] = typer.Option(None, "--format", help="lines | tsv | jsonl (default: from the file suffix)."),
    column: int = typer.Option(0, "--column", help="TSV column holding the mention (0-based)."),
    generators: Optional[str] = typer.Option(None, "--generators", help="Comma-separated generator names to use (default: all)."),
    prefer_prefix: List[str] = typer.Option([], "--prefer-prefix", help="Show a concept under its id in this namespace when it has one "
                                            "(e.g. MESH for MEDIC, whose concepts may be filed under an OMIM id); repeatable, first wins."),
    batch_size: int = typer.Option(2048, "--batch-size", min=1),
    precision: Optional[str] = typer.Option(None, "--precision", help=PRECISION_HELP),
) -> None:
    """Link mentions to ranked concepts."""
    from medlink.linking.index import resolve_index
    from medlink.corpora.mention_files import FORMATS, guess_format, read_mentions
    from medlink.linking.linker import Linker
    from medlink.linking.output import link_stream, result_json, result_lines

    if input_format and input_format not in FORMATS:
        _fail(f"unknown --format {input_format!r}; known: {', '.join(FORMATS)}")
    _use_precision(precision)
    linker = Linker.load(resolve_index(index))
    selected = generators.split(",") if generators else None
    if mentions:
        stream = iter(mentions)
    else:
        if input_path is None and sys.stdin.isatty():
            _fail("no mentions: give them as arguments, with --input FILE, or on stdin")
        stream = read_mentions(input_path, input_format or guess_format(input_path), column)
    errors = 0
    for result in link_stream(linker, stream, k, selected, batch_size, prefer_prefix):
        errors += result.error is not None
        if as_json:
            typer.echo(json.dumps(result_json(result), ensure_ascii=False))
        else:
            typer.echo("\n".join(result_lines(result)))
    if errors:
        typer.echo(f"{errors} mention(s) not linked: empty or nothing left after normalisation (marked 'error' in the output)", err=True)


@app.command("eval")
def evaluate_command(
    index: str = typer.Option(..., "--index", help="Index directory, 'default' or 'default-dense'."),
    dataset: str = typer.Option(..., "--dataset", help="FORMAT:PATH of the labelled mentions (biosyn, askapatient, pubtator)."),
    train: List[str] = typer.Option([], "--train", help="Training data FORMAT:PATH for seen/unseen subpopulations (repeatable)."),
    kb: Optional[str] = typer.Option(None, "--kb", help="KB for id equivalence and direct-match subpopulation (default: the index's)."),
    k: int = typer.Option(64, "--k", min=1, help="Candidates per mention (recall@k is reported up to k)."),
    generators: Optional[str] = typer.Option(None, "--generators", help="Comma-separated generator names to use (default: all)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Directory for report.json, report.md, subpopulations.png, records.jsonl."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a Markdown table."),
    precision: Optional[str] = typer.Option(None, "--precision", help=PRECISION_HELP),
) -> None:
    """Evaluate an index on labelled mentions: Acc@k, Recall@k, MRR, normalised recall, subpopulations."""
    from medlink.eval import evaluate, load_dataset
    from medlink.eval.metrics import equivalent_ids_from_kb
    from medlink.linking.index import resolve_index

    _use_precision(precision)
    directory = resolve_index(index)
    store, linker = _index_and_kb(directory, kb)
    mentions = load_dataset(dataset)
    train_mentions = [m for spec in train for m in load_dataset(spec)] or None
    selected = generators.split(",") if generators else None
    report = evaluate(lambda texts: linker.link(texts, k=k, generators=selected), mentions,
                      equivalent_ids=equivalent_ids_from_kb(store), train=train_mentions, kb=store)
    report.meta.update({"index": str(directory), "dataset": dataset, "train": list(train), "kb": str(store.path), "k": k,
                        "generators": selected or list(linker.generators), "precision": linker.precisions()})
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.json").write_text(report.to_json())
        (out / "report.md").write_text(report.to_markdown() + "\n")
        report.plot(out / "subpopulations.png")
        report.write_records(out / "records.jsonl")
    typer.echo(report.to_json(indent=None) if as_json else report.to_markdown())


@app.command("tune")
def tune_command(
    index: str = typer.Option(..., "--index", help="Index directory to tune (its generators and rerankers are used as built)."),
    dev: List[str] = typer.Option(..., "--dev", help="Labelled dev mentions FORMAT:PATH (repeatable); never test data."),
    search: str = typer.Option("fusion,rerankers", "--search", help="What to choose, in order, comma-separated: fusion (weights, "
                                "weighted or RRF), rerankers (each one's settings), or one reranker type (knn, cross-encoder)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the chosen config here (JSON, with the dev figures that chose it)."),
    apply: bool = typer.Option(False, "--apply", help="Also make the chosen config the index's own (no rebuild: only weights and settings change)."),
    kb: Optional[str] = typer.Option(None, "--kb", help="KB for id equivalence (default: the index's)."),
    precision: Optional[str] = typer.Option(None, "--precision", help=PRECISION_HELP),
) -> None:
    """Choose fusion weights and reranker settings on dev data: each stage retrieves once, settings are tried over the cache."""
    from medlink.eval import load_dataset
    from medlink.eval.metrics import equivalent_ids_from_kb
    from medlink.linking.index import apply_config, resolve_index
    from medlink.tuning import tune

    if out is None and not apply:
        _fail("say where the chosen config goes: --out CONFIG and/or --apply")
    _use_precision(precision)
    directory = resolve_index(index)
    store, linker = _index_and_kb(directory, kb)
    mentions = [m for spec in dev for m in load_dataset(spec)]
    config, report = tune(linker, mentions, [s.strip() for s in search.split(",") if s.strip()], equivalent_ids_from_kb(store), ",".join(dev))
    if out is not None:
        from medlink.directories import write_atomic

        write_atomic(out, json.dumps(config.to_dict(), indent=2) + "\n")
    if apply:
        apply_config(directory, config)
    before, after = report.before, report.after
    typer.echo(f"dev Acc@1 {before['acc@1']:.4f} -> {after['acc@1']:.4f}, MRR {before['mrr']:.4f} -> {after['mrr']:.4f} "
               f"({len(report.trials)} settings tried in {report.seconds:.0f}s)")
    typer.echo(f"fusion: {json.dumps(config.to_dict()['fusion'])}")
    for settings in config.rerankers:
        typer.echo(f"reranker: {json.dumps(settings)}")
    for where in ([str(out)] if out else []) + ([f"{directory} (applied)"] if apply else []):
        typer.echo(f"wrote {where}")


def _index_and_kb(directory: Path, kb: Optional[str]):
    """The KB (given, else the one the index records) and the index loaded against it."""
    from medlink.kb.store import KB
    from medlink.linking.linker import Linker
    from medlink.linking.manifest import read_manifest

    if kb is None:
        recorded = Path(read_manifest(directory)["kb"]["path"])
        if not recorded.is_file():
            raise MedlinkError(f"the KB this index was built from ({recorded}) is not there; give it with --kb (evaluation needs its ids)")
    store = KB.open(kb or recorded)
    return store, Linker.load(directory, store)  # a --kb other than the index's is refused here


def _training_mentions(store, datasets: List[str], option: str, required: bool = False) -> list[tuple[str, str]]:
    """Annotated (mention, concept) pairs of ``datasets``; says on stderr how many were left out and why.
    ``required``: given datasets without one usable mention are an error."""
    from medlink.training.examples import counted_supervised_mentions

    if not datasets:
        return []
    mentions, skipped = counted_supervised_mentions(store, datasets)
    if skipped:
        reasons = ", ".join(f"{count} {reason}" for reason, count in skipped.items())
        typer.echo(f"{option}: {len(mentions)} mentions used, {sum(skipped.values())} left out ({reasons})", err=True)
    if not mentions and required:
        _fail(f"{option}: no mention has its gold concept in the KB")
    return mentions


@train_app.command("pairs")
def train_pairs(
    kb: str = typer.Option(..., "--kb", help="KB file, or 'default'."),
    out: Path = typer.Option(..., "--out", help="Directory for pairs.train.tsv, pairs.dev.tsv, negatives.tsv, pairs.json."),
    tasks: str = typer.Option("syn,graph", "--tasks", help="Comma-separated: syn, graph, icd, comb."),
    per_concept: int = typer.Option(10, "--per-concept", help="Cap of pairs per concept and task."),
    seed: int = typer.Option(13, "--seed"),
    dev_fraction: float = typer.Option(0.2, "--dev-fraction", help="Share of concepts held out (node-level split)."),
) -> None:
    """Mine synonym / graph / ICD-10 pairs from a KB (paper 000), split 80:20 by concept."""
    from medlink.training.pairs import mine_pairs

    report = mine_pairs(_open_kb(kb), out, tasks, max_pairs_per_concept=per_concept, seed=seed, dev_fraction=dev_fraction)
    typer.echo(report.summary())


@train_app.command("bi-encoder")
def train_bi_encoder_command(
    kb: str = typer.Option(..., "--kb", help="KB the concepts come from (positives and hard negatives)."),
    out: Path = typer.Option(..., "--out", help="Model folder to write (usable as a dense generator's model)."),
    train: List[str] = typer.Option([], "--train", help="Annotated mentions FORMAT:PATH (repeatable): supervised examples."),
    pairs: Optional[Path] = typer.Option(None, "--pairs", help="A 'medlink train pairs' directory: KG examples (alone: zero-shot; with --train: auxiliary loss)."),
    dev: List[str] = typer.Option([], "--dev", help="Dev mentions FORMAT:PATH for per-epoch Acc@1 (never test data); "
                                                    "without it, --pairs' held-out pairs.dev.tsv is the dev set."),
    model: Optional[Path] = typer.Option(None, "--model", help="Base model folder (default: packaged all-MiniLM-L6-v2)."),
    epochs: int = typer.Option(1, "--epochs", min=1),
    batch_size: int = typer.Option(64, "--batch-size", min=2),
    learning_rate: float = typer.Option(2e-5, "--lr"),
    tau: float = typer.Option(0.05, "--tau", help="Softmax temperature of the contrastive loss."),
    hard_negatives: int = typer.Option(0, "--hard-negatives", help="p dynamic hard negatives per mention, refreshed every epoch."),
    mention_positives: bool = typer.Option(False, "--mention-positives",
                                           help="Draw positives from the gold concept's names and its other training mentions."),
    distinct_mentions: bool = typer.Option(False, "--distinct-mentions",
                                           help="One example per distinct (mention, concept) instead of one per annotation: "
                                                "shorter epochs on corpora that repeat the same mentions (AskAPatient)."),
    kg_weight: float = typer.Option(1.0, "--kg-weight", help="Weight of the KG auxiliary loss."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps-per-epoch", help="Cap the steps of each epoch (quick trials; default: all examples)."),
    seed: int = typer.Option(13, "--seed"),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUT/checkpoint after an interruption."),
    precision: str = typer.Option("auto", "--precision", help=PRECISION_HELP),
    no_bf16: bool = typer.Option(False, "--no-bf16", hidden=True, help="Same as --precision fp32 (kept for old scripts)."),
    pooling: Optional[str] = typer.Option(None, "--pooling", help="mean or cls (default: what the base model folder declares, else mean)."),
) -> None:
    """Train a bi-encoder: in-batch + dynamic hard negatives, KG pairs as zero-shot or auxiliary task."""
    from medlink.encoders.transformer import require_dense_extra

    require_dense_extra()
    from medlink.training.examples import pair_examples
    from medlink.training.pairs_io import read_pairs
    from medlink.training.run import check_training_output
    from medlink.training.trainer import TrainConfig, train_bi_encoder

    config = TrainConfig(epochs=epochs, batch_size=batch_size, learning_rate=learning_rate, tau=tau, hard_negatives=hard_negatives,
                         mention_positives=mention_positives, distinct_mentions=distinct_mentions, kg_weight=kg_weight, seed=seed, precision="fp32" if no_bf16 else precision, max_steps_per_epoch=max_steps,
                         pooling=pooling)
    _use_precision(config.precision)
    check_training_output(out)  # before any data is read
    store = _open_kb(kb)
    if not train and pairs is None:
        _fail("nothing to train on: give --train FORMAT:PATH (annotated mentions) and/or --pairs DIR (KB pairs)")
    if pairs is not None and not pairs.is_dir():
        _fail(f"--pairs expects the folder 'medlink train pairs --out' wrote, not {pairs}")
    if hard_negatives and not train:
        typer.echo("note: --hard-negatives applies to --train mentions; with --pairs alone it is not used", err=True)
    mentions = _training_mentions(store, train, "--train")
    kg = pair_examples(read_pairs(pairs / "pairs.train.tsv")) if pairs else []
    dev_mentions = _training_mentions(store, dev, "--dev", required=True)
    held_out = pairs / "pairs.dev.tsv" if pairs else None
    kg_dev = pair_examples(read_pairs(held_out)) if (held_out and not dev and held_out.is_file()) else []  # no --dev: judge on held-out concepts
    report = train_bi_encoder(store, out, mentions=mentions, kg_examples=kg, dev=dev_mentions, kg_dev=kg_dev, base_model=model,
                              config=config, resume=resume)
    typer.echo(f"wrote {out} in {report.seconds / 60:.1f} min; epochs: {json.dumps(report.epochs)}")


@train_app.command("cross-encoder")
def train_cross_encoder_command(
    kb: str = typer.Option(..., "--kb", help="KB the concepts and their preferred names come from."),
    out: Path = typer.Option(..., "--out", help="Model folder to write (a 'cross-encoder' reranker's model)."),
    train: List[str] = typer.Option(..., "--train", help="Annotated mentions FORMAT:PATH (repeatable); each distinct (mention, concept) once."),
    dev: List[str] = typer.Option([], "--dev", help="Dev mentions FORMAT:PATH for per-epoch accuracy (never test data)."),
    candidates_model: Optional[str] = typer.Option(None, "--candidates-model",
                                                   help="Bi-encoder folder that retrieves the wrong concepts to train against (default: packaged MiniLM)."),
    model: Optional[Path] = typer.Option(None, "--model", help="Base model folder (default: packaged all-MiniLM-L6-v2, with a new score head)."),
    epochs: int = typer.Option(2, "--epochs", min=1),
    batch_size: int = typer.Option(16, "--batch-size", min=1, help="Mentions per step."),
    candidates: int = typer.Option(8, "--candidates", min=2, help="Group size: the gold name and candidates-1 retrieved wrong concepts."),
    learning_rate: float = typer.Option(3e-5, "--lr"),
    concept_text: str = typer.Option("name", "--concept-text",
                                     help="'name': read mentions against preferred names; 'alias': against any KB name of the concept "
                                          "(for a reranker with text 'matched')."),
    seed: int = typer.Option(13, "--seed"),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUT/checkpoint after an interruption."),
    precision: str = typer.Option("auto", "--precision", help=PRECISION_HELP),
    no_bf16: bool = typer.Option(False, "--no-bf16", hidden=True, help="Same as --precision fp32 (kept for old scripts)."),
) -> None:
    """Train a cross-encoder reranker on annotated mentions against a bi-encoder's close calls."""
    from medlink.encoders.transformer import require_dense_extra

    require_dense_extra()
    from medlink.training.cross_trainer import CrossTrainConfig, retrieved_negatives, train_cross_encoder
    from medlink.training.run import check_training_output

    config = CrossTrainConfig(epochs=epochs, batch_size=batch_size, candidates=candidates, learning_rate=learning_rate, seed=seed,
                              precision="fp32" if no_bf16 else precision, concept_text=concept_text)
    _use_precision(config.precision)
    check_training_output(out)
    store = _open_kb(kb)
    mentions = list(dict.fromkeys(_training_mentions(store, train, "--train")))
    if not mentions:
        _fail("no training mention has a gold concept in the KB")
    dev_mentions = list(dict.fromkeys(_training_mentions(store, dev, "--dev", required=True)))
    retriever = None if candidates_model in (None, "default") else candidates_model
    depth = max(16, 2 * candidates)
    retrieved = retrieved_negatives(store, mentions + dev_mentions, retriever, depth)  # one index serves both
    negatives, dev_negatives = retrieved[: len(mentions)], retrieved[len(mentions) :]
    report = train_cross_encoder(store, out, mentions, negatives, dev=dev_mentions, dev_negatives=dev_negatives, base_model=model,
                                 config=config, resume=resume)
    typer.echo(f"wrote {out} in {report.seconds / 60:.1f} min; epochs: {json.dumps(report.epochs)}")


@cache_app.command("info")
def cache_info() -> None:
    """List the cached encodings: size, last use, complete or resumable."""
    from medlink.retrieval.encode_cache import cache_dir, cache_entries

    entries = cache_entries()
    for entry in entries:
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.last_used))
        typer.echo(f"{entry.key}\t{entry.bytes / 1e6:.1f} MB\tlast used {used}\t{'complete' if entry.complete else 'partial (resumable)'}")
    typer.echo(f"{len(entries)} entries, {sum(e.bytes for e in entries) / 1e6:.1f} MB in {cache_dir()}")


@cache_app.command("clear")
def cache_clear(
    older_than: Optional[float] = typer.Option(None, "--older-than", min=0, help="Only entries unused for this many days (default: all)."),
) -> None:
    """Remove cached encodings (indexes keep their own vectors; a rebuild of the same names re-encodes them)."""
    from medlink.retrieval.encode_cache import clear_cache

    removed, busy = clear_cache(older_than)
    typer.echo(f"removed {len(removed)} entries, {sum(e.bytes for e in removed) / 1e6:.1f} MB"
               + (f"; kept {len(busy)} in use by a running build" if busy else ""))


def main() -> None:
    """Console entry point: library errors become one clear line and exit code 2."""
    try:
        app()
    except MedlinkError as error:
        typer.echo(f"error: {error}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted; nothing half-written was left: re-run to continue (training: add --resume; "
                   "an index build reuses the names already encoded)", err=True)
        sys.exit(130)

"""``medlink align`` (one terminology onto another, SSSOM out) and ``medlink train aligner``.

``train.py`` registers the second on its group (``register_train``), so the alignment commands stay one module;
``medlink kb augment``, which carries facts through mappings into a KB, is a KB command (``kb.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from medlink.cli.common import PRECISION_HELP, new_app, quiet_option, quiet_phases, use_precision

app = new_app()


@app.command("align")
def align_command(
    source: str = typer.Option(
        ..., "--source", help="KB file to map from (every concept gets a row); or default, or a source FORMAT:PATH built for the run."
    ),
    target: str = typer.Option(
        ..., "--target", help="KB file to map onto (not --source); or default, or a source FORMAT:PATH built for the run."
    ),
    out: Path = typer.Option(..., "--out", help="SSSOM TSV to write (atomically; only a file medlink wrote is replaced)."),
    aligner: Path | None = typer.Option(
        None,
        "--aligner",
        help="A 'medlink train aligner' folder: its cross-encoder reranks the "
        "candidates, its bi-encoder (if trained with one) adds candidates and evidence, and its "
        "calibration gives the confidence (default: lexical only).",
    ),
    top_k: int = typer.Option(
        1,
        "--top-k",
        min=1,
        help="Mappings kept per source concept (the first skos:exactMatch if it reaches the aligner's own threshold, the rest closeMatch).",
    ),
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        min=0.0,
        max=1.0,
        help="Lowest confidence kept; below it a source gets a sssom:NoTermFound row "
        "(default: the aligner's dev-chosen threshold, else 0.8 for lexical). A first "
        "target kept under that default is written as skos:closeMatch.",
    ),
    candidates: int = typer.Option(
        64,
        "--candidates",
        min=1,
        help="Candidates per source concept from BM25 + char n-gram TF-IDF (+ a bi-encoder's) (64, as WikiUMLS aligns UMLS to Wikipedia).",
    ),
    depth: int | None = typer.Option(
        None,
        "--depth",
        min=1,
        help="Candidates per source the aligner's cross-encoder reads (default: "
        "as trained, 'depth' in its medlink_aligner.json). Fewer is faster (4 of 8 scored the same "
        "on DO -> ICD-10-CM: docs/training-recipes.md); those it does not read rank below those it "
        "does, so 1 keeps the fused order and scores the first only.",
    ),
    bi_encoder: str | None = typer.Option(
        None,
        "--bi-encoder",
        help="Without --aligner: a bi-encoder's nearest target names join "
        "the candidates and their rank ('packaged': the MiniLM of the dense extra, or a model "
        "folder); the confidence stays the string similarity.",
    ),
    quiet: bool = quiet_option(),
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    prefer_prefix: list[str] = typer.Option(
        [],
        "--prefer-prefix",
        help="Write a concept under its id in this namespace when it has one (e.g. MESH: MEDIC's OMIM-first concepts as "
        "MESH:D...); repeatable, the first that has one wins. Default: each KB's own ids, unprefixed ones under its file's name.",
    ),
) -> None:
    """Align the concepts of one KB to those of another; write the mappings as SSSOM TSV."""
    quiet_phases(quiet)
    from medlink.align.aligner import check_mappings_output
    from medlink.align.inputs import open_pair
    from medlink.align.scoring import Calibration
    from medlink.locks import output_lock

    use_precision(precision or os.environ.get("MEDLINK_PRECISION"))
    check_prefixes(prefer_prefix)
    prefer_prefix = list(dict.fromkeys(p.upper() for p in prefer_prefix))  # matched without case, written upper case
    if bi_encoder is not None:  # checked before any work
        from medlink.align.dense import bi_encoder_setting

        bi_encoder_setting(bi_encoder)
    source_kb, target_kb = open_pair(source, target)
    calibration = Calibration.load(aligner) if aligner is not None else None  # a wrong folder fails before the work
    check_mappings_output(out, source_kb, target_kb)  # so does an --out medlink may not replace
    with output_lock(out):  # one writer from the start: a second align to the same --out is refused now, not after its work
        _align_to(out, source_kb, target_kb, calibration, aligner, candidates, depth, bi_encoder, threshold, top_k, quiet, prefer_prefix)


def check_prefixes(prefixes: list[str]) -> None:
    """Refuse a ``--prefer-prefix`` that no CURIE could carry, before any work."""
    from medlink.align.sssom import PREFIX
    from medlink.errors import MedlinkError

    for prefix in prefixes:
        if not PREFIX.fullmatch(prefix):
            raise MedlinkError(
                f"--prefer-prefix {prefix!r} is no CURIE prefix: a letter or '_', then letters, digits, '_' or '.' (MESH, OMIM)"
            )


def _align_to(
    out: Path,
    source_kb,
    target_kb,
    calibration,
    aligner: Path | None,
    candidates: int,
    depth: int | None,
    bi_encoder: str | None,
    threshold: float | None,
    top_k: int,
    quiet: bool,
    prefer_prefix: list[str],
) -> None:
    from medlink.align.aligner import LEXICAL_THRESHOLD, AlignOptions, align, mappings, write_mappings

    reads = calibration is not None and "cross" in calibration.inputs()
    if depth is not None and not reads:
        typer.echo(
            "warning: --depth does nothing here: it sets how many candidates an aligner's cross-encoder reads, and "
            + ("this aligner has none" if calibration is not None else "no --aligner was given"),
            err=True,
        )
    elif depth is not None and depth > calibration.depth:
        typer.echo(
            f"note: --depth {depth}: this aligner was trained and calibrated reading {calibration.depth} candidates per source; "
            "more was not measured",
            err=True,
        )
    ranking = align(
        source_kb, target_kb, AlignOptions(k=candidates, aligner=aligner, depth=depth, bi_encoder=bi_encoder), progress=not quiet
    )
    method = ranking.method + (f", depth {depth or calibration.depth}" if reads else "")  # which files came from which reading
    claims = calibration.threshold if calibration is not None else LEXICAL_THRESHOLD  # where a first target is an exactMatch
    threshold = claims if threshold is None else threshold
    rows = mappings(ranking, threshold, top_k, exact_at=claims)
    comment = f"medlink align ({method}); threshold {threshold:g}; top-k {top_k}" + (
        f"; ids preferred in {', '.join(prefer_prefix)}" if prefer_prefix else ""
    )
    write_mappings(out, rows, source_kb, target_kb, {"comment": comment}, prefer_prefix)
    found = len({r.subject_id for r in rows if r.object_id != "sssom:NoTermFound"})
    typer.echo(
        f"wrote {out}: {found:,} of {len(ranking.candidates.queries.concept_ids):,} source concepts mapped "
        f"({method}, confidence >= {threshold:g}), {len(rows):,} rows"
    )


def train_aligner_command(
    source: str = typer.Option(..., "--source", help="KB file the mappings go from."),
    target: str = typer.Option(..., "--target", help="KB file the mappings go to."),
    gold: Path = typer.Option(..., "--gold", help="Known mappings: an SSSOM TSV, or a TSV of subject id and object id."),
    out: Path = typer.Option(..., "--out", help="Aligner folder to write (cross-encoder + medlink_aligner.json)."),
    dev_mappings: Path | None = typer.Option(
        None,
        "--dev",
        help="Held-out known mappings (same formats as --gold, not the same "
        "file) that fit the calibration and threshold; default: 20% of --gold's source concepts, "
        "seeded, never trained on.",
    ),
    model: Path | None = typer.Option(None, "--model", help="Base model folder (default: packaged all-MiniLM-L6-v2, new score head)."),
    epochs: int = typer.Option(2, "--epochs", min=1, help="Passes over the gold source concepts."),
    batch_size: int = typer.Option(
        8, "--batch-size", min=1, help="Source concepts per step (each: its gold pair and --negatives wrong ones)."
    ),
    negatives: int = typer.Option(3, "--negatives", min=1, help="Wrong candidates per gold pair, drawn from the first --depth."),
    depth: int = typer.Option(8, "--depth", min=2, help="Candidates per source the negatives come from and the aligner reads."),
    learning_rate: float = typer.Option(1e-4, "--lr", help="Peak learning rate (AdamW, linear warm-up and decay)."),
    max_length: int = typer.Option(48, "--max-length", min=8, help="Word pieces of a (source names, target names) pair."),
    max_steps: int | None = typer.Option(None, "--max-steps-per-epoch", min=1, help="Cap the steps of each epoch (quick trials)."),
    seed: int = typer.Option(13, "--seed", help="Random seed (split, sampling, initialisation)."),
    no_cross_encoder: bool = typer.Option(
        False,
        "--no-cross-encoder",
        help="Fit only the calibration over lexical and hierarchy "
        "evidence (seconds; no model): --gold fits it, --dev chooses the threshold.",
    ),
    bi_encoder: str | None = typer.Option(
        None,
        "--bi-encoder",
        help="Also weigh a bi-encoder's similarity between source aliases "
        "and target names: 'packaged' (the MiniLM of the dense extra), a model folder, or "
        "'none'. Default: packaged when a cross-encoder is trained (it needs the dense "
        "extra anyway), none with --no-cross-encoder.",
    ),
    dense_candidates: bool | None = typer.Option(
        None,
        "--dense-candidates/--no-dense-candidates",
        help="With --bi-encoder: the "
        "target names nearest to a source alias join the candidates (one pass over the "
        "target's names; the default).",
    ),
    calibration_model: str = typer.Option(
        "auto",
        "--calibration",
        help="What turns the evidence into a confidence: 'trees' "
        "(gradient-boosted trees: the evidence may interact), 'logistic', or 'auto': both fitted, "
        "the one that ranks the known mappings better out of fold kept (a tie, or fewer than 20 known sources: logistic).",
    ),
    loss: str = typer.Option(
        "binary",
        "--loss",
        metavar="binary|listwise",
        help="'binary': each (source, target) pair judged right or wrong, as WikiUMLS "
        "trains its reranker; 'listwise': a softmax over each source's gold target and its negatives (a "
        "stronger reranker alone, no better once calibrated on DO -> ICD-10-CM: docs/benchmark-history.md).",
    ),
    target_synonyms: int = typer.Option(
        0,
        "--target-synonyms",
        min=0,
        help="Also train on up to N of the target's own "
        "synonyms as queries (a seeded sample; each against its concept, its own name hidden): "
        "pairs from the terminology itself beside the known mappings.",
    ),
    substitutions: bool = typer.Option(
        True,
        "--substitutions/--no-substitutions",
        help="Learn from the mappings trained on how the "
        "source's words read in the target ('cancer' -> 'malignant neoplasm': traded in at least 3 "
        "of them, and by at least a fifth of those whose names use the word); every source name "
        "holding such a word is also searched with the phrase in its place, in training and by "
        "'medlink align'. Kept, and editable, in OUT/medlink_aligner.json.",
    ),
    hierarchy_negatives: bool = typer.Option(
        False,
        "--hierarchy-negatives/--no-hierarchy-negatives",
        help="Also teach the "
        "cross-encoder that a known target's parent or child is wrong. Off by default: "
        "known mappings often name a category the target has since split, whose child "
        "carries the source's name.",
    ),
    layers: int | None = typer.Option(
        None,
        "--layers",
        min=1,
        help="Keep only the base model's first N transformer layers: a "
        "faster aligner for CPUs without fast bf16 (MiniLM has 6; with 3, DO -> ICD-10-CM "
        "scored as well on an AVX2-only AMD EPYC: docs/training-recipes.md). Default: all.",
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue from OUT/checkpoint after an interruption."),
    precision: str | None = typer.Option(None, "--precision", help=PRECISION_HELP),
    quiet: bool = quiet_option(),
) -> None:
    """Train an aligner on known mappings: a cross-encoder reading them against the candidates' top wrong targets
    (binary loss, or listwise), then a calibration of all the evidence; --no-cross-encoder: the calibration alone (seconds)."""
    quiet_phases(quiet)
    from medlink.align.dense import PACKAGED, bi_encoder_setting

    if bi_encoder is None and not no_cross_encoder:  # the defaults are the recipe measured best (docs/training-recipes.md)
        bi_encoder = PACKAGED
    bi_encoder = None if bi_encoder is None or bi_encoder.lower() == "none" else bi_encoder_setting(bi_encoder)
    if not no_cross_encoder or bi_encoder is not None:
        from medlink.encoders.transformer import require_dense_extra

        require_dense_extra()
    from medlink.align.inputs import open_pair
    from medlink.align.scoring import ALIGNER_FILE
    from medlink.align.sssom import read_gold
    from medlink.align.training import AlignerTrainConfig, train_aligner
    from medlink.training.run import check_training_output

    config = AlignerTrainConfig(
        epochs=epochs,
        batch_size=batch_size,
        negatives=negatives,
        depth=depth,
        learning_rate=learning_rate,
        max_length=max_length,
        seed=seed,
        precision=precision or os.environ.get("MEDLINK_PRECISION") or "auto",
        max_steps=max_steps,
        cross_encoder=not no_cross_encoder,
        bi_encoder=bi_encoder,
        dense_candidates=bi_encoder is not None and dense_candidates is not False,
        calibration=calibration_model,
        loss=loss,
        target_synonyms=target_synonyms,
        substitutions=substitutions,
        hierarchy_negatives=hierarchy_negatives,
        layers=layers,
    )
    if dense_candidates is not None and bi_encoder is None:
        typer.echo("warning: --dense-candidates / --no-dense-candidates do nothing without --bi-encoder", err=True)
    unused = [
        name
        for name, given in (
            ("--loss", loss != "binary"),
            ("--target-synonyms", target_synonyms),
            ("--hierarchy-negatives", hierarchy_negatives),
            ("--layers", layers),
        )
        if given
    ]
    if no_cross_encoder and unused:
        typer.echo(
            f"warning: {', '.join(unused)} train{'s' if len(unused) == 1 else ''} the cross-encoder: with --no-cross-encoder "
            f"{'it does' if len(unused) == 1 else 'they do'} nothing",
            err=True,
        )
    use_precision(config.precision)
    check_training_output(out, {"--model": model, "--bi-encoder": bi_encoder})
    source_kb, target_kb = open_pair(source, target)
    known = read_gold(gold, source_kb, target_kb)
    from medlink.errors import MedlinkError

    if dev_mappings is not None and dev_mappings.resolve() == gold.resolve():
        raise MedlinkError(f"--dev {dev_mappings} is the --gold file: held-out mappings must not be the ones trained on")
    held = read_gold(dev_mappings, source_kb, target_kb) if dev_mappings else None
    report, calibration = train_aligner(
        source_kb, target_kb, known, out, dev=held, base_model=model, config=config, resume=resume, progress=not quiet
    )
    note = calibration.fitted_on.get("threshold_note")
    if note:
        typer.echo(f"warning: {note}; give --dev with more known mappings to choose it", err=True)
    fitted = {} if note else calibration.fitted_on.get("threshold_mapping", {})
    learned = calibration.substitutions
    if learned:
        typer.echo(
            f"{len(learned)} substitution(s) learned from the known mappings: "
            + ", ".join(f"{word} -> {phrase}" for word, phrase in list(learned.items())[:8])
            + (f" ... (all in {out / ALIGNER_FILE})" if len(learned) > 8 else "")
        )
    elif substitutions:
        from medlink.align.substitutions import MIN_COUNT, MIN_SHARE

        typer.echo(
            "no substitution learned: no source word is traded for the same target words often enough (in "
            f"{MIN_COUNT} known mappings and {MIN_SHARE:.0%} of those whose names use it)"
        )
    typer.echo(
        f"wrote {out}" + (f" in {report.seconds / 60:.1f} min" if report else "") + f"; calibration {calibration.model} "
        f"({calibration.fitted_on.get('model_choice', {}).get('why', 'fixed')}); threshold {calibration.threshold:.4f}"
        + (f" (dev mapping F1 {fitted['f1']:.4f})" if fitted else "")
        + (
            f"; {len(report.epochs)} epoch(s), last loss {report.epochs[-1]['loss']:.4f} (each epoch in {out / 'training.json'})"
            if report and report.epochs
            else ""
        )
        + (
            f"; {report.examples.get('target_synonyms', 0)} target synonyms trained on (of {target_synonyms} asked: the target's "
            "other names whose candidates hold a wrong target)"
            if report and target_synonyms
            else ""
        )
    )


def register_train(train_app: typer.Typer) -> None:
    train_app.command("aligner")(train_aligner_command)

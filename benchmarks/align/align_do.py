"""Aligning the Disease Ontology to ICD-10-CM 2026 or to MEDIC, gold from DO's own cross-references (hidden from the aligner).

    python benchmarks/align/align_do.py --target icd10cm [--workdir DIR] [--aligner DIR | --train] [--name align_do_icd10cm]

The aligner reads a DO KB built without a single xref (benchmarks/align/data.py); the gold is the DO terms whose
ICD10CM (or MESH / OMIM) xrefs name a concept of the target, split 60 / 20 / 20 by source term with seed 13. Rows:
the OAEI "Lt" string baseline (normalised label equality), medlink lexical (alias sets, BM25 + char n-gram TF-IDF
fused, ancestors of strong candidates), and medlink + the aligner cross-encoder (``--train``: trained here on the train
split, calibrated on dev; or a folder from ``medlink train aligner``; ``--read-depths``: also read at other depths,
as ``medlink align --depth`` does). Measures on dev and test: recall@1/4/64, MRR,
paper 003's normalised recall@1/4, and the OAEI precision / recall / F1 of each source's top mapping kept at the
confidence threshold chosen on dev (test chooses nothing). Time and peak RSS of this process per row.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._common.harness import command_line, publish, scratch  # noqa: E402
from benchmarks.align import data  # noqa: E402
from benchmarks.align.evaluation import evaluate_lists  # noqa: E402

from medlink.align.aligner import AlignOptions, align  # noqa: E402
from medlink.align.candidates import SourceQueries, TargetIndex, generate  # noqa: E402
from medlink.align.inputs import open_pair  # noqa: E402
from medlink.align.metrics import mapping_prf  # noqa: E402
from medlink.align.scoring import rank  # noqa: E402
from medlink.align.training import AlignerTrainConfig  # noqa: E402

PACKAGED_LAYERS = 6  # all-MiniLM-L6-v2's: a cross-encoder with fewer was cut (train aligner --layers)
RECIPE = AlignerTrainConfig()  # --train's defaults: medlink train aligner's (every recorded command spells them out)

TARGETS = {"icd10cm": data.icd10cm, "medic": data.medic}


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def evaluate(ranking, gold: dict, splits: dict, named=None) -> dict:
    """The ranking's measures per split; with ``named`` (``names_by_concept``), also how many R@1 errors put first a
    target named exactly as one of the source's names while no gold target is: where DO 2016's xrefs point at a code
    ICD-10-CM has since split (lymphocytic colitis -> K52.89, where the 2026 code set has K52.832 Lymphocytic colitis)."""
    out = evaluate_lists(ranking.ranked_ids(), ranking.top(), gold, splits)
    if named is not None:
        source_names, target_names = named
        ranked = ranking.ranked_ids()
        for split in ("dev", "test"):
            errors = [s for s in splits[split] if ranked.get(s) and ranked[s][0] not in gold[s]]
            exact = [s for s in errors if target_names.get(ranked[s][0], set()) & source_names.get(s, set())
                     and not any(target_names.get(g, set()) & source_names.get(s, set()) for g in gold[s])]
            out[split]["r1_errors"] = len(errors)
            out[split]["r1_errors_first_named_as_source_gold_not"] = len(exact)
    return out


def system_name(model, calibration, depth: int | None) -> str:
    """A trained aligner's row name: what reads the candidates (the cross-encoder, how deep, its layers when cut), the
    bi-encoder it weighs, the calibration kept."""
    if model is not None:
        layers = model.model.config.num_hidden_layers
        cut = f", {layers} layers" if layers < PACKAGED_LAYERS else ""
        name = f"medlink + aligner cross-encoder (top {depth} read{cut}) + calibration"
    else:
        name = "medlink calibrated (lexical + hierarchy evidence, fitted on train)"
    if calibration.bi_encoder:
        name += f" + {bi_encoder_label(calibration.bi_encoder)}" + (" (similarity and candidates)" if calibration.dense_candidates else "")
    return name + f" [{calibration.model}]"


def bi_encoder_label(setting: str) -> str:
    return "bi-encoder (" + ("packaged MiniLM" if setting == "packaged" else Path(setting).name) + ")"


def names_by_concept(source, target) -> tuple[dict, dict]:
    """Each concept's normalised names, source and target (by the target's normaliser)."""
    found = ({}, {})
    for side, kb in enumerate((source, target)):
        for concept_id, text, _ in kb.iter_names():
            found[side].setdefault(concept_id, set()).add(target.normalize(text))
    return found


def string_baseline(source, target, gold: dict, splits: dict) -> dict:
    """OAEI's "Lt": a mapping wherever a normalised label of the source equals one of the target (all labels both sides)."""
    by_name: dict[str, set[str]] = {}
    for concept_id, text, _ in target.iter_names():
        by_name.setdefault(target.normalize(text), set()).add(concept_id)
    found: dict[str, set[str]] = {}
    for concept_id, text, _ in source.iter_names():
        found.setdefault(concept_id, set()).update(by_name.get(target.normalize(text), ()))
    out = {}
    for split in ("dev", "test"):
        g = {s: gold[s] for s in splits[split]}
        out[split] = {"mapping": {k: round(v, 4) for k, v in mapping_prf({s: sorted(found.get(s, ())) for s in g}, g).items()}}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", choices=sorted(TARGETS), default="icd10cm")
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-align-bench"))
    parser.add_argument("--aligner", type=Path, help="a 'medlink train aligner' folder (trained on the train split)")
    parser.add_argument("--train", action="store_true", help="train the aligner here on the train split (dev: calibration)")
    parser.add_argument("--epochs", type=int, default=RECIPE.epochs)
    parser.add_argument("--max-steps", type=int, default=None, help="cap training steps (smoke runs)")
    parser.add_argument("--negatives", type=int, default=RECIPE.negatives)
    parser.add_argument("--depth", type=int, default=RECIPE.depth)
    parser.add_argument("--max-length", type=int, default=RECIPE.max_length)
    parser.add_argument("--calibrated", action="store_true", help="fit the calibration-only aligner on the train split")
    parser.add_argument("--bi-encoder", help="'packaged' or a bi-encoder folder: --calibrated and --train aligners also weigh its "
                        "similarities (rows named '+ bi-encoder')")
    parser.add_argument("--calibration", default="auto", help="comma-separated calibration models to compare: auto, trees, logistic")
    parser.add_argument("--lr", type=float, default=RECIPE.learning_rate)
    parser.add_argument("--target-synonyms", type=int, default=0, help="--train aligners also train on this many target synonyms")
    parser.add_argument("--loss", default="binary", choices=["binary", "listwise"])
    parser.add_argument("--only-bi-encoder", action="store_true", help="train only the aligners with --bi-encoder (trials)")
    parser.add_argument("--seed", type=int, default=13, help="the aligners' training seed (the split's stays 13)")
    parser.add_argument("--seeds", help="comma-separated training seeds (e.g. 13,14,15): each trained aligner once per seed, "
                        "results as per-seed figures and their medians (name align_seeds_<target>), not the table's rows")
    parser.add_argument("--layers", type=int, help="--train aligners keep only the base model's first N layers (a faster aligner)")
    parser.add_argument("--read-depths", default="", help="comma-separated: each cross-encoder aligner also read at these depths "
                        "(medlink align --depth: fewer candidates read, a faster alignment), one row each")
    parser.add_argument("--model", type=Path, help="the cross-encoder's base model folder (default: the packaged MiniLM)")
    parser.add_argument("--no-substitutions", action="store_true", help="aligners without the substitutions learned from train")
    parser.add_argument("--hierarchy-negatives", action="store_true", help="--train aligners also learn a gold target's parent / child as wrong")
    parser.add_argument("--keep-qualifiers", action="store_true", help="the bi-encoder reads target names with their episode-of-care "
                        "qualifier (as aligners did before session 31; align.dense.QUALIFIERS)")
    parser.add_argument("--peers", action="store_true", help="add text2term (pip install text2term) on the same split")
    parser.add_argument("--name", default=None)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    source_path, target_path = data.do_without_xrefs(args.workdir), TARGETS[args.target](args.workdir)
    source, target = open_pair(source_path, target_path)
    gold = data.gold(args.workdir, args.target, target.path)
    splits = data.split(gold)
    rows = []

    started = time.perf_counter()
    rows.append({"system": "Lt (normalised label equality, OAEI)", **string_baseline(source, target, gold, splits),
                 "seconds": round(time.perf_counter() - started, 1), "peak_rss_mb": round(peak_mb())})

    started = time.perf_counter()
    target_index = TargetIndex.build(target)
    index_seconds = time.perf_counter() - started
    lexical = align(source, target, AlignOptions(), progress=False, target_index=target_index)
    named = names_by_concept(source, target)
    rows.append({"system": "medlink lexical (BM25 + char TF-IDF, alias sets, ancestors)", **evaluate(lexical, gold, splits, named),
                 "seconds": round(time.perf_counter() - started, 1), "index_seconds": round(index_seconds, 1), "peak_rss_mb": round(peak_mb()),
                 "source_concepts": len(lexical.candidates.queries.concept_ids)})

    if args.peers:
        from benchmarks.align.peers import evaluate_ranking, text2term_ranking

        started = time.perf_counter()
        ranked = text2term_ranking(source, target, sorted(set(splits["dev"]) | set(splits["test"])))
        rows.append({"system": "text2term 4.6 TF-IDF mapper (preferred name)", **evaluate_ranking(ranked, gold, splits),
                     "seconds": round(time.perf_counter() - started, 1), "peak_rss_mb": round(peak_mb())})

    from medlink.align.aligner import load_aligner, score_candidates, target_index_for
    from medlink.align.training import train_aligner

    wanted = sorted(set(splits["dev"]) | set(splits["test"]))
    queries = SourceQueries.from_kb(source, target.normalize)
    position = {c: i for i, c in enumerate(queries.concept_ids)}
    subset = queries.subset([position[s] for s in wanted])
    folders = []
    gold_train, gold_dev = {s: gold[s] for s in splits["train"]}, {s: gold[s] for s in splits["dev"]}
    models = [m.strip() for m in args.calibration.split(",") if m.strip()]
    seeds = [int(seed) for seed in args.seeds.split(",")] if args.seeds else [args.seed]
    for seed, bi_encoder, model_kind in ((seed, bi_encoder, model_kind) for seed in seeds
                                         for bi_encoder in [*([] if args.only_bi_encoder else [None]), *([args.bi_encoder] if args.bi_encoder else [])]
                                         for model_kind in models):  # each aligner without, then with the bi-encoder
        suffix = ("-dense" if bi_encoder else "") + f"-{model_kind}" + (f"-s{seed}" if len(seeds) > 1 else "")
        common = {"bi_encoder": bi_encoder, "calibration": model_kind, "seed": seed, "substitutions": not args.no_substitutions,
                  **({"dense_strip": None} if args.keep_qualifiers else {})}
        if args.calibrated:  # the calibration alone, fitted on the train split (seconds)
            folder = args.workdir / f"aligner-{args.target}-calibrated{suffix}"
            started = time.perf_counter()
            train_aligner(source, target, gold_train, folder, dev=gold_dev, config=AlignerTrainConfig(cross_encoder=False, **common),
                          progress=False)
            folders.append((folder, {"seconds": round(time.perf_counter() - started, 1), "seed": seed}))
        if args.train:
            folder = args.workdir / (f"aligner-{args.target}{suffix}" + (f"-l{args.layers}" if args.layers else ""))
            started = time.perf_counter()
            config = AlignerTrainConfig(epochs=args.epochs, max_steps=args.max_steps, negatives=args.negatives, depth=args.depth,
                                        max_length=args.max_length, learning_rate=args.lr, target_synonyms=args.target_synonyms, loss=args.loss,
                                        hierarchy_negatives=args.hierarchy_negatives, layers=args.layers, **common)
            report, calibration = train_aligner(source, target, gold_train, folder, dev=gold_dev, config=config, progress=True,
                                                base_model=args.model)
            folders.append((folder, {"seconds": round(time.perf_counter() - started, 1), "epochs": report.epochs, "config": report.config,
                                     "precision": report.precision, "seed": seed}))
    if args.aligner is not None and not args.train:
        folders.append((args.aligner, None))
    dense_indexes = {}  # one target index with a bi-encoder's candidates per bi-encoder and qualifier setting
    for folder, training in folders:
        model, calibration = load_aligner(folder)
        started = time.perf_counter()
        dense_key = (calibration.bi_encoder, calibration.dense_strip)
        if calibration.dense_candidates and dense_key not in dense_indexes:
            dense_indexes[dense_key] = target_index_for(target, calibration)
            fused = rank(generate(dense_indexes[dense_key], subset))
            rows.append({"system": f"medlink lexical + {bi_encoder_label(calibration.bi_encoder)} candidates (fused, no calibration)",
                         **evaluate(fused, gold, splits, named), "seconds": round(time.perf_counter() - started, 1),
                         "source_concepts": len(wanted), "peak_rss_mb": round(peak_mb())})
            started = time.perf_counter()
        index = dense_indexes[dense_key] if calibration.dense_candidates else target_index
        candidates = generate(index, calibration.queries(subset, target.normalize))
        generated = time.perf_counter() - started
        depths = [calibration.depth, *(int(d) for d in args.read_depths.split(",") if d.strip())] if model is not None else [None]
        for depth in depths:  # each row's time: the candidates, then its own scoring
            started = time.perf_counter()
            ranking = score_candidates(candidates, model, calibration, depth, progress=True)
            seconds = generated + time.perf_counter() - started
            rows.append({"system": system_name(model, calibration, depth), **evaluate(ranking, gold, splits, named),
                         "seconds": round(seconds, 1), "source_concepts": len(wanted), "peak_rss_mb": round(peak_mb()),
                         "training": training if depth == depths[0] else None, "read_depth": depth, "dense_strip": calibration.dense_strip,
                         "aligner_seed": (training or {}).get("seed"),  # every depth's row: training is the folder's
                         "calibration": {"model": calibration.model, "weights": calibration.weights, "bias": calibration.bias,
                                         "threshold": calibration.threshold, "choice": calibration.fitted_on.get("model_choice")}})
    for row in rows:
        print(row["system"], {s: row[s].get("mapping") for s in ("dev", "test")}, {k: row["test"].get(k) for k in ("recall@1", "recall@64")})
    payload = {"alignment": {"source": "Disease Ontology 2016-09-01 (xrefs removed)", "target": args.target, "gold_sources": len(gold),
                             "split": {k: len(v) for k, v in splits.items()}, "seed": 13, "aligner_seed": seeds[0] if len(seeds) == 1 else seeds,
                             "substitutions": not args.no_substitutions, "hierarchy_negatives": args.hierarchy_negatives},
               "command": command_line(__file__, sys.argv[1:])}
    if len(seeds) > 1:  # a kind of its own: the table keeps the single-seed rows; this says how far a seed moves them
        publish(args.name or f"align_seeds_{args.target}", {**payload, "alignment_seeds": seed_medians(rows), "seed_rows": rows})
    else:
        publish(args.name or f"align_do_{args.target}", {**payload, "alignment_rows": rows})


def seed_medians(rows: list[dict]) -> list[dict]:
    """Per system trained under several seeds (each depth it was read at its own system): each seed's test R@1, mapping
    F1 and dev out-of-fold top-1 (the kept calibration's), and their medians."""
    import statistics

    by_system: dict[str, list[dict]] = {}
    for row in rows:
        if row.get("aligner_seed") is None:
            continue
        choice = (row.get("calibration") or {}).get("choice") or {}
        by_system.setdefault(row["system"], []).append({
            "seed": row["aligner_seed"], "test_recall@1": row["test"].get("recall@1"), "test_mapping_f1": row["test"].get("mapping", {}).get("f1"),
            "dev_out_of_fold_top1": choice.get(f"{choice.get('kept')} out-of-fold top-1")})
    return [{"system": system, "per_seed": runs,
             "median": {key: statistics.median(r[key] for r in runs) for key in ("test_recall@1", "test_mapping_f1", "dev_out_of_fold_top1")
                        if all(r[key] is not None for r in runs)}}
            for system, runs in by_system.items() if len(runs) > 1]


if __name__ == "__main__":
    main()

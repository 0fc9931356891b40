"""Calibrated probabilities, NIL and backoff on NCBI Disease and AskAPatient fold 0.

    python benchmarks/calibration/calibration_nil.py [--datasets ncbi,aap] [--prune 0.15] [--seed 0] [--cross-fit 5]

Per dataset, with the lexical config of benchmarks/configs/ (KB + mention memory of the train split):
1. **Full KB** (ECE): the index's first-candidate probabilities on test, from (a) a naive mapping of the fused score
   (score / the most it can be), (b) the model fitted at build on pseudo-mentions held out of the KB, (c) the model
   'medlink tune --calibrate' fits on dev, (d) the same fitted on dev + the memory's own mentions cross-fitted
   ('--cross-fit K': each fold of the train mentions linked by an index without it; dev still sets the NIL
   threshold), (e) the memory's mentions cross-fitted alone, no dev ('medlink index build --calibrate memory');
   ECE and a reliability diagram (PNG beside the JSON); Acc@1 and MRR of the ranking without the stage, with it
   (order and backoff chosen on dev), and with backoff forced off.
2. **Pruned KB** (NIL, BLINKout style): a seeded share of the gold concepts of dev + test leaves the KB with all its
   names (their training mentions leave the memory), so their mentions are NIL; the stage is fitted on dev (NIL
   threshold for the best NIL F1) and scored on test: NIL P / R / F1, in-KB Acc@1 (against the full-KB index on the
   same mentions), and paper 001's Accuracy and MRR over all mentions and over in-KB ones; with (d)'s fit too; then
   the dev-fitted NIL figures again for other pruning seeds (``--nil-seeds``), and their medians.
Every choice is made on dev (NCBI dev, AskAPatient fold-0 validation); test is only scored.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._common.data import AAP, NCBI, aap_split, ncbi_split, require  # noqa: E402
from benchmarks._common.harness import RESULTS, ROOT, command_line, publish  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.eval.calibration import expected_calibration_error, reliability, reliability_diagram  # noqa: E402
from medlink.eval.intervals import calibration_error, interval, rounded  # noqa: E402
from medlink.eval.harness import first_candidate_points  # noqa: E402
from medlink.eval.metrics import candidate_matches, compute_metrics, equivalent_ids_from_kb, part_rank  # noqa: E402
from medlink.eval.nil import nil_metrics, nil_outcome  # noqa: E402
from medlink.kb.build import build_kb  # noqa: E402
from medlink.kb.store import KB  # noqa: E402
from medlink.linking.calibration import TYPE, CalibrationStage  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.cross_fit import fit_on_memory  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402
from medlink.linking.index import build_index  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.tuning import tune  # noqa: E402

CONFIGS = ROOT / "benchmarks" / "configs"
CROSS_FIT = "dev + memory cross-fitted"  # 'medlink tune --cross-fit': the memory's own mentions as extra fitting data
MEMORY_ALONE = "memory cross-fitted, no dev"  # 'medlink index build --calibrate memory'


def config_for(spec: dict, dense_weight: float) -> LinkerConfig:
    """The dataset's lexical config, plus the packaged MiniLM at ``dense_weight`` in the fusion when it is above 0."""
    config = json.loads(Path(spec["config"]).read_text())
    if dense_weight > 0:
        config["generators"].append({"name": "dense", "type": "dense", "names": "kb+memory"})
        config["fusion"]["weights"]["dense"] = dense_weight
    return LinkerConfig.from_dict(config)


def datasets(fold: int = 0) -> dict:
    return {
        "ncbi": {"name": "NCBI Disease", "kb_file": require(NCBI / "train_dictionary.txt"), "kb_format": "biosyn", "config": CONFIGS / "ncbi_lexical.json",
                 "train": ncbi_split("train"), "dev": ncbi_split("dev"), "test": ncbi_split("test")},
        "aap": {"name": "AskAPatient", "kb_file": require(AAP / "askapatient_ontology.json"), "kb_format": "askapatient",
                "config": CONFIGS / "askapatient_lexical.json", "train": aap_split(fold, "train"), "dev": aap_split(fold, "validation"),
                "test": aap_split(fold, "test")},
    }


def pruned_kb_file(spec: dict, removed: set[str], out: Path) -> Path:
    """The KB source file without the removed concepts (any id of an entry removed drops the entry)."""
    if spec["kb_format"] == "biosyn":
        lines = [line for line in spec["kb_file"].read_text(encoding="utf-8").splitlines()
                 if not set(line.split("||", 1)[0].split("|")) & removed]
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        data = json.loads(spec["kb_file"].read_text(encoding="utf-8"))
        out.write_text(json.dumps({cid: names for cid, names in data.items() if cid not in removed}), encoding="utf-8")
    return out


def parts_of(linker: Linker, mentions, k: int = 64):
    """Link every part of every mention: (mention, part result) pairs, in order."""
    texts = [part for m in mentions for part in m.parts]
    results = linker.link(texts, k=k)
    owners = [m for m in mentions for _ in m.parts]
    return list(zip(owners, results))


def naive_probability(linker: Linker, score: float) -> float:
    """The fused score over the most it can be: what a user thresholding raw scores would read as a probability."""
    fusion = linker.config.fusion
    weights = [fusion.weights.get(name, 1.0) for name in linker.generators]
    most = sum(w / (fusion.rrf_k + 1) for w in weights) if fusion.method == "rrf" else sum(weights)
    return min(1.0, max(0.0, score / most)) if most else 0.0


def first_candidates(pairs, mentions, equivalent, probability_of=None):
    """(probability, right) of each part's first candidate; ``probability_of`` maps a score to the probability a user
    thresholding raw scores would read (the stage's own probability otherwise)."""
    rankings = [[c.copy(probability=probability_of(c.score)) for c in r.candidates[:1]] if probability_of else r.candidates for _, r in pairs]
    return first_candidate_points(rankings, mentions, equivalent)


def ranking_figures(pairs, equivalent) -> dict:
    """Acc@1 and MRR over the parts, each part ranked by ``part_rank`` (the evaluation's own rule)."""
    figures = compute_metrics([part_rank(r.candidates, m.gold, equivalent) for m, r in pairs], (1,)).to_dict((1,), ())
    return {"parts": figures["n"], "acc@1": figures["acc@1"], "mrr": figures["mrr"]}


def calibration_figures(label: str, rows, documents=None) -> dict:
    """ECE and bins of (probability, right) rows; with ``documents`` (each row's), the ECE's 95% interval, documents resampled."""
    p = [r[0] for r in rows]
    y = [r[1] for r in rows]
    out = {"model": label, "ece": expected_calibration_error(p, y), "n": len(rows), "bins": reliability(p, y)}
    if documents is not None and len(documents) == len(rows) and rows:
        out["ece_interval"] = rounded(interval(calibration_error(p, y), documents))
    return out


def with_stage(linker: Linker, settings: dict | None) -> Linker:
    linker.rerankers = [r for r in linker.rerankers if r.type != TYPE] + ([CalibrationStage(settings, linker.normalize)] if settings else [])
    return linker


def full_kb(key: str, spec: dict, workdir: Path, dense_weight: float = 0.0, section: str = "calibration_nil", cross_fit: int = 0) -> tuple[dict, dict]:
    build_kb(workdir / f"{key}.sqlite", [f"{spec['kb_format']}:{spec['kb_file']}"], progress=False)
    kb = KB.open(workdir / f"{key}.sqlite")
    equivalent = equivalent_ids_from_kb(kb)
    config = config_for(spec, dense_weight)
    started = time.perf_counter()
    build_index(kb, workdir / f"{key}-index-plain", config, [spec["train"]], calibrate="none")  # what the fit adds, measured in the same run
    plain_seconds = time.perf_counter() - started
    started = time.perf_counter()
    linker = build_index(kb, workdir / f"{key}-index", config, [spec["train"]], calibrate="kb")
    build_seconds = time.perf_counter() - started
    pseudo = next((dict(r.settings) for r in linker.rerankers if r.type == TYPE), None)
    dev, test = load_dataset(spec["dev"]), load_dataset(spec["test"])
    started = time.perf_counter()
    chosen, report = tune(linker, dev, ["calibration"], equivalent, spec["dev"], calibration={"backoff": True})
    tune_seconds = time.perf_counter() - started
    dev_fit = chosen.rerankers[-1]
    no_backoff = {**dev_fit, "backoff_below": None}
    same_order = {**dev_fit, "backoff_below": None, "order": "score"}
    rows, curves, rankings = [], {}, {}
    bare = parts_of(with_stage(linker, None), test)
    documents = [m.doc_id for m, _ in bare]  # every part's abstract (None: AskAPatient's mentions stand alone)
    naive = first_candidates(bare, test, equivalent, lambda s: naive_probability(linker, s))
    rows.append(calibration_figures("naive: fused score / its maximum", naive, documents))
    curves["naive score"] = ([r[0] for r in naive], [r[1] for r in naive])
    rankings["no calibration stage"] = ranking_figures(bare, equivalent)
    fitted = [("pseudo-mentions from the KB", pseudo), ("dev", dev_fit)]
    if cross_fit:
        fitted.append((MEMORY_ALONE, fit_on_memory(kb, config, memory_from_datasets(kb, [spec["train"]]), cross_fit)[0]))
        started = time.perf_counter()
        crossed, crossed_report = tune(linker, dev, ["calibration"], equivalent, spec["dev"], calibration={"backoff": True, "cross_fit": cross_fit}, kb=kb)
        cross_seconds = time.perf_counter() - started
        fitted.append((CROSS_FIT, crossed.rerankers[-1]))
    for label, settings in fitted:
        if settings is None:
            rows.append({"model": label, "ece": None, "n": 0, "note": "no model: the KB has too few synonyms to draw pseudo-mentions from"})
            continue
        pairs = parts_of(with_stage(linker, settings), test)
        top = first_candidates(pairs, test, equivalent)
        rows.append(calibration_figures(label, top, documents))
        if label in (MEMORY_ALONE, "pseudo-mentions from the KB"):  # fitted without dev: dev is a held-out set for them too
            rows[-1]["dev_ece"] = calibration_figures(label, first_candidates(parts_of(with_stage(linker, settings), dev), dev, equivalent))["ece"]
        curves[label] = ([r[0] for r in top], [r[1] for r in top])
        if label == "dev":
            rankings[f"dev-fitted stage (order {settings['order']}, backoff below {settings['backoff_below']})"] = ranking_figures(pairs, equivalent)
        if label == CROSS_FIT:
            rankings[f"{CROSS_FIT} (order {settings['order']}, backoff below {settings['backoff_below']})"] = ranking_figures(pairs, equivalent)
    rankings["dev-fitted stage, backoff off"] = ranking_figures(parts_of(with_stage(linker, no_backoff), test), equivalent)
    rankings["dev-fitted stage, backoff off, fused order"] = ranking_figures(parts_of(with_stage(linker, same_order), test), equivalent)
    png = reliability_diagram(curves, RESULTS / f"{section}_{key}.png", f"{spec['name']} test: first candidates")
    summary = {"dataset": spec["name"], "dev": spec["dev"], "test": spec["test"], "build_seconds": build_seconds, "build_seconds_without_probabilities": plain_seconds, "tune_seconds": tune_seconds,
               "calibration": rows, "rankings": rankings, "dev_choice": report.calibration, "diagram": str(png.relative_to(ROOT))}
    if cross_fit:
        summary |= {"cross_fit": cross_fit, "cross_fit_choice": crossed_report.calibration, "cross_fit_seconds": cross_seconds}
    return summary, {"linker": linker, "equivalent": equivalent, "kb": kb}


def pruned(key: str, spec: dict, workdir: Path, share: float, seed: int, full: dict, dense_weight: float = 0.0, cross_fit: int = 0) -> dict:
    dev, test = load_dataset(spec["dev"]), load_dataset(spec["test"])
    kb_full = full["kb"]
    gold = sorted({kb_full.resolve(g) for m in dev + test for g in m.gold if kb_full.resolve(g)})
    removed_concepts = set(random.Random(seed).sample(gold, int(round(len(gold) * share))))
    removed = set(removed_concepts)
    for concept in removed_concepts:
        removed |= set(full["equivalent"].get(concept, ()))
    source = pruned_kb_file(spec, removed, workdir / f"{key}-pruned-source{spec['kb_file'].suffix}")
    kb_path = workdir / f"{key}-pruned.sqlite"
    build_kb(kb_path, [f"{spec['kb_format']}:{source}"], progress=False)
    kb = KB.open(kb_path)
    equivalent = equivalent_ids_from_kb(kb)
    linker = build_index(kb, workdir / f"{key}-pruned-index", config_for(spec, dense_weight), [spec["train"]], calibrate="none")
    # the same in-KB mentions under the full KB's index, no NIL stage: what pruning + NIL may cost them
    in_kb_mentions = [m for m in test if any(kb.resolve(g) for g in m.gold)]
    baseline = ranking_figures(parts_of(with_stage(full["linker"], None), in_kb_mentions), full["equivalent"])
    out = {"dataset": spec["name"], "removed_concepts": len(removed_concepts), "gold_concepts": len(gold), "share": share, "seed": seed,
           "full_kb_in_kb_acc@1": baseline["acc@1"]}
    for folds in (0, cross_fit) if cross_fit else (0,):
        chosen, report = tune(linker, dev, ["calibration"], equivalent, spec["dev"], calibration={"backoff": True, "nil_target": "nil-f1", "cross_fit": folds}, kb=kb)
        settings = chosen.rerankers[-1]
        pairs = parts_of(with_stage(linker, settings), test)
        outcomes = []
        for mention, result in pairs:
            gold_nil = not any(kb.resolve(g) for g in mention.gold)
            right = [False if gold_nil else candidate_matches(c, mention.gold, equivalent) for c in result.candidates]
            outcomes.append(nil_outcome(result, gold_nil, right, settings["nil_threshold"]))
        figures = {"nil_threshold": settings["nil_threshold"], "order": settings["order"], "backoff_below": settings["backoff_below"],
                   "dev_choice": report.calibration, "test": nil_metrics(outcomes, clusters=[m.doc_id for m, _ in pairs])}
        out |= figures if not folds else {"cross_fit": figures | {"folds": folds}}
    return out


def seed_spread(key: str, spec: dict, workdir: Path, share: float, seeds: list[int], full: dict, dense_weight: float, first: dict) -> dict:
    """The dev-fitted NIL figures again for other pruning seeds (``first``: the table's seed, already run): which concepts
    leave the KB moves test NIL F1 more than its interval over abstracts shows (session 37: 0.52-0.68 over five seeds)."""
    def compact(seed: int, run: dict) -> dict:
        test = run["test"]
        return {"seed": seed, "nil_mentions": test["gold_nil"], "threshold": run["nil_threshold"], "nil_f1": test["nil_f1"],
                "nil_precision": test["nil_precision"], "nil_recall": test["nil_recall"], "nil_f1_if_first_wrong": test["nil_f1_if_first_wrong"],
                "in_kb_nil_cost": test["in_kb_acc@1"] - test["in_kb_linked_right"]}

    rows = [compact(first["seed"], first)] + [compact(seed, pruned(key, spec, workdir, share, seed, full, dense_weight)) for seed in seeds]
    median = {name: float(np.median([r[name] for r in rows])) for name in ("nil_f1", "in_kb_nil_cost", "nil_f1_if_first_wrong")}
    return {"seeds": rows, "median": median}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="ncbi,aap")
    parser.add_argument("--prune", type=float, default=0.15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--nil-seeds", default="1,2,3,4", help="more pruning seeds, dev-fitted NIL only, for the spread over which concepts "
                        "leave the KB (empty: none)")
    parser.add_argument("--dense-weight", type=float, default=0.0, help="add the packaged MiniLM to the fusion at this weight (0: lexical only)")
    parser.add_argument("--section", default="calibration_nil", help="results file name")
    parser.add_argument("--cross-fit", type=int, default=5, help="also fit the probabilities on the memory's mentions in this many folds "
                        "('medlink tune --cross-fit'), beside the dev-only fit in the same run (0: dev only)")
    args = parser.parse_args()
    specs = datasets()
    started = time.perf_counter()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for key in args.datasets.split(","):
            spec = specs[key]
            summary, full = full_kb(key, spec, Path(tmp), args.dense_weight, args.section, args.cross_fit)
            summary["nil"] = pruned(key, spec, Path(tmp), args.prune, args.seed, full, args.dense_weight, args.cross_fit)
            seeds = [int(seed) for seed in args.nil_seeds.split(",") if seed.strip() and int(seed) != args.seed]
            if seeds:
                summary["nil_seeds"] = seed_spread(key, spec, Path(tmp), args.prune, seeds, full, args.dense_weight, summary["nil"])
            summary["dense_weight"] = args.dense_weight
            runs.append(summary)
            print(json.dumps({k: v for k, v in summary.items() if k not in ("dev_choice",)}, default=str)[:3000], flush=True)
    publish(args.section, {"runs": runs, "seconds": time.perf_counter() - started,
                                "command": command_line(__file__, sys.argv[1:])})


if __name__ == "__main__":
    main()

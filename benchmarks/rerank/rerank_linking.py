"""Dense retrieval + cross-encoder reranking on NCBI Disease and AskAPatient (papers 002/003's reranker).

    python benchmarks/rerank/rerank_linking.py --dataset ncbi --model NAME=PATH [--model ...] --cross-encoder PATH
    python benchmarks/rerank/rerank_linking.py --dataset aap --model NAME=DIR/fold-{fold} --cross-encoder DIR/fold-{fold}

(A relative PATH is under $MEDLINK_BENCH_MODELS; ``{fold}`` names one model per AskAPatient fold,
trained on that fold's train file only.) Retrieval is the dense generators + tuned TF-IDF over KB
names + memory, fused; the cross-encoder then rescores the top candidates, score + weight x
cross-encoder score. The fusion weights (benchmarks/dense/dense_ensemble.py's grid) and the reranker's
(top, weight) are chosen together on dev: the best fusion alone is not the best one to rerank. Dev: NCBI dev (memory = train) or AskAPatient fold-0 validation
(memory = fold-0 train). Test: NCBI test (memory = traindev), AskAPatient every fold's test
(memory = the fold's train file; also train + validation, the AskAPatient counterpart of NCBI's
traindev). Nothing is tuned on test.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import aap_kb, aap_split, ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import command_line, model_spec, publish  # noqa: E402
from benchmarks.dense.dense_ensemble import ensemble_config, fused_rankings, weight_grid  # noqa: E402
from benchmarks.dense.dense_linking import CONFIGS, fold_model, score_rankings  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402
from medlink.rerank.cross_encoder import CrossEncoderReranker, combine  # noqa: E402

TOPS = (4, 8, 16)
WEIGHTS = (0.0, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1)


class Reranked:
    """One dataset's fused candidate lists and their cross-encoder scores, so every (top, weight) costs no model call."""

    def __init__(self, linker: Linker, reranker: CrossEncoderReranker, mentions, weights: dict[str, float], depth: int = max(TOPS)):
        self.mentions, self.fusion = mentions, weights
        self.rankings = [result.candidates for result in fused_rankings(linker, mentions, weights)]
        keys = [linker.normalize(p) for m in mentions for p in m.parts]
        started = time.perf_counter()
        self.scores = reranker.with_settings(top=depth).scores(keys, self.rankings)  # test: only the chosen top, so the time is what linking pays
        self.seconds = time.perf_counter() - started

    def ranked(self, top: int, weight: float):
        return combine(self.rankings, [s[:top] for s in self.scores], weight)

    def cross_only(self, top: int):
        """The cross-encoder's order alone over the top candidates (the ablation)."""
        return combine(self.rankings, [s[:top] * 1e6 for s in self.scores], 1.0)


def tune(linker: Linker, reranker: CrossEncoderReranker, dev, equivalent, models: list[str]) -> tuple[dict, int, float, list[dict]]:
    """Fusion weights, top and weight, jointly by grid search on dev."""
    trials = []
    for fusion in weight_grid(models):
        run = Reranked(linker, reranker, dev, fusion)
        for top in TOPS:
            for weight in WEIGHTS:
                trials.append({"fusion": fusion, "top": top, "weight": weight, **score_rankings(run.ranked(top, weight), dev, equivalent)})
        print("dev", fusion, f"best with the reranker {max(t['acc@1'] for t in trials if t['fusion'] == fusion):.4f}", flush=True)
    best = max(trials, key=lambda r: (r["acc@1"], r["mrr"], -r["weight"], -r["top"]))
    return best["fusion"], best["top"], best["weight"], trials


def retrieval_choice(trials: list[dict]) -> dict[str, float]:
    """The fusion dev picks for retrieval without the reranker (the ablation's fair baseline)."""
    return max((t for t in trials if t["weight"] == 0.0), key=lambda r: (r["acc@1"], r["mrr"]))["fusion"]


def variants(run: Reranked, linker: Linker, retrieval: dict[str, float], equivalent, top: int, weight: float) -> dict[str, dict]:
    return {f"retrieval alone (fusion {retrieval})": score_rankings(fused_rankings(linker, run.mentions, retrieval), run.mentions, equivalent),
            f"retrieval (fusion {run.fusion}) + cross-encoder (top {top}, weight {weight})": score_rankings(run.ranked(top, weight), run.mentions, equivalent),
            f"cross-encoder alone over the top {top}": score_rankings(run.cross_only(top), run.mentions, equivalent)}


def ncbi(models: dict, cross: str, text: str, workdir: Path) -> tuple[list[dict], dict]:
    kb = ncbi_kb(workdir, "train")
    equivalent = equivalent_ids_from_kb(kb)
    reranker = CrossEncoderReranker.build({"model": cross, "text": text})
    dev = load_dataset(ncbi_split("dev"))
    dev_linker = Linker.build(kb, ensemble_config(models), memory_from_datasets(kb, [ncbi_split("train")]))
    weights, top, weight, trials = tune(dev_linker, reranker, dev, equivalent, list(models))
    print(f"dev choice: fusion {weights}, cross-encoder top {top} weight {weight}", flush=True)
    test_linker = Linker.build(kb, ensemble_config(models), memory_from_datasets(kb, [ncbi_split("traindev")]))
    run = Reranked(test_linker, reranker, load_dataset(ncbi_split("test")), weights, top)
    rows = [{"dataset": "NCBI Disease", "split": "test", "setting": "train_dictionary + memory(traindev)", "variant": variant, **result}
            for variant, result in variants(run, test_linker, retrieval_choice(trials), equivalent, top, weight).items()]
    parts = sum(len(m.parts) for m in run.mentions)
    tuning = {"fusion": weights, "top": top, "weight": weight, "trials": trials,
              "cross_encoder_mentions_per_s": parts / run.seconds}
    return rows, tuning


def aap(models: dict, cross: str, text: str, workdir: Path, folds: int,
        carried: tuple[float, int, float] | None = None) -> tuple[list[dict], dict]:
    """``carried`` = (TF-IDF weight, top, weight) chosen earlier on fold-0 validation, for bi-encoders trained on validation
    too (nothing can be tuned on it then); the test memory is then the fold's train + validation files."""
    kb = aap_kb(workdir)
    equivalent = equivalent_ids_from_kb(kb)
    lexical = CONFIGS / "askapatient_lexical.json"

    def fold_parts(fold: int):
        return {name: fold_model(path, fold) for name, path in models.items()}, CrossEncoderReranker.build({"model": fold_model(cross, fold), "text": text})

    settings = [("ontology + memory(fold train)", ["train"]), ("ontology + memory(fold train + validation)", ["train", "validation"])]
    if carried is None:
        fold_models, reranker = fold_parts(0)
        dev = load_dataset(aap_split(0, "validation"))
        dev_linker = Linker.build(kb, ensemble_config(fold_models, lexical), memory_from_datasets(kb, [aap_split(0, "train")]))
        weights, top, weight, trials = tune(dev_linker, reranker, dev, equivalent, list(models))
        retrieval = retrieval_choice(trials)
        print(f"fold-0 validation choice: fusion {weights}, cross-encoder top {top} weight {weight}", flush=True)
    else:
        tfidf, top, weight = carried
        weights, trials, settings = {**{name: 1.0 for name in models}, "tfidf": tfidf}, [], settings[1:]
        retrieval = weights
    per_setting: dict[tuple[str, str], list[dict]] = {}
    seconds, parts = 0.0, 0
    for fold in range(folds):
        fold_models, reranker = fold_parts(fold)
        test = load_dataset(aap_split(fold, "test"))
        for setting, memory in settings:
            linker = Linker.build(kb, ensemble_config(fold_models, lexical), memory_from_datasets(kb, [aap_split(fold, s) for s in memory]))
            run = Reranked(linker, reranker, test, weights, top)
            seconds, parts = seconds + run.seconds, parts + len(test)
            for variant, result in variants(run, linker, retrieval, equivalent, top, weight).items():
                per_setting.setdefault((setting, variant), []).append(result)
            print(f"fold {fold} {setting}: " + ", ".join(f"{v}: {r[-1]['acc@1']:.4f}" for (s, v), r in per_setting.items() if s == setting), flush=True)
    rows = []
    for (setting, variant), results in per_setting.items():
        mean = {m: statistics.mean(r[m] for r in results) for m in results[0]}
        rows.append({"dataset": "AskAPatient", "split": f"test, mean of {len(results)} folds", "setting": setting, "variant": variant, **mean,
                     "acc@1_std": statistics.pstdev(r["acc@1"] for r in results)})
    tuning = {"fusion": weights, "top": top, "weight": weight, "trials": trials,
              "cross_encoder_mentions_per_s": parts / seconds}
    return rows, tuning


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=("ncbi", "aap"), required=True)
    parser.add_argument("--model", action="append", required=True, help="NAME=PATH of a bi-encoder (repeatable: fused)")
    parser.add_argument("--cross-encoder", required=True, help="cross-encoder folder (relative: under $MEDLINK_BENCH_MODELS)")
    parser.add_argument("--text", choices=("name", "matched"), default="name",
                        help="what the cross-encoder reads each candidate as (train with --concept-text alias for 'matched')")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--section", default=None)
    parser.add_argument("--carried", default=None, metavar="TFIDF,TOP,WEIGHT",
                        help="AskAPatient bi-encoders trained on validation too: no tuning, these earlier fold-0 validation choices")
    args = parser.parse_args()
    carried = None
    if args.carried:
        values = args.carried.split(",")
        if args.dataset != "aap" or len(values) != 3 or len(args.model) != 1:
            parser.error("--carried TFIDF,TOP,WEIGHT applies to --dataset aap with one --model")
        carried = (float(values[0]), int(values[1]), float(values[2]))
    section = args.section or f"rerank_{args.dataset}"
    models = dict(model_spec(spec) for spec in args.model)
    _, cross = model_spec(f"cross={args.cross_encoder}")
    started = time.perf_counter()
    rows, tuning = ncbi(models, cross, args.text, args.workdir) if args.dataset == "ncbi" else aap(models, cross, args.text, args.workdir, args.folds, carried)
    elapsed = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    publish(section, {"command": command_line(__file__, sys.argv[1:]), "rows": rows, "tuning": tuning, "seconds": elapsed, "peak_rss_mb": peak_mb})


if __name__ == "__main__":
    main()

"""Dense and hybrid linking with trained bi-encoders and the kNN memory (issue 4).

    python benchmarks/dense/dense_linking.py --model base=default --model zs=/path/zs-model --model sup=/path/sup-model \
        [--zero-shot zs] [--skip-aap]

For every model, on NCBI Disease (KB = BioSyn's train_dictionary.txt, i.e. MEDIC):
- KB only (no training mentions at all): dense retrieval; this is the zero-shot figure for a
  model trained on KB pairs only (report R@1 and R@25 beside Acc@1/5, as paper 000 does);
- dev tuning (memory = processed_train, scored on processed_dev): the dense / TF-IDF fusion
  weights, then kNN k, lambda, beta1, beta2 for dense alone and for the hybrid, by grid search;
- test (memory = processed_traindev, the data the published protocol allows): dense, dense + kNN,
  hybrid (dense + TF-IDF), hybrid + kNN, each with the dev-chosen parameters.
BC5CDR-disease (``--bc5cdr``, issue 53), BioSyn's protocol on dev (its test set is kept out of the shared data): KB =
its train_dictionary.txt (MEDIC), KB only, then memory = processed_train scored on processed_dev; nothing is tuned on
dev: the hybrid's weights are ``--fusion``'s (NCBI dev's choice, carried over) and kNN takes its defaults.
AskAPatient (10 folds, KB = the 1,036 ontology names, memory = the fold's train file): the same
variants with the parameters chosen on fold-0 validation. A model PATH containing ``{fold}`` names
one model per fold (fine-tuned on that fold's train file only; one shared fine-tuned model would
have seen the other folds' test mentions); such models are AskAPatient-only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import aap_kb, aap_split, cached_kb, ncbi_kb, ncbi_split, require  # noqa: E402
from benchmarks._common.harness import ROOT, SHARED_DATA, command_line, model_spec, publish  # noqa: E402
from medlink.eval import evaluate_rankings, load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402
from medlink.rerank.knn import PARAMS as KNN_PARAMS  # noqa: E402
from medlink.retrieval.fusion import Fusion  # noqa: E402
from medlink.tuning import Tuner  # noqa: E402

CONFIGS = ROOT / "benchmarks" / "configs"
BC5CDR = SHARED_DATA / "bc5cdr-disease"
KNN_DEFAULT = {key: KNN_PARAMS[key].default for key in ("k", "lambda_", "beta1", "beta2")}  # kNN as configured by default
KNN_GRID = {"k": (4, 16, 64), "lambda_": (0.1, 0.3, 0.5, 0.7, 0.9), "beta1": (0.01, 0.05, 0.1), "beta2": (0.05, 0.1, 0.5, 1.0)}
FUSION_WEIGHTS = ((1.0, 0.0), (0.0, 1.0), (1.0, 0.25), (1.0, 0.5), (1.0, 1.0), (0.5, 1.0), (0.25, 1.0))  # (dense, TF-IDF)
METRICS = ("acc@1", "acc@5", "mrr", "recall@1", "recall@25", "recall@64")
RECALL_KS = (1, 5, 25, 64)


def tuned_tfidf(lexical: Path) -> dict:
    """The TF-IDF parameters that dev chose for a dataset (benchmarks/lexical/tune_lexical.py)."""
    return next(g for g in LinkerConfig.from_file(lexical).generators if g.name == "tfidf").params


def hybrid_config(model: str | None, lexical: Path) -> LinkerConfig:
    """dense and the dataset's tuned TF-IDF, both over KB names + memory (the published protocol's dictionary), kNN on the dense encoder."""
    return LinkerConfig.from_dict({
        "generators": [{"name": "dense", "type": "dense", "names": "kb+memory", "params": {"model": model}},
                       {"name": "tfidf", "type": "tfidf", "names": "kb+memory", "params": tuned_tfidf(lexical)}],
        "fusion": {"method": "weighted", "weights": {"dense": 1.0, "tfidf": 0.5}},
        "k_per_generator": 64,
        "rerankers": [{"type": "knn", "generator": "dense"}],
    })


def score_rankings(rankings, mentions, equivalent) -> dict:
    """The METRICS of one candidate list per mention part."""
    report = evaluate_rankings(rankings, mentions, equivalent_ids=equivalent, recall_ks=RECALL_KS, records=False, subpopulations=False)
    return {m: report[m] for m in METRICS if m in report.to_dict()}


class Run:
    """One linker's candidates for a dataset retrieved once (medlink.tuning.Tuner); fusion and kNN variants re-run over them."""

    def __init__(self, linker: Linker, mentions, equivalent):
        self.mentions, self.equivalent = mentions, equivalent
        self.tuner = Tuner(linker, mentions, equivalent)
        self.dense_only = self.hybrid((1.0, 0.0))

    def evaluate(self, results) -> dict:
        return score_rankings(self.tuner.rankings(results), self.mentions, self.equivalent)

    @staticmethod
    def fusion(weights: tuple[float, float]) -> Fusion:
        return Fusion("weighted", {"dense": weights[0], "tfidf": weights[1]})

    def hybrid(self, weights: tuple[float, float]):
        return self.tuner.fused(self.fusion(weights))

    def knn(self, weights: tuple[float, float], settings: dict):
        """The fused candidates at ``weights``, reranked by the index's kNN with ``settings`` (k, lambda_, beta1, beta2)."""
        reranker = self.tuner.linker.rerankers[0].with_settings(**settings)
        return self.tuner.reranked(self.hybrid(weights), [reranker], self.fusion(weights))


def best_knn(run: Run, weights: tuple[float, float]) -> tuple[dict, tuple[float, float]]:
    """kNN settings by grid search over the candidates at ``weights`` (medlink tune's reranker search, this script's grid)."""
    settings, trials = run.tuner.search_reranker(0, run.fusion(weights), grid=KNN_GRID)
    return {key: settings[key] for key in KNN_GRID}, max(t.key for t in trials)


def tune(run: Run) -> tuple[tuple[float, float], dict, dict, list[dict]]:
    """On dev data: the fusion weights of the hybrid, then kNN parameters for dense alone and for the hybrid."""
    best, fusion_trials = run.tuner.search_fusions([run.fusion(w) for w in FUSION_WEIGHTS])
    weights = (best.weights["dense"], best.weights["tfidf"])
    trials = [{"weights": (t.settings["weights"]["dense"], t.settings["weights"]["tfidf"]), **t.figures} for t in fusion_trials]
    dense_knn, key = best_knn(run, (1.0, 0.0))
    trials.append({"knn_dense": dense_knn, "acc@1": key[0], "mrr": key[1]})
    hybrid_knn, key = best_knn(run, weights)
    trials.append({"knn_hybrid": hybrid_knn, "acc@1": key[0], "mrr": key[1]})
    return weights, dense_knn, hybrid_knn, trials


def variants(run: Run, weights: tuple[float, float], dense_knn: dict, hybrid_knn: dict) -> dict[str, dict]:
    return {
        "dense (KB names + memory)": run.evaluate(run.dense_only),
        "dense + kNN": run.evaluate(run.knn((1.0, 0.0), dense_knn)),
        f"hybrid (dense {weights[0]}, TF-IDF {weights[1]})": run.evaluate(run.hybrid(weights)),
        "hybrid + kNN": run.evaluate(run.knn(weights, hybrid_knn)),
    }


def ncbi(name: str, model: str | None, workdir: Path, trained_on_dev: bool = False) -> list[dict]:
    kb = ncbi_kb(workdir, "train")
    equivalent = equivalent_ids_from_kb(kb)
    config = hybrid_config(model, CONFIGS / "ncbi_lexical.json")
    rows = []
    started = time.perf_counter()
    kb_only = Linker.build(kb, LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "names": "kb", "params": {"model": model}}]}))
    test = load_dataset(ncbi_split("test"))
    result = score_rankings(kb_only.link([p for m in test for p in m.parts], k=64), test, equivalent)
    rows.append({"model": name, "dataset": "NCBI Disease", "split": "test", "setting": "KB only (train_dictionary)", "variant": "dense", **result})
    test_run = Run(Linker.build(kb, config, memory_from_datasets(kb, [ncbi_split("traindev")])), test, equivalent)
    if trained_on_dev:  # dev cannot tune a model that has seen it: dense alone, nothing tuned
        weights, dense_knn, hybrid_knn, trials = (1.0, 0.0), KNN_DEFAULT, KNN_DEFAULT, []
        chosen = {"dense (KB names + memory)": test_run.evaluate(test_run.dense_only)}
    else:
        dev_run = Run(Linker.build(kb, config, memory_from_datasets(kb, [ncbi_split("train")])), load_dataset(ncbi_split("dev")), equivalent)
        weights, dense_knn, hybrid_knn, trials = tune(dev_run)
        print(f"{name}: dev choice fusion {weights}, kNN dense {dense_knn}, kNN hybrid {hybrid_knn}", flush=True)
        chosen = variants(test_run, weights, dense_knn, hybrid_knn)
    for variant, result in chosen.items():
        rows.append({"model": name, "dataset": "NCBI Disease", "split": "test", "setting": "train_dictionary + memory(traindev)",
                     "variant": variant, "weights": weights, "knn_dense": dense_knn, "knn_hybrid": hybrid_knn, **result})
    for row in rows:
        print(f"  {row['model']} | {row['setting']} | {row['variant']}: acc@1 {row['acc@1']:.4f} acc@5 {row['acc@5']:.4f}", flush=True)
    rows.append({"model": name, "dataset": "NCBI Disease", "dev_trials": trials, "seconds": time.perf_counter() - started})
    return rows


def bc5cdr(name: str, model: str | None, workdir: Path, fusion: tuple[float, float]) -> list[dict]:
    """BC5CDR-disease dev: KB only, then dense, dense + kNN and the hybrid over KB + train mentions, nothing tuned on dev."""
    kb = cached_kb(workdir, "bc5cdr-train-dictionary", [f"biosyn:{require(BC5CDR / 'train_dictionary.txt')}"])
    equivalent = equivalent_ids_from_kb(kb)
    dev = load_dataset(f"biosyn:{require(BC5CDR / 'processed_dev')}")
    started = time.perf_counter()
    kb_only = Linker.build(kb, LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "names": "kb", "params": {"model": model}}]}))
    result = score_rankings(kb_only.link([p for m in dev for p in m.parts], k=64), dev, equivalent)
    rows = [{"model": name, "dataset": "BC5CDR-disease", "split": "dev", "setting": "KB only (train_dictionary)", "variant": "dense", **result}]
    memory = memory_from_datasets(kb, [f"biosyn:{require(BC5CDR / 'processed_train')}"])
    run = Run(Linker.build(kb, hybrid_config(model, CONFIGS / "ncbi_lexical.json"), memory), dev, equivalent)
    for variant, result in variants(run, fusion, KNN_DEFAULT, KNN_DEFAULT).items():
        rows.append({"model": name, "dataset": "BC5CDR-disease", "split": "dev", "setting": "train_dictionary + memory(train)",
                     "variant": variant, "weights": fusion, "knn_dense": KNN_DEFAULT, "knn_hybrid": KNN_DEFAULT, "carried_over": True, **result})
    for row in rows:
        print(f"  {row['model']} | BC5CDR-disease dev | {row['setting']} | {row['variant']}: acc@1 {row['acc@1']:.4f}", flush=True)
    rows.append({"model": name, "dataset": "BC5CDR-disease", "seconds": time.perf_counter() - started})
    return rows


def fold_model(model: str | None, fold: int) -> str | None:
    return model.replace("{fold}", str(fold)) if model else model


def aap(name: str, model: str | None, workdir: Path, folds: int, trained_on_dev: bool = False,
        fusion: tuple[float, float] | None = None) -> list[dict]:
    """Per-fold models; tuned on fold-0 validation, unless they were trained on it (then: memory = train + validation,
    dense alone, and the hybrid only at ``fusion`` weights chosen earlier for models that had not seen validation)."""
    kb = aap_kb(workdir)
    equivalent = equivalent_ids_from_kb(kb)
    lexical = CONFIGS / "askapatient_lexical.json"
    memory_splits = ["train", "validation"] if trained_on_dev else ["train"]
    if not trained_on_dev:
        dev_run = Run(Linker.build(kb, hybrid_config(fold_model(model, 0), lexical), memory_from_datasets(kb, [aap_split(0, "train")])),
                      load_dataset(aap_split(0, "validation")), equivalent)
        weights, dense_knn, hybrid_knn, _ = tune(dev_run)
        print(f"{name}: AAP fold-0 validation choice fusion {weights}, kNN dense {dense_knn}, kNN hybrid {hybrid_knn}", flush=True)
    else:
        weights, dense_knn, hybrid_knn = fusion or (1.0, 0.0), KNN_DEFAULT, KNN_DEFAULT
    per_fold: dict[str, list[dict]] = {}
    for fold in range(folds):
        config = hybrid_config(fold_model(model, fold), lexical)
        memory = memory_from_datasets(kb, [aap_split(fold, split) for split in memory_splits])
        run = Run(Linker.build(kb, config, memory), load_dataset(aap_split(fold, "test")), equivalent)
        chosen = variants(run, weights, dense_knn, hybrid_knn) if not trained_on_dev else {
            "dense (KB names + memory)": run.evaluate(run.dense_only),
            **({f"hybrid (dense {weights[0]}, TF-IDF {weights[1]}; carried over, not tuned)": run.evaluate(run.hybrid(weights))} if fusion else {})}
        for variant, result in chosen.items():
            per_fold.setdefault(variant, []).append(result)
        print(f"  fold {fold}: " + ", ".join(f"{v}: {r[-1]['acc@1']:.4f}" for v, r in per_fold.items()), flush=True)
    rows = []
    for variant, results in per_fold.items():
        mean = {m: statistics.mean(r[m] for r in results) for m in results[0]}
        rows.append({"model": name, "dataset": "AskAPatient", "split": f"test, mean of {len(results)} folds",
                     "setting": f"ontology + memory(fold {' + '.join(memory_splits)})",
                     "variant": variant, "weights": weights, "knn_dense": dense_knn, "knn_hybrid": hybrid_knn, **mean,
                     "acc@1_std": statistics.pstdev(r["acc@1"] for r in results)})
        print(f"  {name} | AAP | {variant}: acc@1 {mean['acc@1']:.4f}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", required=True, help="NAME=PATH (PATH 'default' = packaged MiniLM)")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--skip-aap", action="store_true")
    parser.add_argument("--trained-on-dev", action="store_true",
                        help="the models saw the dev data in training (NCBI processed_traindev, as the published protocol allows; "
                             "AskAPatient train + validation): no dev tuning")
    parser.add_argument("--fusion", default=None, help="DENSE,TFIDF weights for the hybrid of models trained on dev "
                                                       "(carried over from an earlier dev choice; default: dense alone)")
    parser.add_argument("--bc5cdr", action="store_true", help="BC5CDR-disease dev only, the hybrid at --fusion's weights (NCBI dev's choice)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--section", default="dense_linking")
    args = parser.parse_args()
    if args.fusion and (not (args.trained_on_dev or args.bc5cdr) or len(args.fusion.split(",")) != 2):
        parser.error("--fusion takes DENSE,TFIDF (two numbers) and only applies with --trained-on-dev or --bc5cdr (otherwise dev chooses it)")
    if args.bc5cdr and not args.fusion:
        parser.error("--bc5cdr needs --fusion DENSE,TFIDF: the weights NCBI dev chose for the model (BC5CDR's dev is what is measured)")
    rows = []
    for spec in args.model:
        name, model = model_spec(spec)
        if args.bc5cdr:
            rows += bc5cdr(name, model, args.workdir, tuple(float(w) for w in args.fusion.split(",")))
            continue
        if "{fold}" not in (model or ""):
            rows += ncbi(name, model, args.workdir, args.trained_on_dev)
        if not args.skip_aap:
            fusion = tuple(float(w) for w in args.fusion.split(",")) if args.fusion else None
            rows += aap(name, model, args.workdir, args.folds, args.trained_on_dev, fusion)
    publish(args.section, {"command": command_line(__file__, sys.argv[1:]), "rows": rows})


if __name__ == "__main__":
    main()

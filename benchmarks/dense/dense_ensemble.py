"""Several bi-encoders fused (plus TF-IDF) on NCBI Disease, weights chosen on dev (issue 4).

    python benchmarks/dense/dense_ensemble.py --model NAME=PATH --model NAME=PATH [--model ...] [--section dense_ensemble] [--carried W,...,TFIDF]

(PATH 'default' = the packaged MiniLM; a relative PATH is under $MEDLINK_BENCH_MODELS.) All dense generators search KB names + memory (the published protocol's dictionary) and are
fused with the tuned TF-IDF by a weighted sum of normalised scores. The weights come from a grid
scored on NCBI dev (memory = train); test (memory = traindev) is scored once, with those weights. Models trained on
traindev (as the published protocol allows) cannot be judged on dev: ``--carried`` gives the weights an earlier dev choice made.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import command_line, model_spec, publish  # noqa: E402
from benchmarks.dense.dense_linking import CONFIGS, score_rankings, tuned_tfidf  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402
from medlink.retrieval.fusion import Fusion  # noqa: E402
from medlink.tuning import Tuner  # noqa: E402

OTHERS = (0.0, 0.5, 1.0)  # weights of the models after the first (whose weight is 1)
TFIDF = (0.0, 0.25, 0.5)


def ensemble_config(models: dict[str, str | None], lexical: Path = CONFIGS / "ncbi_lexical.json") -> LinkerConfig:
    """Dense generators (one per model) and the dataset's tuned TF-IDF, all over KB names + memory, weighted fusion."""
    generators = [{"name": name, "type": "dense", "names": "kb+memory", "params": {"model": path}} for name, path in models.items()]
    generators.append({"name": "tfidf", "type": "tfidf", "names": "kb+memory", "params": tuned_tfidf(lexical)})
    return LinkerConfig.from_dict({"generators": generators, "fusion": {"method": "weighted", "weights": {n: 1.0 for n in [*models, "tfidf"]}},
                                   "k_per_generator": 64})


def fused_rankings(linker: Linker, mentions, weights: dict[str, float]):
    """Candidate lists (k = 64) of every mention part under the given fusion weights."""
    linker.config.fusion = Fusion("weighted", weights)
    texts = [p for m in mentions for p in m.parts]
    return linker.link(texts, k=64, generators=[n for n, w in weights.items() if w], rerank=False)


def evaluate(linker: Linker, mentions, equivalent, weights: dict[str, float]) -> dict:
    return score_rankings(fused_rankings(linker, mentions, weights), mentions, equivalent)


def weight_grid(models: list[str]) -> list[dict[str, float]]:
    """The fusion weights tried on dev: the first model weighs 1, the other models and TF-IDF vary."""
    first, *others = models
    return [{first: 1.0, **dict(zip(others, rest)), "tfidf": t} for *rest, t in itertools.product(*[OTHERS] * len(others), TFIDF)]


def choose_weights(linker: Linker, dev, equivalent, models: list[str]) -> tuple[dict[str, float], list[dict]]:
    """Fusion weights by grid search on dev (medlink tune's search over this script's grid: one retrieval, every weighting)."""
    tuner = Tuner(linker, dev, equivalent)
    best, found = tuner.search_fusions([Fusion("weighted", weights) for weights in weight_grid(models)])
    trials = [{"weights": t.settings["weights"], **score_rankings(tuner.rankings(tuner.fused(Fusion(**t.settings))), dev, equivalent)}
              for t in found]
    return best.weights, trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", required=True, help="NAME=PATH, two or more")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--section", default="dense_ensemble")
    parser.add_argument("--carried", default=None, help="W1,W2,...,TFIDF: weights carried over from an earlier dev choice, for models "
                                                        "trained on traindev (dev cannot judge them): no dev step")
    args = parser.parse_args()
    models = dict(model_spec(spec) for spec in args.model)
    if len(models) < 2:
        parser.error("give two or more --model NAME=PATH")
    kb = ncbi_kb(args.workdir, "train")
    equivalent = equivalent_ids_from_kb(kb)
    started = time.perf_counter()
    if args.carried:
        values = [float(v) for v in args.carried.split(",")]
        if len(values) != len(models) + 1:
            parser.error(f"--carried takes {len(models) + 1} weights: one per model, then TF-IDF")
        chosen, trials = dict(zip([*models, "tfidf"], values)), []
    else:
        dev_linker = Linker.build(kb, ensemble_config(models), memory_from_datasets(kb, [ncbi_split("train")]))
        chosen, trials = choose_weights(dev_linker, load_dataset(ncbi_split("dev")), equivalent, list(models))
    test_linker = Linker.build(kb, ensemble_config(models), memory_from_datasets(kb, [ncbi_split("traindev")]))
    test = load_dataset(ncbi_split("test"))
    alone = [{**{m: 0.0 for m in models}, model: 1.0, "tfidf": 0.0} for model in models]
    rows = [{"weights": w, **evaluate(test_linker, test, equivalent, w)} for w in [*alone, chosen]]
    for row in rows:
        print("test", row["weights"], f"{row['acc@1']:.4f}", flush=True)
    publish(args.section, {"command": command_line(__file__, sys.argv[1:]), "models": args.model, "dev_trials": trials, "chosen": chosen,
                           "test": rows, "seconds": time.perf_counter() - started})


if __name__ == "__main__":
    main()

"""Choose the lexical linker's parameters on development data only (never test).

    python benchmarks/lexical/tune_lexical.py

NCBI Disease: KB = BioSyn's train dictionary (MEDIC), memory = processed_train, scored on
processed_dev. AskAPatient: KB = the 1,036-concept ontology, memory = fold-0 train, scored on
fold-0 validation. Step 1 picks the TF-IDF analyzer / n-gram range by TF-IDF alone and BM25's
stemming by BM25 alone; step 2 picks the fusion method and weights for exact + TF-IDF + BM25. The chosen configs are written to
benchmarks/configs/{ncbi,askapatient}_lexical.json; every trial is in results/tune_lexical.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import aap_kb, aap_split, ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import ROOT, command_line, publish  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402
from medlink.retrieval.fusion import Fusion  # noqa: E402
from medlink.tuning import Tuner  # noqa: E402

CONFIGS = ROOT / "benchmarks" / "configs"
TFIDF_GRID = [
    {"analyzer": analyzer, "ngram_range": list(ngrams)}
    for analyzer, ngrams in itertools.product(("char_wb", "char"), ((1, 3), (2, 4), (2, 5), (3, 5)))
]
BM25_GRID = [{"stem": False}, {"stem": True}]
EXACT_WEIGHTS = (0.0, 0.5, 1.0)
BM25_WEIGHTS = (0.0, 0.05, 0.1, 0.25, 0.5, 1.0)


def config(tfidf: dict, bm25: dict | None = None, fusion: dict | None = None) -> LinkerConfig:
    return LinkerConfig.from_dict({
        "generators": [{"name": "exact", "type": "exact"}, {"name": "tfidf", "type": "tfidf", "params": tfidf},
                       {"name": "bm25", "type": "bm25", "params": bm25 or {}}],
        "fusion": fusion or {"method": "weighted"},
        "k_per_generator": 32,
    })


ALONE = {name: Fusion("weighted", {"exact": 0.0, "tfidf": 0.0, "bm25": 0.0, name: 1.0}) for name in ("tfidf", "bm25")}  # one stage, its own scores


def score(tuner: Tuner, fusion: Fusion) -> tuple[float, float]:
    """Acc@1 and MRR over each dev mention's top 10 (the tuner retrieved them once; fusion re-runs over its cache)."""
    figures = tuner.evaluate(fusion, [])
    return figures["acc@1"], figures["mrr"]


def tune(name: str, kb, memory_specs: list[str], dev_spec: str) -> dict:
    dev = load_dataset(dev_spec)
    equivalent = equivalent_ids_from_kb(kb)
    memory = memory_from_datasets(kb, memory_specs)
    trials = []
    best_tfidf, best_key = None, (-1.0, -1.0)
    for params in TFIDF_GRID:
        started = time.perf_counter()
        linker = Linker.build(kb, config(params), memory)
        key = score(Tuner(linker, dev, equivalent, depth=10), ALONE["tfidf"])
        trials.append({"step": "tfidf", "params": params, "acc@1": key[0], "mrr": key[1], "seconds": time.perf_counter() - started})
        print(f"{name} tfidf {params}: acc@1 {key[0]:.4f} mrr {key[1]:.4f}", flush=True)
        if key > best_key:
            best_tfidf, best_key = params, key
    best_bm25, best_bm25_key = None, (-1.0, -1.0)
    for params in BM25_GRID:
        linker = Linker.build(kb, config(best_tfidf, params), memory)
        key = score(Tuner(linker, dev, equivalent, depth=10), ALONE["bm25"])
        trials.append({"step": "bm25", "params": params, "acc@1": key[0], "mrr": key[1]})
        print(f"{name} bm25 {params}: acc@1 {key[0]:.4f} mrr {key[1]:.4f}", flush=True)
        if key > best_bm25_key:
            best_bm25, best_bm25_key = params, key
    tuner = Tuner(Linker.build(kb, config(best_tfidf, best_bm25), memory), dev, equivalent, depth=10)
    grid = [Fusion(method, {"exact": exact, "tfidf": 1.0, "bm25": bm25}) for method, exact, bm25 in
            itertools.product(("weighted", "rrf"), EXACT_WEIGHTS, BM25_WEIGHTS)]
    chosen_fusion, fusion_trials = tuner.search_fusions(grid)  # medlink's dev search (medlink tune) over this script's grid
    trials += [{"step": "fusion", "fusion": {"method": t.settings["method"], "weights": t.settings["weights"]},
                "acc@1": t.figures["acc@1"], "mrr": t.figures["mrr"]} for t in fusion_trials]
    best_fusion = {"method": chosen_fusion.method, "weights": chosen_fusion.weights}
    best_fusion_key = max(t.key for t in fusion_trials)
    print(f"{name} fusion {best_fusion}: acc@1 {best_fusion_key[0]:.4f}", flush=True)
    chosen = config(best_tfidf, best_bm25, best_fusion).to_dict()
    path = CONFIGS / f"{name}_lexical.json"
    CONFIGS.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(chosen, indent=2) + "\n")
    return {"dataset": name, "dev": dev_spec, "memory": memory_specs, "chosen": chosen, "dev_tfidf": best_key, "dev_bm25": best_bm25_key, "dev_fused": best_fusion_key,
            "config_file": str(path.relative_to(ROOT)), "trials": trials}


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    workdir = Path(tempfile.gettempdir()) / "medlink-bench"
    workdir.mkdir(parents=True, exist_ok=True)
    results = [
        tune("ncbi", ncbi_kb(workdir, "train"), [ncbi_split("train")], ncbi_split("dev")),
        tune("askapatient", aap_kb(workdir), [aap_split(0, "train")], aap_split(0, "validation")),
    ]
    publish("tune_lexical", {"command": command_line(__file__, sys.argv[1:]), "results": results})


if __name__ == "__main__":
    main()

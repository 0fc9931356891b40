"""Paper 001's pairwise neural ranker over lexical retrieval: NCBI Disease and AskAPatient fold 0.

    python benchmarks/rerank/pairwise_ranker.py [--datasets ncbi,aap] [--cross-encoder ncbi=/work/models/ce-ncbi-ctx0]

Retrieval: the lexical index of benchmarks/configs/{ncbi,askapatient}_lexical.json over the KB names + a mention memory,
32 candidates per mention. NCBI: KB = train_dictionary.txt (MEDIC); dev = NCBI dev with memory(train); test = NCBI test
with memory(traindev). AskAPatient: KB = the ontology; dev = fold-0 validation, test = fold-0 test, both with
memory(fold-0 train). The rankers train on the train mentions (cross-fitted: each retrieved with its own occurrence left
out of the memory; medlink.training.ranker_data), keep their best dev epoch, and (top, weight) is chosen on dev by Acc@1;
test is scored once with that choice. Variants: max and attention pooling, each with and without pre-training on the
KB's synonyms (AskAPatient's ontology has one name per concept: nothing to pre-train on there, so those rows are
absent). The cross-encoder (where a trained folder is given) is tuned the same way over the same lists. Speed: the
reranking alone over the test lists, median of --repeats, in ms per mention (per list: a composite's parts each count).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import aap_kb, aap_split, ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks.dense.dense_linking import score_rankings  # noqa: E402
from benchmarks.lexical.lexical_linking import CONFIGS  # noqa: E402

from medlink.core import Mention  # noqa: E402
from medlink.eval import load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402
from medlink.rerank import cross_encoder, pairwise  # noqa: E402
from medlink.training.examples import supervised_mentions  # noqa: E402
from medlink.rerank.pairwise_model import SPEC_FILE, is_ranker_spec  # noqa: E402
from medlink.training.ranker import RankerConfig, RankerReport, train_ranker  # noqa: E402
from medlink.training.ranker_data import cross_fitted_groups, retrieved_groups, synonym_queries  # noqa: E402

DEPTH = 32  # candidates per mention: what the index's generators give each, and what the rankers train over
VARIANTS = {"max": ("max", False), "attention": ("attention", False), "max + synonyms": ("max", True),
            "attention + synonyms": ("attention", True)}
METRICS = ("acc@1", "acc@5", "mrr")


class Lists:
    """One split's retrieved candidate lists (one per mention part), retrieved once and reranked many times."""

    def __init__(self, linker: Linker, spec: str, equivalent):
        self.mentions, self.equivalent = load_dataset(spec), equivalent
        self.queries = [Mention(linker.normalize(p)) for m in self.mentions for p in m.parts]
        started = time.perf_counter()
        self.results = linker.link([p for m in self.mentions for p in m.parts], k=DEPTH, rerank=False)
        self.retrieval_ms = 1000 * (time.perf_counter() - started) / len(self.queries)
        self.lists = [r.candidates for r in self.results]

    def score(self, lists) -> dict:
        report = score_rankings(lists, self.mentions, self.equivalent)
        return {m: round(report[m], 5) for m in METRICS}

    def ms_per_mention(self, reranker, repeats: int) -> float:
        """Median over ``repeats`` of the reranker's time over every list, per list (memo caches cleared each time)."""
        times = []
        for _ in range(repeats):
            fresh = reranker.with_settings()
            if hasattr(fresh, "_memo"):
                fresh._memo = {}
            if hasattr(fresh.model, "tokens"):
                fresh.model.tokens._cache.clear()
            started = time.perf_counter()
            fresh.rerank(self.queries, self.results)
            times.append(time.perf_counter() - started)
        return 1000 * statistics.median(times) / len(self.queries)


def tune(dev: Lists, scores, combine, grid: dict) -> tuple[dict, list[dict]]:
    """(top, weight) by dev Acc@1 then MRR (ties: the smaller top and weight) over scores computed once at the deepest top."""
    trials = [{"top": top, "weight": weight, **dev.score(combine(dev.lists, [s[:top] for s in scores], weight))}
              for top in grid["top"] for weight in grid["weight"]]
    best = max(trials, key=lambda t: (t["acc@1"], t["mrr"], -t["weight"], -t["top"]))
    return {"top": best["top"], "weight": best["weight"]}, trials


def evaluate(name: str, reranker, dev: Lists, test: Lists, combine, grid: dict, repeats: int) -> dict:
    deepest = reranker.with_settings(top=max(grid["top"]))
    chosen, trials = tune(dev, deepest.scores(dev.queries, dev.lists), combine, grid)
    best_dev = next(t for t in trials if t["top"] == chosen["top"] and t["weight"] == chosen["weight"])
    final = reranker.with_settings(**chosen)
    row = {"variant": name, "chosen_on_dev": chosen, "dev": {m: best_dev[m] for m in METRICS},
           "test": test.score([r.candidates for r in final.rerank(test.queries, test.results)]),
           "ms_per_mention": round(test.ms_per_mention(final, repeats), 4), "dev_trials": trials}
    print(f"  {name}: dev {row['dev']['acc@1']:.4f} (top {chosen['top']}, weight {chosen['weight']}), test {row['test']['acc@1']:.4f} / "
          f"MRR {row['test']['mrr']:.4f}, {row['ms_per_mention']:.3f} ms per mention", flush=True)
    return row


def protocol(dataset: str, workdir: Path) -> dict:
    """KB, config and the split specs of one dataset's protocol."""
    if dataset == "ncbi":
        return {"name": "NCBI Disease", "kb": ncbi_kb(workdir, "train"), "config": CONFIGS / "ncbi_lexical.json",
                "train": ncbi_split("train"), "dev": ncbi_split("dev"), "test": ncbi_split("test"),
                "dev_memory": [ncbi_split("train")], "test_memory": [ncbi_split("traindev")]}
    return {"name": "AskAPatient fold 0", "kb": aap_kb(workdir), "config": CONFIGS / "askapatient_lexical.json",
            "train": aap_split(0, "train"), "dev": aap_split(0, "validation"), "test": aap_split(0, "test"),
            "dev_memory": [aap_split(0, "train")], "test_memory": [aap_split(0, "train")]}


def run_dataset(dataset: str, workdir: Path, cross: str | None, repeats: int, epochs: int, reuse: bool = False) -> dict:
    """``reuse``: the rankers an earlier run trained in ``workdir`` are scored again (their training record read back)."""
    setup = protocol(dataset, workdir)
    kb, config = setup["kb"], LinkerConfig.from_file(setup["config"])
    equivalent = equivalent_ids_from_kb(kb)
    memory = memory_from_datasets(kb, setup["dev_memory"])
    dev_linker = Linker.build(kb, config, memory)
    test_linker = Linker.build(kb, config, memory_from_datasets(kb, setup["test_memory"]))
    dev, test = Lists(dev_linker, setup["dev"], equivalent), Lists(test_linker, setup["test"], equivalent)
    started = time.perf_counter()
    folder = lambda name: workdir / f"ranker-{dataset}-{name.replace(' + ', '-')}"  # noqa: E731
    reused = reuse and all(is_ranker_spec(folder(name) / SPEC_FILE) for name, (_, pretrain) in VARIANTS.items() if not pretrain)
    train = supervised_mentions(kb, [setup["train"]])
    groups = [] if reused else cross_fitted_groups(kb, dev_linker, memory, train, DEPTH, 5, 13)
    dev_groups = retrieved_groups(dev_linker, supervised_mentions(kb, [setup["dev"]]), DEPTH)
    synonyms = [] if reused else retrieved_groups(dev_linker, synonym_queries(kb, RankerConfig.pretrain_pairs, 13), DEPTH)
    prep = time.perf_counter() - started
    print(f"{setup['name']}: {len(groups):,} training lists (cross-fitted), {len(synonyms):,} synonym lists, {prep:.0f} s"
          + (" (rankers reused)" if reused else ""), flush=True)
    rows = [{"variant": "retrieval alone", "dev": dev.score(dev.lists), "test": test.score(test.lists), "ms_per_mention": round(test.retrieval_ms, 4)}]
    print(f"  retrieval alone: dev {rows[0]['dev']['acc@1']:.4f}, test {rows[0]['test']['acc@1']:.4f}", flush=True)
    for name, (pooling, pretrain) in VARIANTS.items():
        out = folder(name)
        if reused:
            if not is_ranker_spec(out / SPEC_FILE):
                continue
            report = RankerReport(**json.loads((out / SPEC_FILE).read_text())["training"])
        elif pretrain and not synonyms:
            continue
        else:
            ranker_config = RankerConfig(pooling=pooling, pretrain_synonyms=pretrain, epochs=epochs)
            report = train_ranker(groups, out, dev_linker.stages(), dev=dev_groups, synonyms=synonyms if pretrain else (),
                                  config=ranker_config, progress=False)
        reranker = pairwise.PairwiseRanker.build({"model": str(out)})
        row = evaluate(name, reranker, dev, test, pairwise.combine, pairwise.PairwiseRanker.TUNING_GRID, repeats)
        row["ms_per_mention_bf16"] = round(test.ms_per_mention(reranker.with_settings(precision="bf16", **row["chosen_on_dev"]), repeats), 4)
        rows.append({**row, "train_seconds": report.seconds, "best_epoch": report.best_epoch, "epochs": report.epochs,
                     "pretraining": report.pretraining, "parameters": report.data["parameters"],
                     "training_lists": report.data["used"], "synonym_lists": report.data["synonyms"],
                     "folder_mb": round(sum(f.stat().st_size for f in out.iterdir()) / 2**20, 1)})
    if cross:
        reranker = cross_encoder.CrossEncoderReranker.build({"model": cross})
        grid = {"top": (4, 8, 16), "weight": cross_encoder.CrossEncoderReranker.TUNING_GRID["weight"]}
        rows.append({**evaluate("cross-encoder", reranker, dev, test, cross_encoder.combine, grid, max(1, repeats // 2)), "model": cross})
    return {"dataset": setup["name"], "test_mentions": len(test.queries), "dev_mentions": len(dev.queries), "training_lists": len(groups),
            "synonym_lists": len(synonyms), "data_seconds": round(prep, 1), "rankers_reused": reused, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="ncbi,aap")
    parser.add_argument("--cross-encoder", action="append", default=[], metavar="DATASET=PATH", help="a trained cross-encoder for a dataset")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=RankerConfig.epochs)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: steadier on a CPU shared with other work)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--section", default="pairwise_ranker")
    parser.add_argument("--reuse", action="store_true", help="score the rankers an earlier run left in --workdir instead of training them")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    crosses = dict(spec.split("=", 1) for spec in args.cross_encoder)
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results = [run_dataset(d, args.workdir, crosses.get(d), args.repeats, args.epochs, args.reuse) for d in args.datasets.split(",")]
    publish(args.section, {"command": command_line(__file__, sys.argv[1:]), "ranker_results": results, "threads": args.threads,
                           "repeats": args.repeats, "seconds": round(time.perf_counter() - started, 1),
                           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)})


if __name__ == "__main__":
    main()

"""Which NCBI mentions does the kNN reranker flip, and which training mentions voted? (a diagnosis, no tuning)

    python benchmarks/dense/knn_flips.py --model NAME=PATH [--split test] [--k 64 --lambda 0.1 --beta1 0.1 --beta2 0.1]

Dense over MEDIC names + memory (train for dev, traindev for test), then the kNN reranker with the given parameters
(pass the ones dev chose, e.g. from results/dense_mpnet.json). Prints each mention part whose top-1 correctness
changes (GAIN / LOSS) with the dense and kNN top concepts and the three strongest voters, then the counts.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import model_spec  # noqa: E402
from benchmarks.dense.dense_linking import CONFIGS, Run, hybrid_config  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb, id_matches  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="NAME=PATH (relative: under $MEDLINK_BENCH_MODELS)")
    parser.add_argument("--split", choices=("dev", "test"), default="test")
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--lambda", dest="lambda_", type=float, default=0.1)
    parser.add_argument("--beta1", type=float, default=0.1)
    parser.add_argument("--beta2", type=float, default=0.1)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    _, model = model_spec(args.model)
    kb = ncbi_kb(args.workdir, "train")
    equivalent = equivalent_ids_from_kb(kb)
    mentions = load_dataset(ncbi_split(args.split))
    memory = memory_from_datasets(kb, [ncbi_split("traindev" if args.split == "test" else "train")])
    run = Run(Linker.build(kb, hybrid_config(model, CONFIGS / "ncbi_lexical.json"), memory), mentions, equivalent)
    knn_settings = {"k": args.k, "lambda_": args.lambda_, "beta1": args.beta1, "beta2": args.beta2}
    dense_only, reranked = run.tuner.rankings(run.dense_only), run.tuner.rankings(run.knn((1.0, 0.0), knn_settings))
    gold_per_part = [mention.gold for mention in mentions for _ in mention.parts]

    def correct(candidates, gold) -> bool:
        return bool(candidates) and id_matches(candidates[0].concept_id, gold, equivalent)

    gains = losses = 0
    for text, gold, dense, knn in zip(run.tuner.parts, gold_per_part, dense_only, reranked):
        before, after = correct(dense, gold), correct(knn, gold)
        if before == after:
            continue
        gains, losses = gains + after, losses + before
        voters = [(e["neighbour"], e["concept"], e["similarity"]) for e in knn[0].evidence if "neighbour" in e][:3]
        print(f"{'GAIN' if after else 'LOSS'} {text!r} gold={sorted(gold)} dense={dense[0].concept_id} {dense[0].name!r} "
              f"knn={knn[0].concept_id} {knn[0].name!r} voters={voters}")
    print(f"{len(run.tuner.parts)} mention parts: kNN gains {gains}, loses {losses}")


if __name__ == "__main__":
    main()

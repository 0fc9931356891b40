"""The ``default-dense`` index's recipe: how much the untrained packaged MiniLM adds to the default lexical fusion.

    python benchmarks/dense/default_dense.py [--folds 10] [--precision auto|fp32|bf16|int8 --weight 4.0 --section NAME]

``--index default-dense`` is the default lexical config (exact + TF-IDF + BM25, weights from NCBI dev) plus the
packaged all-MiniLM-L6-v2, not fine-tuned, over KB names only (no memory), and the ``spelled`` stage (the names a
misspelt mention's corrected reading spells) weighed as the dense stage. Its weight comes from a grid scored on
dev data only: AskAPatient fold-0 validation (lay wording, against the 1,036 ontology names) and NCBI dev (against
MEDIC), the mean of the two Acc@1. Test is then scored once, lexical alone (dense left out) against the chosen
weight, in the same run: AskAPatient test (mean of the folds) and NCBI test, KB names only in both.

``--precision`` encodes names and mentions in that format (what ``medlink --precision`` does; recorded in the JSON with
what it resolved to); ``--weight`` skips the dev grid and scores test at that dense weight (the accuracy check of another
precision at the weight the float32 grid chose).
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
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks.dense.dense_ensemble import fused_rankings  # noqa: E402
from benchmarks.dense.dense_linking import score_rankings  # noqa: E402

from medlink.encoders.precision import PRECISIONS, force  # noqa: E402
from medlink.eval import load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.config import LEXICAL_WEIGHTS, default_dense_config  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402

DENSE_WEIGHTS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


class Dataset:
    """One KB's linker and the mentions scored against it, with a dense weight (None: lexical alone)."""

    def __init__(self, kb):
        self.linker = Linker.build(kb, default_dense_config())
        self.equivalent = equivalent_ids_from_kb(kb)

    def score(self, mentions, dense_weight: float | None) -> tuple[float, float]:
        """Acc@1 and the seconds linking took (a generator of weight 0 is not run)."""
        started = time.perf_counter()
        rankings = fused_rankings(self.linker, mentions, {**LEXICAL_WEIGHTS, "spelled": dense_weight or 0.0, "dense": dense_weight or 0.0})
        seconds = time.perf_counter() - started
        return score_rankings(rankings, mentions, self.equivalent)["acc@1"], seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--precision", choices=PRECISIONS, default=None, help="encode in this format (default: the config's auto)")
    parser.add_argument("--weight", type=float, default=None, help="score test at this dense weight, without the dev grid")
    parser.add_argument("--section", default="default_dense")
    args = parser.parse_args()
    force(args.precision)
    started = time.perf_counter()
    aap, ncbi = Dataset(aap_kb(args.workdir)), Dataset(ncbi_kb(args.workdir, "train"))
    aap_dev, ncbi_dev = load_dataset(aap_split(0, "validation")), load_dataset(ncbi_split("dev"))
    trials = []
    for weight in (None, *DENSE_WEIGHTS) if args.weight is None else ():
        scores = (aap.score(aap_dev, weight)[0], ncbi.score(ncbi_dev, weight)[0])
        trials.append({"dense_weight": weight, "askapatient_fold0_validation": scores[0], "ncbi_dev": scores[1], "mean": statistics.mean(scores)})
        print(trials[-1], flush=True)
    chosen = args.weight if args.weight is not None else max((t for t in trials if t["dense_weight"] is not None), key=lambda t: t["mean"])["dense_weight"]
    encoded = ncbi.linker.generators["dense"].encoder.precision
    label = f", {args.precision or 'auto'}" + (f" ({encoded})" if (args.precision or "auto") == "auto" else "")
    rows = []
    for weight in (None, chosen):
        folds = [aap.score(load_dataset(aap_split(fold, "test")), weight) for fold in range(args.folds)]
        ncbi_acc, ncbi_seconds = ncbi.score(load_dataset(ncbi_split("test")), weight)
        rows.append({"variant": "lexical (default)" if weight is None else f"default-dense (dense {weight}{label})",
                     "askapatient_test_mean": statistics.mean(acc for acc, _ in folds), "ncbi_test": ncbi_acc,
                     "ncbi_test_seconds": ncbi_seconds, "askapatient_test_seconds": sum(s for _, s in folds)})
        print(rows[-1], flush=True)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    publish(args.section, {"command": command_line(__file__, sys.argv[1:]), "dev_trials": trials, "chosen_dense_weight": chosen, "test": rows,
                           "precision": args.precision or "auto", "encoded_with": encoded,
                              "folds": args.folds, "peak_rss_mb": peak_mb, "seconds": time.perf_counter() - started})


if __name__ == "__main__":
    main()

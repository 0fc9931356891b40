"""What the probability stage costs a calibrated link: the default index with its rerankers and without, in one run.

    python benchmarks/lexical/calibrated_link.py [--repeats 5]

The default index (probabilities and NIL threshold fitted on its KB's pseudo-mentions) links the default KB's
pseudo-mentions of seed 1 (k = 5) with its rerankers (the calibration stage) and without them, the two settings in
turns; mentions/s the median of ``--repeats``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks._common.pseudo import default_kb_pseudo_mentions  # noqa: E402


def main() -> None:
    import medlink

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    linker = medlink.load_index("default")
    _, in_kb, _ = default_kb_pseudo_mentions(seed=1)
    texts = [m.text for m in in_kb]
    linker.link(texts[:50], k=5)  # warm
    rates = {"with": [], "without": []}
    for _ in range(args.repeats):
        for label in rates:
            started = time.perf_counter()
            linker.link(texts, k=5, rerank=label == "with")
            rates[label].append(len(texts) / (time.perf_counter() - started))
    publish("calibrated_link", {"command": command_line(__file__, sys.argv[1:]), "mentions": len(texts), "repeats": args.repeats,
                                **{f"mentions_per_second_{label}": round(statistics.median(v)) for label, v in rates.items()},
                                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})


if __name__ == "__main__":
    main()

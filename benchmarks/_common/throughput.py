"""Child process for lexical_linking.py: load an index, then time linking a mention file.

    python benchmarks/_common/throughput.py INDEX_DIR MENTIONS_FILE REPEATS K

Prints one JSON object: load seconds (median), mentions/s (median over repeats, one batch call
per pass over the file, duplicates included as in a real stream) and the same for unique mentions.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from medlink.linking.linker import Linker


def main() -> None:
    index, mentions_file, repeats, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    mentions = [line.rstrip("\n") for line in open(mentions_file, encoding="utf-8") if line.strip()]
    loads = []
    for _ in range(3):
        started = time.perf_counter()
        linker = Linker.load(index)
        loads.append(time.perf_counter() - started)
    unique = sorted(set(mentions))
    linker.link(unique[:50], k=k)  # warm-up
    rates, unique_rates = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        linker.link(mentions, k=k)
        rates.append(len(mentions) / (time.perf_counter() - started))
        started = time.perf_counter()
        linker.link(unique, k=k)
        unique_rates.append(len(unique) / (time.perf_counter() - started))
    print(json.dumps({"load_seconds": statistics.median(loads), "mentions": len(mentions), "unique": len(unique),
                      "mentions_per_second": statistics.median(rates), "unique_mentions_per_second": statistics.median(unique_rates)}))


if __name__ == "__main__":
    main()

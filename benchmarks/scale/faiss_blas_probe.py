"""When should exact FAISS search switch from its query-by-query scan to one BLAS matrix product?

    python benchmarks/scale/faiss_blas_probe.py [--names 72852] [--dimensions 384] [--threads 2]

Random unit vectors as many as MEDIC's names (72,852 of 384 floats: a MiniLM index), 128 neighbours, the given threads:
milliseconds per query for batches of 1 to 700 queries, with the scan forced (the switch set beyond reach) and with BLAS
forced (set to 0), the faster of 5 runs each; then the batch at which medlink's setting (``vector_index``) switches.
faiss-cpu 1.15 switches once queries x dimensions reach 128,000 (333 queries here). Prints; see benchmarks/notes.md for
what it printed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from medlink.retrieval.vector_index import BLAS_WORK_PER_THREAD  # noqa: E402

BATCHES = (1, 2, 5, 10, 20, 50, 100, 200, 400, 700)


def fastest(index, queries: np.ndarray, k: int, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        index.search(queries, k)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    import faiss

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--names", type=int, default=72_852)
    parser.add_argument("--dimensions", type=int, default=384)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    faiss.omp_set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    names = rng.standard_normal((args.names, args.dimensions), dtype=np.float32)
    names /= np.linalg.norm(names, axis=1, keepdims=True)
    index = faiss.IndexFlatIP(args.dimensions)
    index.add(names)
    default = faiss.cvar.distance_compute_blas_threshold
    print(f"faiss {faiss.__version__} (its switch: queries x dimensions >= {default:,}), {args.names:,} x {args.dimensions}, "
          f"{args.threads} threads; ms per query")
    print("queries  scan  BLAS")
    for n in BATCHES:
        queries = rng.standard_normal((n, args.dimensions), dtype=np.float32)
        times = []
        for threshold in (2**31 - 1, 0):
            faiss.cvar.distance_compute_blas_threshold = threshold
            times.append(fastest(index, queries, 128) / n * 1000)
        print(f"{n:7d}  {times[0]:5.2f}  {times[1]:5.2f}")
    faiss.cvar.distance_compute_blas_threshold = default
    print(f"medlink switches from {-(-BLAS_WORK_PER_THREAD * args.threads // args.dimensions)} queries")


if __name__ == "__main__":
    main()

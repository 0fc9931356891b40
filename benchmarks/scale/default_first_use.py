"""The default (lexical) index as a new user meets it: first use in a fresh MEDLINK_HOME, what it leaves on disk, warm starts.

    python benchmarks/scale/default_first_use.py [--repeats 5]

First use: ``medlink link "heart attack"`` with an empty MEDLINK_HOME builds the default KB (ICD-10-CM + HPO from
installed packages), its index and the calibration fit, then answers; wall time, CPU time and the phases the build
logs. Disk: the KB file and the index folder. Warm: the same command again, median of ``--repeats`` fresh processes.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, publish, scratch  # noqa: E402

COMMAND = [sys.executable, "-m", "medlink", "link", "heart attack"]


def size_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return round(sum(p.stat().st_size for p in files) / 1e6, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-bench-first-use"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="home-", dir=args.workdir))
    env = {**os.environ, "MEDLINK_HOME": str(home)}
    load = os.getloadavg()[0]  # the machine is shared: what else ran is part of the figure
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(COMMAND, capture_output=True, text=True, check=True, env=env)
    first = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    phases = {m.group(1): float(m.group(2)) for m in re.finditer(r"medlink: (.+?): done in ([\d.]+) s", out.stderr)}
    warm = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        subprocess.run(COMMAND, capture_output=True, text=True, check=True, env=env)
        warm.append(time.perf_counter() - started)
    kb, index = home / "default-kb.sqlite", home / "default-index"
    publish("default_first_use", {
        "command": command_line(__file__, sys.argv[1:]),
        "first_use_seconds": round(first, 1), "first_use_cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
        "first_use_peak_rss_mb": round(after.ru_maxrss / 1024), "phases": phases,
        "kb_mb": size_mb(kb) if kb.exists() else None, "index_mb": size_mb(index) if index.exists() else None,
        "warm_seconds_median": round(statistics.median(warm), 2), "warm_seconds_all": [round(w, 2) for w in warm],
        "answer": out.stdout.strip().splitlines()[:2], "load_average_before": round(load, 2),
    })


if __name__ == "__main__":
    main()

"""The default (lexical) index as a new user meets it: first use in a fresh MEDLINK_HOME, what it leaves on disk, warm starts.

    python benchmarks/scale/default_first_use.py [--repeats 5]

First use: ``medlink link "heart attack"`` with an empty MEDLINK_HOME builds the default KB (ICD-10-CM + HPO from
installed packages), its index and the calibration fit, then answers; wall time, CPU time, the phases the build logs,
and peak memory: the largest process's, and the process tree's summed (the fit may run in a second process). Disk:
the KB file and the index folder. Warm: the same command again, median of ``--repeats`` fresh processes.
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
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, publish, scratch  # noqa: E402

COMMAND = [sys.executable, "-m", "medlink", "link", "heart attack"]


def size_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return round(sum(p.stat().st_size for p in files) / 1e6, 1)


def tree_rss_mb(root: int) -> float:
    """The resident memory of process ``root`` and all its descendants now, in MB (from /proc; 0 where it is gone)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents[int(stat.parent.name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    tree, grew = {root}, True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= found
        grew = bool(found)
    pages = 0
    for pid in tree:
        try:
            pages += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_sampled(command: list[str], env: dict) -> tuple[subprocess.CompletedProcess, float]:
    """``command`` run to its end, and the peak of its process tree's summed resident memory (sampled every 0.2 s):
    a build may fit its probabilities in a second process beside it (``medlink.linking.fit_aside``)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak, output = 0.0, {}
    reader = threading.Thread(target=lambda: output.update(zip(("stdout", "stderr"), process.communicate())))
    reader.start()
    while reader.is_alive():
        peak = max(peak, tree_rss_mb(process.pid))
        reader.join(0.2)
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, command, output["stdout"], output["stderr"])
    return subprocess.CompletedProcess(command, process.returncode, output["stdout"], output["stderr"]), peak


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
    out, tree_peak = run_sampled(COMMAND, env)
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
        "first_use_peak_rss_mb": round(after.ru_maxrss / 1024), "first_use_peak_tree_rss_mb": round(tree_peak), "phases": phases,
        "kb_mb": size_mb(kb) if kb.exists() else None, "index_mb": size_mb(index) if index.exists() else None,
        "warm_seconds_median": round(statistics.median(warm), 2), "warm_seconds_all": [round(w, 2) for w in warm],
        "answer": out.stdout.strip().splitlines()[:2], "load_average_before": round(load, 2),
    })


if __name__ == "__main__":
    main()

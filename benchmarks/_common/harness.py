"""Shared benchmark plumbing: run a command in a child process and measure it, take medians,
write the machine-readable results and the matching section of BENCHMARKS.md.

Peak RSS is the child's own (``getrusage(RUSAGE_CHILDREN)`` in a wrapper that runs only that child).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
BENCHMARKS_MD = ROOT / "BENCHMARKS.md"
SHARED_DATA = ROOT.parent / "shared" / "data"
MODELS = Path(os.environ.get("MEDLINK_BENCH_MODELS") or ROOT / "artefacts" / "models")  # trained model folders (not in git)
THROUGHPUT = Path(__file__).resolve().with_name("throughput.py")  # the linking-speed child process


def model_spec(spec: str) -> tuple[str, str | None]:
    """A ``--model NAME=PATH`` argument: PATH 'default' (or none) is the packaged MiniLM; a relative PATH lives under MODELS.

    Commands and results then name models relative to MODELS, never by this machine's paths.
    """
    name, _, path = spec.partition("=")
    return name, None if path in ("", "default") else str(MODELS / path)


@dataclass
class Run:
    seconds: float
    peak_rss_mb: float
    stdout: str


def run_measured(command: list[str], env: dict | None = None) -> Run:
    """Run ``command`` to completion; wall time and the child's own peak RSS."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    stdout, stderr = process.communicate()
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}):\n{stderr[-2000:]}")
    return Run(seconds, _last_child_peak_rss_mb(), stdout)


def _last_child_peak_rss_mb() -> float:
    """Peak RSS over this process's children: RUSAGE_CHILDREN keeps a running maximum, so each
    measured command runs under its own wrapper process (see ``measure_in_fresh_process``)."""
    import resource

    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def measure_in_fresh_process(command: list[str], repeats: int, env: dict | None = None) -> dict:
    """Run ``command`` ``repeats`` times, each under a fresh wrapper so peak RSS is per run; medians."""
    runs = []
    for _ in range(repeats):
        wrapper = [sys.executable, str(Path(__file__).resolve()), "--measure", json.dumps(command)]
        out = subprocess.run(wrapper, capture_output=True, text=True, env={**os.environ, **(env or {})})
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{out.stderr[-3000:]}")
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        "seconds_median": statistics.median(r["seconds"] for r in runs),
        "seconds_all": [round(r["seconds"], 3) for r in runs],
        "peak_rss_mb_median": statistics.median(r["peak_rss_mb"] for r in runs),
        "repeats": repeats,
        "stdout": runs[-1]["stdout"],
    }


def git_commit() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> dict:
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}


def write_results(name: str, payload: dict) -> Path:
    """Write ``benchmarks/results/NAME.json`` atomically."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps({"commit": git_commit(), "machine": machine(), "date": time.strftime("%Y-%m-%d"), **payload}, indent=2) + "\n")
    os.replace(temporary, path)
    return path


def update_section(name: str, markdown: str) -> None:
    """Replace the section between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` in BENCHMARKS.md (append if absent)."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = BENCHMARKS_MD.read_text() if BENCHMARKS_MD.exists() else "# Benchmarks\n"
    block = f"{start}\n{markdown.rstrip()}\n{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    temporary = BENCHMARKS_MD.with_suffix(".md.tmp")
    temporary.write_text(text)
    os.replace(temporary, BENCHMARKS_MD)


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--measure":
    run = run_measured(json.loads(sys.argv[2]))
    print(json.dumps({"seconds": run.seconds, "peak_rss_mb": run.peak_rss_mb, "stdout": run.stdout}))

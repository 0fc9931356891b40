"""Shared benchmark plumbing: run a command in a child process and measure it, take medians, write the
machine-readable results (with the machine and its CPU) and regenerate BENCHMARKS.md from them (``publish``).

Peak RSS is the child's own (``getrusage(RUSAGE_CHILDREN)`` in a wrapper that runs only that child).
"""

from __future__ import annotations

import json
import os
import tempfile
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


def scratch(name: str = "medlink-bench") -> Path:
    """A benchmark's default work directory (KBs and indexes it builds once and reuses), under the system's temp folder."""
    return Path(tempfile.gettempdir()) / name


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


SIMD_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")  # what decides dense encoding speed on a CPU


def _cpu_model_and_flags() -> tuple[str | None, set[str]]:
    """The CPU's model name and flags from /proc/cpuinfo, else ``lscpu``; (None, set()) when neither says."""
    model, flags = None, set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = (part.strip() for part in line.partition(":"))
            if key == "model name" and model is None:
                model = value
            elif key == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    if model is None or not flags:
        try:
            out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return model, flags
        fields = {}
        for line in out.splitlines():
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
        model, flags = model or fields.get("Model name"), flags or set(fields.get("Flags", "").split())
    return model, flags


def _torch_cpu_capability() -> str | None:
    """What torch dispatches to on this CPU (e.g. 'AVX512'), if torch imports."""
    try:
        import torch

        return str(torch.backends.cpu.get_cpu_capability())
    except Exception:  # no torch, or a torch without the call
        return None


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine() -> dict:
    """The machine a result was measured on: Python, CPU model and SIMD flags, torch's CPU capability, cores, memory.

    ``python``, ``cpus`` and ``platform`` are the fields earlier results have; the rest were added later (a result
    without ``cpu_model`` is reported as "CPU not recorded").
    """
    model, flags = _cpu_model_and_flags()
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
            "cpu_model": model, "cpu_flags": {flag: flag in flags for flag in SIMD_FLAGS},
            "torch_cpu_capability": _torch_cpu_capability(), "cpus_available": available, "memory_gib": _memory_gib()}


def command_line(script: str, arguments: list[str] | None = None) -> str:
    """How a result's command is recorded: ``python benchmarks/SUITE/SCRIPT.py ARGS``, the script relative to the repository."""
    import shlex

    return " ".join(["python", str(Path(script).resolve().relative_to(ROOT)), *map(shlex.quote, arguments or [])])


def write_results(name: str, payload: dict) -> Path:
    """Write ``benchmarks/results/NAME.json`` atomically, with the commit, the machine (CPU included) and the date."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps({"commit": git_commit(), "machine": machine(), "date": time.strftime("%Y-%m-%d"), **payload}, indent=2) + "\n")
    os.replace(temporary, path)
    return path


def publish(name: str, payload: dict) -> Path:
    """Write ``benchmarks/results/NAME.json``, then regenerate BENCHMARKS.md from every results file (benchmarks/report.py).

    Every benchmark script ends here: it records what it measured, and the generator alone decides how BENCHMARKS.md
    shows it (add fields to a script's payload freely; renaming one breaks the generator's reading of older files).
    """
    path = write_results(name, payload)
    from benchmarks.report import write_report

    print(f"wrote {path}; regenerated {write_report(results=RESULTS, out=BENCHMARKS_MD)}", flush=True)
    return path


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--measure":
    run = run_measured(json.loads(sys.argv[2]))
    print(json.dumps({"seconds": run.seconds, "peak_rss_mb": run.peak_rss_mb, "stdout": run.stdout}))

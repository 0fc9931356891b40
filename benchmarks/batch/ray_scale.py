"""``medlink annotate --engine ray`` on this machine: 2 actors against 1 on the same corpus, the output against the
single-process run byte for byte, kill -9 trials each resumed to the same output, and a projection to PubMed's size.

    python benchmarks/batch/ray_scale.py [--repeats 3] [--trials 10] [--corpus ncbi|ncbi+bc5cdr]

Corpus: NCBI Disease's abstracts (title + abstract; train, dev and test: 793), by default with BC5CDR's train and dev
abstracts (1,000 more, distinct: a run long enough that the actors' start and warm-up weigh little; repeating
abstracts instead would let each actor answer from its remembered link results), MEDIC's default lexical index. Each run
is the real command in a child process, Ray started by it on this machine. Rates are the command's own throughput line
(documents per second after the actors' first output: Ray's start and the index loads are counted apart), medians of
``--repeats`` runs per setting, the settings taking turns so a busy machine slows both alike. Each kill trial starts a
2-actor run with ``--out``, kills the command with SIGKILL once the progress record shows a random number of documents
done, waits for the Ray processes it started to go (killing by id those still there after a minute), runs the same
command again, and compares the output with the single-process one. The projection divides 36M abstracts (PubMed's
size) by the measured rate per actor (one actor a core). Each run also records the CPU seconds its actors and its
whole process tree used, and the load average around it: on a machine shared with other jobs, the wall-clock speedup
depends on the share of the cores the run gets, and CPU seconds per document say what it would do alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks.batch.common import WORKDIR, bc5cdr_texts, cpu_name, medic_index, ncbi_texts, write_jsonl  # noqa: E402

PUBMED = 36_000_000
THROUGHPUT = re.compile(r"ray: ([\d,]+) document\(s\) in ([\d.]+) s \(([\d.]+) s to check the index and start Ray and (\d+) actor\(s\).*?\); ([\d,.]+) documents/s")


def annotate(index: Path, source: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "medlink", "annotate", "--index", str(index), "--input", str(source), "--output-format", "jsonl",
            "--out", str(out), *extra]  # not -q: it silences the throughput line read here


def ray_run(index: Path, source: Path, out: Path, workers: int) -> dict:
    """One ``--engine ray`` run: its throughput line's figures, its wall time and the actors' peak memory."""
    import psutil

    from medlink.batch.resume import partial_path, progress_path

    for path in (out, partial_path(out), progress_path(out)):  # a run of this script that was stopped leaves them
        path.unlink(missing_ok=True)
    started = time.perf_counter()
    process = subprocess.Popen(annotate(index, source, out, "--engine", "ray", "--workers", str(workers)), stderr=subprocess.PIPE, text=True)
    peak, cpu, tree, load = {}, {}, {}, [os.getloadavg()[0]]
    while process.poll() is None:
        time.sleep(0.5)
        for child in [psutil.Process(process.pid), *descendants(process.pid)]:
            try:
                times = child.cpu_times()
                tree[child.pid] = times.user + times.system
                if "MapWorker" in " ".join(child.cmdline()):
                    peak[child.pid] = max(peak.get(child.pid, 0), child.memory_info().rss)
                    cpu[child.pid] = times.user + times.system
            except psutil.Error:
                pass
    load.append(os.getloadavg()[0])
    stderr = process.stderr.read()
    if process.returncode != 0:
        raise RuntimeError(f"the ray run failed ({process.returncode}):\n{stderr[-3000:]}")
    found = THROUGHPUT.search(stderr)
    if found is None:
        raise RuntimeError(f"no throughput line in:\n{stderr[-2000:]}")
    documents, seconds, start, actors, rate = found.groups()
    return {"workers": workers, "documents": int(documents.replace(",", "")), "wall_seconds": round(time.perf_counter() - started, 2),
            "run_seconds": float(seconds), "start_seconds": float(start), "documents_per_second": float(rate.replace(",", "")),
            "actor_peak_rss_mb": round(max(peak.values()) / 2**20) if peak else None,
            "actor_cpu_seconds": round(sum(cpu.values()), 1), "process_tree_cpu_seconds": round(sum(tree.values()), 1),
            "load_average_1min_before_after": [round(x, 2) for x in load]}


def descendants(pid: int) -> list:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def kill_trial(index: Path, source: Path, out: Path, reference: bytes, at: int) -> dict:
    """Kill a 2-actor run with SIGKILL once ``at`` documents are recorded done, then run the same command again."""
    import psutil

    from medlink.batch.resume import partial_path, progress_path

    for path in (out, partial_path(out), progress_path(out)):
        path.unlink(missing_ok=True)
    command = annotate(index, source, out, "--engine", "ray", "--workers", "2")
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    done, children = 0, []
    while process.poll() is None and done < at:
        time.sleep(0.1)
        children = descendants(process.pid) or children
        try:
            done = json.loads(progress_path(out).read_text())["progress"]["documents"]
        except (OSError, ValueError, KeyError):
            pass
    if process.poll() is not None:
        return {"at": at, "killed": False}
    children = descendants(process.pid) or children
    process.send_signal(signal.SIGKILL)
    process.wait()
    recorded = json.loads(progress_path(out).read_text())["progress"]["documents"]
    waited = time.monotonic()
    alive = [c for c in children if c.is_running()]
    while alive and time.monotonic() - waited < 60:
        time.sleep(1)
        alive = [c for c in alive if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    gone_after = round(time.monotonic() - waited, 1)
    for child in alive:  # Ray processes this run started, by id
        try:
            child.kill()
        except psutil.Error:
            pass
    resumed = subprocess.run(command, capture_output=True, text=True)
    if resumed.returncode != 0:
        raise RuntimeError(f"the resumed run failed:\n{resumed.stderr[-3000:]}")
    return {"at": at, "killed": True, "recorded_done_at_kill": recorded, "ray_processes_left_after_60s": len(alive),
            "seconds_waited_for_ray_processes": gone_after,
            "resumed": "resumed after document" in resumed.stderr, "identical": out.read_bytes() == reference,
            "sidecar_removed": not progress_path(out).exists() and not partial_path(out).exists()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--corpus", default="ncbi+bc5cdr", choices=("ncbi", "ncbi+bc5cdr"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--name", default="batch_ray")
    args = parser.parse_args()
    index = medic_index()
    texts = ncbi_texts(("train", "dev", "test")) + (bc5cdr_texts() if args.corpus == "ncbi+bc5cdr" else [])
    source = write_jsonl(texts, WORKDIR / f"{args.corpus}.jsonl")
    local_out = WORKDIR / "local.jsonl"
    started = time.perf_counter()
    subprocess.run(annotate(index, source, local_out), check=True, capture_output=True)
    local_wall = time.perf_counter() - started
    reference = local_out.read_bytes()
    runs: dict[int, list[dict]] = {1: [], 2: []}
    identical = {1: [], 2: []}
    for _ in range(args.repeats):
        for workers in (1, 2):
            out = WORKDIR / f"ray-{workers}.jsonl"
            runs[workers].append(ray_run(index, source, out, workers))
            identical[workers].append(out.read_bytes() == reference)
            print(f"{workers} actor(s): {runs[workers][-1]}", flush=True)
    rate = {w: statistics.median(r["documents_per_second"] for r in runs[w]) for w in runs}
    best = {w: max(r["documents_per_second"] for r in runs[w]) for w in runs}
    cpu_per_document = {w: statistics.median(r["process_tree_cpu_seconds"] for r in runs[w]) / len(texts) for w in runs}
    rng = random.Random(args.seed)
    trials = []
    for number in range(args.trials):
        trial = kill_trial(index, source, WORKDIR / "killed.jsonl", reference, rng.randrange(50, len(texts) * 3 // 4))
        trials.append(trial)
        print(f"kill trial {number + 1}: {trial}", flush=True)
    per_core = rate[2] / 2
    core_hours = PUBMED / per_core / 3600
    cpu = cpu_name()
    print(f"[{cpu}] 1 actor {rate[1]:.1f}/s, 2 actors {rate[2]:.1f}/s ({rate[2] / rate[1]:.2f}x); 36M abstracts: {core_hours:,.0f} core-hours")
    publish(args.name, {
        "command": command_line(__file__, sys.argv[1:]),
        "cpu": cpu,
        "dataset": f"{'NCBI Disease train + dev + test' + (' and BC5CDR train + dev' if args.corpus != 'ncbi' else '')} abstracts "
                   f"(title + abstract), {len(texts)} distinct documents, as JSONL",
        "index": "MEDIC (06Jul2012) default lexical index, probabilities fitted on its pseudo-mentions",
        "local": {"wall_seconds": round(local_wall, 2), "documents_per_second_wall": round(len(texts) / local_wall, 1)},
        "ray_runs": {str(w): r for w, r in runs.items()},
        "documents_per_second": {str(w): round(r, 1) for w, r in rate.items()},
        "speedup_2_over_1": round(rate[2] / rate[1], 3),
        "best_documents_per_second": {str(w): round(r, 1) for w, r in best.items()},
        "speedup_2_over_1_best": round(best[2] / best[1], 3),
        "process_tree_cpu_ms_per_document": {str(w): round(1000 * c, 2) for w, c in cpu_per_document.items()},
        "identical_to_local": {str(w): all(v) for w, v in identical.items()},
        "kill_trials": trials,
        "kill_trials_identical": sum(t.get("identical", False) for t in trials),
        "projection_36m_abstracts": {
            "per_core_documents_per_second": round(per_core, 1),
            "core_hours": round(core_hours),
            "hours_on": {str(cores): round(core_hours / cores, 1) for cores in (2, 16, 64, 256)},
            "cores_for_one_day": int(-(-core_hours // 24)),
            "assumes": "one actor a core at the 2-actor run's rate per actor; Ray's start and the input's reading not counted",
        },
    })


if __name__ == "__main__":
    main()

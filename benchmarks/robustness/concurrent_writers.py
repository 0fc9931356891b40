"""Two runs of one command to one output at once: the second must be refused, naming the first, and the first must
finish with a complete artefact.

    python benchmarks/robustness/concurrent_writers.py [--trials 20] [--only NAME | --commands A,B]

Each command first runs to completion once (an earlier artefact at the output, as users have). Each trial starts it
again, waits until its writer's lock appears beside the output (it has started), starts the same command a second time,
and records how the second ended and how long it took; then waits for the first and checks what it left. The commands
and data are kill_trials.py's (MEDIC KB and index builds, bi-encoder training on the test fixtures, annotate --out to
three formats, align --out). ``--only`` runs the commands whose name holds NAME (nothing is published); ``--commands
A,B`` runs and publishes those whose names hold A or B.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* and tests.* imports
from benchmarks._common.harness import SHARED_DATA, command_line, publish  # noqa: E402
from benchmarks.robustness.kill_trials import commands  # noqa: E402

from medlink.locks import lock_path  # noqa: E402

LOCK_WAIT = 120.0  # seconds the first run may take to reach its lock


def wait_for_lock(process: subprocess.Popen, out: Path) -> bool:
    """Until the first run holds its lock (True) or has ended without it (False)."""
    deadline = time.perf_counter() + LOCK_WAIT
    while time.perf_counter() < deadline and process.poll() is None:
        if lock_path(out).exists():
            return True
        time.sleep(0.005)
    return False


def trial(command: list[str], check, out: Path) -> tuple[str, float | None]:
    """One pair of runs: the second's outcome (and seconds to it), then the first's artefact checked."""
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if not wait_for_lock(first, out):
        first.communicate()
        return "first ended before a second could start", None
    began = time.perf_counter()
    second = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    _, first_errors = first.communicate()
    if first.returncode != 0:
        return f"first failed ({first_errors.strip().splitlines()[-1][:120] if first_errors.strip() else first.returncode})", seconds
    try:
        state = check(out)
    except Exception as error:  # noqa: BLE001 - a broken artefact is what this counts
        return f"first left a broken artefact ({type(error).__name__})", seconds
    if state != "complete":
        return f"first left {state}", seconds
    said = second.stderr.strip().splitlines()[-1] if second.stderr.strip() else ""
    if second.returncode == 0:
        return "second also wrote", seconds
    if "is writing" in said and "process " in said:
        return "second refused naming the first", seconds
    return f"second failed otherwise ({said[:120]})", seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--only", default=None, help="Run only the commands whose name holds this (nothing is published).")
    parser.add_argument("--commands", default=None, help="Comma-separated parts of command names: run and publish only those.")
    args = parser.parse_args()
    medic = SHARED_DATA / "medic" / "medic_06Jul2012.txt"
    results: dict[str, dict] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="medlink-concurrent-") as root:
        work = Path(root)
        for name, (command, check, out, _resume, _single_file) in commands(work, medic).items():
            subprocess.run(command, check=True, capture_output=True)  # an earlier artefact, and what later commands read
            if args.only and args.only not in name or args.commands and not any(p in name for p in args.commands.split(",")):
                continue
            outcomes: collections.Counter = collections.Counter()
            refusal_seconds = []
            for _ in range(args.trials):
                outcome, seconds = trial(command, check, out)
                outcomes[outcome] += 1
                if outcome == "second refused naming the first":
                    refusal_seconds.append(seconds)
            results[name] = {"outcomes": dict(outcomes),
                             "median_seconds_to_refusal": round(statistics.median(refusal_seconds), 2) if refusal_seconds else None}
            print(name, results[name], flush=True)
    if args.only:
        return
    failed = sum(n for r in results.values() for outcome, n in r["outcomes"].items() if outcome != "second refused naming the first")
    publish("concurrent_writers", {"command": command_line(__file__, sys.argv[1:]), "trials_per_command": args.trials,
                                   "by_command": results, "not_refused": failed, "seconds": time.perf_counter() - started})


if __name__ == "__main__":
    main()

"""kill -9 at random moments of kb build, index build and training: what is left at the output must be the old artefact,
the new one, or (training) a checkpoint to resume from: never a broken one; and the rerun must succeed.

    python benchmarks/robustness/kill_trials.py [--trials 20]

Each command first runs to completion once (the "old" artefact and the time it takes); each trial starts it again on the
same output, kills it after a random share of that time, checks what is there, then runs it to completion again.
Data: MEDIC (../shared/data/medic) for kb build and index build; training: a bi-encoder on the test fixtures.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* and tests.* imports
from benchmarks._common.harness import SHARED_DATA, command_line, publish  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402


def medlink(*args) -> list[str]:
    return [sys.executable, "-m", "medlink", *map(str, args)]


def check_kb(path: Path) -> str:
    from medlink.kb.store import KB

    if not path.exists():
        return "none"
    KB.open(path).stats()  # raises on a broken file
    return "complete"


def check_index(path: Path) -> str:
    from medlink.linking.linker import Linker

    if not path.exists():
        return "none"
    Linker.load(path).link(["colorectal cancer"], k=1)
    return "complete"


def check_model(path: Path) -> str:
    if (path / "training.json").is_file():
        json.loads((path / "training.json").read_text())
        from medlink.encoders import Encoder

        Encoder(path, precision="fp32")
        return "complete"
    return "checkpoint" if (path / "checkpoint" / "state.json").is_file() else "none"


def trial(command: list[str], check, out: Path, seconds: float, rng: random.Random, rerun) -> str:
    """Start ``command``, kill it (and its children) after a random share of ``seconds``, check ``out``, run ``rerun(out)``."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(rng.uniform(0.05, 1.0) * seconds)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    try:
        state = check(out)
    except Exception as error:  # noqa: BLE001 - a broken artefact is what this counts
        return f"broken ({type(error).__name__})"
    done = subprocess.run(rerun(out), capture_output=True, text=True)
    if done.returncode != 0:
        return f"rerun failed ({done.stderr.strip().splitlines()[-1][:120] if done.stderr.strip() else done.returncode})"
    return f"left {state}, rerun ok"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(0)
    medic = SHARED_DATA / "medic" / "medic_06Jul2012.txt"
    results: dict[str, collections.Counter] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="medlink-kill-") as root:
        work = Path(root)
        kb, index, model = work / "medic.sqlite", work / "index", work / "model"
        train = ["train", "bi-encoder", "--kb", work / "fixture.sqlite", "--train", f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}",
                 "--out", model, "--epochs", "2", "--batch-size", "4", "--precision", "fp32"]
        subprocess.run(medlink("kb", "build", work / "fixture.sqlite", f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q"), check=True)
        jobs = {
            "kb build (MEDIC)": (medlink("kb", "build", kb, f"biosyn:{medic}", "-q"), check_kb, kb, None),
            "index build (MEDIC, lexical)": (medlink("index", "build", "--kb", kb, "--out", index), check_index, index, None),
            "train bi-encoder (fixtures)": (medlink(*train), check_model, model, medlink(*train, "--resume")),
        }
        for name, (command, check, out, resume) in jobs.items():
            began = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            seconds = time.perf_counter() - began
            results[name] = collections.Counter()
            for _ in range(args.trials):
                if resume:
                    subprocess.run(["rm", "-rf", str(out)], check=True)  # each training trial starts anew; a checkpoint is resumed

                def rerun(target: Path, command=command, resume=resume) -> list[str]:
                    return resume if resume and (target / "checkpoint" / "state.json").is_file() else command

                results[name][trial(command, check, out, seconds, rng, rerun)] += 1
            print(name, f"({seconds:.1f}s a run)", dict(results[name]), flush=True)
    broken = sum(n for c in results.values() for outcome, n in c.items() if not outcome.endswith("rerun ok"))
    publish("kill_trials", {"command": command_line(__file__, sys.argv[1:]), "trials_per_command": args.trials,
                            "outcomes": {k: dict(v) for k, v in results.items()}, "broken_or_failed": broken, "seconds": time.perf_counter() - started})


if __name__ == "__main__":
    main()

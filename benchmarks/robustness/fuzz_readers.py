"""Thousands of damaged KB files through every reader: how many build, how many are refused by name, and how many end
in anything else (a traceback, a hang, a half-written KB, staging files left behind, a refusal that names no file).

    python benchmarks/robustness/fuzz_readers.py [--per-reader 600] [--seed 0]

Each case copies a reader's test fixture, damages one file one way (tests/fuzzing.py: truncation, NUL bytes, invalid
UTF-8, BOM, CRLF, CR-only, 70 kB / 1 MB lines, repeated, shuffled and shortened lines, empty and binary files) and
builds it with and without --skip-invalid, in this process, each under a 60 s alarm. A harmless change (BOM, CRLF, CR-only)
built without --skip-invalid must give the undamaged fixture's KB exactly (same content checksum), else it is a silent change.
"""

from __future__ import annotations

import argparse
import collections
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* and tests.* imports
from benchmarks._common.harness import command_line, publish  # noqa: E402
from tests.fuzzing import MUTATIONS  # noqa: E402
from tests.test_fuzz_readers import READERS, build_outcome  # noqa: E402

TIMEOUT = 60


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def fuzz(groups: dict[str, tuple[str, ...]], per_group: int, outcome: Callable[[str, str, int, bool, Path], str],
         failed_check: Callable[[AssertionError], str], seed: int = 0) -> tuple[dict[str, collections.Counter], collections.Counter, list[dict]]:
    """``per_group`` cases per group (a reader or a format), each a random mutation of that group's kinds, every other one with
    --skip-invalid, run by ``outcome(group, kind, seed, skip_invalid, work)`` under a ``TIMEOUT`` alarm in its own folder.

    Returns outcome counts per group and in all, and the failures; an AssertionError is named by ``failed_check``, any other
    exception is a traceback and the alarm a hang. Shared by the KB-reader and the document-reader runs.
    """
    rng = random.Random(seed)
    counts: dict[str, collections.Counter] = {group: collections.Counter() for group in groups}
    failures: list[dict] = []
    signal.signal(signal.SIGALRM, _alarm)
    with tempfile.TemporaryDirectory(prefix="medlink-fuzz-") as root:
        for group, kinds in groups.items():
            for case in range(per_group):
                kind, case_seed, skip = rng.choice(kinds), rng.randrange(2**31), case % 2 == 1
                work = Path(root) / f"{group}-{case}"
                work.mkdir()
                signal.alarm(TIMEOUT)
                try:
                    result = outcome(group, kind, case_seed, skip, work)
                except Hang:
                    result = "hang"
                except AssertionError as error:
                    result = failed_check(error)
                    failures.append({"reader": group, "mutation": kind, "seed": case_seed, "skip_invalid": skip, "what": str(error)[:300]})
                except Exception:  # noqa: BLE001 - counting exactly these is the point
                    result = "traceback"
                    failures.append({"reader": group, "mutation": kind, "seed": case_seed, "skip_invalid": skip,
                                     "what": traceback.format_exc(limit=3)[-600:]})
                finally:
                    signal.alarm(0)
                shutil.rmtree(work, ignore_errors=True)
                counts[group][result] += 1
            print(group, dict(counts[group]), flush=True)
    total = sum(counts.values(), collections.Counter())
    print("all", dict(total), flush=True)
    return counts, total, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-reader", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    counts, total, failures = fuzz({reader: MUTATIONS for reader in READERS}, args.per_reader, build_outcome,
                            lambda error: "silent change" if "silently" in str(error) else "partial artefact or unnamed file", args.seed)
    publish("fuzz_readers", {"command": command_line(__file__, sys.argv[1:]), "cases": sum(total.values()), "by_reader": {r: dict(c) for r, c in counts.items()},
                             "total": dict(total), "failures": failures[:50], "seconds": time.perf_counter() - started})


if __name__ == "__main__":
    main()

"""Thousands of damaged KB files through every reader: how many build (clean, or with control characters replaced and
counted, or with lines skipped and counted), how many are refused naming the file and line (or the file only), and how many
end in anything else (a traceback, a hang, a half-written KB, staging files left behind, a refusal that names no file, a
control character stored in the KB).

    python benchmarks/robustness/fuzz_readers.py [--per-reader 600] [--seed 0] [--no-publish]

Each case copies a reader's test fixture, damages one file one way (tests/fuzzing.py: truncation, NUL bytes, invalid
UTF-8, BOM, CRLF, CR-only, 70 kB / 1 MB lines, repeated, shuffled and shortened lines, empty and binary files; or
tests/control_characters.py: a C0, DEL or C1 character inside an id or a name, as itself or as the format's escape) and
builds it with and without --skip-invalid, in this process, each under a 60 s alarm. A harmless change (BOM, CRLF, CR-only)
built without --skip-invalid must give the undamaged fixture's KB exactly (same content checksum), else it is a silent change.
"""

from __future__ import annotations

import argparse
import collections
import logging
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
from tests.test_fuzz_readers import CONTROL_DAMAGES, DAMAGES, READERS, build_outcome  # noqa: E402

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


def failed_check(error: AssertionError) -> str:
    """The outcome an assertion of ``build_outcome`` names."""
    if "silently" in str(error):
        return "silent change"
    return "control characters stored" if "control characters stored" in str(error) else "partial artefact or unnamed file"


def counting_by_damage(outcome: Callable[[str, str, int, bool, Path], str], by_damage: dict[str, collections.Counter]):
    """``outcome``, also counting each case under its damage ("failure" for one that raised: ``fuzz`` names it)."""
    def counted(group: str, kind: str, seed: int, skip_invalid: bool, work: Path) -> str:
        result = "failure"
        try:
            result = outcome(group, kind, seed, skip_invalid, work)
            return result
        finally:
            by_damage.setdefault(kind, collections.Counter())[result] += 1
    return counted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-reader", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-publish", action="store_true", help="print only (a run smaller than the published one)")
    args = parser.parse_args()
    logging.getLogger("medlink").propagate = False  # replacement warnings are counted, not printed
    started = time.perf_counter()
    by_damage: dict[str, collections.Counter] = {}
    counts, total, failures = fuzz({reader: DAMAGES for reader in READERS}, args.per_reader, counting_by_damage(build_outcome, by_damage),
                                   failed_check, args.seed)
    for kind in CONTROL_DAMAGES:
        print(kind, dict(by_damage.get(kind, {})), flush=True)
    payload = {"command": command_line(__file__, sys.argv[1:]), "cases": sum(total.values()), "by_reader": {r: dict(c) for r, c in counts.items()},
               "total": dict(total), "by_damage": {k: dict(c) for k, c in sorted(by_damage.items())},
               "failures": failures[:50], "seconds": time.perf_counter() - started}
    if args.no_publish:
        print(f"{payload['cases']:,} cases in {payload['seconds']:.0f} s; failures: {failures[:5]}", flush=True)
    else:
        publish("fuzz_readers", payload)


if __name__ == "__main__":
    main()

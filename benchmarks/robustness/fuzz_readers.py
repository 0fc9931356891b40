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
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* and tests.* imports
from benchmarks._common.harness import command_line, publish  # noqa: E402
from tests.fuzzing import MUTATIONS  # noqa: E402
from tests.test_fuzz_readers import READERS, build_outcome  # noqa: E402

TIMEOUT = 60


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-reader", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    counts: dict[str, collections.Counter] = {reader: collections.Counter() for reader in READERS}
    failures: list[dict] = []
    signal.signal(signal.SIGALRM, _alarm)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="medlink-fuzz-") as root:
        for reader in READERS:
            for case in range(args.per_reader):
                kind, seed, skip = rng.choice(MUTATIONS), rng.randrange(2**31), case % 2 == 1
                work = Path(root) / f"{reader}-{case}"
                work.mkdir()
                signal.alarm(TIMEOUT)
                try:
                    outcome = build_outcome(reader, kind, seed, skip, work)
                except Hang:
                    outcome = "hang"
                except AssertionError as error:
                    outcome = "silent change" if "silently" in str(error) else "partial artefact or unnamed file"
                    failures.append({"reader": reader, "mutation": kind, "seed": seed, "skip_invalid": skip, "what": str(error)[:300]})
                except Exception:  # noqa: BLE001 - counting exactly these is the point
                    outcome = "traceback"
                    failures.append({"reader": reader, "mutation": kind, "seed": seed, "skip_invalid": skip,
                                     "what": traceback.format_exc(limit=3)[-600:]})
                finally:
                    signal.alarm(0)
                counts[reader][outcome] += 1
            print(reader, dict(counts[reader]), flush=True)
    total = collections.Counter()
    for counter in counts.values():
        total.update(counter)
    print("all", dict(total), f"in {time.perf_counter() - started:.0f}s", flush=True)
    publish("fuzz_readers", {"command": command_line(__file__, sys.argv[1:]), "cases": sum(total.values()), "by_reader": {r: dict(c) for r, c in counts.items()},
                             "total": dict(total), "failures": failures[:50], "seconds": time.perf_counter() - started})


if __name__ == "__main__":
    main()

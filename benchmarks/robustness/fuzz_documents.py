"""Thousands of damaged document files through the readers ``medlink annotate --input F --format X`` uses: how many load,
how many are refused with medlink's error naming file and line, and how many end in anything else (a traceback, a hang,
a harmless change that altered what was read, a document or annotation lost without a count, a refusal naming no line).

    python benchmarks/robustness/fuzz_documents.py [--per-format 1000] [--seed 0]

Each case damages a small fixture (tests/fixtures/documents: PubTator, BioC XML, BioC JSON, JSONL, plain text read as
``text`` and as ``lines``, PubTator named .txt with the format guessed as annotate does without --format) one way (tests/test_fuzz_documents.py: tests/fuzzing.py's truncation, NUL bytes, invalid
UTF-8, BOM, CRLF, CR-only, 70 kB / 1 MB lines, repeated, shuffled and shortened lines, empty and binary files; and
10 MB lines, lines broken in two, offsets outside the text, a nested span, another format's file) and reads it with
and without --skip-invalid, in this process, each under a 60 s alarm (fuzz_readers.py's loop).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* and tests.* imports
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks.robustness.fuzz_readers import fuzz  # noqa: E402
from tests.test_fuzz_documents import DOCUMENT_MUTATIONS, FAILURES, GROUPS, read_outcome  # noqa: E402


def failed_check(error: AssertionError) -> str:
    """The failure a check's message names (``FAILURES``)."""
    return next((kind for kind in FAILURES if str(error).startswith(kind)), "failed check")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-format", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.getLogger("medlink").setLevel(logging.ERROR)  # each input's overlap count: thousands of lines, none needed here
    started = time.perf_counter()
    counts, total, failures = fuzz({group: DOCUMENT_MUTATIONS for group in GROUPS}, args.per_format, read_outcome, failed_check, args.seed)
    publish("fuzz_documents", {"command": command_line(__file__, sys.argv[1:]), "cases": sum(total.values()), "mutations": list(DOCUMENT_MUTATIONS),
                               "by_format": {f: dict(c) for f, c in counts.items()}, "total": dict(total), "failures": failures[:50],
                               "seconds": time.perf_counter() - started})


if __name__ == "__main__":
    main()

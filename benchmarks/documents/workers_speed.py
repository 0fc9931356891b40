"""`medlink annotate` over a corpus from the command line, one process against worker processes (`--workers N`).

    python benchmarks/documents/workers_speed.py [--workdir DIR] [--copies 10] [--workers 1 2] [--repeats 3]

The corpus: NCBI Disease's 793 abstracts (train, dev and test), ``--copies`` times over, as one PubTator file. The
pipeline: the documents table's dictionary row (MEDIC, NCBI train mentions as memory, the exclusions learned on train;
abbreviations, consistency by vote, composites, assertion), as the peers table runs it. Each run is a fresh
``medlink annotate --input corpus --out FILE`` process, timed from its start to its end (index load and the workers'
start included): what a user waits for. Medians over ``--repeats``; every run's output must be the one-process output
byte for byte. Peak RSS: the largest single process (a worker's or the driver's), not their sum. Writes
benchmarks/results/documents_workers.json.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, measure_in_fresh_process, publish, scratch  # noqa: E402
from benchmarks.documents.medlink_system import DEV, PUBTATOR, TRAIN, exclusions, ncbi_index  # noqa: E402

TEST = PUBTATOR / "NCBItestset_corpus.txt"


def corpus(workdir: Path, copies: int) -> tuple[Path, int]:
    """The PubTator corpus file (the three splits' title and abstract lines, no annotations), and its document count."""
    out = workdir / f"ncbi-x{copies}.pubtator"
    records = []
    for path in (TRAIN, DEV, TEST):
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            lines = [line for line in block.splitlines() if "|t|" in line or "|a|" in line]
            if lines:
                records.append("\n".join(lines) + "\n")
    text = "".join(f"{record}\n" for _ in range(copies) for record in records)
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")
    return out, len(records) * copies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-bench-documents-workers"))
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    index = ncbi_index(args.workdir, True)
    excluded = exclusions(args.workdir, index)
    source, documents = corpus(args.workdir, args.copies)
    rows, reference = [], None
    with tempfile.TemporaryDirectory() as outputs:
        for workers in args.workers:
            out = Path(outputs) / f"workers-{workers}.pubtator"
            command = [sys.executable, "-m", "medlink", "annotate", "--index", str(index), "--exclude-names", str(excluded),
                       "--input", str(source), "--out", str(out), "--output-format", "pubtator", "--consistency", "vote",
                       "--workers", str(workers), "-q"]  # fmt: skip
            runs, same = [], True
            for _ in range(args.repeats):
                out.unlink(missing_ok=True)
                runs.append(measure_in_fresh_process(command, 1))
                written = out.read_bytes()
                reference = reference if reference is not None else written
                same = same and written == reference
            seconds = statistics.median(run["seconds_median"] for run in runs)
            rows.append({
                "workers": workers,
                "documents": documents,
                "seconds_median": round(seconds, 3),
                "seconds_all": [round(run["seconds_median"], 3) for run in runs],
                "abstracts_per_second": round(documents / seconds, 1),
                "peak_rss_mb": round(statistics.median(run["peak_rss_mb_median"] for run in runs), 1),
                "same_output_as_one_process": same,
            })  # fmt: skip
            print(rows[-1], flush=True)
    one = next((row for row in rows if row["workers"] == 1), None)
    for row in rows:
        row["speedup_over_one_process"] = round(one["seconds_median"] / row["seconds_median"], 2) if one else None
    publish("documents_workers", {
        "command": command_line(__file__, sys.argv[1:]),
        "corpus": f"NCBI Disease train + dev + test abstracts x {args.copies} (PubTator)",
        "pipeline": "dictionary: MEDIC, NCBI train mentions as memory, exclusions learned on train, abbreviations, consistency vote, composites, assertion",
        "repeats": args.repeats,
        "rows": rows,
        "date_time": time.strftime("%Y-%m-%d %H:%M"),
    })  # fmt: skip


if __name__ == "__main__":
    main()

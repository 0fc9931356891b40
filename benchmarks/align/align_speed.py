"""How long ``medlink align`` takes on a large pair: the Disease Ontology (xrefs removed; with ``--source-concepts N``,
and a seeded sample of MEDIC concepts up to N) onto ICD-10-CM 2026 + HPO.

    python benchmarks/align/align_speed.py [--workdir DIR] [--aligner DIR ...] [--depth N[,N...]] [--source-concepts N] [--name align_speed]

The whole command in a fresh process (KB opening, target indexing, candidates, scoring, SSSOM writing): wall time and
that process's peak RSS (benchmarks/_common/harness.py). Each ``--aligner`` adds a row: a cross-encoder reads the
first ``--depth`` candidates of every source concept; a bi-encoder embeds the target's names: each aligner runs first
with an empty medlink home (MEDLINK_HOME: no encode cache, a first use) so that embedding is counted, then again in the
same home (a later alignment onto the same target reads the names' vectors from the cache, and since session 31 the
source aliases' too).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._common.harness import command_line, measure_in_fresh_process, publish, scratch  # noqa: E402
from benchmarks.align import data  # noqa: E402

from medlink.kb.store import KB  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-align-bench"))
    parser.add_argument("--aligner", type=Path, action="append", default=[])
    parser.add_argument("--depth", default="4", help="candidates each aligner's cross-encoder reads: one number for all, or one per "
                        "--aligner, comma-separated")
    parser.add_argument("--source-concepts", type=int, default=0, help="make the source this large with a seeded sample of MEDIC "
                        "concepts beside DO's (the issue's 10k-concept source; 0: DO alone)")
    parser.add_argument("--name", default="align_speed")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    source, target = data.do_and_medic(args.workdir, args.source_concepts), data.icd10cm_hpo(args.workdir)
    pair = "DO -> ICD-10-CM 2026 + HPO" if source == data.do_without_xrefs(args.workdir) else "DO + MEDIC sample -> ICD-10-CM 2026 + HPO"
    with KB.open(source) as s, KB.open(target) as t:
        sizes = {"source_concepts": len(s), "target_concepts": len(t)}
    base = [sys.executable, "-m", "medlink", "align", "--source", str(source), "--target", str(target), "--quiet"]
    depths = [int(d) for d in args.depth.split(",")]
    if len(depths) not in (1, len(args.aligner)):
        parser.error(f"--depth: {len(depths)} values for {len(args.aligner)} --aligner folders (give one, or one each)")
    variants = [("medlink lexical", [], ("",))]
    for aligner, depth in zip(args.aligner, depths * len(args.aligner) if len(depths) == 1 else depths):
        variants.append((f"medlink + aligner {aligner.name} (depth {depth}", ["--aligner", str(aligner), "--depth", str(depth)],
                         ("; cold encode cache)", "; the run before's vectors cached: target names, source aliases)")))
    rows = []
    for system, extra, runs in variants:
        with tempfile.TemporaryDirectory(prefix="medlink-home-") as home:  # one home per variant: its second run finds the first's cache
            for run in runs:
                out = args.workdir / f"speed-{len(rows)}.sssom.tsv"
                measured = measure_in_fresh_process([*base, "--out", str(out), *extra], repeats=1, env={"MEDLINK_HOME": home})
                rows.append({"pair": pair, "system": system + run, **sizes, "seconds": round(measured["seconds_median"], 1),
                             "peak_rss_mb": round(measured["peak_rss_mb_median"]), "stdout": measured["stdout"].strip()})
                print(rows[-1], flush=True)
    publish(args.name, {"alignment_speed": rows, "command": command_line(__file__, sys.argv[1:])})


if __name__ == "__main__":
    main()

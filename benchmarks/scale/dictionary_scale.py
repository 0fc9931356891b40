"""The dictionary finder at terminology scale: build time, peak memory, saved size, load time and scan speed.

    python benchmarks/scale/dictionary_scale.py [--rows 5000000 150000] [--workdir DIR] [--name dictionary_scale]

For each size, a synthetic UMLS (``synthetic_umls.py``: N atoms, ~3.3 per CUI, Zipf-distributed words) gives the
names (MRCONSO's STR column, every row); a fresh child process builds the finder from them (time, peak RSS), saves
it (size on disk), and a second child loads it (time, peak RSS) and scans the NCBI Disease test abstracts
(abstracts/s, median of 3 passes; the synthetic names rarely occur in them, so this is the cost of scanning, not of
reporting matches). Writes benchmarks/results/<name>.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import SHARED_DATA, command_line, write_results  # noqa: E402
from benchmarks.scale.synthetic_umls import write_meta  # noqa: E402


def names(meta: Path):
    with open(meta / "MRCONSO.RRF", encoding="utf-8") as rows:
        for row in rows:
            yield row.split("|", 15)[14]


def child(stage: str, folder: Path, out: Path) -> dict:
    from medlink.core import Document
    from medlink.corpora.pubtator import read_pubtator
    from medlink.text.finders.dictionary import DictionaryFinder
    from medlink.text.normalize import normalize

    started = time.perf_counter()
    if stage == "build":
        finder = DictionaryFinder.build(names(folder / "META"), normalize)
        built = time.perf_counter() - started
        finder.save(out)
        return {"build_seconds": round(built, 1), "names_kept": finder.names, "words": len(finder.automaton.words),
                "save_seconds": round(time.perf_counter() - started - built, 1),
                "saved_mb": round(sum(f.stat().st_size for f in out.iterdir()) / 2**20, 1), "build_peak_rss_mb": peak_mb()}
    finder = DictionaryFinder.load(out)
    loaded = time.perf_counter() - started
    documents = read_pubtator(SHARED_DATA / "ncbi-disease-pubtator" / "NCBItestset_corpus.txt")
    passes = []
    for _ in range(3):
        begin = time.perf_counter()
        found = sum(len(finder.find(Document(d.doc_id, d.passages))) for d in documents)
        passes.append(time.perf_counter() - begin)
    return {"load_seconds": round(loaded, 2), "abstracts_per_second": round(len(documents) / statistics.median(passes), 1),
            "spans_found": found, "scan_peak_rss_mb": peak_mb()}


def peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def run_child(stage: str, folder: Path, out: Path) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", stage, str(folder), str(out)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{stage} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[5_000_000, 150_000])
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench-dictionary")
    parser.add_argument("--name", default="dictionary_scale")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], Path(args.child[1]), Path(args.child[2]))))
        return
    results = []
    for rows in args.rows:
        folder = args.workdir / f"umls-{rows}"
        if not (folder / "META" / "MRCONSO.RRF").exists():
            write_meta(folder, rows)
        out = folder / "dictionary"
        shutil.rmtree(out, ignore_errors=True)  # saved_mb counts this run's files only
        result = {"rows": rows, **run_child("build", folder, out), **run_child("scan", folder, out)}
        print(json.dumps(result), flush=True)
        results.append(result)
    print(write_results(args.name, {"task": "dictionary finder over synthetic UMLS names", "results": results,
                                    "command": command_line(__file__, sys.argv[1:])}))


if __name__ == "__main__":
    main()

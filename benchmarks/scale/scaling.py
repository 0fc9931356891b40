"""What a KB will cost: index build time and peak memory, and linking throughput and peak memory, against KB size
(names) and batch size, as a figure (benchmarks/results/scaling.png) and results (benchmarks/results/scaling.json).

    python benchmarks/scale/scaling.py [--names 10000 100000 1000000] [--batch-sizes 1 16 256 4096] [--k 5]
                                       [--config default] [--repeats 3] [--build-repeats 1] [--queries 8192]
                                       [--max-seconds 15] [--workdir DIR] [--section scaling] [--append]
    python benchmarks/scale/scaling.py --plot-only     # redraw the figure from benchmarks/results/scaling.json

At the defaults: about 16 minutes on 2 cores and a peak of about 8.3 GB (the 1M-name index build); the 4.4M-name KB
with the default config would need several times that memory (its TF-IDF-alone index alone peaked at 8.3 GB).

For each size, a synthetic UMLS META (``synthetic_umls.py``; rows chosen so that the KB holds about that many names:
non-English and suppressed atoms are filtered out) becomes a KB (``medlink kb build``, cached in --workdir), then
``medlink index build`` with the default lexical config (what users get: exact names and word sets, completions,
TF-IDF, BM25 and the calibration stage fit on the KB's pseudo-mentions) runs in a fresh process: build seconds and
its peak RSS (median over --build-repeats). ``--config`` names another config for every size ('default' or a JSON
file such as benchmarks/configs/tfidf_only.json); each size's row records which it used.

Linking runs in a second fresh process (this script with ``--child``): the index loaded once (load seconds), then
for each batch size, ascending, ``Linker.link(batch, k)`` over consecutive batches of the queries (KB names with a
character dropped and words shuffled, as lexical_scale.py makes them: distinct strings, no exact hits) until all are
linked or --max-seconds have passed (at least one batch); mentions/s is the median over --repeats such passes. Peak
RSS is the child's (the whole run; and the running maximum after each batch size).

The figure: mentions/s against names (log-log, one line per batch size) and peak RSS of the build and of linking
against names; the 4.4M-name point of lexical_scale.json (TF-IDF alone, all 2,000 queries in one call, measured at
its own commit) drawn as a separate marker. Results are written after each size, so a stopped run keeps the
sizes it finished.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import RESULTS, ROOT, command_line, machine, measure_in_fresh_process, publish, write_results  # noqa: E402

NAMES_PER_ROW = 4_408_729 / 5_000_000  # names a synthetic MRCONSO row gives (lexical_scale.json): ~10% non-English, 2% suppressed
NAME = "scaling"  # --section changes it (a trial run's results beside the published ones)


# ---- the linking child -----------------------------------------------------------------------------------------------

def peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def child(index: str, queries_file: str, batch_sizes: list[int], k: int, repeats: int, max_seconds: float) -> dict:
    """Load the index once, then time each batch size; one JSON object on stdout."""
    from medlink.linking.linker import Linker

    queries = [line.rstrip("\n") for line in open(queries_file, encoding="utf-8") if line.strip()]
    started = time.perf_counter()
    linker = Linker.load(index)
    load_seconds = time.perf_counter() - started
    linker.link(queries[-50:], k=k)  # warm-up (lazy parts of the index), on queries the timed passes reach last if at all
    rows = []
    for size in batch_sizes:
        rates, timed = [], []
        for _ in range(repeats):
            done, begin = 0, time.perf_counter()
            for start in range(0, len(queries), size):
                done += len(linker.link(queries[start:start + size], k=k))
                if time.perf_counter() - begin >= max_seconds:
                    break
            rates.append(done / (time.perf_counter() - begin))
            timed.append(done)
        rows.append({"batch_size": size, "mentions_per_second": round(statistics.median(rates), 1), "all": [round(r, 1) for r in rates],
                     "mentions_timed": timed, "peak_rss_mb_after": peak_mb()})
    return {"load_seconds": round(load_seconds, 3), "queries": len(queries), "distinct": len(set(queries)), "batches": rows,
            "link_peak_rss_mb": peak_mb()}


# ---- one KB size -----------------------------------------------------------------------------------------------------

def kb_for(names: int, workdir: Path) -> Path:
    """The cached KB of a synthetic UMLS with about ``names`` names (META written and KB built when missing)."""
    rows = round(names / NAMES_PER_ROW)
    kb_path = workdir / f"synthetic-{rows}.sqlite"
    if not kb_path.exists():
        meta = workdir / f"synthetic-umls-{rows}"
        if not (meta / "META" / "MRCONSO.RRF").exists():
            from benchmarks.scale.synthetic_umls import write_meta

            print(f"writing a synthetic MRCONSO of {rows:,} rows in {meta}", flush=True)
            write_meta(meta, rows)
        from medlink.kb.build import build_kb

        print(f"building {kb_path}", flush=True)
        building = kb_path.with_suffix(".building.sqlite")
        building.unlink(missing_ok=True)
        build_kb(building, [f"umls:{meta / 'META'}"], progress=False)
        os.replace(building, kb_path)
    return kb_path


def config_label(config: str) -> str:
    return "default" if config == "default" else Path(config).stem


def measure_size(names: int, args: argparse.Namespace) -> dict:
    from benchmarks.scale.lexical_scale import perturbed_queries
    from medlink.kb.store import KB

    load_average = round(os.getloadavg()[0], 2)  # a shared machine: how busy it was when this size started
    kb_path = kb_for(names, args.workdir)
    kb = KB.open(kb_path)
    stats = kb.stats()
    label = config_label(args.config)
    index = args.workdir / f"{kb_path.stem}-{label}-index"
    command = [sys.executable, "-m", "medlink", "index", "build", "--kb", str(kb_path), "--out", str(index), "--config", args.config, "-q"]
    print(f"{stats['names']:,} names: {' '.join(command[1:])}", flush=True)
    build = measure_in_fresh_process(command, args.build_repeats)
    print(f"  build {build['seconds_median']:.1f} s, peak {build['peak_rss_mb_median']:,.0f} MB", flush=True)
    queries = args.workdir / f"{kb_path.stem}-queries-{args.queries}.txt"
    if not queries.exists():
        queries.write_text("\n".join(perturbed_queries(kb, min(args.queries, stats["names"]))) + "\n", encoding="utf-8")
    link = measure_in_fresh_process([sys.executable, str(Path(__file__).resolve()), "--child", str(index), str(queries),
                                     ",".join(map(str, args.batch_sizes)), str(args.k), str(args.repeats), str(args.max_seconds)], 1)
    measured = json.loads(link["stdout"].strip().splitlines()[-1])
    print(f"  link: load {measured['load_seconds']:.2f} s, peak {link['peak_rss_mb_median']:,.0f} MB, "
          + ", ".join(f"batch {r['batch_size']} {r['mentions_per_second']:,.0f}/s" for r in measured["batches"]), flush=True)
    return {"target_names": names, "kb": kb_path.name, "concepts": stats.get("concepts", len(kb)), "names": stats["names"], "config": label,
            "load_average_before": load_average, "build_seconds": round(build["seconds_median"], 2), "build_seconds_all": build["seconds_all"],
            "build_peak_rss_mb": round(build["peak_rss_mb_median"], 1),
            "index_size_mb": round(sum(f.stat().st_size for f in index.rglob("*") if f.is_file()) / 2**20, 1),
            "link_process_peak_rss_mb": round(link["peak_rss_mb_median"], 1), "link_process_seconds": round(link["seconds_median"], 1), **measured}


def reference_point() -> dict | None:
    """lexical_scale.json's 4.4M-name point (TF-IDF alone, one call over its 2,000 queries), drawn as its own marker."""
    path = RESULTS / "lexical_scale.json"
    if not path.exists():
        return None
    d = json.loads(path.read_text(encoding="utf-8"))
    return {"source": "lexical_scale", "commit": d.get("commit"), "cpu": cpu_name(d.get("machine") or {}), "config": "tfidf_only",
            "names": d["names"], "batch_size": d["mentions"], "mentions_per_second": round(d["mentions_per_second"], 1),
            "unique_mentions_per_second": round(d["unique_mentions_per_second"], 1),  # the same 2,000 distinct queries, timed again
            "build_seconds": round(d["build_seconds"], 1), "build_peak_rss_mb": round(d["build_peak_rss_mb"], 1),
            "link_peak_rss_mb": round(d["link_peak_rss_mb"], 1)}


# ---- the figure ------------------------------------------------------------------------------------------------------

def cpu_name(m: dict) -> str:
    """'Intel Xeon, AVX-512', 'AMD EPYC, AVX2 only': a machine() record's CPU as BENCHMARKS.md names it."""
    if not m.get("cpu_model"):
        return "CPU not recorded"
    model = " ".join(re.sub(r"\(R\)|\(TM\)|\bProcessor\b|\bCPU\b|@.*$", "", m["cpu_model"]).split())
    flags = m.get("cpu_flags") or {}
    return f"{model}, " + ("AVX-512" if flags.get("avx512f") else "AVX2 only" if flags.get("avx2") else "no AVX2")


def plot(result: dict, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _: f"{v:,.0f}")
    some = FuncFormatter(lambda v, _: f"{v:,.0f}" if f"{v:.0e}"[0] in "235" else "")  # minor ticks: 2s, 3s and 5s only

    def values(axis, xs, ys, colour, below=False) -> None:  # each point's figure beside it: the plot is read off, not guessed
        for x, y in zip(xs, ys):
            axis.annotate(f"{y:,.0f}", (x, y), textcoords="offset points", xytext=(5, -9 if below else 4), fontsize=7, color=colour)


    sizes = sorted(result["by_kb_size"], key=lambda r: r["names"])
    configs = sorted({r["config"] for r in sizes}, key=lambda c: c != "default")
    styles = {config: style for config, style in zip(configs, ("-", "--", ":"))}
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, batch in enumerate(result["batch_sizes"]):
        for config in configs:
            points = [(r["names"], b["mentions_per_second"]) for r in sizes if r["config"] == config for b in r["batches"] if b["batch_size"] == batch]
            if points:
                label = f"batch {batch:,}" + ("" if config == "default" and len(configs) == 1 else f" ({config})")
                left.plot(*zip(*points), styles[config], marker="o", color=colours[i % len(colours)], label=label)
                values(left, *zip(*points), colours[i % len(colours)], below=i % 2 == 1)
    for config in configs:
        suffix = "" if len(configs) == 1 else f" ({config})"
        points = [(r["names"], r["build_peak_rss_mb"]) for r in sizes if r["config"] == config]
        if points:
            right.plot(*zip(*points), styles[config], marker="s", color="black", label=f"index build{suffix}")
            values(right, *zip(*points), "black")
        for i, batch in enumerate(result["batch_sizes"]):  # the child's running maximum after each batch size, ascending
            points = [(r["names"], b["peak_rss_mb_after"]) for r in sizes if r["config"] == config for b in r["batches"] if b["batch_size"] == batch]
            if points:
                right.plot(*zip(*points), styles[config], marker="o", color=colours[i % len(colours)], label=f"linking, batches up to {batch:,}{suffix}")
                if batch in (result["batch_sizes"][0], result["batch_sizes"][-1]):
                    values(right, *zip(*points), colours[i % len(colours)], below=True)
    reference = result.get("reference")
    if reference:
        label = (f"TF-IDF alone, one call of {reference['batch_size']:,}\n({reference['source']}: {reference.get('cpu', '')}, "
                 f"{reference['commit']})")
        left.plot([reference["names"]], [reference["mentions_per_second"]], "*", markersize=13, color="black", label=label)
        values(left, [reference["names"]], [reference["mentions_per_second"]], "black", below=True)
        right.plot([reference["names"]], [reference["build_peak_rss_mb"]], "*", markersize=13, color="black", label=f"index build, {label}")
        right.plot([reference["names"]], [reference["link_peak_rss_mb"]], "*", markersize=13, color="white", markeredgecolor="black",
                   label=f"linking, {label}")
        values(right, [reference["names"]], [reference["build_peak_rss_mb"]], "black", below=True)
        values(right, [reference["names"]], [reference["link_peak_rss_mb"]], "black")
    for axis in (left, right):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.grid(True, which="both", alpha=0.3)
        axis.set_xlabel("KB size (names)")
        axis.xaxis.set_major_formatter(plain)
        axis.yaxis.set_major_formatter(plain)
        axis.yaxis.set_minor_formatter(some)
    config_text = " / ".join("default lexical config (with calibration)" if c == "default" else c for c in configs)
    left.set_ylabel("distinct mentions linked per second")
    left.set_title(f"Throughput, k {result['k']}, {config_text}", fontsize=10)
    left.legend(fontsize=8, loc="lower left")
    right.set_ylabel("peak RSS (MB)")
    right.set_title("Peak RSS: index build; linking, after each batch size (ascending)", fontsize=10)
    right.legend(fontsize=8, loc="upper left")
    m = result.get("machine") or machine()
    load = result.get("load_average_at_start")
    figure.suptitle(f"medlink: what a KB costs. {cpu_name(m)}, {m.get('cpus_available', '?')} cores"
                    + (f" (shared, load average {load[0]:.1f} at start)" if load else "")
                    + f"; commit {result.get('commit', '-')}, {result.get('date', '')}", fontsize=11)
    figure.tight_layout()
    figure.savefig(out, dpi=110)
    plt.close(figure)
    return out


# ---- main ------------------------------------------------------------------------------------------------------------

def main() -> None:
    if len(sys.argv) == 8 and sys.argv[1] == "--child":
        index, queries, batches, k, repeats, max_seconds = sys.argv[2:]
        print(json.dumps(child(index, queries, [int(b) for b in batches.split(",")], int(k), int(repeats), float(max_seconds))))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names", type=int, nargs="+", default=[10_000, 100_000, 1_000_000], help="KB sizes, in names")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 16, 256, 4096])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--config", default="default", help="'default' or a linker config JSON (e.g. benchmarks/configs/tfidf_only.json)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per batch size (median)")
    parser.add_argument("--build-repeats", type=int, default=1, help="index builds per size (median)")
    parser.add_argument("--queries", type=int, default=8192, help="distinct perturbed KB names to link")
    parser.add_argument("--max-seconds", type=float, default=15.0, help="a timed pass stops after the batch that crosses this")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench" / "scaling")
    parser.add_argument("--append", action="store_true", help="keep the sizes of benchmarks/results/scaling.json measured with other configs")
    parser.add_argument("--plot-only", action="store_true", help="redraw benchmarks/results/scaling.png from benchmarks/results/scaling.json")
    parser.add_argument("--section", default=NAME, help="results name: benchmarks/results/SECTION.json and SECTION.png")
    args = parser.parse_args()
    results, figure = RESULTS / f"{args.section}.json", RESULTS / f"{args.section}.png"
    if args.plot_only:  # the 4.4M-name marker read again from lexical_scale.json (it carries its own commit and CPU)
        result = {**json.loads(results.read_text(encoding="utf-8")), "reference": reference_point()}
        results.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {plot(result, figure)}")
        return
    if args.config != "default":
        args.config = str(Path(args.config).resolve())
    args.workdir.mkdir(parents=True, exist_ok=True)
    kept = []
    if args.append and results.exists():
        kept = [r for r in json.loads(results.read_text(encoding="utf-8"))["by_kb_size"] if r["config"] != config_label(args.config)]
    arguments = [a if not a.startswith(str(ROOT)) else str(Path(a).relative_to(ROOT)) for a in sys.argv[1:]]
    payload = {"command": command_line(__file__, arguments), "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "k": args.k,
               "batch_sizes": args.batch_sizes, "repeats": args.repeats, "build_repeats": args.build_repeats, "max_seconds": args.max_seconds,
               "queries": args.queries, "plot": str(figure.relative_to(ROOT)), "reference": reference_point(), "by_kb_size": list(kept)}
    for names in args.names:
        payload["by_kb_size"].append(measure_size(names, args))
        payload["by_kb_size"].sort(key=lambda r: (r["config"] != "default", r["names"]))
        payload["complete"] = names == args.names[-1]
        path = write_results(args.section, payload)  # after each size: a stopped run keeps what it measured
        plot(json.loads(path.read_text(encoding="utf-8")), figure)
    path = publish(args.section, payload)
    print(f"wrote {plot(json.loads(path.read_text(encoding='utf-8')), figure)}", flush=True)


if __name__ == "__main__":
    main()

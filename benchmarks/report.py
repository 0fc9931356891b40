"""Write BENCHMARKS.md from the results JSON (benchmarks/results/*.json) and the hand-written notes (benchmarks/notes.md).

    python benchmarks/report.py [--results DIR] [--notes FILE] [--out FILE] [--check]

It measures nothing and changes no figure. The file opens with a headline table (``report_headline.py``): the figures a
user asks for first, each linked to its section. Each section is short: a line saying what is measured, compact
tables, bullets, then its runs (results file, CPU, commit, the command that reproduces it). Rows and columns a reader
seldom needs stay in the JSON; results files no section shows are named in one line, never dropped. A results file is
recognised by its shape (the keys its script writes), not by its name. The whole file stays within ``LINE_BUDGET``
lines: a new benchmark adds a short section (and a headline row if users ask for it first), not a long one.

BENCHMARKS.md is written atomically (a temporary file, then a rename). Benchmark scripts call this through
``benchmarks._common.harness.publish`` after writing their JSON; ``--check`` exits 1 when BENCHMARKS.md is stale or
over the budget.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the report_*.py modules beside this file
from report_align import KINDS as ALIGN_KINDS, align_section  # noqa: E402
from report_calibration import KINDS as CALIBRATION_KINDS, calibration_section  # noqa: E402
from report_cells import PROSE_WIDTH, Section, mb, num, secs, short_cpu, table, wrap  # noqa: E402
from report_clinical import KINDS as CLINICAL_KINDS, clinical_section  # noqa: E402
from report_documents import KINDS as DOCUMENT_KINDS, assertion_section, documents_section  # noqa: E402
from report_frontends import KINDS as FRONTEND_KINDS, batch_section, service_section  # noqa: E402
from report_headline import headline  # noqa: E402
from report_linking import KINDS as LINKING_KINDS, dense_section, lexical_section  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS, NOTES, OUT = HERE / "results", HERE / "notes.md", ROOT / "BENCHMARKS.md"
LINE_BUDGET = 300
NOTE_WIDTH = 300  # a note bullet longer than this is refused: split it, or move the detail to docs/benchmark-history.md
KB_ROWS = 3  # the largest KBs of the latest kb_build run

# A results file's kind, by the keys its script writes (first match wins).
KINDS = {
    **CLINICAL_KINDS,
    "kb_build": lambda d: "by_id_us_median" in (d.get("results") or [{}])[0],
    **LINKING_KINDS,
    "lexical_scale": lambda d: "agreement_queries" in d,
    "scaling": lambda d: "by_kb_size" in d,
    "dense_speed": lambda d: "encoding" in d and "linking" in d,
    "episode_strip": lambda d: "texts_after_strip" in d,
    "calibrated_link": lambda d: "mentions_per_second_with" in d,
    "peer_speed": lambda d: "ratio_calibrated_k30" in (d.get("rows") or [{}])[0],
    "default_first_use": lambda d: "first_use_seconds" in d,
    **FRONTEND_KINDS,  # before robustness: spaCy's results have a throughput_ratio too
    "robustness": lambda d: ("by_reader" in d or "by_format" in d or "by_index" in d or "trials_per_command" in d or "throughput_ratio" in d
                             or "by_case" in d or ("by_label" in d and "annotate" in d)),
    "json_scorer": lambda d: "independent_acc@1" in d,
    **DOCUMENT_KINDS,
    **CALIBRATION_KINDS,
    **ALIGN_KINDS,
}


# ---- sections ----------------------------------------------------------------------------------------------------------

def kb_scale_section(get) -> Section | None:
    builds, scale, dictionary, scaling = get("kb_build"), get("lexical_scale"), get("dictionary_scale"), get("scaling")
    if not (builds or scale or dictionary or scaling):
        return None
    section = Section("KB building and scale", "`medlink kb build` in a fresh process (start-up included; median of the run's builds, peak RSS the "
                      f"median build's); lookups over random names after opening the KB. The {KB_ROWS} largest KBs (the others in the JSON).",
                      paired_runs=True)  # the section's runs two to a line: room for the scaling figure within the line budget
    rows = [[r["name"], f"{r['concepts']:,}", f"{r['names']:,}", secs(r["seconds_median"]), mb(r["peak_rss_mb_median"]), f"{r['size_mb']:,.0f} MB",
             f"{r['by_id_us_median']} / {r['by_name_us_median']}"] for _, d in builds[-1:] for r in sorted(d["results"], key=lambda r: -r["names"])[:KB_ROWS]]
    if rows:
        section.body += table(["KB (source)", "concepts", "names", "build", "peak RSS", "KB file", "lookup µs by id / name"], rows)
        section.add_runs(builds)
    section.body += [""] if rows else []
    for name, d in scale[-1:]:
        section.add_runs([(name, d)])
        if scaling:  # in the scaling figure's summary below
            continue
        section.body += [f"- TF-IDF alone over the synthetic {d['names']:,}-name UMLS (`benchmarks/configs/tfidf_only.json`): index build "
                         f"{secs(d['build_seconds'])} at {mb(d['build_peak_rss_mb'])}, {num(d['mentions_per_second'])} mentions/s at "
                         f"{mb(d['link_peak_rss_mb'])}; the shortlist's first score equals scoring every name for "
                         f"{d['top1_score_as_exhaustive']:.1%} of queries."]
    for _, d in scaling[-1:]:
        section.body += scaling_lines(d, scale[-1][1] if scale else None)
    for name, d in dictionary[-1:]:
        cells = [f"{r['rows']:,} rows: build {secs(r['build_seconds'])}, {num(r['abstracts_per_second'])} abstracts/s" for r in d["results"]]
        section.body += [f"- The dictionary finder over synthetic UMLS names, then scanning the NCBI test abstracts: {'; '.join(cells)}."]
        section.add_runs([(name, d)])
    section.add_runs(scaling[-1:])
    return section


def scaling_lines(d: dict, scale: dict | None) -> list[str]:
    """scaling.py's figure: a summary (per KB size: build time and peak, mentions/s at each batch size, linking's peak; then
    lexical_scale's TF-IDF-alone point, the figure's star, when that run is there) with the PNG at its end."""
    sizes = d["batch_sizes"]
    configs = {r["config"] for r in d["by_kb_size"]}
    rates = lambda r: "/".join(num(next((b["mentions_per_second"] for b in r["batches"] if b["batch_size"] == size), None)) for size in sizes)  # noqa: E731
    peaks = lambda r: f"{num(r['batches'][0].get('peak_rss_mb_after'))} → {mb(r['link_peak_rss_mb'])}"  # noqa: E731  (the child's running maximum)
    cells = [f"{r['names']:,}: {secs(r['build_seconds'])}, {mb(r['build_peak_rss_mb'])}; {rates(r)}; {peaks(r)}"
             + ("" if len(configs) == 1 else f" ({r['config']})") for r in d["by_kb_size"]]
    config = "default lexical config" if configs == {"default"} else " / ".join(sorted(configs))
    text = (f"- What a KB costs (synthetic UMLS, {config}, k {d['k']}). Names: build, its peak (largest process); mentions/s (distinct) at batch "
            f"{'/'.join(f'{size:,}' for size in sizes)}; link peak, batch {sizes[0]:,} → {sizes[-1]:,}. {' | '.join(cells)}.")
    if scale:  # lexical_scale's line, here: the figure draws it as its star
        text += (f" ★ {scale['names']:,}, TF-IDF alone (`lexical_scale`): {secs(scale['build_seconds'])}, "
                 f"{mb(scale['build_peak_rss_mb'])}; {num(scale['mentions_per_second'])}/s in one call; {mb(scale['link_peak_rss_mb'])}; first score as "
                 f"scoring every name: {scale['top1_score_as_exhaustive']:.1%} of queries.")
    lines = wrap(text)
    image = f"![KB names against mentions/s and peak RSS]({d['plot']})"  # kept whole: wrap() would cut its alt text
    if len(lines[-1]) + 1 + len(image) <= PROSE_WIDTH:
        return lines[:-1] + [f"{lines[-1]} {image}"]
    return lines + [f"  {image}"]



def tree_peak(d: dict) -> str:
    """The first use's peak over its process tree, where the run measured it and it exceeds the largest process's."""
    tree = d.get("first_use_peak_tree_rss_mb")
    return f" ({mb(tree)} over its processes)" if tree and tree > d["first_use_peak_rss_mb"] else ""

def speed_section(get) -> Section | None:
    lexical, dense, calibrated = get("lexical_linking"), get("dense_speed"), get("calibrated_link")
    if not (lexical or dense):
        return None
    section = Section("Speed", "Linking NCBI test's 972 mention parts in one process, the index loaded (distinct: each part once); medians "
                      "over repeats; 2 cores.", paired_runs=True)  # its many runs two to a line: room within the line budget
    rows = []
    for name, d in lexical:
        s = d["speed"]
        rows.append((s["mentions_per_second"], ["lexical", f"{s['kb'].split(' (')[0]}, {s['names']:,} names", secs(s.get("build_seconds_median")),
                                                secs(s["load_seconds"]), f"{num(s['mentions_per_second'])} ({num(s['unique_mentions_per_second'])})",
                                                mb(s.get("peak_rss_mb")), short_cpu(d)]))
        section.add_runs([(name, d)])
    for name, d in dense:
        s = d["linking"]
        if not s:  # a run of first use / start-up only
            continue
        model = re.search(r"--model (\S+)", d.get("command", ""))
        rows.append((s["mentions_per_second"], [f"dense ({model.group(1) if model else 'packaged MiniLM'})", f"MEDIC, {d.get('kb_names') or 0:,} names",
                                                secs(s.get("index_build_seconds")), secs(s["load_seconds"]),
                                                f"{num(s['mentions_per_second'])} ({num(s['unique_mentions_per_second'])})", mb(s.get("peak_rss_mb")),
                                                short_cpu(d)]))
        section.add_runs([(name, d)])
    section.body += table(["linker", "KB", "index build", "load", "mentions/s (distinct)", "peak RSS", "CPU"],
                          [cells for _, cells in sorted(rows, key=lambda r: -r[0])])
    tables, section.body = section.body, []  # the bullets go after the peers' table: one blank line fewer
    for name, d in dense:
        for r in d.get("first_use") or []:
            section.body.append(f"- default-dense's first use ({short_cpu(d)}, fresh MEDLINK_HOME: default KB, lexical stages, "
                                f"{r.get('dense_names') or 0:,} names encoded, calibration fit; --precision {r['precision']}): {secs(r['seconds'])}, "
                                f"of which the dense phase {secs(r.get('dense_seconds'))}.")
            section.add_runs([(name, d)])
    starts = [(r, name, d) for name, d in dense for r in d.get("startup") or [] if r.get("code", "this commit") == "this commit"]  # not a before
    if starts:
        cells = [f"{r.get('index', 'default-dense')} {secs(r['cli_seconds_median'])} ({short_cpu(d)})" for r, _, d in starts]
        section.body.append(f"- Warm `medlink link --index INDEX \"heart attack\"`, process start to answer, median of fresh processes: {'; '.join(cells)}.")
        section.add_runs([(name, d) for _, name, d in starts])
    for name, d in ([] if get("peer_speed") else calibrated[-1:]):  # the headline's speed row when no peer run; else in the JSON
        section.body.append(f"- The default index on its KB's {d['mentions']:,} pseudo-mentions (k 5): {num(d['mentions_per_second_with'])} mentions/s with "
                            f"its calibration stage, {num(d['mentions_per_second_without'])} without.")
        section.add_runs([(name, d)])
    for name, d in get("default_first_use")[-1:]:
        section.body.append(f"- The default index's first use ({short_cpu(d)}, fresh MEDLINK_HOME, `medlink link \"heart attack\"`: default KB, index, "
                            f"calibration fit): {secs(d['first_use_seconds'])} ({secs(d['first_use_cpu_seconds'])} of CPU, load average {d['load_average_before']:.1f} "
                            f"before), peak {mb(d['first_use_peak_rss_mb'])}{tree_peak(d)}; on disk: KB {d['kb_mb']} MB, index "
                            f"{d['index_mb']} MB; warm start {secs(d['warm_seconds_median'])}.")
        section.add_runs([(name, d)])
    bullets, section.body = section.body, tables
    for name, d in get("peer_speed")[-1:]:
        section.body += ["", "Beside scispaCy 0.6.2's candidate generator (char 3-gram TF-IDF + HNSW, k 30) and Gilda 1.6.1's grounder (exact and "
                         "near-exact matches), the same dictionary (NCBI's test dictionary) and distinct mentions in one run; medlink's default "
                         "lexical config, with its calibration stage unless said:", ""]
        section.body += table(
            ["mentions", "distinct", "medlink k 30 (k 5)", "no calibration", "TF-IDF alone", "scispaCy", "ratio", "Gilda (ratio)",
             "Acc@1 medlink / scispaCy / Gilda", "build medlink / scispaCy"],
            [[r["mentions"].replace("_", " "), num(r["distinct"]),
              f"{num(r['medlink']['per_second']['calibrated_k30'])} ({num(r['medlink']['per_second']['calibrated_k5'])})",
              num(r["medlink"]["per_second"]["uncalibrated_k30"]), num(r["medlink"]["per_second"]["tfidf_only_k30"]), num(r["scispacy"]["per_second"]),
              f"{r['ratio_calibrated_k30']:.2f}x", f"{num(r['gilda']['per_second'])} ({r['ratio_gilda_k30']:.2f}x)" if "gilda" in r else "-",
              f"{r['medlink']['acc1_k30']:.3f} / {r['scispacy']['acc1']:.3f} / " + (f"{r['gilda']['acc1']:.3f}" if "gilda" in r else "-"),
              f"{secs(r['medlink']['build_seconds'])} / {secs(r['scispacy']['build_seconds'])}"] for r in d["rows"]])
        section.add_runs([(name, d)])
    section.body += [""] + bullets if bullets else []
    return section


def robustness_section(get) -> Section | None:
    runs = get("robustness")
    if not runs:
        return None
    section = Section("Robustness", "Tracebacks, hangs, broken or partial artefacts, refusals naming no file, records dropped without a count, "
                      "damaged index files used: none occurred. User files lost and second writers let through: as each row says.",
                      paired_runs=True)  # its short provenance lines two to a line: room within the line budget
    windowed = any("by_label" in d for _, d in runs)
    rows = []
    for name, d in runs:
        if "throughput_ratio" in d and windowed:
            continue  # the before / after run of long documents replaces it (the JSON keeps it)
        rows.append(robustness_row(d))
        section.add_runs([(name, d)])
    section.body += table(["what", "outcomes"], rows)
    return section


def counts(outcomes: dict) -> str:
    return ", ".join(f"{outcome} {n:,}" for outcome, n in sorted(outcomes.items(), key=lambda kv: -kv[1]))


def robustness_row(d: dict) -> list[str]:
    if "by_reader" in d:
        return [f"{d['cases']:,} damaged KB files ({len(d['by_reader'])} readers)", counts(d["total"])]
    if "by_format" in d:
        return [f"{d['cases']:,} damaged document files ({len(d['by_format'])} formats, read as `annotate --input` does)", counts(d["total"])]
    if "by_index" in d:
        return [f"{d['cases']:,} damaged index files ({', '.join(d['by_index'])})", counts(d["total"])]
    if "by_case" in d:
        return [f"{d['cases']:,} outputs aimed at inputs, users' files and folders, symlinks ({len(d['by_command'])} commands)", counts(d["total"])]
    if "by_command" in d:
        total: dict[str, int] = {}
        for result in d["by_command"].values():
            for outcome, n in result["outcomes"].items():
                total[outcome] = total.get(outcome, 0) + n
        return [f"two runs of one command to one output at once ({d['trials_per_command']} trials x {len(d['by_command'])} commands)", counts(total)]
    if "throughput_ratio" in d:
        sizes = ", ".join(f"{r['kb'] // 1024} MB" if r["kb"] >= 1024 else f"{r['kb']} KB" for r in d["sizes"])
        rates = ", ".join(f"{r['chars_per_s']:,}/s" if "chars_per_s" in r else f"over {secs(r.get('timed_out_after_s'))}" for r in d["sizes"])
        ratio = d["throughput_ratio"].get("1MB/64KB")
        return [f"one document of NCBI abstracts, characters/s at {sizes} ({d['annotator']})", rates + (f"; 1 MB / 64 KB {ratio:.2f}" if ratio else "")]
    if "by_label" in d:
        labels = list(d["by_label"])
        runs = {label: {(r["corpus"], r["mb"]): r for r in run["rows"]} for label, run in d["by_label"].items()}
        cells = [f"{corpus} {size} MB: " + " → ".join(f"{secs(runs[label][(corpus, size)]['seconds'])}, {runs[label][(corpus, size)]['peak_rss_mb']:,} MB"
                                                      for label in labels if (corpus, size) in runs[label])
                 for corpus, size in runs[labels[-1]] if size >= 10 or size == 1]
        return [f"one long document, {' → '.join(labels)} ({', '.join(run['commit'] for run in d['by_label'].values())}), seconds and peak RSS",
                "; ".join(cells)]
    outcomes: dict[str, int] = {}
    for result in d["outcomes"].values():
        for outcome, n in result.items():
            outcomes[outcome] = outcomes.get(outcome, 0) + n
    return [f"kill -9 at a random moment ({d['trials_per_command']} trials x {len(d['outcomes'])} commands)", counts(outcomes)]


# ---- the document -----------------------------------------------------------------------------------------------------

def load(results: Path) -> list[tuple[str, dict]]:
    return [(path.stem, json.loads(path.read_text(encoding="utf-8"))) for path in sorted(results.glob("*.json"))]


def read_notes(notes: Path | None) -> dict[str, list[str]]:
    """notes.md's bullets by section title (``## Title`` lines; before any: ``Notes``). HTML comments are for editors."""
    if not notes or not notes.exists():
        return {}
    text = re.sub(r"<!--.*?-->\n?", "", notes.read_text(encoding="utf-8"), flags=re.S)
    out: dict[str, list[str]] = {}
    title = "Notes"
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
        elif line.strip():
            if len(line) > NOTE_WIDTH:
                raise ValueError(f"{notes}: a note of {len(line)} characters (at most {NOTE_WIDTH}): {line[:80]}...")
            out.setdefault(title, []).append(line if line.startswith(("- ", "  ")) else f"- {line}")
    return out


def render(results: Path = RESULTS, notes: Path | None = NOTES) -> str:
    runs = load(results)
    kinds: dict[str, list] = {}
    for name, data in runs:
        kind = next((k for k, test in KINDS.items() if test(data)), "unknown")
        kinds.setdefault(kind, []).append((name, data))
    get = lambda *names: [run for n in names for run in kinds.get(n, [])]  # noqa: E731
    sections = [s for s in (lexical_section(get), dense_section(get), calibration_section(get), documents_section(get),
                            assertion_section(get), clinical_section(get), align_section(get), speed_section(get), kb_scale_section(get),
                            service_section(get), batch_section(get), robustness_section(get)) if s]
    written = read_notes(notes)
    titles = [s.title for s in sections]
    lines = ["# Benchmarks", "",
             "<!-- Generated by `python benchmarks/report.py` from benchmarks/results/*.json, benchmarks/notes.md and benchmarks/anchors.json: "
             "edit those, not this file. -->", "",
             *wrap(f"From the {len(runs)} results files in `benchmarks/results/`, which hold more (dev trials, variants, timings). Each section "
             "ends with its runs: results file (CPU; commit): the command that reproduces it, from the repository root. Parameters are chosen "
             "on dev, never on test. Machines: 2 shared cores, no GPU, Python 3.11; speeds are medians on a noisy shared machine. \"-\": "
             "not recorded. [a-b]: 95% bootstrap interval. *Best peer*: another system in the same run. *Published*: the best figure in "
             "the literature (benchmarks/anchors.json names each source). Earlier figures: docs/benchmark-history.md."), "",
             "## Headline figures",
             *headline(get, titles), ""]
    shown = set()
    for section in sections:
        lines += section.lines(written.get(section.title, []))
        shown |= {name for name, _ in section.runs}
    general = [note for title, notes_ in written.items() if title not in titles for note in notes_]
    if general:
        lines += ["## Notes", "Hand-written: figures no results JSON holds, each with its source.", "", *general, ""]
    unknown = [name for name, _ in kinds.get("unknown", [])]
    rest = [name for name, _ in runs if name not in shown and name not in unknown]
    if rest:
        lines += wrap(f"Not shown (earlier or minor runs): {', '.join(rest)}.")
    if unknown:
        lines += ["", f"Results no section reads yet: {', '.join(unknown)}."]
    return "\n".join(lines).rstrip() + "\n"


def over_budget(text: str) -> str:
    count = text.count("\n")
    return f"{count} lines (budget {LINE_BUDGET})" if count > LINE_BUDGET else ""


def write_report(results: Path = RESULTS, notes: Path | None = NOTES, out: Path = OUT) -> Path:
    """Render and write ``out`` atomically (a temporary file in the same folder, then a rename)."""
    text = render(results, notes)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)  # a new file's default permissions, not mkstemp's 0600
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    if over_budget(text):
        print(f"warning: {out} has {over_budget(text)}: shorten a section", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--notes", type=Path, default=NOTES)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if --out differs from what the JSON gives or is over budget")
    args = parser.parse_args()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != render(args.results, args.notes):
            sys.exit(f"{args.out} is not what {args.results} gives: run python benchmarks/report.py")
        if over_budget(current):
            sys.exit(f"{args.out} has {over_budget(current)}: shorten a section")
        return
    path = write_report(args.results, args.notes, args.out)
    print(f"wrote {path} ({path.read_text(encoding='utf-8').count(chr(10))} lines)")


if __name__ == "__main__":
    main()

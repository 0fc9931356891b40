"""BENCHMARKS.md's sections on the ways of running medlink besides the CLI (issue 51): the HTTP service (locust load,
worker start, one client, Gilda's server beside it, schemathesis), and the spaCy component and the Ray engine.

Each run records the load average at its start where its script took it: the machine is shared, and the figures say
how busy it was (``load_average``). A run that recorded none says so.
"""

from __future__ import annotations

import statistics

import re

from report_cells import Section, mb, num, secs, short_cpu, table

KINDS = {
    "service_load": lambda d: "one_client" in d and "rows" in d,
    "service_peer": lambda d: "server" in (d.get("rows") or [{}])[0],
    "service_fuzz": lambda d: "schemathesis" in d,
    "spacy_pipe": lambda d: "spacy_pipe" in d and "medlink_annotate" in d,
    "ray_batch": lambda d: "speedup_2_over_1" in d,
}
# issue 51's targets, beside what the runs measured
LINK_P50_MS, LINK_P99_MS, ANNOTATE_P50_MS, START_S, RAY_SPEEDUP, SPACY_WITHIN = 30, 150, 50, 1.0, 1.7, 0.10


def load_average(d: dict) -> str:
    """'load average 7.3' (1 minute, at the run's start), or 'load average not recorded'."""
    at_start = d.get("load_average_at_start")
    return f"load average {at_start[0]:.1f}" if at_start else "load average not recorded"


def ray_load(d: dict) -> str:
    """'Load average 3.2-4.1': the 1-minute load before and after each Ray run of ray_scale.py, or ''."""
    loads = [x for runs in (d.get("ray_runs") or {}).values() for r in runs for x in r.get("load_average_1min_before_after") or []]
    return f"Load average {min(loads):.1f}-{max(loads):.1f}" if loads else ""


def cpu_and_load(d: dict) -> str:
    """The headline's CPU cell for a run on the shared machine: 'Intel Xeon, AVX-512; load average 7.3'."""
    return f"{short_cpu(d)}; " + (ray_load(d).lower() if ray_load(d) else load_average(d))


def ms(*values: float | None) -> str:
    """'590 / 1,500 ms', '7.0 / 14 ms': one figure or several of one unit."""
    return " / ".join("-" if v is None else f"{v:,.0f}" if v >= 10 else f"{v:.1f}" for v in values) + " ms"


def best_load_row(runs, scenario: str, index: str = "default") -> tuple[dict, dict] | None:
    """The latest load run's row for ``scenario`` ('/link', '/annotate') with the most workers, and its run: on ``index``
    (the targets are the default lexical index's) where a run has it."""
    runs = [run for run in runs if run[1].get("index") == index] or runs
    for _, d in sorted(runs, key=lambda run: (run[1].get("date", ""), run[0]), reverse=True):
        rows = [r for r in d.get("rows") or [] if r["scenario"].startswith(scenario)]
        if rows:
            return max(rows, key=lambda r: r["workers"]), d
    return None


def _server(row: dict) -> str:
    workers = re.search(r"--workers (\d+)", row["server"])
    name = "medlink" if row["server"].startswith("medlink") else row["server"].replace("==", " ")
    return f"{name}, {workers.group(1)} workers" if workers else name


def _option(command: str, flag: str, default: int) -> int:
    found = re.search(rf"{flag}[ =](\d+)", command or "")
    return int(found.group(1)) if found else default


def service_section(get) -> Section | None:
    loads, peers, fuzzes = get("service_load"), get("service_peer"), get("service_fuzz")
    if not (loads or peers or fuzzes):
        return None
    section = Section("Service", "`medlink serve` on loopback, locust headless (no wait) on the same 2 cores; NCBI Disease test: 10 mentions "
                      "a `/link`, an abstract an `/annotate`, a mention a `/ground`. Other jobs loaded the cores (load average: 1 minute, "
                      "at the run's start): a loaded machine's figures.", paired_runs=True)  # two runs a line where they fit
    rows = []
    loads = [(name, d) for name, d in loads if d.get("rows") or d.get("start")]  # a one-client run alone: in its JSON, its figure in the table
    for _, d in loads:
        one = d.get("one_client") or {}
        annotates = [r for r in d.get("rows") or [] if r["scenario"].startswith("/annotate")]
        busiest = max(annotates, key=lambda r: r["requests_per_second"], default=None)
        for r in d.get("rows") or []:
            if r["scenario"].startswith("/annotate") and r is not busiest:  # /annotate at its best worker count; the others in the JSON
                continue
            alone = r["workers"] == 1 and r["scenario"].startswith("/link") and one
            rows.append([f"medlink, {r['workers']} worker{'s' if r['workers'] > 1 else ''} ({d.get('index', '-')} index)", r["scenario"],
                         f"{r['users']} x {r['seconds']} s", f"{r['requests']:,} ({r['errors']})", f"{r['requests_per_second']:,.1f}",
                         ms(r["p50_ms"], r["p99_ms"]), f"{ms(one['http_p50_ms'])} ({ms(one['library_p50_ms'])} in process)" if alone else "-", "-",
                         " / ".join(mb(x) for x in r.get("worker_peak_rss_mb") or []) or "-", _load(d)])
    for _, d in peers:
        users, seconds = _option(d.get("command"), "--users", 16), _option(d.get("command"), "--seconds", 30)
        for r in d["rows"]:
            load = r.get("load") or {}
            first = r.get("acc1_first_candidate_nil_ignored")
            rows.append([f"{_server(r)} (NCBI test dictionary)", "/ground (1 mention)", f"{users} x {seconds} s",
                         f"{load.get('requests', 0):,} ({load.get('errors', '-')})", f"{load.get('requests_per_second', 0):,.1f}",
                         ms(load.get("p50_ms"), load.get("p99_ms")), ms(r["sequential_p50_ms"], r["sequential_p99_ms"]),
                         f"{r['acc1']:.3f}" + (f" (first candidate {first:.3f})" if first is not None else ""), "-", _load(d)])
    if rows:
        section.body += table(["server", "request", "clients x time", "requests (errors)", "req/s", "p50 / p99", "one client p50 (/ p99)",
                               "Acc@1", "peak RSS per worker", "load average"], rows) + [""]
    starts = [(name, d) for name, d in loads if d.get("start")]
    if starts:
        section.body.append("- Worker start (median of fresh `medlink serve`, to the first healthy answer; of it the index load): " + "; ".join(
            f"{d.get('index')} index {secs(d['start']['seconds_to_healthy_median'])} ({secs(d['start']['index_load_seconds_median'])}, "
            f"{len(d['start']['runs'])} run{'s' if len(d['start']['runs']) > 1 else ''})" for _, d in starts) + ". `/ground`'s Acc@1: the first "
            "match over the distinct NCBI test mentions, an empty answer wrong.")
    for _, d in fuzzes[-1:]:
        s = d["schemathesis"]
        by = s.get("by_status") or {}
        bad = d.get("bad_inputs") or []
        told = sum(1 for b in bad if 400 <= b["status"] < 500 and b.get("detail"))
        version = next((line.replace("Schemathesis v", "") for line in s.get("summary") or [] if line.startswith("Schemathesis v")), "")
        section.body.append(f"- schemathesis {version} against `/openapi.json` ({d.get('index')} index): {s['requests']:,} requests, "
                            f"{s['responses_500_or_more']} answers >= 500 (2xx {sum(n for st, n in by.items() if st.startswith('2')):,}, "
                            f"4xx {sum(n for st, n in by.items() if st.startswith('4')):,}); {len(bad)} hand-made bad requests (malformed JSON, "
                            f"wrong types, empty and oversized bodies, invalid UTF-8, unknown concept ids): {told} answered 4xx with a message.")
    link, annotate = best_load_row(loads, "/link"), best_load_row(loads, "/annotate")
    if link or annotate or starts:
        targets = []
        if link:
            targets.append(f"`/link` p50 <= {LINK_P50_MS} / p99 <= {LINK_P99_MS} ms: {ms(link[0]['p50_ms'], link[0]['p99_ms'])}")
        if annotate:
            targets.append(f"`/annotate` p50 <= {ANNOTATE_P50_MS} ms: {ms(annotate[0]['p50_ms'])}")
        lexical = [d for _, d in starts if d.get("index") == "default"] or [d for _, d in starts]
        if lexical:
            targets.append(f"worker start <= {START_S:.0f} s: {secs(lexical[-1]['start']['seconds_to_healthy_median'])}")
        dense = any(str(d.get("index", "")).endswith("dense") and d.get("rows") for _, d in loads)
        closed_loop = (f". {link[0]['users']} clients each awaiting its answer make p50 about {link[0]['users']} / req/s: {LINK_P50_MS} ms needs "
                       f"{link[0]['users'] * 1000 // LINK_P50_MS:,} req/s ({link[0]['requests_per_second']:,.1f} here), the speed issue's work") if link else ""
        section.body.append("- Issue 51's targets (loaded machine): " + "; ".join(targets) + closed_loop
                            + ("." if dense else ". default-dense under load: not yet measured."))
    section.add_runs([*loads, *peers, *fuzzes])
    return section


def _load(d: dict) -> str:
    at_start = d.get("load_average_at_start")
    return f"{at_start[0]:.1f}" if at_start else "-"


def batch_section(get) -> Section | None:
    """No intro line: each bullet says what it measures (the spaCy run's, then the Ray run's, or that Ray is not yet measured)."""
    spacy, ray = get("spacy_pipe"), get("ray_batch")
    if not (spacy or ray):
        return None
    section = Section("spaCy and Ray", paired_runs=True)  # two runs a line where they fit (the file's line budget)
    for name, d in spacy[-1:]:
        ours, theirs, spans = d["medlink_annotate"], d["spacy_pipe"], d["spans"]
        total = spans["documents_identical"] + spans["documents_differing"]
        ratio = theirs["abstracts_per_second"] / ours["abstracts_per_second"]
        section.body.append(
            f"- `nlp.pipe` (spaCy {theirs.get('spacy', '?')}, blank English) beside `medlink annotate`'s annotator, one process, "
            f"{d['dataset'].split(' (')[0]}, medians of {d.get('repeats', '?')}: {num(theirs['abstracts_per_second'])} against "
            f"{num(ours['abstracts_per_second'])} abstracts/s ({ratio:.2f}x; issue 51: within {SPACY_WITHIN:.0%}); spans and ids identical in "
            f"{spans['documents_identical']} of {total} documents. {short_cpu(d)}, {load_average(d)}.")
        section.add_runs([(name, d)])
    for name, d in ray[-1:]:
        rate, best = d["documents_per_second"], d.get("best_documents_per_second") or {}
        loads = ray_load(d)
        same = d.get("identical_to_local") or {}
        documents = next((r["documents"] for runs in (d.get("ray_runs") or {}).values() for r in runs), None)
        section.body.append(
            f"- `medlink annotate --engine ray` over {num(documents)} distinct abstracts, {short_cpu(d)}: 2 actors {rate['2']:,.1f} documents/s "
            f"against 1 actor {rate['1']:,.1f} ({d['speedup_2_over_1']:.2f}x" + (f", best runs {d['speedup_2_over_1_best']:.2f}x" if best else "")
            + f"; issue 51: >= {RAY_SPEEDUP}x); one process {d['local']['documents_per_second_wall']:,.1f}. Output identical to the one-process "
            "run: " + ", ".join(f"{w} actor{'s' if w != '1' else ''} {'yes' if ok else 'no'}" for w, ok in same.items())
            + (f". {ray_load(d)}." if loads else "."))
        cpu = {w: (statistics.median(r["actor_cpu_seconds"] for r in runs), statistics.median(r["process_tree_cpu_seconds"] for r in runs))
               for w, runs in (d.get("ray_runs") or {}).items() if runs and "actor_cpu_seconds" in runs[0]}
        if cpu.keys() >= {"1", "2"}:
            section.body.append(
                f"- Why not 2x on 2 cores: the actors' CPU {cpu['1'][0]:.1f} s (1) and {cpu['2'][0]:.1f} s (2: each warms up and remembers its "
                f"own link results), the whole run's {cpu['1'][1]:.1f} s and {cpu['2'][1]:.1f} s (the driver, Ray's processes and its start on the "
                "same 2 cores). On a cluster the driver and Ray stay on one node: the rate per actor is what scales.")
        trials = d.get("kill_trials") or []
        killed = [t for t in trials if t.get("killed")]
        p = d["projection_36m_abstracts"]
        hours = ", ".join(f"{h:,.1f} h on {cores}" for cores, h in p["hours_on"].items())
        section.body.append(f"- kill -9 mid-run, then the same command: {sum(1 for t in killed if t.get('identical'))} of {len(killed)} resumed runs "
                            f"gave output identical to the one-process run ({len(trials) - len(killed)} of {len(trials)} trials ended before the kill). "
                            f"36M abstracts at {p['per_core_documents_per_second']:,.1f} "
                            f"documents/s a core (one actor a core): {p['core_hours']:,} core-hours ({hours} cores).")
        section.add_runs([(name, d)])
    if not ray:
        section.body.append("- `medlink annotate --engine ray` (2 actors against 1, byte identity, 10 kill -9 trials, the projection for 36M "
                            "abstracts; `python benchmarks/batch/ray_scale.py`): not yet measured.")
    return section

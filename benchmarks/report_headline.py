"""BENCHMARKS.md's headline table: the figures a user asks for first, one row each, linked to the section that shows
them with their runs. Published figures come from ``benchmarks/anchors.json`` (hand-kept, each with its source).

A row is a function of the results (``get(kind)``) returning ``Row``s or nothing; a row whose results are absent is not
shown. A later benchmark adds a function to ``ROWS`` (and keeps the table at most ``MAX_ROWS``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from report_cells import acc, interval_cell, num, secs, short_cpu, slug, table

ANCHORS = Path(__file__).resolve().parent / "anchors.json"
MAX_ROWS = 25


@dataclass
class Row:
    task: str
    section: str  # the heading of the section that shows the figure and its runs
    data: str
    metric: str
    medlink: str
    peer: str = "-"
    published: str = "-"
    cpu: str = "-"


def anchors(path: Path = ANCHORS) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def published(key: str, known: dict) -> str:
    return known.get(key, {}).get("figure", "-")


def cpus(runs: list[dict]) -> str:
    """The CPUs of several runs, each once."""
    return " / ".join(dict.fromkeys(short_cpu(d) for d in runs))


def latest(runs):
    return sorted(runs, key=lambda run: (run[1].get("date", ""), run[0]))[-1] if runs else None


# ---- rows -------------------------------------------------------------------------------------------------------------

def lexical_rows(get, known):
    for _, d in get("lexical_linking")[-1:]:
        fused = [r for r in d["rows"] if r.get("variant") == "fused" and not r.get("per_fold")]
        ncbi = next((r for r in fused if r["dataset"].startswith("NCBI") and "published" in r["setting"]), None)
        ncbi = ncbi or max((r for r in fused if r["dataset"].startswith("NCBI")), key=lambda r: r["acc@1"], default=None)
        if ncbi:
            yield Row("Linking, lexical", "Lexical linking", f"NCBI Disease test, {ncbi['n']} mentions, {ncbi['setting']}", "Acc@1",
                      acc(ncbi["acc@1"]), published=published("ncbi_acc1", known), cpu=short_cpu(d))
        aap = max((r for r in fused if r["dataset"].startswith("AskAPatient")), key=lambda r: r["acc@1"], default=None)
        if aap:
            yield Row("Linking, lexical", "Lexical linking", f"AskAPatient {aap['split']}, {aap['setting']}", "Acc@1", acc(aap["acc@1"], aap.get("acc@1_std")),
                      published=published("aap_acc1", known), cpu=short_cpu(d))


def dense_rows(get, known):
    from report_linking import dense_rows as rows_of, model_paths, short
    best: dict[str, tuple] = {}
    for r in rows_of(get("dense_linking")):
        key = r["dataset"].split()[0]
        if key not in best or r["best"] > best[key][0]:
            best[key] = (r["best"], f"{r['model']}", r["data"], r.get("knn_value") == r["best"])
    for _, d in get("ensemble"):
        paths = model_paths(d)
        for r in d["test"]:
            if r["weights"] == d["chosen"] and r["acc@1"] > best.get("NCBI", (0,))[0]:
                models = " + ".join(short(paths.get(m, m)) for m, w in r["weights"].items() if w and m != "tfidf")
                best["NCBI"] = (r["acc@1"], f"{models} fused", d, False)
    for key, label, anchor in (("NCBI", "NCBI Disease test, MEDIC + train and dev mentions", "ncbi_acc1"),
                               ("AskAPatient", "AskAPatient test, mean of 10 folds", "aap_acc1")):
        if key in best:
            value, model, d, _ = best[key]
            yield Row("Linking, best trained", "Dense linking and reranking", label, "Acc@1", f"{acc(value)}: {model}", published=published(anchor, known),
                      cpu=short_cpu(d))
    for _, d in [run for run in get("default_dense") if run[1].get("dev_trials")][-1:]:
        cells = {r["variant"].split(" (")[0]: r["ncbi_test"] for r in d["test"]}
        if "default-dense" in cells:
            yield Row("Linking, no training data", "Dense linking and reranking", "NCBI Disease test, MEDIC names only", "Acc@1",
                      f"{acc(cells['default-dense'])} (default-dense; lexical {acc(cells.get('lexical'))})", cpu=short_cpu(d))


def default_index_rows(get, known):
    from report_linking import STAGES
    runs = [(name, d, key, on) for kind, key, (_off, on), _ in STAGES for name, d in get(kind)]
    runs = [run for run in runs if any(r["set"].startswith("default KB pseudo-mentions") for r in run[1][run[2]])]
    if runs:
        name, d, key, on = sorted(runs, key=lambda run: (run[1].get("date", ""), run[0]))[-1]
        r = next(r for r in d[key] if r["set"].startswith("default KB pseudo-mentions"))
        yield Row("Linking, default index", "Lexical linking", f"ICD-10-CM + HPO: {r['mentions']:,} pseudo-mentions of its own KB", "Acc@1",
                  acc(r[on]["acc@1"]), cpu=short_cpu(d))


def ranker_rows(get, known):
    for _, run in get("pairwise_ranker")[-1:]:
        for result in run["ranker_results"]:
            if result["dataset"].startswith("AskAPatient"):
                base, rows = result["rows"][0], result["rows"][1:]
                best = max(rows, key=lambda r: r["dev"]["acc@1"])
                yield Row("Reranking", "Dense linking and reranking", f"{result['dataset']} test, lexical retrieval reranked", "Acc@1",
                          f"{acc(best['test']['acc@1'])} ({best['variant']}; retrieval {acc(base['test']['acc@1'])})", cpu=short_cpu(run))


def calibration_rows(get, known):
    for _, run in get("calibration_nil")[:1]:
        data = next((x for x in run["runs"] if x["dataset"].startswith("NCBI") and not x.get("dense_weight")), None)
        if not data:
            continue
        dev = next((row for row in data["calibration"] if row["model"] == "dev"), None)
        if dev:
            yield Row("Probabilities", "Probabilities and NIL", "NCBI Disease test, first candidates", "ECE (lower is better)",
                      f"{dev['ece']:.4f}" + interval_cell(dev.get("ece_interval")), cpu=short_cpu(run))
        cells = []
        for x in run["runs"]:
            if not x.get("dense_weight"):
                test = x["nil"]["test"]
                cells.append(f"{test['nil_f1']:.4f}" + interval_cell((test.get("intervals") or {}).get("nil_f1")))
        yield Row("NIL", "Probabilities and NIL", "NCBI / AskAPatient test, 15% of gold concepts pruned", "NIL F1", " / ".join(cells),
                  cpu=short_cpu(run))


def documents_rows(get, known):
    from report_documents import MAIN_RUN, chosen
    runs = get("documents_ncbi")
    for _, run in ([r for r in runs if r[0] == MAIN_RUN] or runs)[-1:]:
        row = chosen(run)
        test = row["test"]
        yield Row("Documents", "Documents", "NCBI Disease test, 100 abstracts, `medlink annotate` (dev-chosen pipeline)", "linking F1 / concept F1",
                  f"{test['linking']['f1']:.4f}" + interval_cell((test.get("intervals") or {}).get("linking", {}).get("f1")) + " / "
                  + f"{test['concepts']['f1']:.4f}" + interval_cell((test.get("intervals") or {}).get("concepts", {}).get("f1")),
                  published=published("ncbi_documents", known), cpu=short_cpu(run))
    for _, run in get("peers_documents")[-1:]:
        test = [r for r in run["rows"] if r["split"] == "test"]
        ours = max((r for r in test if r["system"].startswith("medlink")), key=lambda r: r["linking"]["f1"], default=None)
        peer = max((r for r in test if not r["system"].startswith("medlink")), key=lambda r: r["linking"]["f1"], default=None)
        if ours and peer:
            yield Row("Documents, peers", "Documents", "NCBI Disease test, the same documents and KB", "linking F1",
                      f"{ours['linking']['f1']:.4f}", f"{peer['system']} {peer['linking']['f1']:.4f}", cpu=short_cpu(run))
        fast = next((r for r in test if r["system"] == "medlink"), None)
        peers = sorted((r for r in test if not r["system"].startswith(("medlink", "longest"))), key=lambda r: -r["linking"]["f1"])
        if fast and peers:
            more = [(row, w) for _, w in get("documents_workers")[-1:] for row in w["rows"] if row["workers"] > 1][-1:]
            cell = num(fast["abstracts_per_second"]) + "".join(
                f"; a {row['documents']:,}-abstract corpus, `--workers {row['workers']}`: {num(row['abstracts_per_second'])} "
                f"({row['speedup_over_one_process']:.2f}x one process)"
                for row, _ in more
            )
            yield Row("Speed, documents", "Documents", "NCBI Disease test abstracts, dictionary pipeline, 2 cores", "abstracts/s",
                      cell, peers[0]["system"] + " " + num(peers[0]["abstracts_per_second"]),
                      cpu=" / ".join(dict.fromkeys([short_cpu(run), *(short_cpu(w) for _, w in more)])))


def assertion_rows(get, known):
    """One row, the held-out splits side by side (as the NIL row does its two datasets)."""
    for _, run in get("assertion_status")[-1:]:
        splits = []
        for split in ("test", "heldout2"):
            by = {r["system"].split(" ")[0]: r for r in run["assertion_rows"] if r["split"] == split}
            if "medlink" in by:
                splits.append((split, by["medlink"], by.get("negspaCy")))
        if splits:
            yield Row("Assertion status", "Assertion status",
                      "clinical snippets, gold spans: " + " / ".join(f"{split} ({ours['targets']} mentions)" for split, ours, _ in splits),
                      "absent F1 (macro F1)", " / ".join(f"{ours['absent']['f1']:.3f} ({ours['macro_f1']:.3f})" for _, ours, _ in splits),
                      "negspaCy " + " / ".join(f"{neg['absent']['f1']:.3f}" if neg else "-" for _, _, neg in splits)
                      if any(neg for _, _, neg in splits) else "-", cpu=short_cpu(run))


def clinical_rows(get, known):
    """The clinical notes' test split in coding mode, the plain run's figures beside it."""
    from report_clinical import clinical_runs
    runs = {(d["clinical_notes"]["split"], bool(d["clinical_notes"].get("target_namespace"))): d for _, d in clinical_runs(get)}
    coded, plain = runs.get(("test", True)), runs.get(("test", False))
    if coded:
        notes, before = coded["clinical_notes"], (plain or {}).get("clinical_notes")
        yield Row("Clinical notes, coding", "Clinical notes and coding",
                  f"clinical note snippets, test split ({notes['spans_exact']['gold']} mentions): `annotate --target-namespace {notes['target_namespace']}`",
                  "ICD-10-CM category / full code", f"{notes['icd10cm_category_accuracy']:.3f} / {notes['icd10cm_full_accuracy']:.3f}"
                  + (f" (plain {before['icd10cm_category_accuracy']:.3f} / {before['icd10cm_full_accuracy']:.3f})" if before else ""),
                  cpu=short_cpu(coded))


def align_rows(get, known):
    """One row, the targets side by side: each target's main run (align_do_TARGET, else its latest)."""
    runs = get("align_quality")
    cells = []
    for target in dict.fromkeys(d["alignment"]["target"] for _, d in runs):
        main = [(n, d) for n, d in runs if n == f"align_do_{target}"] or [(n, d) for n, d in runs if d["alignment"]["target"] == target][-1:]
        for _, d in main:
            rows = d["alignment_rows"]
            ours = max((r for r in rows if r["system"].startswith("medlink")), key=lambda r: r["test"].get("recall@1") or 0)
            peers = [r for r in rows if not r["system"].startswith("medlink") and r["test"].get("recall@1") is not None]
            cells.append((target, d, ours, max(peers, key=lambda r: r["test"]["recall@1"], default=None)))
    if cells:
        names = {peer["system"].split(" (")[0] for *_, peer in cells if peer}
        yield Row("Alignment", "Aligning terminologies",
                  "Disease Ontology -> " + " / ".join(f"{target} ({d['alignment']['split']['test']} test terms)" for target, d, _, _ in cells),
                  "R@1 (mapping F1)", " / ".join(f"{ours['test']['recall@1']:.3f} ({ours['test']['mapping']['f1']:.3f})" for _, _, ours, _ in cells),
                  (" / ".join(names) + " " + " / ".join(f"{peer['test']['recall@1']:.3f} ({peer['test']['mapping']['f1']:.3f})" if peer else "-"
                                                        for *_, peer in cells)) if names else "-",
                  cpu=cpus([d for _, d, _, _ in cells]))


def speed_rows(get, known):
    for _, d in get("lexical_linking")[-1:]:
        s = d["speed"]
        yield Row("Speed, linking", "Speed", f"NCBI test mentions, lexical index over {s['kb'].split(' (')[0]} ({s['names']:,} names)",
                  "mentions/s, stream (distinct)", f"{num(s['mentions_per_second'])} ({num(s['unique_mentions_per_second'])})", cpu=short_cpu(d))
    peers = get("peer_speed")[-1:]
    for _, d in peers:
        r = next((r for r in d["rows"] if r["mentions"] == "ncbi_test_parts"), d["rows"][0])
        yield Row("Speed, linking", "Speed", f"{num(r['distinct'])} distinct NCBI test mentions, calibrated, k 30", "mentions/s",
                  num(r["medlink"]["per_second"]["calibrated_k30"]), f"scispaCy {num(r['scispacy']['per_second'])} ({r['ratio_calibrated_k30']:.2f}x)",
                  cpu=short_cpu(d))
    for _, d in ([] if peers else get("calibrated_link")[-1:]):
        yield Row("Speed, linking", "Speed", f"default index, {d['mentions']:,} pseudo-mentions, k 5", "mentions/s with calibration (without)",
                  f"{num(d['mentions_per_second_with'])} ({num(d['mentions_per_second_without'])})", cpu=short_cpu(d))
    for _, d in get("lexical_linking")[-1:]:
        s = d["speed"]
        if s.get("build_seconds_median") is not None:
            yield Row("Index build", "Speed", f"lexical index over {s['kb'].split(' (')[0]} ({s['names']:,} names)", "wall time",
                      secs(s["build_seconds_median"]), cpu=short_cpu(d))
    for _, d in get("kb_build")[-1:]:
        default = next((r for r in d["results"] if r["name"].startswith("default")), None)
        if default:
            yield Row("KB build", "KB building and scale", f"{default['name']}: {default['concepts']:,} concepts", "wall time", secs(default["seconds_median"]),
                      cpu=short_cpu(d))
    yield from start_rows(get)


def start_rows(get):
    """default-dense's first use and the warm start, one row when both were measured (the table has a row cap)."""
    first, start = None, None
    runs = [(n, d) for n, d in get("dense_speed") if d.get("first_use")]
    if runs:
        _, d = latest(runs)
        r = d["first_use"][0]
        first = (f"default-dense's first use: KB, index ({r.get('dense_names') or 0:,} names encoded), calibration fit", secs(r["seconds"]), d)
    startups = [(r, d) for _, d in get("dense_speed") for r in d.get("startup") or [] if r.get("code", "this commit") == "this commit"]
    if startups:
        cells = {r.get("index", "default-dense"): (r, d) for r, d in startups}
        first_index = "default" if "default" in cells else next(iter(cells))
        r, d = cells[first_index]
        others = "; ".join(f"{index} {secs(x['cli_seconds_median'])}" for index, (x, _) in cells.items() if index != first_index)
        start = (f"`medlink link --index {first_index} \"heart attack\"`, warm", secs(r["cli_seconds_median"]) + (f" ({others})" if others else ""), d)
    if first and start:
        yield Row("First use, start-up", "Speed", f"{first[0]}; then {start[0]}", "wall time", f"{first[1]}; {start[1]}", cpu=cpus([first[2], start[2]]))
    elif first:
        yield Row("First use", "Speed", first[0], "wall time", first[1], cpu=short_cpu(first[2]))
    elif start:
        yield Row("Start-up", "Speed", start[0], "wall time", start[1], cpu=short_cpu(start[2]))


def robustness_rows(get, known):
    """One row: damaged files read, then kills, second writers and outputs aimed at users' files."""
    runs = get("robustness")
    data, parts, cells = [], [], []
    damaged = [d for _, d in runs if any(k in d for k in ("by_reader", "by_format", "by_index"))]
    if damaged:
        cases = sum(d["cases"] for d in damaged)
        failures = sum(len(d.get("failures") or []) for d in damaged)
        refused = sum(n for d in damaged for outcome, n in d["total"].items() if outcome.startswith("refused"))
        data += damaged
        parts.append(f"{cases:,} damaged KB, document and index files")
        cells.append(f"{failures} of {cases:,} damaged files used or crashed ({refused:,} refused by name, the rest read with counts)")
    kills = [d for _, d in runs if "broken_or_failed" in d or "not_refused" in d or "failure_count" in d]
    if kills:
        data += kills
        parts.append("kills, two writers at once, outputs aimed at users' files")
        for d in kills:
            if "broken_or_failed" in d:
                cells.append(f"{d['broken_or_failed']} of {d['trials_per_command'] * len(d['outcomes'])} kill -9 trials broke an output")
            elif "not_refused" in d:
                cells.append(f"{d['not_refused']} of {d['trials_per_command'] * len(d['by_command'])} second writers let through")
            else:
                cells.append(f"{d['failure_count']} of {d['cases']} outputs aimed at users' files lost one")
    if cells:
        yield Row("Robustness", "Robustness", "; ".join(parts), "failures (tracebacks, hangs, damage used, files lost)", "; ".join(cells),
                  cpu=cpus(data))


def service_rows(get, known):
    from report_frontends import best_load_row, cpu_and_load
    found = best_load_row(get("service_load"), "/link")
    if found:
        row, d = found
        yield Row("Service", "Service",
                  f"`medlink serve --index {d.get('index')}`, {row['workers']} workers, {row['users']} clients: `/link` of 10 NCBI test mentions",
                  "p50 / p99 (req/s)", f"{num(row['p50_ms'])} / {num(row['p99_ms'])} ms ({row['requests_per_second']:.1f})", cpu=cpu_and_load(d))


def spacy_rows(get, known):
    from report_frontends import cpu_and_load
    for _, d in get("spacy_pipe")[-1:]:
        spans = d["spans"]
        yield Row("spaCy component", "spaCy and Ray", "NCBI Disease test, 100 abstracts: `nlp.pipe` against `medlink annotate`, one process",
                  "abstracts/s; documents with identical spans", f"{num(d['spacy_pipe']['abstracts_per_second'])} (`medlink annotate` "
                  f"{num(d['medlink_annotate']['abstracts_per_second'])}); {spans['documents_identical']} of "
                  f"{spans['documents_identical'] + spans['documents_differing']}", cpu=cpu_and_load(d))


def ray_rows(get, known):
    from report_frontends import cpu_and_load
    for _, d in get("ray_batch")[-1:]:
        rate = d["documents_per_second"]
        yield Row("Corpus on Ray", "spaCy and Ray", "`medlink annotate --engine ray`, 2 actors against 1 on 2 cores", "documents/s; 36M abstracts",
                  f"{rate['2']:,.1f} against {rate['1']:,.1f} ({d['speedup_2_over_1']:.2f}x); "
                  f"{d['projection_36m_abstracts']['core_hours']:,} core-hours", cpu=cpu_and_load(d))


ROWS = [lexical_rows, dense_rows, default_index_rows, ranker_rows, calibration_rows, documents_rows, assertion_rows, clinical_rows, align_rows, speed_rows,
        service_rows, spacy_rows, ray_rows, robustness_rows]


def headline(get, headings: list[str], known: dict | None = None) -> list[str]:
    """The table, its rows in ``ROWS`` order; each task links to its section (``headings``: the file's section titles)."""
    known = anchors() if known is None else known
    rows = [row for make in ROWS for row in make(get, known)]
    if len(rows) > MAX_ROWS:
        raise ValueError(f"the headline table has {len(rows)} rows (at most {MAX_ROWS}): fold some into one row")
    missing = {row.section for row in rows} - set(headings)
    if missing:
        raise ValueError(f"headline rows link to sections the file does not have: {sorted(missing)}")
    cells = [[f"[{row.task}](#{slug(row.section)})", row.data, row.metric, row.medlink, row.peer, row.published, row.cpu] for row in rows]
    return table(["task", "data", "metric", "medlink", "best peer, same run", "published", "CPU"], cells)

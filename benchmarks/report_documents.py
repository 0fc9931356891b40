"""BENCHMARKS.md's sections on running text: NCBI documents (the stage table, the peers side by side) and assertion
status. Option variants, dev grids, other taggers' runs and per-class figures stay in the JSON."""

from __future__ import annotations

from report_cells import Section, interval_cell, table

MAIN_RUN = "documents_ncbi"  # the stage table's run; other runs of annotate_ncbi.py (--name, another --tagger): the fastest OTHER_TAGGERS get a bullet
DICTIONARY_RERUN = "documents_cross_corpus_dictionary"  # cross_corpus.py without --taggers, after a change: its rows replace the full run's
OTHER_TAGGERS = 0  # none since issue 52 (the line budget): the 3-layer tagger's run is in the JSON and docs/benchmark-history.md
KINDS = {
    "documents_ncbi": lambda d: "chosen_on_dev" in d,
    "peers_documents": lambda d: "dev_grid" in d and "rows" in d,
    "dictionary_scale": lambda d: "build_seconds" in (d.get("results") or [{}])[0],
    "documents_context": lambda d: "dev_trials" in d and "context" in d,
    "assertion_status": lambda d: "assertion_rows" in d,
    "documents_cross_corpus": lambda d: "trainings" in d and "tests" in d,
    "documents_workers": lambda d: "same_output_as_one_process" in (d.get("rows") or [{}])[0],
}
CROSS_TESTS = {"ncbi-test": "NCBI test", "bc5cdr-dev": "BC5CDR dev"}  # NCBI dev (where choices are made) stays in the JSON
TRAINED_ON = {"none": "nothing (MEDIC's names)", "ncbi": "NCBI train", "bc5cdr": "BC5CDR train", "both": "both"}
FOLD_AFTER = 3  # dictionary stages shown one by one; the later ones fold into one row (the line budget)
ASSERTION_SPLITS = ("test", "heldout", "heldout2")  # held out; dev and notes (tuned on) stay in the JSON


def _f1(score: dict, scores: dict | None = None, measure: str = "") -> str:
    """F1; with the split's scores and the measure's name, its 95% interval when the run recorded one."""
    return f"{score['f1']:.4f}" + (interval_cell((scores.get("intervals") or {}).get(measure, {}).get("f1")) if scores else "")


def _prf(score: dict, scores: dict | None = None, measure: str = "") -> str:
    return f"{score['precision']:.3f} / {score['recall']:.3f} / {_f1(score, scores, measure)}"


def _dev(row: dict) -> tuple:
    return (row["dev"]["linking"]["f1"], row["dev"]["concepts"]["f1"])


def shown_stages(run: dict) -> list[dict]:
    """The dictionary stages one by one, then dev's best of each tagger family: combined with the dictionary, with the
    bi-encoder, with backoff (the tagger alone: in the JSON, the line budget); then the last carried-over row (trained
    on dev too, test only)."""
    tuned = [r for r in run["rows"] if "dev" in r and not r["stage"].startswith("  ")]
    dictionary = [r for r in tuned if "finder" not in r["options"]]
    families = [("", [r for r in tuned if r["options"].get("finder") and "dense_weight" not in r["options"]
                      and not (r["options"].get("finder") == "tagger" and "abbreviations" not in r["options"])]),
                ("", [r for r in tuned if "dense_weight" in r["options"] and "backoff" not in r["options"]]),
                ("", [r for r in tuned if "backoff" in r["options"]])]
    if len(dictionary) > FOLD_AFTER + 1:  # the later stages as one row, named by them all (each alone in the JSON)
        folded = dictionary[FOLD_AFTER:]
        dictionary = [*dictionary[:FOLD_AFTER], {**folded[-1], "stage": "+ " + ", ".join(r["stage"].strip().removeprefix("+ ") for r in folded)}]
    shown = list(dictionary)
    for _, rows in families:
        if rows:
            best = max(rows, key=_dev)
            shown.append({**best, "stage": best["stage"] + (f" (dev's best of {len(rows)})" if len(rows) > 1 else "")})
    if len(shown) > 1 and shown[-1]["test"] == shown[-2]["test"]:  # a last family that changed nothing on test: one row
        shown[-2:] = [{**shown[-1], "stage": f"{shown[-2]['stage']}, {shown[-1]['stage']}"}]
    return shown + [r for r in run["rows"] if "dev" not in r][-1:]  # the last carried-over row; the others in the JSON


def stage_table(run: dict) -> list[str]:
    rows = [[r["stage"].strip(), _f1(r["dev"]["linking"]) if "dev" in r else "-", _f1(r["test"]["mentions"]),
             _prf(r["test"]["linking"], r["test"], "linking"), _f1(r["test"]["concepts"], r["test"], "concepts"),
             f"{r['abstracts_per_second']:.0f}"] for r in shown_stages(run)]
    return table(["stage", "dev linking F1", "test mentions F1", "test linking P / R / F1", "test concept F1", "abstracts/s"], rows)


def stage_caption(run: dict) -> str:
    return f"Dictionary rows add up; then dev's best per tagger family (others: JSON); dev chose *{run['chosen_on_dev'].strip()}*."  # its peak RSS: in the JSON


def chosen(run: dict) -> dict:
    return next(row for row in run["rows"] if "dev" in row and row["stage"].strip() == run["chosen_on_dev"].strip())


def other_tagger_line(name: str, run: dict) -> str:
    """A run of the same benchmark with another tagger, in one bullet: its dev-chosen row."""
    row = chosen(run)
    return (f"- With the tagger {run.get('tagger', '?').rsplit('/', 1)[-1]} (`{name}`): dev chose *{run['chosen_on_dev'].strip()}*, test "
            f"linking F1 {_f1(row['test']['linking'], row['test'], 'linking')}, concept F1 {_f1(row['test']['concepts'])}, "
            f"{row['abstracts_per_second']:.0f} abstracts/s.")


def peers_table(run: dict, shown_elsewhere: tuple[str, ...] = (), elsewhere: dict[str, dict] | None = None) -> list[str]:
    """The peers on the same documents and KB, one run; each peer's best row with and without train mentions (medlink's
    rows but those ``shown_elsewhere``); with ``elsewhere`` (rows by system: the same systems on BC5CDR dev, from
    cross_corpus.py --peers), a column of their linking / concept F1 there."""
    test = [r for r in run["rows"] if r["split"] == "test"]
    kept: dict[str, dict] = {}  # medlink's rows, and each peer's best with the train mentions medlink reads (the rest in the JSON)
    for r in (r for r in test if r["system"] not in shown_elsewhere):
        family = r["system"] if r["system"].startswith("medlink") else r["system"].split(" (")[0].split(" +")[0]
        if (r["system"].startswith("medlink") or "+ train" in r["system"]) and (family not in kept or r["linking"]["f1"] > kept[family]["linking"]["f1"]):
            kept[family] = r
    other = lambda r: f"{_f1(r['linking'])} / {_f1(r['concepts'])}" if r else "-"  # noqa: E731
    rows = sorted(([r["system"], _f1(r["mentions"]), _prf(r["linking"]), _f1(r["concepts"]),
                    *([other(elsewhere.get(r["system"]))] if elsewhere else []), f"{r['abstracts_per_second']:,.0f}",
                    f"{r['setup_seconds']:.1f} s" if r.get("setup_seconds") is not None else "-", f"{r['peak_rss_mb']:,.0f} MB"]
                   for r in kept.values()), key=lambda row: -float(row[2].rsplit(" / ", 1)[1]))
    return table(["system", "mentions F1", "linking P / R / F1", "concept F1", *(["BC5CDR dev linking / concept F1"] if elsewhere else []),
                  "abstracts/s", "setup", "peak RSS"], rows)


def cross_corpus_table(run: dict) -> list[str]:
    """Rows: what the pipeline learned from; columns: each test set, for the dictionary pipeline and, when the run has
    them, the tagger's rows; cells: linking F1 [interval] / concept F1."""
    cell = lambda row, test: _f1(row[test]["linking"], row[test], "linking") + " / " + _f1(row[test]["concepts"])  # noqa: E731
    pipelines = list(dict.fromkeys(r["pipeline"] for r in run["rows"]))
    by = {(r["pipeline"], r["trained_on"]): r for r in run["rows"]}
    columns = [(p, t) for p in pipelines for t in CROSS_TESTS]
    rows = [[TRAINED_ON.get(training, training), *(cell(by[p, training], t) if (p, training) in by else "-" for p, t in columns)]
            for training in dict.fromkeys(r["trained_on"] for r in run["rows"])]
    names = [f"{CROSS_TESTS[t]}{'' if p == pipelines[0] else ', ' + p.split(',')[0]}" for p, t in columns]
    return table(["trained on", *names], rows)


def with_rows_of(run: dict, rerun: dict) -> dict:
    """``run`` with each of its rows that ``rerun`` has again (same pipeline and training) replaced by ``rerun``'s."""
    again = {(r["pipeline"], r["trained_on"]): r for r in rerun["rows"]}
    return {**run, "rows": [again.get((r["pipeline"], r["trained_on"]), r) for r in run["rows"]]}


def cross_corpus_caption(run: dict, later: bool = False) -> str:
    """``later``: the dictionary rows come from a later run than the tagger's."""
    pipelines = list(dict.fromkeys(r["pipeline"] for r in run["rows"]))
    tagger = " and the tagger + dictionary one" if len(pipelines) > 1 else ""
    return (f"Second: the last dictionary row's pipeline{tagger} trained on each corpus (memory, exclusions{', tagger' if tagger else ''}"
            f"{'; dictionary rows: later run' if later else ''}), disease spans; linking [interval] / concept F1.")


def peers_caption(run: dict, bc5cdr: bool) -> str:
    also = "; BC5CDR dev: + NCBI's train mentions" if bc5cdr else ""
    return f"Third: peers, same documents and KB, options from NCBI dev (speed: median of {run.get('repeats', 1)} runs{also})."


def documents_section(get) -> Section | None:
    ncbi_runs, peers_runs = get("documents_ncbi"), get("peers_documents")
    if not (ncbi_runs or peers_runs):
        return None
    section = Section("Documents", "`medlink annotate` on NCBI Disease abstracts (dev 100, test 100), MEDIC as the KB. Mentions: strict span; "
                      "linking: span and concept right; concept F1: per abstract.", paired_runs=True)  # two runs a line where they fit
    main = [(name, run) for name, run in ncbi_runs if name == MAIN_RUN][-1:] or ncbi_runs[-1:]
    for name, run in main:
        section.intro += " " + stage_caption(run)  # the stage table's caption, in the intro: one paragraph fewer
        section.body += [*stage_table(run), ""]
        section.add_runs([(name, run)])
    others = [(name, run) for name, run in ncbi_runs if main and name != main[0][0]]
    for name, run in sorted(others, key=lambda r: -chosen(r[1])["abstracts_per_second"])[:OTHER_TAGGERS]:  # the rest in the JSON
        section.body.append(other_tagger_line(name, run))
        section.add_runs([(name, run)])
    cross_runs = get("documents_cross_corpus")
    cross = [(name, run) for name, run in cross_runs if name != DICTIONARY_RERUN][-1:]
    rerun = [(name, run) for name, run in cross_runs if name == DICTIONARY_RERUN][-1:]
    for name, run in cross:  # captions in the intro: a paragraph fewer each
        shown = with_rows_of(run, rerun[0][1]) if rerun else run
        section.intro += " " + cross_corpus_caption(shown, bool(rerun))
        section.body += ["", *cross_corpus_table(shown)] if section.body and section.body[-1] else cross_corpus_table(shown)
        section.add_runs([(name, run), *rerun])
    elsewhere = {r["system"]: r for _, run in cross for r in (run.get("peers") or {}).get("rows", [])}
    for name, run in peers_runs[-1:]:
        section.intro += " " + peers_caption(run, bool(elsewhere))
        shown_elsewhere = ("medlink (tagger + dictionary)",) + (("medlink (MEDIC only)",) if cross else ())  # the stage table's, the cross table's
        table_rows = peers_table(run, shown_elsewhere, elsewhere)
        section.body += ["", *table_rows] if section.body and section.body[-1] else table_rows
        section.add_runs([(name, run)])
    for name, run in get("documents_workers")[-1:]:
        section.body += ["", workers_line(run)] if section.body and section.body[-1] else [workers_line(run)]
        section.add_runs([(name, run)])
    return section


def workers_line(run: dict) -> str:
    """One bullet: `medlink annotate` over a corpus from the command line, one process against worker processes."""
    rows = sorted(run["rows"], key=lambda r: r["workers"])
    speeds = "; ".join(f"{r['workers']} {'process' if r['workers'] == 1 else 'worker processes'} {r['abstracts_per_second']:,.0f}"
                       + (f" ({r['speedup_over_one_process']:.2f}x)" if r["workers"] > 1 and r.get("speedup_over_one_process") else "")
                       for r in rows)
    same = "the same output" if all(r["same_output_as_one_process"] for r in rows) else "OUTPUTS DIFFER"
    return (f"- `medlink annotate --workers N`, {rows[0]['documents']:,} abstracts ({run['corpus'].split(' (')[0]}), the dictionary pipeline, "
            f"a fresh process a run, start included, median of {run['repeats']}: abstracts/s {speeds}; {same}.")


def assertion_section(get) -> Section | None:
    runs = get("assertion_status")
    if not runs:
        return None
    name, run = runs[-1]
    counts = {r["split"]: r["targets"] for r in run["assertion_rows"]}
    section = Section("Assertion status", "ConText rules mark each mention present, absent, possible, conditional, hypothetical or someone_else "
                      "(i2b2 2010), and historical or not. Gold spans of clinical snippets by writers who did not see the rules "
                      "(`benchmarks/assertion_data`); held-out splits shown. negspaCy says negated or not only.")
    rows = []
    for split in ASSERTION_SPLITS:
        by = {r["system"].split(" ")[0]: r for r in run["assertion_rows"] if r["split"] == split}
        if "medlink" not in by:
            continue
        ours, neg, med = by["medlink"], by.get("negspaCy"), by.get("medspaCy")
        rows.append([f"{split} ({counts.get(split, 0)})", f"{ours['accuracy']:.3f} / {ours['macro_f1']:.3f}", _f1(ours["absent"]),
                     _f1(neg["absent"]) if neg else "-", f"{med['accuracy']:.3f} / {_f1(med['absent'])}" if med else "-",
                     _f1(ours["historical"]) if "historical" in ours else "-",
                     " / ".join(f"{r['records_per_second']:,.0f}" for r in (ours, neg, med) if r)])
    section.body += table(["split (mentions)", "medlink accuracy / macro F1", "medlink absent F1", "negspaCy absent F1",
                           "medspaCy accuracy / absent F1", "medlink historical F1", "snippets/s medlink / negspaCy / medspaCy"], rows)
    line = ""
    if run.get("end_to_end"):
        line = ("- End to end (`medlink annotate`, default index, same snippets), spans found and status right when found: "
                + "; ".join(f"{split} {e['found']:.3f}, {e['status_right_when_found']:.3f}" for split, e in run["end_to_end"].items()) + ".")
    if run.get("pipeline_cost"):
        line = (line + " Cost" if line else "- Its cost in `medlink annotate`") + (
            " ({documents} NCBI test abstracts, default index, on / off in turns): {abstracts_per_second_with:,.0f} / "
            "{abstracts_per_second_without:,.0f} abstracts/s.".format(**run["pipeline_cost"]))
    if line:
        section.body += ["", line]
    section.add_runs([(name, run)])
    return section

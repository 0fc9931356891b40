"""BENCHMARKS.md's section on linking in running text: the NCBI stage table, the peers side by side, the dictionary
finder at scale (``report.py`` calls ``documents``; kept apart so report.py stays one screen per task)."""

from __future__ import annotations

from report_cells import interval_cell  # beside this file, as report.py imports it

MAIN_RUN = "documents_ncbi"  # the stage table's run; other runs of annotate_ncbi.py (--name, another --tagger) get a sentence
KINDS = {
    "documents_ncbi": lambda d: "chosen_on_dev" in d,
    "peers_documents": lambda d: "dev_grid" in d and "rows" in d,
    "dictionary_scale": lambda d: "build_seconds" in (d.get("results") or [{}])[0],
    "documents_context": lambda d: "dev_trials" in d and "context" in d,
    "assertion_status": lambda d: "assertion_rows" in d,
}


def _f1(score: dict, scores: dict | None = None, measure: str = "") -> str:
    """F1; with the split's scores and the measure's name, its 95% interval when the run recorded one."""
    return f"{score['f1']:.4f}" + (interval_cell((scores.get("intervals") or {}).get(measure, {}).get("f1")) if scores else "")


def _prf(score: dict, scores: dict | None = None, measure: str = "") -> str:
    return f"{score['precision']:.3f} / {score['recall']:.3f} / {_f1(score, scores, measure)}"


def stage_table(run: dict, table, provenance, PROVENANCE) -> list[str]:
    def grid(rows: list, option: str) -> dict | None:
        """One row for a setting tried at several values: dev's choice, the values tried named (the others are in the JSON)."""
        if not rows:
            return None
        best = max(rows, key=lambda r: (r["dev"]["linking"]["f1"], r["dev"]["concepts"]["f1"]))
        tried = " / ".join(f"{r['options'][option]:g}" for r in rows)
        return {**best, "stage": f"{best['stage']} (dev's choice of {tried})"}

    def learned(row: dict) -> bool:
        return row["options"].get("combine") == "learned"

    def threshold_grid(rows: list) -> dict | None:
        """The learned selector's rows, one per span threshold (its own, then higher ones): dev's choice."""
        if not rows:
            return None
        best = max(rows, key=lambda r: (r["dev"]["linking"]["f1"], r["dev"]["concepts"]["f1"]))
        tried = " / ".join("its own" if r["options"].get("span_threshold") is None else f"{r['options']['span_threshold']:g}" for r in rows)
        return {**best, "stage": f"{best['stage']} (dev's choice of span threshold {tried})"}

    tuned = [r for r in run["rows"] if "dev" in r]
    plain = [r for r in tuned if not r["stage"].startswith("  ") and "backoff" not in r["options"] and "dense_weight" not in r["options"]]
    shown = [r for r in plain if not learned(r)]
    dense = [r for r in tuned if "dense_weight" in r["options"] and "backoff" not in r["options"]]
    shown += [row for row in (threshold_grid([r for r in plain if learned(r)]), grid([r for r in dense if not learned(r)], "dense_weight"),
                              grid([r for r in dense if learned(r)], "dense_weight"), grid([r for r in tuned if "backoff" in r["options"]], "backoff")) if row]
    carried = [r for r in run["rows"] if "dev" not in r]
    shown += carried
    rows = [[r["stage"].strip(), _f1(r["dev"]["linking"]) if "dev" in r else "-", _prf(r["test"]["mentions"]), _prf(r["test"]["linking"], r["test"], "linking"),
             _f1(r["test"]["concepts"], r["test"], "concepts"), f"{r['abstracts_per_second']:.0f}"] for r in shown]
    return [f"**medlink, one stage at a time** (each row adds its idea to the row above; option variants in the JSON; [a-b]: 95% "
            "bootstrap interval, whole abstracts resampled, where the run recorded one; chosen on "
            f"dev: *{run['chosen_on_dev']}*; peak RSS {run['peak_rss_mb']:,} MB; " + ", ".join(provenance(run)) + "):", "",
            *table(["stage", "dev linking F1", "test mentions P / R / F1", "test linking P / R / F1", "test concept F1", "abstracts/s"], rows)]


def peers_table(run: dict, table, provenance) -> list[str]:
    test = [r for r in run["rows"] if r["split"] == "test"]
    reference = next((r["abstracts_per_second"] for r in test if r["system"] == "medlink"), None)
    rows = sorted(([r["system"], _prf(r["mentions"]), _prf(r["linking"]), _f1(r["concepts"]), f"{r['abstracts_per_second']:.0f}",
                    f"{r['abstracts_per_second'] / reference:.2f}" if reference else "-",
                    f"{r['setup_seconds']:.1f} s" if r.get("setup_seconds") is not None else "-", f"{r['peak_rss_mb']:,.0f} MB"]
                   for r in test), key=lambda row: -float(row[2].rsplit(" / ", 1)[1]))
    return ["**Peers side by side** (one run, the same documents and KB; each system's options chosen on dev by linking F1, "
            f"listed in the JSON; test split, {run.get('repeats', 1)} runs each in a fresh process, medians; speed ratio against medlink; "
            + ", ".join(provenance(run)) + "):", "",
            *table(["system", "mentions P / R / F1", "linking P / R / F1", "concept F1", "abstracts/s", "x medlink", "setup", "peak RSS"], rows)]


def scale_table(runs, table, provenance, PROVENANCE, secs, mb) -> list[str]:
    rows = [[f"{r['rows']:,}", f"{r['names_kept']:,}", f"{r['words']:,}", secs(r["build_seconds"]), mb(r["build_peak_rss_mb"]),
             f"{r['saved_mb']} MB", secs(r["load_seconds"]), f"{r['abstracts_per_second']:,.0f}", mb(r["scan_peak_rss_mb"]), *provenance(d)]
            for _, d in runs for r in d["results"]]
    return ["**The dictionary finder at scale** (synthetic UMLS names; build, then load and scan the NCBI test abstracts, fresh processes):", "",
            *table(["synthetic UMLS rows", "names kept", "distinct words", "build", "build peak RSS", "saved", "load", "abstracts/s",
                    "scan peak RSS", *PROVENANCE], rows)]


def context_sentence(run: dict, provenance) -> list[str]:
    """The cross-encoder with and without the mention's context, in one sentence (test; dev's choice said)."""
    parts = [f"{r['variant'].lstrip('+ ')}: linking F1 {_f1(r['test']['linking'])}, gold-span Acc@1 {r['test']['gold_spans_acc@1']:.4f}"
             + (f", {r['test']['speed']['rerank_ms_per_mention']:.0f} ms per mention" if r["test"].get("speed", {}).get("rerank_ms_per_mention") else "")
             for r in run["rows"]]
    prefers_off = all(r.get("chosen_on_dev", {}).get("dev_prefers_off", False) for r in run["rows"] if "chosen_on_dev" in r)
    return [f"**Reranking spans with a cross-encoder, without and with context** (the annotator's dictionary pipeline with its defaults, "
            f"the stage table's + composite mentions row; NCBI test): {'; '.join(parts)}."
            + (" Dev preferred no reranking to either, so the annotator's default has none." if prefers_off else "")
            + " (" + ", ".join(provenance(run)) + ")"]


def other_tagger_sentence(name: str, run: dict, main: dict | None, provenance) -> list[str]:
    """A run of the same benchmark with another tagger, in one sentence: its dev-chosen row against the main run's."""
    def chosen(r: dict) -> dict:
        return next(row for row in r["rows"] if "dev" in row and row["stage"].strip() == r["chosen_on_dev"].strip())

    def summary(row: dict) -> str:
        return (f"dev linking F1 {_f1(row['dev']['linking'])}, test linking F1 {_f1(row['test']['linking'], row['test'], 'linking')}, test mentions F1 "
                f"{_f1(row['test']['mentions'])}, concept F1 {_f1(row['test']['concepts'], row['test'], 'concepts')}, {row['abstracts_per_second']:.0f} abstracts/s")

    text = f"**With the tagger {run.get('tagger', '?').rsplit('/', 1)[-1]}** (`{name}`; dev chose *{run['chosen_on_dev']}*): {summary(chosen(run))}"
    dictionary = next((row for row in run["rows"] if row["stage"].strip() == "+ composite mentions"), None)
    if dictionary is not None:
        text += f" (the dictionary pipeline, + composite mentions: {dictionary['abstracts_per_second']:.0f} abstracts/s"
        text += ")" if any("bi-encoder" in row["stage"] for row in run["rows"]) else "; no bi-encoder in this run)"
    speeds = [row["abstracts_per_second"] for row in run["rows"] if "tagger" in row["stage"] and "bi-encoder" not in row["stage"]
              and "memory train + dev" not in row["stage"] and row.get("abstracts_per_second")]
    if speeds:
        text += f"; the rows with the tagger and no bi-encoder: {min(speeds):.0f}-{max(speeds):.0f} abstracts/s"
    if main is not None:
        text += f"; the table's chosen row: {summary(chosen(main))}"
    return [text + ". (" + ", ".join(provenance(run)) + ")"]


def assertion_table(run: dict, table, provenance) -> list[str]:
    """Assertion status on gold spans: medlink's ConText rules beside the peers, per split (dev tuned, test reported)."""
    def cell(row: dict, key: str) -> str:
        return f"{row[key]:.3f}" if key in row else "-"

    rows = [[r["split"], r["system"], cell(r, "accuracy"), cell(r, "macro_f1"), _prf(r["absent"]), _f1(r["historical"]) if "historical" in r else "-",
             f"{r['records_per_second']:,.0f}", f"{r['records_per_second'] / reference:.2f}" if reference else "-"]
            for split in ("dev", "test", "heldout", "notes", "heldout2") for reference in [next((r["records_per_second"] for r in run["assertion_rows"]
                                                                  if r["split"] == split and r["system"].startswith("medlink")), None)]
            for r in run["assertion_rows"] if r["split"] == split]
    counts = {r["split"]: r["targets"] for r in run["assertion_rows"]}
    return ["**Assertion status** (`medlink annotate` marks each mention present, absent, possible, conditional, hypothetical or "
            "someone_else, i2b2 2010's classes, and historical or not: ConText rules, `medlink.text.assertion`). Gold spans of "
            f"clinical snippets invented for this benchmark by a writer who did not see the rules (`benchmarks/assertion_data`: dev "
            f"{counts.get('dev', 0)} mentions, test {counts.get('test', 0)}; heldout {counts.get('heldout', 0)}, by a second writer who saw neither "
            f"the rules nor those sets, scored once the rules were final; notes {counts.get('notes', 0)}, 16 whole notes a third writer marked as "
            "an acceptance test, whose misses then changed the default KB's shorthand and the finder (tuned on, like dev); heldout2 "
            f"{counts.get('heldout2', 0)}, 16 notes by a fourth writer after those changes, scored once); medlink's rules were tuned on dev and "
            "notes, test and the held-out sets are reported. negspaCy "
            "says negated or not only; medspaCy has no conditional class. Snippets/s: one process, the median of repeated passes, "
            "ratio against medlink; " + ", ".join(provenance(run)) + ":", "",
            *table(["split", "system", "accuracy", "macro F1", "absent P / R / F1", "historical F1", "snippets/s", "x medlink"], rows),
            *([] if not run.get("end_to_end") else
              ["", "End to end, `medlink annotate` on the default index over the same snippets (the dictionary finder: gold mentions a "
               "found span overlaps, and exactly; the status right on those found): " + "; ".join(
                   f"{split} {e['found']:.3f} / {e['found_exactly']:.3f}, status {e['status_right_when_found']:.3f}"
                   for split, e in run["end_to_end"].items()) + "."]),
            *([] if not run.get("pipeline_cost") else
              ["", "The step's cost in `medlink annotate` (the default index's dictionary pipeline over the {documents} NCBI test abstracts, "
               "on and off in turns, medians of {repeats}): {abstracts_per_second_with:,.0f} abstracts/s with it, "
               "{abstracts_per_second_without:,.0f} without.".format(**run["pipeline_cost"])])]


def documents(ncbi_runs, peers_runs, scale_runs, context_runs=(), assertion_runs=(), *, table, provenance, PROVENANCE, secs, mb) -> list[str]:
    lines = ["## Documents: linking in running text", "",
             "NCBI Disease PubTator abstracts (dev 100, test 100), MEDIC as the KB, `medlink annotate`'s pipeline. Mentions: strict span; "
             "linking: span and concept right; concept F1: per abstract over its set of concept ids (BioCreative).", ""]
    main = [run for name, run in ncbi_runs if name == MAIN_RUN][-1:] or [run for _, run in ncbi_runs][-1:]
    for run in main:
        lines += [*stage_table(run, table, provenance, PROVENANCE), ""]
    for name, run in ncbi_runs:
        if main and run is not main[0]:
            lines += [*other_tagger_sentence(name, run, main[0], provenance), ""]
    for _, run in list(context_runs)[-1:]:
        lines += [*context_sentence(run, provenance), ""]
    for _, run in peers_runs[-1:]:
        lines += [*peers_table(run, table, provenance), ""]
    for _, run in list(assertion_runs)[-1:]:
        lines += [*assertion_table(run, table, provenance), ""]
    if scale_runs:
        lines += scale_table(scale_runs, table, provenance, PROVENANCE, secs, mb)
    return lines

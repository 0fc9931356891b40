"""BENCHMARKS.md's section on aligning one terminology to another (``report.py`` calls ``align_section``; kept apart, as
report_documents.py is). Reads what benchmarks/align/*.py write: quality rows (align_do.py), speed (align_speed.py)
and metadata transfer (augment_ncbi.py, augment_entity_text.py)."""

from __future__ import annotations

from report_cells import interval_cell  # beside this file, as report.py imports it

KINDS = {
    "align_quality": lambda d: "alignment_rows" in d,
    "align_speed": lambda d: "alignment_speed" in d,
    "align_augment": lambda d: "augmentation" in d,
    "align_seeds": lambda d: "alignment_seeds" in d,
    "align_entity_text": lambda d: "entity_text" in d,
    "align_predicates": lambda d: "alignment_predicates" in d,
}


def _r(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def quality_table(runs, table, provenance, PROVENANCE, secs, mb) -> list[str]:
    rows = []
    for _, d in runs:
        pair = f"{d['alignment']['source'].split(' (')[0]} -> {d['alignment']['target']}"
        for r in d["alignment_rows"]:
            t, m = r["test"], r["test"].get("mapping", {})
            spread = t.get("intervals") or {}
            rows.append([pair, "test", r["system"], _r(t.get("recall@1")) + interval_cell(spread.get("recall@1")), _r(t.get("recall@4")),
                         _r(t.get("recall@64")), _r(t.get("mrr")), _r(t.get("normalised_recall@1")),
                         f"{_r(m.get('precision'))} / {_r(m.get('recall'))} / {_r(m.get('f1'))}" + interval_cell((m.get("intervals") or {}).get("f1")),
                         secs(r.get("seconds")), mb(r.get("peak_rss_mb")), *provenance(d)])
    stale = [f"{d['alignment']['target']}, {r['system']}: {r['test']['r1_errors_first_named_as_source_gold_not']} of {r['test']['r1_errors']}"
             for _, d in runs for r in d["alignment_rows"][-1:] if "r1_errors" in r["test"]]
    return ["**Aligning terminologies** (gold: the Disease Ontology's own xrefs, removed from the KB the aligner reads; seeded 60/20/20 "
            "split of DO terms; mapping P / R / F1: each term's top mapping kept at the confidence threshold chosen on dev, OAEI measure; "
            "[logistic] / [trees]: the calibration the aligner kept, forced or chosen by `--calibration auto` as the command says, "
            "auto's out-of-fold figures in the aligner's file; [a-b]: 95% bootstrap interval, the test terms resampled, where the run "
            "recorded one):", "",
            *table(["KB pair", "split", "system", "R@1", "R@4", "R@64", "MRR", "N.R@1", "mapping P / R / F1", "time", "peak RSS", *PROVENANCE], rows),
            *(["", "Test R@1 errors whose first target is named exactly as the DO term while no gold target is (mostly DO 2016 xrefs to "
               "a code ICD-10-CM has since split: lymphocytic colitis -> K52.89, where 2026 has K52.832 *Lymphocytic colitis*): "
               + "; ".join(stale) + "."] if stale else [])]


def _figures(row: dict) -> str:
    test = row["test"]
    return (f"R@1 {_r(test.get('recall@1'))}{interval_cell((test.get('intervals') or {}).get('recall@1'))}, R@64 {_r(test.get('recall@64'))}, "
            f"mapping F1 {_r(test.get('mapping', {}).get('f1'))}"
            + (f", trained in {row['training']['seconds'] / 60:.1f} min" if row.get("training") else ""))


def rerun_lines(name: str, run: dict, provenance, wrap, main: dict | None = None) -> list[str]:
    """Another run of align_do.py for a target the table shows (another CPU, another base model), in a sentence; its
    rows with the same figures as the table's ``main`` run (the untrained baselines, as a rule) are counted, not repeated."""
    shown = {(r["system"], _figures(r)) for r in (main or {}).get("alignment_rows", [])}
    measured = [r for r in run["alignment_rows"] if r["test"].get("recall@1") is not None]
    kept = [r for r in measured if (r["system"], _figures(r)) not in shown]
    rows = "; ".join(f"{r['system']}: {_figures(r)}" for r in kept)
    if len(kept) < len(measured):
        rows += f"; {len(measured) - len(kept)} other row(s) as in the table"
    pair = f"{run['alignment']['source'].split(' (')[0]} -> {run['alignment']['target']}"
    return wrap(f"**{pair}, another run** (`{name}`, test): {rows}. (" + ", ".join(provenance(run)) + ")")


def speed_table(runs, table, provenance, PROVENANCE, secs, mb) -> list[str]:
    rows = [[s["pair"], f"{s['source_concepts']:,} -> {s['target_concepts']:,}", s["system"], secs(s["seconds"]), mb(s["peak_rss_mb"]), *provenance(d)]
            for _, d in runs for s in d["alignment_speed"]]
    return ["**Alignment speed** (whole `medlink align` command in a fresh process, wall time and peak RSS):", "",
            *table(["KB pair", "concepts", "system", "time", "peak RSS", *PROVENANCE], rows)]


def augment_table(runs, table, provenance, PROVENANCE) -> list[str]:
    """The KB as it is, then every variant at the confidence chosen on dev (the other confidences are in the JSON)."""
    rows = []
    for _, d in runs:
        found = d["augmentation"]["rows"]
        chosen = next((r.get("confidence") for r in found if r["variant"] == d["augmentation"]["chosen_on_dev"]), None)
        rows += [[r["variant"], _r(r["dev_acc@1"]), _r(r["test_acc@1"]), *provenance(d)] for r in found if r.get("confidence") in (None, chosen)]
    return ["**Metadata transfer** (MEDIC augmented from DO through a lexical alignment; NCBI Disease linking, KB names only, "
            "the tuned lexical linker; confidence chosen on dev):", "",
            *table(["KB", "dev Acc@1", "test Acc@1", *PROVENANCE], rows)]


def entity_text_lines(run: dict, provenance, wrap) -> list[str]:
    """The metadata read by a cross-encoder (paper 002's entity text), before and after augmentation, in one paragraph."""
    block = run["entity_text"]
    figures = "; ".join(f"{r['variant']}: dev {_r(r['dev_acc@1'])}, test {_r(r['test_acc@1'])}"
                        + (f" (dev's top {r['chosen_on_dev']['top']}, weight {r['chosen_on_dev']['weight']:g})" if r.get("chosen_on_dev") else "")
                        + (f", reranking alone dev {_r(r['alone']['dev_acc@1'])} / test {_r(r['alone']['test_acc@1'])}" if r.get("alone") else "")
                        for r in block["rows"])
    return wrap(f"**Metadata read as paper 002 reads it** (cross-encoders trained on NCBI train; {block['concepts_described']:,} "
                f"MEDIC concepts described from DO): {figures}. ("
                + ", ".join(provenance(run)) + ")")


def predicate_lines(run: dict, provenance, wrap) -> list[str]:
    """How the first targets are called (exact / broad / narrow), per system, and how many of each are the gold xref."""
    block = run["alignment_predicates"]
    short = {"skos:exactMatch": "exact", "skos:broadMatch": "broad", "skos:narrowMatch": "narrow"}
    figures = "; ".join(f"{r['system']}: " + ", ".join(f"{r['by_predicate'].get(p, 0):,} {label} ({r['gold_by_predicate'].get(p, 0):,} the gold xref)"
                                                        for p, label in short.items()) for r in block["rows"])
    return wrap(f"**Predicates of the first targets** ({block['pair']}, every DO concept, `align.predicates`; samples in the JSON): "
                f"{figures}. (" + ", ".join(provenance(run)) + ")")


def seeds_lines(runs, provenance, wrap) -> list[str]:
    """How far the training seed moves a trained aligner: per seed and the median (the latest run per target)."""
    out = []
    for _, d in runs:
        seeds = d["alignment"]["aligner_seed"]
        for entry in d["alignment_seeds"]:
            per, median = entry["per_seed"], entry["median"]
            figures = "; ".join(f"{label} {' / '.join(_r(r[key]) for r in per)} (median {_r(median.get(key))})"
                                for key, label in (("test_recall@1", "test R@1"), ("test_mapping_f1", "test mapping F1"),
                                                   ("dev_out_of_fold_top1", "dev out of fold")))
            cpu, command, commit, results = provenance(d)
            out += wrap(f"**Training seeds** (DO -> {d['alignment']['target']}, {entry['system']}; seeds {' / '.join(map(str, seeds))}, the "
                        f"same split): {figures}. ({cpu}, {command}, {commit}, {results})") + [""]
    return out


def align_section(quality_runs, speed_runs=(), augment_runs=(), seeds_runs=(), entity_runs=(), predicate_runs=(), *, table, provenance,
                  PROVENANCE, secs, mb, wrap) -> list[str]:
    """``*_runs``: (results name, JSON) pairs of each kind in KINDS. Quality: per target, the run named align_do_<target>
    (else the latest) as the table, any other as a sentence; speed: every run (each names its CPU); the rest: the latest."""
    lines = ["## Aligning terminologies (SSSOM out)", ""]
    latest = {d["alignment"]["target"]: (name, d) for name, d in quality_runs}  # the last run per target KB
    latest |= {d["alignment"]["target"]: (name, d) for name, d in quality_runs if name == f"align_do_{d['alignment']['target']}"}  # its main run
    if latest:
        lines += [*quality_table(list(latest.values()), table, provenance, PROVENANCE, secs, mb), ""]
    shown = {name for name, _ in latest.values()}
    for name, run in quality_runs:
        if name not in shown:
            lines += [*rerun_lines(name, run, provenance, wrap, latest[run["alignment"]["target"]][1]), ""]
    for _, run in list(predicate_runs)[-1:]:
        lines += [*predicate_lines(run, provenance, wrap), ""]
    if seeds_runs:
        lines += seeds_lines(list({d["alignment"]["target"]: (name, d) for name, d in seeds_runs}.values()), provenance, wrap)
    if speed_runs:  # every run: they differ by CPU (the table's CPU column) more than by commit
        lines += [*speed_table(list(speed_runs), table, provenance, PROVENANCE, secs, mb), ""]
    if augment_runs:
        lines += augment_table(list(augment_runs)[-1:], table, provenance, PROVENANCE)
    for _, run in list(entity_runs)[-1:]:
        lines += ["", *entity_text_lines(run, provenance, wrap)]
    return lines

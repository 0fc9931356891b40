"""BENCHMARKS.md's section on probabilities and NIL (benchmarks/calibration/*.py): calibration error of the first
candidates' probabilities, what the decision stage does to Acc@1, and the pruned-KB NIL figures. More columns (dev's
out-of-fold ECE, the stage's choices, build times, all-mention Accuracy and MRR) and NIL in running text
(``nil_documents``) stay in the JSON."""

from __future__ import annotations

from report_cells import Section, acc, arrow, interval_cell, table

CROSS_FIT = "dev + memory cross-fitted"  # calibration_nil.py's labels: 'medlink tune --cross-fit', 'index build --calibrate memory'
MEMORY_ALONE = "memory cross-fitted, no dev"
NAIVE = "naive: fused score / its maximum"
NIL_CAPTION = ("Second table, NIL: 15% of dev + test gold concepts pruned from the KB; threshold for dev's best NIL F1. *If NIL = first "
               "wrong*: a perfect first probability's bound. *Cost*: in-KB Acc@1 points the NIL decisions lose. Pruning seeds: median "
               "(range) of 5.")  # in the intro: one caption paragraph fewer
KINDS = {"calibration_nil": lambda d: "runs" in d and "nil" in (d.get("runs") or [{}])[0],
         "nil_documents": lambda d: "thresholds" in d and "chosen_threshold_on_dev" in d,
         "calibration_variants": lambda d: "variants_trial" in d}


def _ece(by_model: dict, model: str) -> str:
    row = by_model.get(model)
    return "-" if not row or row.get("ece") is None else f"{row['ece']:.4f}" + interval_cell(row.get("ece_interval"))


def calibration_section(get) -> Section | None:
    runs = get("calibration_nil")
    if not runs:
        return None
    section = Section("Probabilities and NIL", "ECE of the first candidate's probability (test, 10 bins; the lexical configs, train mentions as "
                      "memory; runs with MiniLM fused in the JSON). Choices on dev out of fold. [a-b]: 95% bootstrap interval. " + NIL_CAPTION)
    ece_rows, nil_rows = [], []
    for _name, run in runs:
        shown = [data for data in run["runs"] if not data.get("dense_weight")]  # the lexical configs; runs with MiniLM fused in the JSON
        for data in shown:
            dataset = data["dataset"]
            by_model = {row["model"]: row for row in data["calibration"]}
            rankings = data["rankings"]
            stage = next((figures for name, figures in rankings.items() if name.startswith("dev-fitted stage (")), {})
            ece_rows.append([dataset, *(_ece(by_model, m) for m in (NAIVE, "pseudo-mentions from the KB", "dev", CROSS_FIT, MEMORY_ALONE)),
                             arrow(rankings["no calibration stage"]["acc@1"], stage.get("acc@1"))])
            nil, spread = data["nil"], data.get("nil_seeds")
            test, intervals = nil["test"], nil["test"].get("intervals") or {}
            cost = 100 * (test["in_kb_acc@1"] - test["in_kb_linked_right"])
            cost_bounds = intervals.get("in_kb_nil_cost")
            seeds = "-" if not spread else (
                f"{acc(spread['median']['nil_f1'])} ({acc(min(r['nil_f1'] for r in spread['seeds']))}-{acc(max(r['nil_f1'] for r in spread['seeds']))})")
            nil_rows.append([dataset, f"{test['gold_nil']} of {test['mentions']}", f"{nil['nil_threshold']:.2f}",
                             f"{test['nil_precision']:.3f} / {test['nil_recall']:.3f} / {test['nil_f1']:.4f}" + interval_cell(intervals.get("nil_f1")),
                             acc((nil.get("cross_fit") or {}).get("test", {}).get("nil_f1")), acc(test.get("nil_f1_if_first_wrong")),
                             f"{cost:.1f}" + (interval_cell([100 * b for b in cost_bounds], 1) if cost_bounds else ""), seeds])
        if shown:
            section.add_runs([(_name, run)])
    section.body += [*table(["data", "ECE naive score", "ECE KB pseudo-mentions", "ECE fitted on dev", "ECE dev + memory cross-fitted",
                             "ECE memory alone", "Acc@1 no stage → stage"], ece_rows), "",
                     *table(["data", "NIL test mentions", "threshold", "NIL P / R / F1", "F1 cross-fitted", "F1 if NIL = first wrong",
                             "cost (points)", "NIL F1 over pruning seeds"], nil_rows)]
    # NIL in running text (nil_documents): in the JSON and docs/benchmark-history.md (Probabilities, calibration and NIL)
    return section

"""BENCHMARKS.md's section on probabilities and NIL (benchmarks/calibration/calibration_nil.py): calibration error of
the first candidates' probabilities, the ranking with and without the decision stage, and the pruned-KB NIL figures
(``report.py`` calls ``calibration_section``)."""

from __future__ import annotations

KINDS = {"calibration_nil": lambda d: "runs" in d and "nil" in (d.get("runs") or [{}])[0]}


def _f(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def calibration_section(runs: list[dict], table, provenance) -> list[str]:
    _name, run = runs[-1]
    ece_rows, nil_rows = [], []
    for data in run["runs"]:
        by_model = {row["model"]: row for row in data["calibration"]}
        rankings = data["rankings"]
        stage = next((figures for name, figures in rankings.items() if name.startswith("dev-fitted stage (")), {})
        label = next((name for name in rankings if name.startswith("dev-fitted stage (")), "")
        ece_rows.append([data["dataset"], *(_f(by_model.get(m, {}).get("ece")) for m in ("naive: fused score / its maximum", "pseudo-mentions from the KB", "dev")),
                         _f(rankings["no calibration stage"]["acc@1"]), _f(stage.get("acc@1")), label.removeprefix("dev-fitted stage ").strip("()"),
                         _f(rankings["dev-fitted stage, backoff off"]["acc@1"]), f"{data['build_seconds']:.0f} s", f"{data['tune_seconds']:.0f} s"])
        nil, test = data["nil"], data["nil"]["test"]
        nil_rows.append([data["dataset"], f"{nil['removed_concepts']} of {nil['gold_concepts']}", f"{test['gold_nil']} of {test['mentions']}",
                         _f(nil["nil_threshold"], 2), f"{_f(test['nil_precision'], 3)} / {_f(test['nil_recall'], 3)} / {_f(test['nil_f1'])}",
                         _f(test["in_kb_linked_right"]), _f(test["in_kb_acc@1"]), _f(nil["full_kb_in_kb_acc@1"]),
                         f"{_f(test['accuracy_all'])} / {_f(test['mrr_all'])}", f"{_f(test['accuracy_in_kb'])} / {_f(test['mrr_in_kb'])}"])
    return ["## Probabilities, NIL and backoff", "",
            "**Calibration** (test split; ECE of the first candidate's probability, 10 bins; the lexical configs of benchmarks/configs with the "
            "train mentions as memory; the stage's order, backoff and NIL threshold chosen on dev out of fold; reliability diagrams: "
            "`benchmarks/results/calibration_*.png`; " + ", ".join(provenance(run)) + "):", "",
            *table(["dataset", "ECE naive score", "ECE KB pseudo-mentions", "ECE dev-fitted", "Acc@1 no stage", "Acc@1 with stage",
                    "dev's choice", "Acc@1 backoff off", "index build", "fit on dev"], ece_rows), "",
            "**NIL** (a seeded 15% of dev + test gold concepts removed from the KB with all their names and training mentions; threshold for "
            "the best NIL F1 on dev; paper 001's Accuracy / MRR rank NIL as a candidate at the threshold's place):", "",
            *table(["dataset", "concepts removed", "NIL test mentions", "threshold", "NIL P / R / F1", "in-KB linked right",
                    "in-KB Acc@1 (no NIL)", "full KB Acc@1", "all: Acc / MRR", "in-KB: Acc / MRR"], nil_rows)]

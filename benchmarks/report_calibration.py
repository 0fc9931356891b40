"""BENCHMARKS.md's section on probabilities and NIL (benchmarks/calibration/calibration_nil.py): calibration error of
the first candidates' probabilities, the ranking with and without the decision stage, and the pruned-KB NIL figures
(``report.py`` calls ``calibration_section``)."""

from __future__ import annotations

from report_cells import interval_cell  # beside this file, as report.py imports it

CROSS_FIT = "dev + memory cross-fitted"  # calibration_nil.py's labels: 'medlink tune --cross-fit', 'index build --calibrate memory'
MEMORY_ALONE = "memory cross-fitted, no dev"
KINDS = {"calibration_nil": lambda d: "runs" in d and "nil" in (d.get("runs") or [{}])[0],
         "nil_documents": lambda d: "thresholds" in d and "chosen_threshold_on_dev" in d,
         "calibration_variants": lambda d: "variants_trial" in d}


def _f(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def documents_line(runs: list[dict], provenance) -> list[str]:
    """One sentence: document linking F1 with NIL spans dropped, per threshold (dev chooses)."""
    _name, run = runs[-1]
    cells = [f"{row['threshold'] if isinstance(row['threshold'], str) else format(row['threshold'], 'g')}: dev {row['dev']['linking']['f1']:.4f} / "
             f"test {row['test']['linking']['f1']:.4f}" for row in run["thresholds"]]
    return ["", f"**NIL in running text** (NCBI abstracts, the documents benchmark's chosen pipeline, probabilities fitted on dev's gold "
            f"mentions, NIL spans dropped; linking F1 by NIL threshold): {'; '.join(cells)}. Dev chooses {run['chosen_threshold_on_dev']}: the "
            "dictionary's spans are mostly exact names, which the model trusts, so NIL decisions barely move document F1. ("
            + ", ".join(provenance(run)) + ")"]


def variants_line(runs: list, provenance) -> list[str]:
    """One sentence: the KB-fitted probabilities with and without misspelt- and shortened-name pseudo-mentions (NCBI dev)."""
    _name, run = runs[-1]
    trial = run["variants_trial"]
    groups: dict[tuple, list[dict]] = {}  # one cell per config and number misspelt, its shortened settings side by side
    for row in trial["rows"]:
        groups.setdefault((row["config"], row["variants"]), []).append(row)
    def joined(rows: list[dict], value) -> str:
        return " / ".join(value(r) for r in rows)

    cells = [f"{config}, {variants} misspelt" + (f", {joined(rows, lambda r: str(r['shortened']))} shortened" if "shortened" in rows[0] else "")
             + f": ECE {joined(rows, lambda r: format(r['ece'], '.4f'))}, linked F1 {joined(rows, lambda r: format(r['linked']['linked_f1'], '.3f'))}"
             for (config, variants), rows in groups.items()]
    probes = [probe_cell(probe) for probe in trial.get("default_kb_probe", [])]
    return ["", f"**Probabilities fitted on the KB itself** ({trial['dataset']}, {trial['kb']}; ECE of the first candidates, links kept at "
            f"the fitted NIL threshold): {'; '.join(cells)}."
            + (f" The default KB's index on 18 head words and eponyms and 4 organ words: {'; '.join(probes)}." if probes else "") + " (" + ", ".join(provenance(run)) + ")"]


def probe_cell(probe: dict) -> str:
    """With n shortened names: head words linked right (and NIL), and the organ words (no right answer) linked."""
    organ_words = set(probe["organ_words"])
    heads = [d for d in probe["decisions"] if d["mention"] not in organ_words]
    organs = [d for d in probe["decisions"] if d["mention"] in organ_words and not d["nil"]]
    return (f"{probe['shortened']} shortened, {sum(d['right'] and not d['nil'] for d in heads)} of {len(heads)} right "
            f"({sum(d['nil'] for d in heads)} NIL), organ words linked {len(organs)}"
            + (f" (p {'-'.join(sorted({format(d['probability'], '.2f') for d in organs}))})" if organs else ""))


def calibration_section(runs: list[dict], table, provenance, document_runs: list | None = None, variant_runs: list | None = None) -> list[str]:
    """Rows from every run (the lexical configs, and any run with the packaged MiniLM added: "+ MiniLM")."""
    ece_rows, nil_rows = [], []
    every = [(data | {"dataset": data["dataset"] + (f" + MiniLM ({data['dense_weight']:g})" if data.get("dense_weight") else "")})
             for _name, run in runs for data in run["runs"]]
    for data in every:
        by_model = {row["model"]: row for row in data["calibration"]}
        rankings = data["rankings"]
        stage = next((figures for name, figures in rankings.items() if name.startswith("dev-fitted stage (")), {})
        label = next((name for name in rankings if name.startswith("dev-fitted stage (")), "")
        oof = (data.get("dev_choice") or {}).get("out_of_fold_ece") or {}
        chosen_steps = "isotonic" if (data.get("dev_choice") or {}).get("chosen", {}).get("isotonic") else "logistic"
        # dev's own mentions out of fold, first candidates as the stage decides them (runs before session 24: the fused first)
        dev_ece = (data.get("dev_choice") or {}).get("dev_out_of_fold", {}).get("ece", oof.get(chosen_steps))
        crossed_dev_ece = (data.get("cross_fit_choice") or {}).get("dev_out_of_fold", {}).get("ece")
        plain = data.get("build_seconds_without_probabilities")
        crossed = next((figures for name, figures in rankings.items() if name.startswith(CROSS_FIT)), {})
        def ece(model: str) -> str:
            row = by_model.get(model, {})
            return _f(row.get("ece")) + (interval_cell(row.get("ece_interval"), 3) if model in ("dev", CROSS_FIT, MEMORY_ALONE) else "")

        ece_rows.append([data["dataset"], *(ece(m) for m in ("naive: fused score / its maximum", "pseudo-mentions from the KB", "dev")),
                         _f(dev_ece), ece(CROSS_FIT), _f(crossed_dev_ece), ece(MEMORY_ALONE), _f(by_model.get(MEMORY_ALONE, {}).get("dev_ece")),
                         _f(rankings["no calibration stage"]["acc@1"]), _f(stage.get("acc@1")), _f(crossed.get("acc@1")),
                         label.removeprefix("dev-fitted stage ").strip("()"),
                         _f(rankings["dev-fitted stage, backoff off"]["acc@1"]), f"{data['build_seconds']:.0f} s",
                         f"{plain:.0f} s" if plain is not None else "-", f"{data['tune_seconds']:.0f} s"])
        nil = data["nil"]
        spread = data.get("nil_seeds")
        seeds_cell = "-" if not spread else (
            f"{_f(spread['median']['nil_f1'])} ({_f(min(r['nil_f1'] for r in spread['seeds']))}-{_f(max(r['nil_f1'] for r in spread['seeds']))}); "
            f"{100 * spread['median']['in_kb_nil_cost']:.1f} points ({100 * min(r['in_kb_nil_cost'] for r in spread['seeds']):.1f}-"
            f"{100 * max(r['in_kb_nil_cost'] for r in spread['seeds']):.1f})")
        for fit, label in ((nil, "dev"), (nil.get("cross_fit"), f"{CROSS_FIT} ({(nil.get('cross_fit') or {}).get('folds')} folds)")):
            if fit is None:
                continue
            test = fit["test"]
            spread = test.get("intervals") or {}
            nil_rows.append([data["dataset"], label, f"{nil['removed_concepts']} of {nil['gold_concepts']}", f"{test['gold_nil']} of {test['mentions']}",
                             _f(fit["nil_threshold"], 2), f"{_f(test['nil_precision'], 3)} / {_f(test['nil_recall'], 3)} / {_f(test['nil_f1'])}"
                             + interval_cell(spread.get("nil_f1")), _f(test.get("nil_f1_if_first_wrong")), _f(test.get("nil_f1_if_not_listed")),
                             _f(test["in_kb_linked_right"]), _f(test["in_kb_acc@1"]) + (
                                 f" ({100 * (test['in_kb_acc@1'] - test['in_kb_linked_right']):.1f} points more{interval_cell([100 * b for b in spread['in_kb_nil_cost']], 1)})"
                                 if spread.get("in_kb_nil_cost") else ""), _f(nil["full_kb_in_kb_acc@1"]),
                             f"{_f(test['accuracy_all'])} / {_f(test['mrr_all'])}", f"{_f(test['accuracy_in_kb'])} / {_f(test['mrr_in_kb'])}",
                             seeds_cell if label == "dev" else "-"])
    return ["## Probabilities, NIL and backoff", "",
            "**Calibration** (test split; ECE of the first candidate's probability, 10 bins; the lexical configs of benchmarks/configs with the "
            "train mentions as memory; the stage's order, backoff and NIL threshold chosen on dev out of fold (5 folds of whole abstracts "
            "where the file names them, NCBI; runs before dd93ef9 folded mentions); *dev + memory cross-fitted*: "
            "`medlink tune --calibrate --cross-fit 5`, the memory's mentions, each fifth (whole abstracts) linked by an index without it, join dev in the fit "
            "and the choices but the NIL threshold; *memory alone*: `medlink index build --calibrate memory`, those mentions and no dev; "
            "reliability diagrams: "
            "`benchmarks/results/calibration_nil*.png`; [a-b]: 95% bootstrap interval, whole abstracts resampled (AskAPatient: mentions), "
            "where the run recorded one; " + "; ".join(", ".join(provenance(r)) for _n, r in runs) + "):", "",
            *table(["dataset", "ECE naive score", "ECE KB pseudo-mentions", "ECE dev-fitted", "its dev ECE out of fold",
                    "ECE dev + memory cross-fitted", "its dev ECE out of fold", "ECE memory alone", "its ECE on dev", "Acc@1 no stage", "Acc@1 with stage",
                    "with the cross-fitted stage", "dev's choice",
                    "Acc@1 backoff off", "index build (fit on the KB)", "without the fit (same run)", "fit on dev"], ece_rows), "",
            "**NIL** (a seeded 15% of dev + test gold concepts removed from the KB with all their names and training mentions; threshold for "
            "the best NIL F1 on dev; paper 001's Accuracy / MRR rank NIL as a candidate at the threshold's place; *NIL F1 if NIL = first "
            "wrong*: what a perfect probability of the first candidate would reach, every in-KB mention ranked wrong a false NIL; *if not "
            "listed*: NIL exactly when no right candidate is among the first 10, what telling an absent concept from a lower-ranked one "
            "could reach; *in-KB Acc@1 (no NIL)*: how many points above *in-KB linked right*, i.e. what the NIL decisions cost, with its "
            "95% interval, both from the same draws; *over pruning seeds*: the dev-fitted NIL F1 and that cost for each seed of the removed "
            "concepts (the row's and `--nil-seeds`), median (lowest-highest), where the run had them):", "",
            *table(["dataset", "probabilities fitted on", "concepts removed", "NIL test mentions", "threshold", "NIL P / R / F1", "NIL F1 if NIL = first wrong", "if not listed", "in-KB linked right",
                    "in-KB Acc@1 (no NIL)", "full KB Acc@1", "all: Acc / MRR", "in-KB: Acc / MRR", "over pruning seeds: NIL F1; cost"], nil_rows),
            *(documents_line(document_runs, provenance) if document_runs else []),
            *(variants_line(variant_runs, provenance) if variant_runs else [])]

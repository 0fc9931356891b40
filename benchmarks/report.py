"""Write BENCHMARKS.md from the results JSON (benchmarks/results/*.json) and the hand-written notes (benchmarks/notes.md).

    python benchmarks/report.py [--results DIR] [--notes FILE] [--out FILE] [--check]

It measures nothing and changes no figure: every table re-presents what a results file holds, one short table per
task (KB building, lexical, dense, reranking, scale, speed), best first, each row with its run's time and peak memory
where the JSON has them ("-" where it has not), the CPU, the command and the commit; then what did not help, then the
notes. A results file is recognised by its shape (the keys its script writes), not by its name, so a run saved under a
new --section name lands in the right table, and a file no table knows is listed by name rather than dropped.
BENCHMARKS.md is written atomically (a temporary file, then a rename). Benchmark scripts call this through
``benchmarks._common.harness.publish`` after writing their JSON; ``--check`` exits 1 when BENCHMARKS.md is stale.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import statistics
import sys
import tempfile
import textwrap
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # report_documents.py beside this file
from report_documents import KINDS as DOCUMENT_KINDS, documents  # noqa: E402
from report_calibration import KINDS as CALIBRATION_KINDS, calibration_section  # noqa: E402
from report_ranker import KINDS as RANKER_KINDS, ranker  # noqa: E402
from report_align import KINDS as ALIGN_KINDS, align_section  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS, NOTES, OUT = HERE / "results", HERE / "notes.md", ROOT / "BENCHMARKS.md"
FLAGS = {"avx2": "AVX2", "avx512f": "AVX-512", "avx512_bf16": "AVX512-BF16", "amx_bf16": "AMX"}
PROVENANCE = ["CPU", "command", "commit", "results"]
LINE_BUDGET = 690  # was 250; then probabilities and NIL, the pairwise ranker, alignment (three tables), the robustness and documents rows of session 11, default-dense first use and warm start on AVX2 (session 12), the alignment gold-staleness line, the train + dev tagger row; the alignment ablation of session 13 (bi-encoder candidates, logistic vs boosted-tree calibration, both targets: +22); session 20: the KB-fitted probabilities trial and the alignment predicates (+16); session 23: default-dense's strip, its cost and saving, and the first use before it (+12); the documents benchmark on the AVX2-only CPU and the dictionary pipeline's speed in each other run's line (+8); TF-IDF's exact rescoring of 4 x its shortlist (+12) and its noise note (+2); session 24: the words stage's table and probe (+15), the cross-fitted and memory-only probabilities' rows and columns (+2), the default index's load time note (+1), less the AVX2-only documents line the main table replaced (-6); session 25: the 3-layer tagger's documents run (+6), each other tagger's speed without the bi-encoder (+1), the alignment run on the AVX2-only CPU and its speed rows beside the AVX-512 ones (+13); session 26: the 3-layer aligner's run and its speed beside the 6-layer one's on the AVX2-only CPU (+10, less the reruns' rows the main table already shows); session 27: BM25's spelling correction, a default-config decision, with its probe (+14); session 28: the completion stage and its probe in one table with the other lexical options (the three tables merged), and the calibration stage's cost on the default index (+4); session 30: the words stage's plain forms, their rows and probe (+13), the DO -> ICD-10-CM runs over ICD-10-CM with its Includes notes (+19); session 31: the aligner's bi-encoder without the episode of care (its seeds at two depths, the same-session baseline, the depths run and seven speed rows: +38); session 32: the dictionary finder's run-to-run spread at scale (+1), the signed names' sentence (+6); session 33: the assertion-status table beside negspaCy and medspaCy, its cost in annotate the second writer's held-out rows and the default annotator end to end on them, and the benchmark's figures before the session's last changes (+28); session 34: the assertion table's notes and heldout2 splits (six rows, their sentence) and the documents rows at the session's finder (+11); session 36: the aligner without its bi-encoder, its run and its three speed rows (+11); session 37: the NIL table's spread over pruning seeds, its column's definition (+2) and the notes' longer NIL line (+2)
NUMERIC = re.compile(r"^[\d,.]+([-/][\d,.]+)?(%| |$)")  # a right-aligned cell: 0.9177, 1,751, 3.6 min, 98.6%, 15 of 500

# A results file's kind, by the keys its script writes (first match wins).
KINDS = {
    "kb_build": lambda d: "by_id_us_median" in (d.get("results") or [{}])[0],
    "tune_lexical": lambda d: "trials" in (d.get("results") or [{}])[0],
    "lexical_linking": lambda d: "rows" in d and "speed" in d,
    "lexical_ties": lambda d: "ties_with_gold" in d,
    "lexical_scale": lambda d: "agreement_queries" in d,
    "dense_speed": lambda d: "encoding" in d and "linking" in d,
    "episode_strip": lambda d: "texts_after_strip" in d,
    "tfidf_rescore": lambda d: "rescore_rows" in d,
    "words_form": lambda d: "words_rows" in d,
    "plain_forms": lambda d: "plain_rows" in d,
    "signed_names": lambda d: "signed_rows" in d,
    "bm25_spelling": lambda d: "spelling_rows" in d,
    "completion_stage": lambda d: "completion_rows" in d,
    "calibrated_link": lambda d: "mentions_per_second_with" in d,
    "default_dense": lambda d: "chosen_dense_weight" in d,
    "concept_text": lambda d: "coverage" in d,
    "xref_enrichment": lambda d: "names_added" in d,
    "ensemble": lambda d: "chosen" in d and "test" in d,
    "rerank": lambda d: "tuning" in d,
    "training": lambda d: "folds" in d and "recipe" in d,
    "dense_linking": lambda d: any("model" in r and "variant" in r for r in d.get("rows", [])),
    "robustness": lambda d: ("by_reader" in d or "by_format" in d or "by_index" in d or "trials_per_command" in d or "throughput_ratio" in d
                             or "by_case" in d or ("by_label" in d and "annotate" in d)),
    "json_scorer": lambda d: "independent_acc@1" in d,
    **DOCUMENT_KINDS,
    **CALIBRATION_KINDS,
    **RANKER_KINDS,
    **ALIGN_KINDS,
}


# ---- cells ----------------------------------------------------------------------------------------------------------

def acc(value: float | None, std: float | None = None) -> str:
    return "-" if value is None else f"{value:.4f}" + (f" (sd {std:.3f})" if std is not None else "")


def secs(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s" if value < 100 else f"{value / 60:.1f} min"


def mb(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} MB"


def num(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def weights_text(weights: dict[str, float]) -> str:
    """Fusion weights, those above zero only: 'sup-ncbi 1, ncbi-ft 0.5'."""
    return ", ".join(f"{name} {weight:g}" for name, weight in weights.items() if weight)



def cpu(data: dict) -> str:
    """The CPU a result was measured on, as its JSON recorded it: model name and the SIMD flags that decide speed."""
    machine = data.get("machine") or {}
    if not machine.get("cpu_model"):
        return "CPU not recorded"
    flags = [label for flag, label in FLAGS.items() if (machine.get("cpu_flags") or {}).get(flag)]
    return f"{machine['cpu_model']} ({' '.join(flags) or 'no AVX2'})"


def current_command(command: str) -> str:
    """A recorded command with each benchmark script at its current path (the JSON keeps the command as it ran)."""
    def moved(match: re.Match) -> str:
        path = match.group(0)
        if (ROOT / path).exists():
            return path
        found = sorted(HERE.glob(f"*/{Path(path).name}"))
        return str(found[0].relative_to(ROOT)) if len(found) == 1 else path
    return re.sub(r"benchmarks/[\w/]+\.py", moved, command)


def provenance(data: dict) -> list[str]:
    """CPU, command, commit and the results file's name (``load`` files each run under ``_results``)."""
    return [cpu(data), f"`{current_command(data.get('command', '-'))}`", data.get("commit", "-"), data.get("_results", "-")]


def wrap(text: str) -> list[str]:
    """A paragraph in lines of at most 120 characters (Markdown joins them again)."""
    return textwrap.wrap(text, 120, break_long_words=False, break_on_hyphens=False)


def table(columns: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table; a column whose cells are all figures (or '-') is right-aligned."""
    def numeric(i: int) -> bool:
        cells = [row[i] for row in rows if row[i] != "-"]
        return bool(cells) and all(NUMERIC.match(c) for c in cells)
    escape = lambda cell: str(cell).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---:" if numeric(i) else "---" for i in range(len(columns))) + " |"]
    return lines + ["| " + " | ".join(escape(c) for c in row) + " |" for row in rows]


def best_first(rows: list[tuple], group_order: list[str] | None = None) -> list[list[str]]:
    """Rows given as (group, score, cells): groups in first-seen order (or ``group_order``), best score first within each."""
    order = group_order or list(dict.fromkeys(g for g, _, _ in rows))
    return [cells for _, _, cells in sorted(rows, key=lambda r: (order.index(r[0]) if r[0] in order else len(order), -r[1]))]


# ---- sections -------------------------------------------------------------------------------------------------------

def kb_building(runs) -> list[str]:
    rows = []
    for _, d in runs:
        for r in d["results"]:
            rows.append(("", r["names"], [r["name"], f"{r['concepts']:,}", f"{r['names']:,}", f"{r['relations']:,}", f"{r['seconds_median']:.1f} s",
                                          mb(r["peak_rss_mb_median"]), f"{r['size_mb']} MB",
                                          f"{r['by_id_us_median']} ({r['by_id_us_p99']}) / {r['by_name_us_median']} ({r['by_name_us_p99']})",
                                          *provenance(d)]))
    repeats = sorted({r.get("repeats") for _, d in runs for r in d["results"]} - {None})
    return ["## KB building", "",
            f"Each build is a fresh `medlink kb build` process (time includes start-up; median of {'/'.join(map(str, repeats))} builds, peak RSS "
            "the median build's own); lookups are timed over random names after opening the KB, `concept(id)` returning the full record. "
            "Largest first.", "",
            *table(["KB (source)", "concepts", "names", "relations", "build time", "peak RSS", "KB file", "lookup µs by id / by name: median (p99)",
                    *PROVENANCE], best_first(rows))]


def lexical(runs, tuning, ties) -> list[str]:
    rows = []
    for _, d in runs:
        per_fold = [r for r in d["rows"] if r.get("per_fold")]
        groups: dict[tuple, dict[str, dict]] = {}
        for r in (r for r in d["rows"] if not r.get("per_fold")):
            groups.setdefault((r["dataset"], r["split"], r["setting"]), {})[r["variant"]] = r
        for (dataset, split, setting), variants in groups.items():
            r = variants.get("fused") or next(iter(variants.values()))
            folds = [f["predict_seconds"] for f in per_fold if f["setting"] == r["setting"] and f["variant"] == r["variant"] and "predict_seconds" in f]
            if "predict_seconds" in r:
                time = f"build {secs(r.get('build_seconds'))}, link {secs(r['predict_seconds'])}"
            else:
                time = f"link {secs(sum(folds))} ({len(folds)} folds)" if folds else "-"
            alone = " / ".join(acc(variants[v]["acc@1"]) if v in variants else "-" for v in ("TF-IDF", "BM25"))
            rows.append((dataset, r["acc@1"], [f"{dataset} {split}", setting, r["variant"], str(r["n"]), acc(r["acc@1"], r.get("acc@1_std")), alone,
                                               acc(r["acc@5"]), acc(r["mrr"]), acc(r.get("recall@64")), time, "-", *provenance(d)]))
    tie_clauses = "".join(f" Score ties ({d['_results']}): of {d['errors']} NCBI dev errors, {d['ties_with_gold']} tie with the gold concept."
                          for _, d in ties)  # a clause, not a paragraph: the analysis is old and the JSON keeps it
    lines = ["## Lexical linking", "",
             "Configs chosen on dev (below); k = 64 candidates; Acc@k counts a prediction when any gold id alternative matches, and a composite "
             "mention needs every part right. One row per setting (the fused index; TF-IDF and BM25 alone beside it). Best first within each "
             "dataset." + tie_clauses, "",
             *table(["dataset, split", "KB / memory", "generator", "n", "Acc@1", "Acc@1 TF-IDF / BM25 alone", "Acc@5", "MRR", "R@64", "time",
                     "peak RSS", *PROVENANCE], best_first(rows))]
    if tuning:
        rows = []
        for _, d in tuning:
            for r in d["results"]:
                generators = {g["name"]: g.get("params", {}) for g in r["chosen"]["generators"]}
                tfidf, fusion = generators.get("tfidf", {}), r["chosen"]["fusion"]
                config = (f"TF-IDF {tfidf.get('analyzer')} {'-'.join(map(str, tfidf.get('ngram_range', [])))}, BM25 "
                          f"{'stemmed' if generators.get('bm25', {}).get('stem') else 'unstemmed'}, {fusion['method']} ({weights_text(fusion['weights'])})")
                rows.append([r["dataset"], Path(r["dev"].split(":", 1)[-1]).name, config,
                             " / ".join(acc(r[k][0]) for k in ("dev_tfidf", "dev_bm25", "dev_fused")), "-", "-", *provenance(d)])
        lines += ["", "The configs, chosen on dev data only (grid over TF-IDF analyzer and n-grams, BM25 stemming, fusion method and weights; "
                  "every trial is in the JSON):", "",
                  *table(["dataset", "dev split", "chosen config", "dev Acc@1 TF-IDF / BM25 / fused", "time", "peak RSS", *PROVENANCE], rows)]
    return lines


def model_paths(data: dict) -> dict[str, str]:
    """label -> model folder of a run's --model NAME=PATH arguments ('default': the packaged MiniLM)."""
    models = data.get("models")
    specs = [f"{k}={v}" for k, v in models.items()] if isinstance(models, dict) else models or re.findall(r"--model (\S+)", data.get("command", ""))
    return {spec.partition("=")[0]: spec.partition("=")[2] or "default" for spec in specs}


def short(path: str) -> str:
    return "base" if path in ("default", "None", "") else Path(path).name


DENSE_COLUMNS = {"dense (KB names + memory)": "dense", "dense + kNN": "knn", "hybrid + kNN": "hybrid_knn"}


def dense(runs, ensembles, defaults, training) -> list[str]:
    rows, covered = [], set()
    for _, d in runs:
        paths, trained_on_dev = model_paths(d), "--trained-on-dev" in d.get("command", "")
        seconds = {r["model"]: r["seconds"] for r in d["rows"] if "seconds" in r and "variant" not in r}
        groups: dict[tuple, dict] = {}
        for r in (r for r in d["rows"] if "variant" in r):
            group = groups.setdefault((r["dataset"], r["split"], r["model"]), {})
            if r["setting"].startswith("KB only"):
                group["kb"] = acc(r["acc@1"], r.get("acc@1_std"))
                group.setdefault("values", []).append(r["acc@1"])
                continue
            group["memory"] = re.search(r"memory\((.+)\)", r["setting"]).group(1)
            column = DENSE_COLUMNS.get(r["variant"], "hybrid" if r["variant"].startswith("hybrid (") else None)
            if column == "hybrid":
                weight = re.search(r"TF-IDF ([\d.]+)", r["variant"]).group(1)
                group[column] = f"{acc(r['acc@1'], r.get('acc@1_std'))} at {weight}{', carried' if 'carried' in r['variant'] else ''}"
            elif column:
                group[column] = acc(r["acc@1"], r.get("acc@1_std"))
            group.setdefault("values", []).append(r["acc@1"])
        for (dataset, split, model), g in groups.items():
            if dataset.startswith("NCBI"):
                covered.add(paths.get(model, model))
            method = model + (" (trained on dev too)" if trained_on_dev else "")
            time = secs(seconds.get(model)) if dataset.startswith("NCBI") else "-"
            rows.append((dataset, max(g["values"]), [f"{dataset} {split}", method, g.get("memory", "-"), g.get("kb", "-"), g.get("dense", "-"), g.get("knn", "-"),
                                          g.get("hybrid", "-"), g.get("hybrid_knn", "-"), time, "-", *provenance(d)]))
    seen = set()
    for _, d in sorted(ensembles, key=lambda run: len(model_paths(run[1]))):
        paths, carried = model_paths(d), not d.get("dev_trials")
        for r in d["test"]:
            weights = {short(paths.get(m, m)) if m != "tfidf" else m: w for m, w in r["weights"].items() if w}
            chosen = r["weights"] == d["chosen"]
            alone = [paths.get(m, m) for m, w in r["weights"].items() if w and m != "tfidf"]
            if chosen:
                key = (tuple(sorted(weights.items())), round(r["acc@1"], 6))
                label = " + ".join(f"{m} {w:g}" for m, w in weights.items()) + (", fused; weights carried over" if carried else
                                                                                     f", fused (dev's choice of {len(d['dev_trials'])})")
            elif len(alone) == 1 and alone[0] not in covered:
                key, label = (alone[0],), f"{short(alone[0])} (alone, in the fusion run)"
            else:
                continue
            if key in seen:
                continue
            seen.add(key)
            column = "-" if weights.get("tfidf") else acc(r["acc@1"])
            hybrid = acc(r["acc@1"]) if weights.get("tfidf") else "-"
            rows.append(("NCBI Disease", r["acc@1"], ["NCBI Disease test", label, "traindev", "-", column, "-", hybrid, "-",
                                                      secs(d.get("seconds")) if chosen else "-", "-", *provenance(d)]))
    for _, d in defaults:
        folds = d.get("folds") or (re.findall(r"--folds (\d+)", d.get("command", "")) or [10])[0]  # older files: the script's default
        for r in d["test"]:
            if not d.get("dev_trials", True) and r["variant"].startswith("lexical"):
                continue  # an accuracy check at a given weight (--weight): its lexical rows repeat the full run's
            for dataset, split, key, seconds_key in (("NCBI Disease", "test", "ncbi_test", "ncbi_test_seconds"),
                                                     ("AskAPatient", f"test, mean of {folds} folds", "askapatient_test_mean",
                                                      "askapatient_test_seconds")):
                rows.append((dataset, r[key], [f"{dataset} {split}", r["variant"], "-", acc(r[key]), "-", "-", "-", "-",
                                               f"link {secs(r.get(seconds_key))}", mb(d.get("peak_rss_mb")), *provenance(d)]))
    lines = ["## Dense linking", "",
             "Bi-encoders over the KB's names (NCBI: MEDIC as BioSyn's train_dictionary; AskAPatient: its ontology). *KB only*: no training "
             "mentions; *dense*: KB names + a memory of training mentions; *+ kNN*: the kNN reranker; *hybrid*: fused with TF-IDF (at the TF-IDF "
             "weight shown). Fusion weights and kNN parameters are chosen on NCBI dev (memory = train) or AskAPatient fold-0 validation, never on "
             "test; models trained on dev too are not tuned (weights carried over). Acc@1; best first within each dataset; time = the whole "
             "run the row comes from (dev tuning included); model folders and how they were trained: "
             "[docs/training-recipes.md](docs/training-recipes.md).", "",
             *table(["dataset, split", "model / method", "memory", "KB only", "dense", "+ kNN", "hybrid (TF-IDF)", "hybrid + kNN", "time", "peak RSS",
                     *PROVENANCE], best_first(rows, ["NCBI Disease", "AskAPatient"]))]
    if training:
        rows = []
        for _, d in sorted(training, key=lambda run: run[0]):
            minutes = [f["seconds"] / 60 for f in d["folds"]]
            last = [f["epochs"][-1].get("dev_acc@1") for f in d["folds"] if f.get("epochs")]
            last = [v for v in last if v is not None]
            command, base = d.get("command", ""), re.search(r"--base (\S+)", d.get("command", ""))
            what = (f"{'cross-encoder' if '--kind cross-encoder' in command else 'bi-encoder'}{f' from {base.group(1)}' if base else ''}, "
                    f"fold {'train + validation' if '--with-validation' in command else 'train'}")
            rows.append([what, f"{len(minutes)}", f"{min(minutes):.1f}" + (f"-{max(minutes):.1f}" if len(minutes) > 1 else "") + " min",
                         acc(statistics.mean(last)) if last else "-", secs(sum(f["seconds"] for f in d["folds"])), "-", *provenance(d)])
        lines += ["", "Training runs recorded in JSON (one model per AskAPatient fold; dev figure = the trainer's last-epoch figure on the "
                  "fold's validation file, mean over folds; NCBI models' training: docs/training-recipes.md):", "",
                  *table(["models trained", "folds", "time per model", "last-epoch dev figure", "time (sum)", "peak RSS", *PROVENANCE], rows)]
    return lines


def fusion_of(variant: str) -> dict | None:
    match = re.search(r"fusion (\{.*?\})", variant)
    return ast.literal_eval(match.group(1)) if match else None


def rerank_rows(d: dict):
    """(setting, retrieval alone row, reranked row, cross-encoder alone row) per memory setting of a rerank run."""
    by_setting: dict[str, dict] = {}
    for r in d["rows"]:
        kind = "alone" if r["variant"].startswith("retrieval alone") else "reranked" if "+ cross-encoder" in r["variant"] else "cross"
        by_setting.setdefault(r["setting"], {})[kind] = r
    return [(s, v.get("alone"), v.get("reranked"), v.get("cross")) for s, v in by_setting.items()]


def reranking(runs) -> list[str]:
    rows = []
    for _, d in runs:
        t = d["tuning"]
        text = re.search(r"--text (\w+)", d.get("command", ""))
        reranker = f"top {t['top']}, weight {t['weight']:g}" + (f", reads {text.group(1)}" if text else "") + ("" if t.get("trials") else ", carried over")
        for setting, alone, reranked, cross in rerank_rows(d):
            retrieval = acc(alone["acc@1"], alone.get("acc@1_std"))
            if fusion_of(alone["variant"]) not in (None, t["fusion"]):
                retrieval += f" ({weights_text(fusion_of(alone['variant']))})"
            rows.append((reranked["dataset"], reranked["acc@1"], [
                f"{reranked['dataset']} {reranked['split']}", re.search(r"memory\((.+)\)", setting).group(1), weights_text(t["fusion"]), reranker,
                retrieval, acc(reranked["acc@1"], reranked.get("acc@1_std")), acc(cross["acc@1"]) if cross else "-",
                num(t.get("cross_encoder_mentions_per_s")), secs(d.get("seconds")), mb(d.get("peak_rss_mb")), *provenance(d)]))
    return ["## Reranking", "",
            "Dense retrieval (fused bi-encoders and TF-IDF) reranked by a cross-encoder: score + weight x cross-encoder score over the top "
            "candidates. Fusion, top and weight chosen together on dev (NCBI dev, AskAPatient fold-0 validation), or carried over for models "
            "trained on validation too; *retrieval alone* is dev's best fusion without the reranker (its weights in brackets when they differ). "
            "Acc@1; best first within each dataset; time and peak RSS of the whole run.", "",
            *table(["dataset, split", "memory", "retrieval fusion", "cross-encoder", "retrieval alone", "+ cross-encoder", "cross-encoder alone",
                    "cross-encoder mentions/s", "time", "peak RSS", *PROVENANCE], best_first(rows))]


def scale(runs) -> list[str]:
    rows = [[f"{d['kb']}", f"{d['concepts']:,}", f"{d['names']:,}", secs(d["build_seconds"]), mb(d["build_peak_rss_mb"]), f"{d['index_size_mb']:,} MB",
             secs(d["load_seconds"]), f"{num(d['mentions_per_second'])} / {num(d['unique_mentions_per_second'])}", mb(d["link_peak_rss_mb"]),
             f"{d['without_selective_ngram']} of {d['agreement_queries']}", f"{d['top1_score_as_exhaustive']:.1%}", *provenance(d)] for _, d in runs]
    return ["## Scale", "",
            "A TF-IDF-only index (`benchmarks/configs/tfidf_only.json`) over the synthetic UMLS KB (`benchmarks/scale/synthetic_umls.py`), built "
            "and queried in fresh processes (single runs); queries are KB names with a character dropped and words shuffled. The last columns "
            "compare the shortlist with scoring every name.", "",
            *table(["KB", "concepts", "names", "index build", "build peak RSS", "index", "load", "mentions/s stream / unique", "linking peak RSS",
                    "queries without a selective n-gram", "top-1 score = exhaustive", *PROVENANCE], rows)]


def tfidf_rescore(runs) -> list[str]:
    """TF-IDF's stage 2 over 4 x its shortlist against the shortlist alone: accuracy and speed, one run."""
    lines = []
    for _, d in runs:
        rows = [[r["set"], num(r["mentions"]), num(r.get("first_candidates_differ")), *(acc(r[f"rescored_{s}"][m]) for m in ("acc@1", "acc@5") for s in (1, 4)),
                 *(num(r[f"rescored_{s}"]["mentions_per_second"]) for s in (1, 4)),
                 f"{r['rescored_4']['mentions_per_second'] / r['rescored_1']['mentions_per_second']:.2f}", *provenance(d)] for r in d["rescore_rows"]]
        lines += ["", "**TF-IDF's exact rescoring** (the default lexical config; stage 2 computes the exact cosine of 4 x `shortlist` names "
                  "chosen by their selective n-grams, the best `shortlist` going on, against `shortlist` alone; index built once, both "
                  f"settings in one run, mentions/s the median of {d['repeats']}):", "",
                  *table(["set", "mentions", "first differs", "Acc@1 x1", "Acc@1 x4", "Acc@5 x1", "Acc@5 x4", "mentions/s x1", "mentions/s x4", "ratio", *PROVENANCE], rows)]
    return lines


# the on/off runs of one lexical stage or option in the default config (benchmarks/_common/interleaved.py's rows): the
# results name, its rows' key, its two settings, the stage's short name and what it does, and what its probe holds
LEXICAL_OPTIONS = [
    ("words_form", "words_rows", ("without", "with"), "words", "an exact match on the set of a name's word stems, function words "
     "left out, so \"hip fractures\" meets *Fracture of hip NOS* (weight 1)", "reordered or inflected phrasings"),
    ("plain_forms", "plain_rows", ("without", "with"), "plain forms", "the words stage also matching a name's plain form where no name "
     "has its words: without words in parentheses or brackets, a trailing NOS or \", unspecified\", so \"essential hypertension\" meets "
     "*Essential (primary) hypertension*", "phrasings without a classification's asides"),
    ("bm25_spelling", "spelling_rows", ("off", "on"), "BM25 spelling", "a query word no name has is read as the most frequent name word "
     "one edit away, before stemming", "misspellings"),
    ("completion_stage", "completion_rows", ("without", "with"), "completion", "the names holding every word stem of the mention, "
     "ranked by P(their other stems | the mention's) over the KB's names, so \"diabetes\" meets *Diabetes mellitus* before *Latent "
     "diabetes*; a name that adds only \"disease\", \"disorder\" or \"syndrome\" scores 1 (weight 0.25)", "head words and eponyms"),
]


def lexical_options(get) -> list[str]:
    """Each lexical stage or option of the default config, off and on in one run: one table, then each one's probe."""
    rows, notes, described = [], [], []
    for name, rows_key, (off, on), stage, what, probe_what in LEXICAL_OPTIONS:
        for _, d in get(name) or []:
            rows += [[stage, r["set"], num(r["mentions"]), num(r["first_candidates_differ"]), *(acc(r[s][m]) for m in ("acc@1", "acc@5") for s in (off, on)),
                      *(num(r[s]["mentions_per_second"]) for s in (off, on)),
                      f"{r[on]['mentions_per_second'] / r[off]['mentions_per_second']:.2f}", *provenance(d)] for r in d[rows_key]]
            described.append(f"*{stage}*: {what}" + (f"; building its vocabulary over the default KB's {d['default_kb_names']:,} names: "
                                                      f"{d['vocabulary_seconds']:.1f} s" if "vocabulary_seconds" in d else "") + weight_choice(d))
            changed = "; ".join(f"\"{p['mention']}\" {(p[off] or {}).get('name', 'nothing')} -> {(p[on] or {}).get('name', 'nothing')}"
                                f" ({'right' if p[f'{on}_right'] else 'wrong'})" for p in d["probe"] if p[on] != p[off])
            notes.append(f"*{stage}* probe ({len(d['probe'])} {probe_what} over the default KB, each with the codes a coder would pick; first "
                         f"candidate right {sum(p[f'{off}_right'] for p in d['probe'])} off, {sum(p[f'{on}_right'] for p in d['probe'])} on; "
                         f"{sum(p[on] == p[off] for p in d['probe'])} unchanged" + (f"; off -> on): {changed}." if changed else ").")
                         + default_index_sentence(d))
    if not rows:
        return []
    return ["", "**Lexical stages and options, each off and on** (the default lexical config with one of them off (weight 0: not searched) "
            "and on; " + "; ".join(described) + ". Index built once per set, both settings in one run, mentions/s the median of the run's "
            "repeats):", "",
            *table(["stage", "set", "mentions", "first differs", "Acc@1 off", "Acc@1 on", "Acc@5 off", "Acc@5 on", "mentions/s off", "mentions/s on",
                    "ratio", *PROVENANCE], rows), "", *(line for note in notes for line in (note, ""))][:-1]


def weight_choice(d: dict) -> str:
    """The dev sets' Acc@1 at each weight tried (``--choose``), set by set."""
    rows = d.get("weight_choice") or []
    sets = list(dict.fromkeys(r["set"] for r in rows))
    by = {(r["set"], r["weight"]): r["acc@1"] for r in rows}
    return "" if not rows else (f"; its weight chosen on dev (Acc@1 of {' / '.join(sets)} at " + ", ".join(
        f"{w:g}: {' / '.join(f'{by[(name, w)]:.4f}' for name in sets)}" for w in dict.fromkeys(r["weight"] for r in rows)) + ")")


def default_index_sentence(d: dict) -> str:
    """What the default index itself decided for a probe (``benchmarks/_common/interleaved.py``'s default_index_decisions)."""
    decided = d.get("default_index")
    if not decided:
        return ""
    nil = [x for x in decided if x["nil"]]
    return (" The default index (its probabilities and NIL threshold fitted on the KB's pseudo-mentions) links "
            f"{len(decided) - len(nil)} of them, {sum(x['right'] and not x['nil'] for x in decided)} right, at probabilities "
            f"{min(x['probability'] for x in decided):.2f}-{max(x['probability'] for x in decided):.2f}"
            + (f"; NIL: {', '.join(x['mention'] for x in nil)} (first candidate right for {sum(x['right'] for x in nil)})." if nil else ".")
            + without_sentence(d.get("default_index_without")))


def without_sentence(decided: list[dict] | None) -> str:
    """The default index's decisions with the option off at link time (its probability model unchanged)."""
    if not decided:
        return ""
    linked = [x for x in decided if not x["nil"]]
    return (f" Off at link time (the same probability model) it links {len(linked)}, {sum(x['right'] for x in linked)} right"
            + (f"; NIL: {', '.join(x['mention'] for x in decided if x['nil'])}." if len(linked) < len(decided) else "."))


def episode_strip(runs) -> list[str]:
    """default-dense's ``strip``: the encoder's work saved over the default KB, and accuracy with and without it."""
    lines = []
    for _, d in runs:
        groups = [g for g in d["rows"][0] if isinstance(d["rows"][0][g], dict)]
        rows = [["on" if r["strip"] else "off", secs(r["build_seconds"]), r["cache"],
                 *(cell for g in groups for cell in (num(r[g]["mentions"]), acc(r[g]["acc@1"]), acc(r[g]["acc@5"]), acc(r[g]["dense acc@1"]))),
                 *provenance(d)] for r in d["rows"]]
        lines += ["", f"default-dense's `strip` (ICD-10-CM's episode-of-care qualifiers left out of the dense stage only): the default KB's "
                  f"{d['names']:,} names are {d['texts_after_strip']:,} texts to encode, tokens {d['tokens']:,} -> {d['tokens_after_strip']:,}. "
                  f"Pseudo-mentions drawn from the default KB (seed {d['seed']}; held-out synonyms, names, names with one edit), linked "
                  f"by default-dense without calibration: every in-KB one, and those whose concept has a qualified name"
                  + ("; names it matches in " + ", in ".join(f"{kb} {count:,}" for kb, count in d["names_matched_elsewhere"].items())
                     if d.get("names_matched_elsewhere") else "") + ":", "",
                  *table(["strip", "index build", "encode cache", *(f"{g} {c}" for g in groups for c in ("n", "Acc@1", "Acc@5", "dense Acc@1")),
                          *PROVENANCE], rows)]
    return lines


def calibrated_link(runs) -> list[str]:
    """The default index linking with its calibration stage and without it, one run."""
    return [line for _, d in runs for line in ("", f"The default index linking its KB's {d['mentions']:,} pseudo-mentions (seed 1, k 5): {num(d['mentions_per_second_with'])} "
            f"mentions/s with its calibration stage, {num(d['mentions_per_second_without'])} without (medians of {d['repeats']}, in turns; "
            f"{', '.join(provenance(d))}).")]


def signed_names(runs) -> list[str]:
    """Names whose sign is their meaning, linked with signs dropped and read: one sentence per run."""
    lines = []
    for _, d in runs:
        parts = [f"{r['setting']} {acc(r['as written']['acc@1'])} as written, {acc(r['spelt out']['acc@1'])} spelt out" for r in d["signed_rows"]]
        wrong = [text for r in d["signed_rows"][:1] for text, *_ in r["as written"]["wrong"]]
        lines += ["", f"**Signs** ({d['kb']} KB and its default index, built once with a normaliser that drops \"+\" and \"-\" and once with "
                  f"today's, which reads a sign closing a marker's name as its word): the KB's {d['signed_rows'][0]['as written']['mentions']} "
                  f"names with such a sign, each linked as a mention, Acc@1 against its own concept: {'; '.join(parts)}"
                  + (f" (wrong with signs dropped: {', '.join(wrong)})" if wrong else "") + f"; {', '.join(provenance(d))}."]
    return lines


def speed(lexical_runs, dense_runs, strip_runs=(), calibrated_runs=()) -> list[str]:
    rows = []
    for _, d in lexical_runs:
        s = d["speed"]
        rows.append(("", s["mentions_per_second"], ["lexical (NCBI's dev-chosen config)", f"{s['kb']}, {s['names']:,} names", secs(s.get("build_seconds_median")),
                                                   secs(s["load_seconds"]), f"{num(s['mentions_per_second'])} ({s['mentions']})",
                                                   f"{num(s['unique_mentions_per_second'])} ({s['unique']})", f"{s.get('index_size_mb', '-')} MB",
                                                   mb(s.get("peak_rss_mb")), *provenance(d)]))
    for _, d in dense_runs:
        s, model = d["linking"], re.search(r"--model (\S+)", d.get("command", ""))
        if not s:  # a run of first use / start-up only
            continue
        limit = "; MKL, oneDNN, ATen limited to AVX2" if d.get("isa_limit") else ""
        rows.append(("", s["mentions_per_second"], [f"dense ({model.group(1) if model else 'packaged all-MiniLM-L6-v2'}{limit})", "MEDIC (BioSyn train_dictionary)" + (f", {d['kb_names']:,} names" if d.get("kb_names") else ""),
                                                   secs(s.get("index_build_seconds")), secs(s["load_seconds"]),
                                                   f"{num(s['mentions_per_second'])} ({s['mentions']})",
                                                   f"{num(s['unique_mentions_per_second'])} ({s['unique']})", "-", mb(s.get("peak_rss_mb")), *provenance(d)]))
    lines = ["## Speed", "",
             "Linking NCBI test's mention parts in one process after loading the index (stream: every part in order, repeats included; unique: "
             "each distinct part once); medians over repeats; peak RSS of that process; a dense index build reuses the encode cache when "
             "the same names were encoded with the same precision before. Fastest first.", "",
             *table(["linker", "KB", "index build", "load", "mentions/s stream (n)", "mentions/s unique (n)", "index", "peak RSS", *PROVENANCE],
                    best_first(rows))]
    lines += default_dense_speed(dense_runs) + episode_strip(strip_runs) + calibrated_link(calibrated_runs)
    for _, d in dense_runs:
        if not d["encoding"]:
            continue
        base = d["encoding"][0]
        rows = [("", e["names_per_second"], [str(e["threads"]), precision_label(e), str(e["batch"]), num(e["names_per_second"]),
                                             f"{e['names_per_second'] / base['names_per_second']:.2f}", *provenance(d)])
                for e in d["encoding"] if e["batch"] == base["batch"]]
        count = f"{d['encoded_names']:,} " if d.get("encoded_names") else ""
        limit = f"; instruction sets limited to {d['isa_limit']}" if d.get("isa_limit") else ""
        lines += ["", f"Encoding {count}MEDIC names (batches grouped by token count; ratio to {base['threads']} threads, "
                  f"{precision_label(base)}, batch {base['batch']}, measured in the same run{limit}; other batch sizes in the JSON). Fastest first.", "",
                  *table(["threads", "weights", "batch", "names/s", "ratio", *PROVENANCE], best_first(rows))]
    return lines


STARTUP_STEPS = {"import medlink.cli": "CLI import", "import torch": "torch import", "default index check": "index check",
                 "model load": "model load", "FAISS read": "FAISS read", "rest of index load": "rest of load", "first link": "first link"}


def default_dense_speed(dense_runs) -> list[str]:
    """default-dense's first use (fresh MEDLINK_HOME) per precision, and its warm start split into steps (medians)."""
    lines = []
    for _, d in dense_runs:
        limit = "; MKL, oneDNN, ATen limited to AVX2 (simulated)" if d.get("isa_limit") else ""
        rows = []
        for r in d.get("first_use") or []:
            encoded = next(iter((d.get("startup") or [{}])[-1].get("precisions", {}).values()), None) if r["precision"] == "auto" else None
            rate = f"{r['dense_names'] / r['dense_seconds']:,.0f}" if r.get("dense_names") and r.get("dense_seconds") else "-"
            rows.append([f"first use, --precision {r['precision']}" + (f" ({encoded})" if encoded else ""), secs(r["seconds"]), secs(r.get("cpu_seconds")),
                         secs(r.get("dense_seconds")), rate, *provenance(d)])
        if rows:
            lines += ["", f"default-dense's first use (fresh MEDLINK_HOME: default KB, lexical stages, {d['first_use'][0].get('dense_names') or 0:,} "
                      f"names indexed, calibration fit; one run each{limit}; dense phase = model load + encoding + FAISS; names/s = names indexed per "
                      "second of it, each distinct text encoded once):", "",
                      *table(["run", "total", "CPU time", "dense phase", "names/s", *PROVENANCE], rows)]
    rows = []  # every run's warm starts in one table
    for _, d in dense_runs:
        limit = " (AVX2 limit simulated)" if d.get("isa_limit") else ""
        for r in d.get("startup") or []:
            steps = r["steps_median"]
            rows.append([r.get("index", "default-dense"), r["code"] + limit, f"{secs(r['cli_seconds_median'])} ({r['repeats']})",
                         *(secs(steps.get(k)) for k in STARTUP_STEPS), ", ".join(sorted(set(r.get("precisions", {}).values()))) or "-", *provenance(d)])
    if rows:
        lines += ["", "Warm `medlink link --index INDEX \"heart attack\"`, process start to answer: median wall time of fresh processes, and "
                  "each step timed in a child doing the same (medians; python's own start-up is the gap; the lexical index imports no torch):", "",
                  *table(["index", "code", "CLI (runs)", *STARTUP_STEPS.values(), "encodes in", *PROVENANCE], rows)]
    return lines


def precision_label(encoding: dict) -> str:
    """An encoding row's number format: 'auto (bf16)' = what the machine's probe chose; older rows say bf16 true / false."""
    if "precision" not in encoding:
        return "bf16" if encoding["bf16"] else "fp32"
    resolved = encoding.get("resolved")
    return f"{encoding['precision']} ({resolved})" if encoding["precision"] == "auto" and resolved else encoding["precision"]


def robustness(runs, scorers) -> list[str]:
    """Damaged inputs, damaged index folders, kills, and the independent check of the JSON output: counts of outcomes."""
    rows = []
    for _, d in runs:
        if "throughput_ratio" in d:
            rows.append(long_document_row(d))
            continue
        if "by_label" in d:
            rows.append(windowed_document_row(d))
            continue
        if "by_reader" in d:
            what, outcomes = f"{d['cases']:,} damaged KB files ({len(d['by_reader'])} readers)", d["total"]
        elif "by_format" in d:
            what, outcomes = f"{d['cases']:,} damaged document files ({', '.join(d['by_format'])}; read as `medlink annotate --input` does)", d["total"]
        elif "by_index" in d:
            what, outcomes = f"{d['cases']:,} damaged index files ({', '.join(d['by_index'])})", d["total"]
        elif "by_case" in d:
            what = (f"{d['cases']:,} outputs pointed at the run's inputs, users' files and folders, copied markers, a real output "
                    f"holding the user's notes, symlinks and the command's own earlier output ({len(d['by_command'])} commands)")
            outcomes = d["total"]
        elif "by_command" in d:
            what = (f"two runs of one command to one output at once, {d['trials_per_command']} trials per command "
                    f"({', '.join(d['by_command'])}; median seconds to the refusal: "
                    + ", ".join(str(r["median_seconds_to_refusal"]) for r in d["by_command"].values()) + ")")
            outcomes = {}
            for result in d["by_command"].values():
                for outcome, n in result["outcomes"].items():
                    outcomes[outcome] = outcomes.get(outcome, 0) + n
        else:
            what = f"kill -9 at a random moment, {d['trials_per_command']} trials per command ({', '.join(d['outcomes'])})"
            outcomes = {}
            for counts in d["outcomes"].values():
                for outcome, n in counts.items():
                    outcomes[outcome] = outcomes.get(outcome, 0) + n
        rows.append([what, ", ".join(f"{outcome} {n:,}" for outcome, n in sorted(outcomes.items(), key=lambda kv: -kv[1])), *provenance(d)])
    for _, d in scorers:
        rows.append([f"independent scorer of `medlink link --json` vs `medlink eval` ({d['dataset']} {d['split']}, {d['kb']})",
                     f"Acc@1 {acc(d['independent_acc@1'])} vs {acc(d['eval_acc@1'])} ({d['difference_points']:.2f} points apart)", *provenance(d)])
    return ["## Robustness and consistency", "",
            "Tracebacks, hangs, broken or partial artefacts, staging files left after a rerun, refusals naming no file (documents: "
            "no line), changes from a BOM, CRLF or CR-only line endings, records dropped without a count, control characters "
            "stored in a KB, damaged index files used: none occurred. Users' files lost and second writers not refused: as "
            "each row says.", "", *table(["what", "outcomes", *PROVENANCE], rows)]


def windowed_document_row(d: dict) -> list[str]:
    """One long document annotated before and after windowing: seconds and peak RSS per size, as one row."""
    runs = {label: {(r["corpus"], r["mb"]): r for r in run["rows"]} for label, run in d["by_label"].items()}
    labels = list(runs)
    cells = []
    for key in runs[labels[-1]]:
        shown = [f"{secs(runs[label][key]['seconds'])}, {runs[label][key]['peak_rss_mb']:,} MB" for label in labels if key in runs[label]]
        cells.append(f"{key[0]} {key[1]} MB: " + " -> ".join(shown))
    commits = ", ".join(f"{label} {run['commit']}" for label, run in d["by_label"].items())
    return [f"one long document, {' -> '.join(labels)} ({commits}), seconds and peak RSS ({d['index']}; dense: mentions only)",
            "; ".join(cells), *provenance({**d, "command": d["by_label"][labels[-1]]["command"]})]


def long_document_row(d: dict) -> list[str]:
    """One long document annotated at growing sizes: characters/s per size (flat = no quadratic step), as one row."""
    def size(row: dict) -> str:
        name = f"{row['kb'] // 1024} MB" if row["kb"] >= 1024 else f"{row['kb']} KB"
        if "timed_out_after_s" in row:
            return f"{name} over {secs(row['timed_out_after_s'])}"
        return f"{name} {row['chars_per_s']:,}/s ({secs(row['seconds'])})"
    ratio = d["throughput_ratio"].get("1MB/64KB")
    peak = max((r["peak_rss_mb"] for r in d["sizes"] if "peak_rss_mb" in r), default=None)
    return [f"one document of NCBI abstracts, characters/s by size ({d['annotator']})",
            ", ".join(size(r) for r in d["sizes"]) + (f"; 1 MB / 64 KB throughput {ratio:.2f}" if ratio else "") + f"; peak RSS {mb(peak)}",
            *provenance(d)]


def did_not_help(kinds: dict) -> list[str]:
    """Ideas the JSON shows gained nothing: rerankers at or below retrieval alone, models fusion gave weight 0, xref names, entity text, kNN."""
    rows = []
    for name, d in kinds.get("rerank", []):
        for setting, alone, reranked, _ in rerank_rows(d):
            if reranked["acc@1"] <= alone["acc@1"]:
                t, trials = d["tuning"], d["tuning"].get("trials") or []
                dev = (f" (dev {acc(max(x['acc@1'] for x in trials if not x['weight']))} -> {acc(max(x['acc@1'] for x in trials))})"
                       if trials and t["weight"] else "")
                rows.append([f"cross-encoder reranker (top {t['top']}, weight {t['weight']:g}{'; dev turned it off' if not t['weight'] else ''})",
                             f"{reranked['dataset']} {reranked['split']}, memory {re.search(r'memory[(](.+)[)]', setting).group(1)}",
                             acc(alone["acc@1"]), acc(reranked["acc@1"]) + dev, name, d["commit"]])
    fused_out = []  # one row for every bi-encoder dev gave weight 0 beside the chosen ones
    for name, d in kinds.get("ensemble", []):
        paths, trials = model_paths(d), d.get("dev_trials") or []
        for model in (m for m, w in d["chosen"].items() if m != "tfidf" and not w and trials):
            without = max(t["acc@1"] for t in trials if not t["weights"].get(model))
            with_it = max(t["acc@1"] for t in trials if t["weights"].get(model))
            others = " + ".join(short(paths.get(m, m)) for m, w in d["chosen"].items() if w and m != "tfidf")
            fused_out.append((short(paths.get(model, model)), others, len(trials), without, with_it, name, d["commit"]))
    if fused_out:
        rows.append([f"a third bi-encoder fused with the chosen pair: {', '.join(f'{m} (with {o})' for m, o, *_ in fused_out)}",
                     f"NCBI dev, best of {max(t for _, _, t, *_ in fused_out)} weight settings each",
                     " / ".join(acc(r[3]) for r in fused_out),
                     " / ".join(acc(r[4]) for r in fused_out) + " (dev gave each weight 0)", ", ".join(r[5] for r in fused_out),
                     ", ".join(r[6] for r in fused_out)])
    for name, d in kinds.get("xref_enrichment", []):
        best: dict[str, dict] = {}
        for r in d["rows"]:
            if r["benchmark"] not in best or r["plain"]["acc@1"] > best[r["benchmark"]]["plain"]["acc@1"]:
                best[r["benchmark"]] = r
        added = d.get("names_added", {})
        for benchmark, r in best.items():
            count = added.get("askapatient" if benchmark.startswith("AskAPatient") else "ncbi")
            rows.append([f"KB names added through xrefs (+{count:,}), {weights_text(r['weights'])}", benchmark, acc(r["plain"]["acc@1"]),
                         acc(r["enriched"]["acc@1"]), name, d["commit"]])
    for name, d in kinds.get("concept_text", []):
        by_model: dict[str, dict] = {}
        for r in d["rows"]:
            if r["split"] == "test":
                by_model.setdefault(r["model"], {})[r["variant"]] = r["acc@1"]
        for model, values in by_model.items():
            plain, *others = values
            for variant in others:
                coverage = d.get("coverage", {})
                described = f"; DO definitions for {coverage['with_definition']:,} of {coverage['concepts']:,} concepts" if coverage else ""
                rows.append([f"dense text '{variant}' instead of '{plain}' ({model}, untrained on it)", f"NCBI Disease test, KB only{described}",
                             acc(values[plain]), acc(values[variant]), name, d["commit"]])
    for dataset in ("NCBI Disease", "AskAPatient"):
        pairs = {}
        for name, d in kinds.get("dense_linking", []):
            for r in d["rows"]:
                if r.get("dataset") == dataset and r.get("variant") in ("dense (KB names + memory)", "dense + kNN"):
                    pairs.setdefault((name, r["model"]), {})[r["variant"]] = r["acc@1"]
        deltas = [p["dense + kNN"] - p["dense (KB names + memory)"] for p in pairs.values() if len(p) == 2]
        if deltas and sum(x < 0 for x in deltas) >= len(deltas) / 2:
            rows.append([f"kNN reranker on dense retrieval (dev-chosen k, lambda, beta; {len(deltas)} models)", f"{dataset} test",
                         "dense alone", f"lower for {sum(x < 0 for x in deltas)}, equal for {sum(x == 0 for x in deltas)}, higher for "
                         f"{sum(x > 0 for x in deltas)} (change {min(deltas):+.4f} to {max(deltas):+.4f})", "dense_* runs", "-"])
    return ["## What did not help", "",
            "Ideas measured and not adopted, as the JSON records them (Acc@1; more in the notes below).", "",
            *table(["tried", "on", "without", "with", "results", "commit"], rows)]


# ---- the document ---------------------------------------------------------------------------------------------------

def load(results: Path) -> list[tuple[str, dict]]:
    runs = [(path.stem, json.loads(path.read_text(encoding="utf-8"))) for path in sorted(results.glob("*.json"))]
    for name, data in runs:
        data["_results"] = name  # for the tables' results column; never written back
    return runs


def machines(runs) -> str:
    def describe(d: dict) -> str:
        m = d.get("machine") or {}
        memory = f", {m['memory_gib']:.0f} GiB RAM" if m.get("memory_gib") else ""
        return f"Python {m.get('python', '?')}, {m.get('cpus', '?')} CPUs{memory}, {cpu(d)}"
    return "; ".join(f"{text} ({count} result{'s' * (count > 1)})" for text, count in Counter(describe(d) for _, d in runs).most_common())


def render(results: Path = RESULTS, notes: Path | None = NOTES) -> str:
    runs = load(results)
    kinds: dict[str, list] = {}
    for name, data in runs:
        kind = next((k for k, test in KINDS.items() if test(data)), "unknown")
        kinds.setdefault(kind, []).append((name, data))
    get = lambda *names: [run for n in names for run in kinds.get(n, [])]  # noqa: E731
    lines = ["# Benchmarks", "",
             "<!-- Generated by `python benchmarks/report.py` from benchmarks/results/*.json and benchmarks/notes.md: edit those, not this file. -->", "",
             f"Generated from the {len(runs)} results files in `benchmarks/results/` (one per run, with what the tables leave out: dev trials, "
             "per-fold figures, more metrics) by `python benchmarks/report.py`; each benchmark script writes its JSON, then regenerates "
             "this file. Reproduce a row with its command, run from the repository root; datasets are read from `../shared/data/`, trained "
             "models from `$MEDLINK_BENCH_MODELS` (how to train them: [docs/training-recipes.md](docs/training-recipes.md)). Commands show "
             "the scripts' current paths (`benchmarks/README.md` lists the suites). Parameters are chosen on dev or validation data only, "
             "never on test. \"-\" = not recorded in the JSON.", "",
             f"Machines, as the JSON records them: {machines(runs)}. Results written from now on record the CPU model and its AVX2 / AVX-512 / "
             "AMX flags; earlier ones say \"CPU not recorded\".", ""]
    if kinds.get("unknown"):
        lines += [f"Results no table shows yet: {', '.join(name for name, _ in kinds['unknown'])}.", ""]
    sections = [kb_building(get("kb_build")) if get("kb_build") else [],
                lexical(get("lexical_linking"), get("tune_lexical"), get("lexical_ties")) if get("lexical_linking") else [],
                tfidf_rescore(get("tfidf_rescore")) if get("tfidf_rescore") else [],
                lexical_options(get),
                signed_names(get("signed_names")) if get("signed_names") else [],
                dense(get("dense_linking"), get("ensemble"), get("default_dense"), get("training"))
                if get("dense_linking", "ensemble", "default_dense") else [],
                reranking(get("rerank")) if get("rerank") else [],
                ranker(get("pairwise_ranker"), table=table, provenance=provenance) if get("pairwise_ranker") else [],
                calibration_section(get("calibration_nil"), table, provenance, get("nil_documents"), get("calibration_variants")) if get("calibration_nil") else [],
                scale(get("lexical_scale")) if get("lexical_scale") else [],
                speed(get("lexical_linking"), get("dense_speed"), get("episode_strip"), get("calibrated_link") or []) if get("lexical_linking", "dense_speed") else [],
                robustness(get("robustness"), get("json_scorer")) if get("robustness", "json_scorer") else [],
                documents(get("documents_ncbi"), get("peers_documents"), get("dictionary_scale"), get("documents_context"), get("assertion_status"), table=table, provenance=provenance,
                          PROVENANCE=PROVENANCE, secs=secs, mb=mb) if get("documents_ncbi", "peers_documents", "dictionary_scale", "assertion_status") else [],
                align_section(get("align_quality"), get("align_speed"), get("align_augment"), get("align_seeds"), get("align_entity_text"),
                              get("align_predicates"), table=table, provenance=provenance, PROVENANCE=PROVENANCE, secs=secs, mb=mb, wrap=wrap)
                if get("align_quality", "align_speed", "align_augment", "align_seeds", "align_entity_text", "align_predicates") else [],
                did_not_help(kinds)]
    for section in sections:
        lines += [*section, ""] if section else []
    lines = [line for i, line in enumerate(lines) if line or not i or lines[i - 1]]  # sections that open with a blank line: one, not two
    lines = [wrapped for line in lines for wrapped in (wrap(line) if line and line[0] not in "|#<" else [line])]
    if notes and notes.exists():
        written = re.sub(r"<!--.*?-->\n?", "", notes.read_text(encoding="utf-8"), flags=re.S)  # the note to editors stays in notes.md
        lines += ["## Notes (hand-written: figures no results JSON holds)", "", *written.strip().splitlines(), ""]
    return "\n".join(lines).rstrip() + "\n"


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
    lines = text.count("\n")
    if lines > LINE_BUDGET:
        print(f"warning: {out} has {lines} lines (budget {LINE_BUDGET})", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--notes", type=Path, default=NOTES)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if --out differs from what the JSON gives")
    args = parser.parse_args()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != render(args.results, args.notes):
            sys.exit(f"{args.out} is not what {args.results} gives: run python benchmarks/report.py")
        return
    path = write_report(args.results, args.notes, args.out)
    print(f"wrote {path} ({path.read_text(encoding='utf-8').count(chr(10))} lines)")


if __name__ == "__main__":
    main()

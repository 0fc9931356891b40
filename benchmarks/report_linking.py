"""BENCHMARKS.md's sections on linking gold mentions: lexical linking and its stages, dense linking, reranking.

Each function takes ``get`` (results of the named kinds, as (name, JSON) pairs) and returns a ``Section``, or None when
no results of its kinds exist. Rows a reader seldom needs (more variants, timings, per-fold figures) stay in the JSON.
"""

from __future__ import annotations

import ast
import re

from report_cells import Section, acc, arrow, table

KINDS = {
    "tune_lexical": lambda d: "trials" in (d.get("results") or [{}])[0],
    "lexical_linking": lambda d: "rows" in d and "speed" in d,
    "lexical_datasets": lambda d: "rows" in d and "lexical_datasets" in d,  # more datasets' rows (BC5CDR-disease), no speed
    "lexical_ties": lambda d: "ties_with_gold" in d,
    "tfidf_rescore": lambda d: "rescore_rows" in d,
    "words_form": lambda d: "words_rows" in d,
    "plain_forms": lambda d: "plain_rows" in d,
    "signed_names": lambda d: "signed_rows" in d,
    "bm25_spelling": lambda d: "spelling_rows" in d,
    "completion_stage": lambda d: "completion_rows" in d,
    "thesaurus_stage": lambda d: "thesaurus_rows" in d,
    "lay_words": lambda d: "reading_rows" in d and d.get("reading") == "lay_words",
    "shorthand_reading": lambda d: "reading_rows" in d and d.get("reading") == "shorthand",
    "two_edits_reading": lambda d: "reading_rows" in d and d.get("reading") == "two_edits",
    "default_dense": lambda d: "chosen_dense_weight" in d,
    "concept_text": lambda d: "coverage" in d,
    "xref_enrichment": lambda d: "names_added" in d,
    "ensemble": lambda d: "chosen" in d and "test" in d,
    "rerank": lambda d: "tuning" in d,
    "training": lambda d: "folds" in d and "recipe" in d,
    "dense_linking": lambda d: any("model" in r and "variant" in r for r in d.get("rows", [])),
    "pairwise_ranker": lambda d: "ranker_results" in d,
}


def weights_text(weights: dict[str, float]) -> str:
    """Fusion weights, those above zero only: 'sup-ncbi 1, ncbi-ft 0.5'."""
    return ", ".join(f"{name} {weight:g}" for name, weight in weights.items() if weight)


def best_first(rows: list[tuple], group_order: list[str] | None = None) -> list[list[str]]:
    """Rows given as (group, score, cells): groups in first-seen order (or ``group_order``), best score first within each."""
    order = group_order or list(dict.fromkeys(g for g, _, _ in rows))
    return [cells for _, _, cells in sorted(rows, key=lambda r: (order.index(r[0]) if r[0] in order else len(order), -r[1]))]


# ---- lexical ----------------------------------------------------------------------------------------------------------

# the on/off runs of one lexical stage or option of the default config: kind, its rows' key, its two settings, its name
STAGES = [("words_form", "words_rows", ("without", "with"), "words (a name's word stems as a set)"),
          ("plain_forms", "plain_rows", ("without", "with"), "plain forms (no NOS, no parentheses)"),
          ("bm25_spelling", "spelling_rows", ("off", "on"), "BM25 spelling correction"),
          ("completion_stage", "completion_rows", ("without", "with"), "completion (P(other stems | the mention's))"),
          ("thesaurus_stage", "thesaurus_rows", ("without", "with"), "thesaurus (names a synonym spells: HPO's lay words)"),
          ("lay_words", "reading_rows", ("without", "with"), "lay words (\"sore knees\" read as \"knee pain\")"),
          ("shorthand_reading", "reading_rows", ("without", "with"), "shortened words (\"breast ca\" read as \"breast cancer\")"),
          ("two_edits_reading", "reading_rows", ("without", "with"), "two edits (\"diabeetus\" read as \"diabetes\")")]
STAGE_SETS = [("NCBI test", "NCBI test"), ("AskAPatient fold-0 test", "AskAPatient fold-0 test"), ("default KB pseudo-mentions", "default KB pseudo-mentions")]


def lexical_section(get) -> Section | None:
    runs = get("lexical_linking")
    if not runs:
        return None
    section = Section("Lexical linking", "Gold mentions linked by exact, TF-IDF and BM25 generators, fused (configs chosen on dev: "
                      "benchmarks/configs; BC5CDR: the default); k = 64; Acc@k: any gold id alternative; composites need every part.")
    section.paired_runs = True  # seven runs: two a line where they fit (the file's line budget)
    rows = []
    for _, d in (runs := runs + get("lexical_datasets")):
        groups: dict[tuple, dict[str, dict]] = {}
        for r in (r for r in d["rows"] if not r.get("per_fold")):
            groups.setdefault((r["dataset"], r["split"], r["setting"]), {})[r["variant"]] = r
        protocol = {dataset for dataset, _, setting in groups if setting.startswith("published")}
        for (dataset, split, setting), variants in groups.items():
            if dataset in protocol and "+ memory" in setting:  # the protocol's dictionary holds the same mentions: in the JSON
                continue
            r = variants.get("fused") or next(iter(variants.values()))
            alone = " / ".join(acc(variants[v]["acc@1"]) if v in variants else "-" for v in ("TF-IDF", "BM25"))
            rows.append((dataset, r["acc@1"], [f"{dataset} {split}", setting, acc(r["acc@1"], r.get("acc@1_std")), alone, acc(r["acc@5"]),
                                               acc(r["mrr"]), acc(r.get("recall@64"))]))
    section.add_runs(runs)
    section.body += table(["data", "KB / memory", "Acc@1", "TF-IDF / BM25 alone", "Acc@5", "MRR", "R@64"], best_first(rows))
    section.body += stages_table(get, section)
    return section


def stages_table(get, section: Section) -> list[str]:
    """Each stage or option of the default lexical config off and on, in one run: test sets' Acc@1 and the speed ratio."""
    rows = []
    for kind, key, (off, on), stage in STAGES:
        for name, d in get(kind)[-1:]:
            by_set = {r["set"]: r for r in d[key]}
            cells = []
            for prefix, _ in STAGE_SETS:
                r = next((r for s, r in by_set.items() if s.startswith(prefix)), None)
                cells.append(arrow(r[off]["acc@1"], r[on]["acc@1"]) if r and r[off].get("acc@1") is not None else "-")
            big = max(d[key], key=lambda r: r["mentions"])
            rows.append([stage, *cells, f"{big[on]['mentions_per_second'] / big[off]['mentions_per_second']:.2f}"])
            section.add_runs([(name, d)])
    if not rows:
        return []
    section.intro += " Second table: each stage of the default config off → on, in one run (speed ratio: largest set)."  # one paragraph fewer
    return ["", *table(["stage", *(label + " Acc@1" for _, label in STAGE_SETS), "speed on / off"], rows)]  # the probes: in the JSON


# ---- dense ------------------------------------------------------------------------------------------------------------

DENSE_COLUMNS = {"dense (KB names + memory)": "dense", "dense + kNN": "knn"}
TOP_MODELS = {"NCBI Disease": 1, "AskAPatient": 1, "BC5CDR-disease": 1}  # trained models shown per dataset, best first; the others stay in the JSON


def model_paths(data: dict) -> dict[str, str]:
    """label -> model folder of a run's --model NAME=PATH arguments ('default': the packaged MiniLM)."""
    models = data.get("models")
    specs = [f"{k}={v}" for k, v in models.items()] if isinstance(models, dict) else models or re.findall(r"--model (\S+)", data.get("command", ""))
    return {spec.partition("=")[0]: spec.partition("=")[2] or "default" for spec in specs}


def short(path: str) -> str:
    return "base" if path in ("default", "None", "") else path.rstrip("/").rsplit("/", 1)[-1]


def dense_rows(runs) -> list[dict]:
    """One dict per (dataset, model) of every dense_linking run: its KB-only, dense, kNN and hybrid Acc@1."""
    out = []
    for name, d in runs:
        paths, trained_on_dev = model_paths(d), "--trained-on-dev" in d.get("command", "")
        groups: dict[tuple, dict] = {}
        for r in (r for r in d["rows"] if "variant" in r):
            g = groups.setdefault((r["dataset"], r["split"], r["model"]), {"values": []})
            g["values"].append(r["acc@1"])
            g["carried"] = g.get("carried", False) or r.get("carried_over", False)
            if r["setting"].startswith("KB only"):
                g["kb"] = acc(r["acc@1"], r.get("acc@1_std"))
            elif r["variant"] in DENSE_COLUMNS:
                g[DENSE_COLUMNS[r["variant"]]] = acc(r["acc@1"], r.get("acc@1_std"))
                g[DENSE_COLUMNS[r["variant"]] + "_value"] = r["acc@1"]
            elif r["variant"].startswith("hybrid (") and "hybrid" not in g:
                weight = re.search(r"TF-IDF ([\d.]+)", r["variant"]).group(1)
                g["hybrid"] = f"{acc(r['acc@1'], r.get('acc@1_std'))} at {weight}"
        for (dataset, split, model), g in groups.items():
            label = model + (" (trained on dev too)" if trained_on_dev else "") + (" (NCBI dev's weights)" if g.pop("carried") else "")
            out.append({"dataset": dataset, "split": split, "model": label, "path": paths.get(model, model), "run": name, "data": d,
                        "best": max(g["values"]), **g})
    return out


def dense_section(get) -> Section | None:
    runs, ensembles, defaults = get("dense_linking"), get("ensemble"), get("default_dense")
    if not (runs or ensembles or defaults or get("rerank") or get("pairwise_ranker")):
        return None
    section = Section("Dense linking and reranking", "Bi-encoders over the KB's names and a memory of training mentions; weights and kNN chosen on dev. Test "
                      "Acc@1; *KB only*: no memory; *hybrid*: fused with TF-IDF at the weight shown. The best trained models, the packaged "
                      "MiniLM (base), default-dense; recipes: docs/training-recipes.md.")
    section.paired_runs = True  # its runs two a line where they fit (the file's line budget)
    rows = []  # (dataset, score, cells, run)
    trained = []
    for r in dense_rows(runs):
        cells = [f"{r['dataset']} {r['split']}", r["model"], r.get("kb", "-"), r.get("dense", "-"), r.get("knn", "-"), r.get("hybrid", "-")]
        (rows if short(r["path"]) == "base" else trained).append((r["dataset"], r["best"], cells, (r["run"], r["data"])))
    seen = set()  # a fusion run that gave an added model weight 0 repeats an earlier run's chosen row: shown once
    for name, d in ensembles:
        paths = model_paths(d)
        for r in d["test"]:
            weights = " + ".join(f"{short(paths.get(m, m)) if m != 'tfidf' else m} {w:g}" for m, w in r["weights"].items() if w)
            if r["weights"] != d["chosen"] or (weights, round(r["acc@1"], 6)) in seen:
                continue
            seen.add((weights, round(r["acc@1"], 6)))
            how = "weights carried over" if not d.get("dev_trials") else f"dev's choice of {len(d['dev_trials'])}"
            trained.append(("NCBI Disease", r["acc@1"], ["NCBI Disease test", f"{weights}, fused ({how})", "-", acc(r["acc@1"]), "-", "-"], (name, d)))
    for dataset, keep in TOP_MODELS.items():
        ranked = sorted((t for t in trained if t[0] == dataset), key=lambda t: -t[1])
        ranked = [t for t in ranked if "carried over" not in t[2][1]]
        fused = [t for t in ranked if ", fused (" in t[2][1]][:1]  # the best fusion; others repeat its models (the JSON keeps them)
        rows += [t for t in ranked if ", fused (" not in t[2][1] or t in fused][:keep]
    for name, d in [run for run in defaults if run[1].get("dev_trials")][-1:]:  # the weight-grid run; precision checks stay in the JSON
        for r in d["test"]:
            for dataset, label, key in (("NCBI Disease", "NCBI Disease test", "ncbi_test"),
                                        ("AskAPatient", f"AskAPatient test, mean of {d.get('folds', 10)} folds", "askapatient_test_mean")):
                rows.append((dataset, r[key], [label, r["variant"], acc(r[key]), "-", "-", "-"], (name, d)))
    if rows:
        section.body += table(["data", "model / method", "KB only", "dense", "+ kNN", "hybrid"],
                              best_first([(g, s, c) for g, s, c, _ in rows], list(TOP_MODELS)))
    section.add_runs(sorted({run[0]: run for *_, run in rows}.values(), key=lambda run: run[0]))
    reranking(get, section)
    knn = knn_line(dense_rows(runs))
    if knn:  # after the reranking table: one blank line fewer
        section.body += ([""] if section.body and section.body[-1] else []) + [knn]
    return section


def knn_line(rows: list[dict]) -> str:
    """The kNN reranker against dense retrieval alone over every dense run (the rows shown and those in the JSON)."""
    parts = []
    for dataset in ("NCBI Disease", "AskAPatient"):
        deltas = [r["knn_value"] - r["dense_value"] for r in rows if r["dataset"] == dataset and "knn_value" in r and "dense_value" in r]
        if deltas:
            parts.append(f"{dataset} lower for {sum(x < 0 for x in deltas)} of {len(deltas)} models, higher for {sum(x > 0 for x in deltas)} "
                         f"({min(deltas):+.4f} to {max(deltas):+.4f})")
    return f"- Not adopted: the kNN reranker (dev-chosen k, lambda, beta) against dense alone, every dense run: {'; '.join(parts)}." if parts else ""


def not_adopted(get, section: Section) -> list[str]:
    """KB names added through xrefs, and concept text with definitions: measured, not adopted (Acc@1)."""
    lines = []
    for name, d in get("xref_enrichment")[-1:]:
        best: dict[str, dict] = {}
        for r in d["rows"]:
            if r["benchmark"] not in best or r["plain"]["acc@1"] > best[r["benchmark"]]["plain"]["acc@1"]:
                best[r["benchmark"]] = r
        added = d.get("names_added", {})
        cells = [f"{benchmark} {arrow(r['plain']['acc@1'], r['enriched']['acc@1'])} "
                 f"(+{added.get('askapatient' if benchmark.startswith('AskAPatient') else 'ncbi', 0):,} names)" for benchmark, r in best.items()]
        lines.append("- Not adopted: KB names added through cross-references, dev Acc@1: " + "; ".join(cells) + ".")
        section.add_runs([(name, d)])
    for name, d in get("concept_text")[-1:]:
        by_model: dict[str, dict] = {}
        for r in d["rows"]:
            if r["split"] == "test":
                by_model.setdefault(r["model"], {})[r["variant"]] = r["acc@1"]
        cells = [f"{model} {arrow(*list(values.values())[:2])}" for model, values in by_model.items() if len(values) > 1]
        variants = list(next(iter(by_model.values()), {}))
        if cells and len(variants) > 1:
            lines.append(f"- Not adopted: dense text '{variants[1]}' instead of '{variants[0]}' (untrained models, NCBI test, KB only): "
                         + "; ".join(cells) + ".")
            section.add_runs([(name, d)])
    return lines


# ---- reranking --------------------------------------------------------------------------------------------------------

def fusion_of(variant: str) -> dict | None:
    match = re.search(r"fusion (\{.*?\})", variant)
    return ast.literal_eval(match.group(1)) if match else None


PAIRWISE = ("retrieval alone", "max", "attention", "cross-encoder")  # the variants shown; '+ synonyms' ones stay in the JSON


def reranking(get, section: Section) -> None:
    """Candidates reordered by a second model: paper 001's pairwise ranker over lexical retrieval (top and weight chosen on
    dev; test Acc@1). A cross-encoder over dense retrieval (``rerank`` runs): in the JSON and docs/benchmark-history.md
    (Reranking), since issue 52 (the line budget)."""
    ranker_runs = get("pairwise_ranker")
    for name, run in ranker_runs[-1:]:
        rows = []
        for result in run["ranker_results"]:
            by = {r["variant"]: r for r in result["rows"]}
            best = max((r for r in result["rows"][1:] if r["variant"] in PAIRWISE), key=lambda r: r["dev"]["acc@1"], default=None)
            rows.append([result["dataset"], *(acc(by[v]["test"]["acc@1"]) if v in by else "-" for v in PAIRWISE),
                         f"{best['variant']}, {best['ms_per_mention']:.2f} ms" if best else "-"])
        section.body += ["", "Reranking lexical retrieval with paper 001's pairwise ranker (top and weight chosen on dev), test Acc@1 by "
                         f"pooling; dev's best and its ms per mention (one torch thread, median of {run['repeats']}):", "",
                         *table(["data", *PAIRWISE, "dev's best"], rows), ""]
        section.add_runs([(name, run)])


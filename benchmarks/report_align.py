"""BENCHMARKS.md's section on aligning one terminology to another: the main quality run per target, the latest other
runs, training seeds, speed and metadata transfer (``benchmarks/align/*.py``). Every other row stays in the JSON."""

from __future__ import annotations

import re

from report_cells import Section, interval_cell, secs, short_cpu, table

KINDS = {
    "align_quality": lambda d: "alignment_rows" in d,
    "align_speed": lambda d: "alignment_speed" in d,
    "align_augment": lambda d: "augmentation" in d,
    "align_seeds": lambda d: "alignment_seeds" in d,
    "align_entity_text": lambda d: "entity_text" in d,
    "align_predicates": lambda d: "alignment_predicates" in d,
}
OTHER_RUNS = 0  # the latest other runs per target shown (ties: the best R@1); none since issue 52 (the line budget), see the history
SPEED_RUNS = 1  # the latest speed runs per CPU shown
SHORTER = [(" (packaged MiniLM) (similarity and candidates)", " (MiniLM)"), (" (packaged MiniLM) candidates (fused, no calibration)", " (MiniLM) candidates"),
           (" (lexical + hierarchy evidence, fitted on train)", ""), (" (BM25 + char TF-IDF, alias sets, ancestors)", ""),
           (" (normalised label equality, OAEI)", " (label equality)"), ("aligner cross-encoder", "cross-encoder")]


def _r(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def system(name: str) -> str:
    for long, brief in SHORTER:
        name = name.replace(long, brief)
    return name


def pair(d: dict) -> str:
    return f"DO -> {d['alignment']['target']}"


def main_rows(d: dict) -> list[dict]:
    """The baselines (Lt, text2term), medlink lexical, and medlink's best other row by test R@1."""
    rows = d["alignment_rows"]
    baselines = [r for r in rows if not r["system"].startswith("medlink")]
    lexical = [r for r in rows if r["system"].startswith("medlink lexical (")]
    rest = sorted((r for r in rows if r["system"].startswith("medlink") and r not in lexical), key=lambda r: -(r["test"].get("recall@1") or 0))
    best = []
    for r in rest:
        if all(system(r["system"]) != system(b["system"]) for b in best):
            best.append(r)
    return baselines + lexical + best[:1]


def best_row(d: dict) -> dict:
    return max(d["alignment_rows"], key=lambda r: r["test"].get("recall@1") or 0)


def quality_cells(r: dict) -> list[str]:
    t, m = r["test"], r["test"].get("mapping", {})
    return [_r(t.get("recall@1")) + interval_cell((t.get("intervals") or {}).get("recall@1")), _r(t.get("recall@64")), _r(t.get("mrr")),
            f"{_r(m.get('precision'))} / {_r(m.get('recall'))} / {_r(m.get('f1'))}" + interval_cell((m.get("intervals") or {}).get("f1"))]


def align_section(get) -> Section | None:
    quality, speed, augment, seeds = get("align_quality"), get("align_speed"), get("align_augment"), get("align_seeds")
    if not (quality or speed or augment or seeds):
        return None
    section = Section("Aligning terminologies", "`medlink align`, SSSOM out. Gold: the Disease Ontology's xrefs, hidden from the aligner; test "
                      "split of DO terms. Mapping P / R / F1: top mappings kept at dev's threshold (OAEI). [trees] / [logistic]: the "
                      "calibration kept. Lt: the OAEI's label-equality baseline.")
    main = {d["alignment"]["target"]: (name, d) for name, d in quality}
    main |= {d["alignment"]["target"]: (name, d) for name, d in quality if name == f"align_do_{d['alignment']['target']}"}
    rows = [[pair(d), system(r["system"]), *quality_cells(r), secs(r.get("seconds"))] for name, d in main.values() for r in main_rows(d)]
    if rows:
        section.body += [*table(["pair", "system", "R@1", "R@64", "MRR", "mapping P / R / F1", "time"], rows), ""]
        section.add_runs(main.values())
    bullets: list[str] = []  # after the speed table: one blank line fewer
    for target, (main_name, _) in main.items():
        others = [(name, d) for name, d in quality if d["alignment"]["target"] == target and name != main_name]
        others.sort(key=lambda run: (run[1].get("date", ""), best_row(run[1])["test"].get("recall@1") or 0), reverse=True)
        for name, d in others[:OTHER_RUNS]:
            r = best_row(d)
            cells = quality_cells(r)
            bullets.append(f"- Latest run (`{name}`), {system(r['system'])}: R@1 {cells[0]}, mapping F1 {cells[3].rsplit(' / ', 1)[1]}.")
            section.add_runs([(name, d)])
    for name, d in list({d["alignment"]["target"]: (name, d) for name, d in seeds}.values()):
        for entry in d["alignment_seeds"][-1:]:
            per = " / ".join(_r(r["test_recall@1"]) for r in entry["per_seed"])
            bullets.append(f"- Training seeds (`{name}`, {system(entry['system'])}): R@1 median {_r(entry['median'].get('test_recall@1'))} "
                           f"({per}), mapping F1 median {_r(entry['median'].get('test_mapping_f1'))}.")
            section.add_runs([(name, d)])
    speed_rows = speed_table_rows(speed, section)
    if speed_rows:
        section.body += ["`medlink align` of 10k DO + MEDIC concepts onto ICD-10-CM + HPO (117,539), fresh process; cold: empty encode cache; "
                         "cached: the target's names encoded before:", "",
                         *table(["aligner (depth)", "CPU", "lexical alone", "aligner, cold", "aligner, cached"], speed_rows), ""]
    section.body += bullets
    # metadata transfer (align_augment): in the JSON and docs/benchmark-history.md (Aligning terminologies)
    return section


def speed_table_rows(runs, section: Section) -> list[list[str]]:
    by_cpu: dict[str, list] = {}
    for name, d in sorted(runs, key=lambda run: (run[1].get("date", ""), run[0]), reverse=True):
        by_cpu.setdefault(short_cpu(d), []).append((name, d))
    rows = []
    for cpu_name, chosen in by_cpu.items():
        for name, d in chosen[:SPEED_RUNS]:
            lexical = next((s for s in d["alignment_speed"] if s["system"] == "medlink lexical"), None)
            aligners: dict[str, dict] = {}
            for s in d["alignment_speed"]:
                match = re.match(r"medlink \+ aligner (\S+) \((depth \d+); (.+)\)", s["system"])
                if match:
                    slot = "cold" if "cold" in match.group(3) else "cached"
                    aligners.setdefault(f"{match.group(1)} ({match.group(2)})", {})[slot] = s["seconds"]
            for aligner, times in aligners.items():
                rows.append([aligner, cpu_name, secs(lexical["seconds"]) if lexical else "-", secs(times.get("cold")), secs(times.get("cached"))])
            section.add_runs([(name, d)])
    return rows

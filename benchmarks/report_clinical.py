"""BENCHMARKS.md's section on clinical notes and coding: the clinical-note acceptance set scored plain and in coding mode
(``benchmarks/clinical_notes/score.py [--target-namespace ICD10CM]``), the common phrases coded with and without coding
mode (``benchmarks/coding/coding_accuracy.py``) and the default KB's HPO -> ICD-10-CM mappings
(``benchmarks/coding/make_mappings.py``). Per-kind figures, the assertion confusion and every mention's answer stay in
the JSON.
"""

from __future__ import annotations

from report_cells import Section, secs, table

KINDS = {
    "clinical_notes": lambda d: "spans_overlap" in (d.get("clinical_notes") or {}),
    "coding_phrases": lambda d: "with_target_namespace" in d and "without" in d,
    "coding_mappings": lambda d: "mapping_rows" in d and "mapped_sources" in d,
}
SPLITS = ("dev", "test")


def mode(notes: dict) -> str:
    """'plain', or 'coding (ICD10CM)' for a run with --target-namespace (older runs recorded none: plain)."""
    namespace = notes.get("target_namespace")
    return f"coding ({namespace})" if namespace else "plain"


def _r(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def clinical_runs(get) -> list[tuple[str, dict]]:
    """The latest run of each split and mode, dev before test, plain before coding."""
    latest: dict[tuple, tuple[str, dict]] = {}
    for name, d in sorted(get("clinical_notes"), key=lambda run: (run[1].get("date", ""), run[0])):
        notes = d["clinical_notes"]
        latest[(notes["split"], bool(notes.get("target_namespace")))] = (name, d)
    order = {split: i for i, split in enumerate(SPLITS)}
    return [latest[key] for key in sorted(latest, key=lambda key: (order.get(key[0], len(order)), key[0], key[1]))]


def clinical_section(get) -> Section | None:
    runs, phrases, mappings = clinical_runs(get), get("coding_phrases"), get("coding_mappings")
    if not (runs or phrases or mappings):
        return None
    section = Section("Clinical notes and coding", "`medlink annotate` (default index) on 60 invented clinical snippets (`benchmarks/clinical_notes`) "
                      "by a clinical writer who did not see medlink's rules, plain and in coding mode (`--target-namespace ICD10CM`); codes "
                      "and assertions on the gold mentions a span overlaps; nothing tuned on test.")
    rows = []
    for _, d in runs:
        notes = d["clinical_notes"]
        exact, overlap = notes["spans_exact"], notes["spans_overlap"]
        rows.append([f"{notes['split']} ({exact['gold']}, {notes['found_with_code']})", mode(notes),
                     f"{_r(exact['f1'])} / {_r(overlap['f1'])}", f"{_r(notes['icd10cm_category_accuracy'])} / {_r(notes['icd10cm_full_accuracy'])}",
                     _r(notes["assertion_accuracy"]), f"{notes['confident_wrong_full_code']} / {notes['confident_wrong_category']}",
                     str(notes.get("linked_wrong_full_code", "-")), _r(notes.get("code_ece"))])
    if rows:
        section.body += [*table(["split (mentions, found with a code)", "mode", "mention F1 exact / overlap", "ICD-10-CM category / full code",
                                 "assertion accuracy", "wrong code / category at p >= 0.95", "wrong code linked (not NIL)",
                                 "ECE of code probabilities"], rows), ""]
        section.add_runs(runs)
    for name, d in phrases[-1:]:
        plain, coded, s = d["without"], d["with_target_namespace"], d["seconds"]
        section.body.append(
            f"- {coded['mentions']} common phrases (`{d.get('dataset', 'benchmarks/coding/phrases.tsv')}`), first candidate's category: "
            f"{plain['category_accuracy']:.3f} plain, {coded['category_accuracy']:.3f} coding (full code {plain['code_accuracy']:.3f} / "
            f"{coded['code_accuracy']:.3f}); +{s['overhead_per_mention_ms']:.1f} ms a mention. The list was written by the engineer who built "
            "coding mode, and two rules were changed after its first run: not a held-out test.")
        section.add_runs([(name, d)])
    for name, d in mappings[-1:]:
        predicates = d.get("rows_by_predicate") or {}
        kinds = ", ".join(f"{predicate.split(':')[-1].removesuffix('Match')} {n:,}" for predicate, n in predicates.items())
        section.body.append(
            f"- The default KB's HPO -> ICD-10-CM mappings: {d['mapping_rows']:,} rows ({kinds}) from {d['mapped_sources']:,} of HPO's "
            f"{d['sources']:,} concepts, {d.get('code_first_codes', 0):,} code-first notes; made in {secs(sum((d.get('seconds') or {}).values()))} "
            f"(lexical candidates {secs((d.get('seconds') or {}).get('candidates_and_ranking'))}).")
        section.add_runs([(name, d)])
    return section

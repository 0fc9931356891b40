"""BENCHMARKS.md's section on clinical notes and coding: the clinical-note acceptance set scored plain and in coding mode
(``benchmarks/clinical_notes/score.py [--target-namespace ICD10CM]``), the common phrases coded with and without coding
mode (``benchmarks/coding/coding_accuracy.py``) and the default KB's HPO -> ICD-10-CM mappings
(``benchmarks/coding/make_mappings.py``). Per-kind figures, the assertion confusion and every mention's answer stay in
the JSON.

The peers (``score.py --peers``: QuickUMLS, Gilda, the longest-match dictionary over the default KB's names) share one
column, on the row of the split they ran on in plain mode, for the splits of ``PEER_SPLITS``: the file's line budget has
no room for a row each (the dev split's peers stay in their JSON, listed at the end of BENCHMARKS.md). A peer gives no
probability and no assertion, so it has only the figures of that column.
"""

from __future__ import annotations

from report_cells import Section, secs, table

KINDS = {
    "clinical_notes": lambda d: "spans_overlap" in (d.get("clinical_notes") or {}),
    "coding_phrases": lambda d: "with_target_namespace" in d and "without" in d,
    "coding_mappings": lambda d: "mapping_rows" in d and "mapped_sources" in d,
    "clinical_notes_peers": lambda d: "rows" in (d.get("clinical_notes_peers") or {}),
    "lay_wording": lambda d: "lay_rows" in d,
}
SPLITS = ("dev", "test")
PEER_SPLITS = ("test",)  # the splits whose peers BENCHMARKS.md shows (its line budget: one provenance line a split)
PEER_LABELS = {"quickumls": "QuickUMLS", "gilda": "Gilda", "longest-match dictionary": "longest match"}


def mode(notes: dict) -> str:
    """'plain', or 'coding (ICD10CM)' for a run with --target-namespace (older runs recorded none: plain)."""
    namespace = notes.get("target_namespace")
    return f"coding ({namespace})" if namespace else "plain"


def _r(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def clinical_runs(get, modifiers: str | None = None) -> list[tuple[str, dict]]:
    """The latest run of each split and mode with medlink's default ``--modifiers`` (None) or the one named, dev before
    test, plain before coding."""
    latest: dict[tuple, tuple[str, dict]] = {}
    for name, d in sorted(get("clinical_notes"), key=lambda run: (run[1].get("date", ""), run[0])):
        notes = d["clinical_notes"]
        if notes.get("modifiers") == modifiers:
            latest[(notes["split"], bool(notes.get("target_namespace")))] = (name, d)
    order = {split: i for i, split in enumerate(SPLITS)}
    return [latest[key] for key in sorted(latest, key=lambda key: (order.get(key[0], len(order)), key[0], key[1]))]


def partial_runs_note(runs: list[tuple[str, dict]]) -> str | None:
    """One bullet for the plain runs with ``--modifiers partial`` (the head kept, as on an index a user builds; the default
    indexes take the whole phrase)."""
    plain = [d["clinical_notes"] for _, d in runs if not d["clinical_notes"].get("target_namespace")]
    if not plain:
        return None
    parts = "; ".join(f"{n['split']} {_r(n['spans_exact']['f1'])} / {_r(n['spans_overlap']['f1'])}, {_r(n['icd10cm_category_accuracy'])} / "
                      f"{_r(n['icd10cm_full_accuracy'])}, ECE {_r(n.get('code_ece'))}" for n in plain)
    return (f"- Plain linking with `--modifiers partial` (the head of a longer phrase kept, as on an index you build; the default indexes take the phrase): "
            f"mention F1 exact / overlap, category / full code: {parts}.")


def peer_runs(get) -> dict[str, tuple[str, dict]]:
    """The latest peers' run of each split in ``PEER_SPLITS``."""
    latest: dict[str, tuple[str, dict]] = {}
    for name, d in sorted(get("clinical_notes_peers"), key=lambda run: (run[1].get("date", ""), run[0])):
        if d["clinical_notes_peers"]["split"] in PEER_SPLITS:
            latest[d["clinical_notes_peers"]["split"]] = (name, d)
    return latest


def peers_cell(d: dict) -> str:
    """Each peer's mention F1 exact / overlap; ICD-10-CM category / full code."""
    return " · ".join(f"{PEER_LABELS.get(row['system'], row['system'])} {_r(row['spans_exact']['f1'])} / {_r(row['spans_overlap']['f1'])}; "
                      f"{_r(row['icd10cm_category_accuracy'])} / {_r(row['icd10cm_full_accuracy'])}" for row in d["clinical_notes_peers"]["rows"])


def clinical_section(get) -> Section | None:
    runs, phrases, mappings, peers = clinical_runs(get), get("coding_phrases"), get("coding_mappings"), peer_runs(get)
    partial_runs = [run for run in clinical_runs(get, "partial") if not run[1]["clinical_notes"].get("target_namespace")]
    if not (runs or phrases or mappings):
        return None
    # no intro line above the table (the table opens the section, as the headline's does): the line it saves pays for the
    # peers' provenance line, within BENCHMARKS.md's line budget; what the intro said is the first bullet under the table
    section = Section("Clinical notes and coding", paired_runs=True)  # two runs a line where they fit (the file's line budget)
    rows, shown_peers = [], []
    for _, d in runs:
        notes = d["clinical_notes"]
        exact, overlap = notes["spans_exact"], notes["spans_overlap"]
        peer = peers.get(notes["split"]) if not notes.get("target_namespace") else None
        rows.append([f"{notes['split']} ({exact['gold']}, {notes['found_with_code']})", mode(notes),
                     f"{_r(exact['f1'])} / {_r(overlap['f1'])}", f"{_r(notes['icd10cm_category_accuracy'])} / {_r(notes['icd10cm_full_accuracy'])}",
                     _r(notes["assertion_accuracy"]), f"{notes['confident_wrong_full_code']} / {notes['confident_wrong_category']}",
                     str(notes.get("linked_wrong_full_code", "-")), _r(notes.get("code_ece"))] + ([peers_cell(peer[1]) if peer else "-"] if peers else []))
        shown_peers += [peer] if peer else []
    if rows:
        columns = ["split (mentions, found with a code)", "mode", "mention F1 exact / overlap", "ICD-10-CM category / full code", "assertion accuracy",
                   "wrong code / category at p >= 0.95", "wrong code linked (not NIL)", "ECE of code probabilities"]
        if peers:
            columns.append("peers (default KB's names, options from NCBI dev): mention F1 exact / overlap; category / full code")
        section.body += [*table(columns, rows), ""]
        section.add_runs(runs)
        section.add_runs(shown_peers)
    section.body.append("- `medlink annotate` (default index) on 90 invented snippets (`benchmarks/clinical_notes`) by two writers blind to medlink's "
                        "rules (the second's first run: docs/benchmark-history.md), plain and in coding mode; "
                        "codes and assertions on the gold mentions a span overlaps; nothing tuned on test.")
    note = partial_runs_note(partial_runs)
    if note:
        section.body.append(note)
        section.add_runs(partial_runs)
    for name, d in phrases[-1:]:
        plain, coded, s = d["without"], d["with_target_namespace"], d["seconds"]
        section.body.append(
            f"- {coded['mentions']} common phrases (`{d.get('dataset', 'benchmarks/coding/phrases.tsv')}`), first candidate's category: "
            f"{plain['category_accuracy']:.3f} plain, {coded['category_accuracy']:.3f} coding (full code {plain['code_accuracy']:.3f} / "
            f"{coded['code_accuracy']:.3f}); +{s['overhead_per_mention_ms']:.1f} ms a mention. The list was written by the engineer who built "
            "coding mode, and two rules were changed after its first run: not a held-out test.")
        section.add_runs([(name, d)])
    for name, d in [run for run in get("lay_wording") if run[1]["lay_rows"][0]["split"] == "test"][-1:]:
        r = d["lay_rows"][0]
        section.body.append(
            f"- People's own words: AskAPatient's {r['mentions']:,} test mentions (10 folds, distinct) whose SNOMED CT concept HPO "
            f"cross-references, default index: Acc@1 {r['acc@1']:.3f}; right first answers refused as NIL {r['right_refused_share']:.1%}, "
            f"wrong ones kept {r['wrong_kept']}, wrong at p >= 0.95 {r['confident_wrong']}; ECE {r['ece']:.3f} (`benchmarks/lexical/lay_wording.py`).")
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

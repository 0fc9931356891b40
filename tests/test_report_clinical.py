"""benchmarks/report.py's section on clinical notes and coding (issue 52), from tiny results: the clinical notes' table
(split x mode), the common phrases' and the mappings' lines, the headline row of the test split in coding mode; and
default-dense's first use and the warm start sharing one headline row (the table has a row cap)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from tests.test_benchmarks_report import report, section, table_under  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[1]
XEON = {"cpu_model": "Intel(R) Xeon(R) Processor @ 2.00GHz", "cpu_flags": {"avx2": True, "avx512f": True}}
AVX2 = {"cpu_model": "AMD EPYC", "cpu_flags": {"avx2": True}}


def notes(split: str, namespace: str | None, category: float, full: float) -> dict:
    gold = {"dev": 132, "test": 138}[split]
    flag = f" --target-namespace {namespace}" if namespace else ""
    return {"commit": "abc1234", "machine": XEON, "date": "2026-12-02",
            "command": f"python benchmarks/clinical_notes/score.py --split {split}{flag} --index default",
            "clinical_notes": {"split": split, "index": "default", "target_namespace": namespace, "snippets": 30,
                               "spans_exact": {"f1": 0.7241, "gold": gold}, "spans_overlap": {"f1": 0.8984, "gold": gold},
                               "found_mentions": 114, "found_with_code": 111, "icd10cm_category_accuracy": category,
                               "icd10cm_full_accuracy": full, "assertion_accuracy": 0.9561, "confident_wrong_full_code": 33 if namespace else 24,
                               "confident_wrong_category": 15 if namespace else 6, "by_kind": {}, "details": []}}


PHRASES = {"commit": "d7833a8", "machine": XEON, "command": "python benchmarks/coding/coding_accuracy.py --repeats 7", "index": "default",
           "dataset": "benchmarks/coding/phrases.tsv",
           "without": {"category_accuracy": 0.098, "code_accuracy": 0.0392, "icd10cm_first": 6, "nil": 1, "mentions": 51, "answers": []},
           "with_target_namespace": {"category_accuracy": 0.9608, "code_accuracy": 0.9412, "icd10cm_first": 50, "nil": 1, "mentions": 51,
                                     "answers": []},
           "seconds": {"coder_build": 3.41, "link_per_mention_ms": 5.111, "coded_link_per_mention_ms": 6.336, "overhead_per_mention_ms": 1.225}}
MAPPINGS = {"commit": "69aaa84", "machine": XEON, "command": "python benchmarks/coding/make_mappings.py --workdir /tmp/coding",
            "sources": 18387, "targets": 98166, "mapped_sources": 5275, "mapping_rows": 10486,
            "rows_by_predicate": {"skos:exactMatch": 2494, "skos:closeMatch": 243, "skos:narrowMatch": 2201, "skos:broadMatch": 5548},
            "code_first_codes": 3815, "seconds": {"target_index": 47.1, "candidates_and_ranking": 635.8, "choose": 20.4, "side_kbs": 0.0}}


def write(tmp_path, **files):
    results = tmp_path / "results"
    results.mkdir()
    for name, data in files.items():
        (results / f"{name}.json").write_text(json.dumps(data))
    return results


def test_the_section_shows_both_splits_in_both_modes_the_phrases_and_the_mappings(report, tmp_path):  # noqa: F811
    results = write(tmp_path, clinical_notes_dev=notes("dev", None, 0.7281, 0.4825), clinical_notes_dev_icd10cm=notes("dev", "ICD10CM", 0.8596, 0.6754),
                    clinical_notes_test=notes("test", None, 0.6757, 0.4324), clinical_notes_test_icd10cm=notes("test", "ICD10CM", 0.8649, 0.7027),
                    coding_phrases=PHRASES, coding_mappings=MAPPINGS)
    text = report.render(results, None)
    rows = table_under(text, "## Clinical notes and coding")
    assert [(r["split (mentions, found with a code)"], r["mode"]) for r in rows] == [
        ("dev (132, 111)", "plain"), ("dev (132, 111)", "coding (ICD10CM)"), ("test (138, 111)", "plain"), ("test (138, 111)", "coding (ICD10CM)")]
    coded = rows[-1]
    assert (coded["mention F1 exact / overlap"], coded["ICD-10-CM category / full code"], coded["assertion accuracy"],
            coded["wrong code / category at p >= 0.95"]) == ("0.724 / 0.898", "0.865 / 0.703", "0.956", "33 / 15")
    clinical = " ".join(section(text, "Clinical notes and coding").split())
    assert "by two writers blind to medlink's rules" in clinical and "nothing tuned on test" in clinical
    assert "0.098 plain, 0.961 coding (full code 0.039 / 0.941); +1.2 ms a mention" in clinical
    assert "written by the engineer who built coding mode, and two rules were changed after its first run: not a held-out test" in clinical
    assert "10,486 rows (exact 2,494, close 243, narrow 2,201, broad 5,548) from 5,275 of HPO's 18,387 concepts" in clinical
    assert "made in 11.7 min" in clinical
    for name in ("clinical_notes_dev", "clinical_notes_dev_icd10cm", "clinical_notes_test", "clinical_notes_test_icd10cm", "coding_phrases",
                 "coding_mappings"):
        assert f"un `{name}` (Intel(R) Xeon(R) Processor @ 2.00GHz (AVX2 AVX-512); " in clinical, name  # "- Run", or "; run" paired
    (row,) = table_under(text, "## Headline figures")
    assert row["task"] == "[Clinical notes, coding](#clinical-notes-and-coding)"
    assert row["medlink"] == "0.865 / 0.703 (plain 0.676 / 0.432)" and "test split (138 mentions)" in row["data"]
    assert "Results no section reads yet" not in text and "Not shown (earlier or minor runs)" not in text


def test_an_older_run_without_a_namespace_is_plain_and_no_coding_run_no_headline_row(report, tmp_path):  # noqa: F811
    old = notes("test", None, 0.6667, 0.4167)
    del old["clinical_notes"]["target_namespace"]
    text = report.render(write(tmp_path, clinical_notes_test=old), None)
    (row,) = table_under(text, "## Clinical notes and coding")
    assert row["mode"] == "plain" and row["ICD-10-CM category / full code"] == "0.667 / 0.417"
    assert "## Headline figures\n| task" in text and "[Clinical notes" not in text.split("## Clinical notes and coding")[0]


def test_first_use_and_the_warm_start_share_one_headline_row(report, tmp_path):  # noqa: F811
    speed = {"commit": "eee5555", "command": "python benchmarks/scale/dense_speed.py", "date": "2026-11-27", "machine": AVX2, "encoding": [],
             "linking": None, "isa_limit": None, "first_use": [{"precision": "auto", "seconds": 252.0, "dense_names": 148868}],
             "startup": [{"index": "default", "cli_seconds_median": 1.35}, {"index": "default-dense", "cli_seconds_median": 3.03}]}
    text = report.render(write(tmp_path, dense_speed=speed), None)
    (row,) = table_under(text, "## Headline figures")
    assert row["task"] == "[First use, start-up](#speed)" and row["medlink"] == "4.2 min; 1.35 s (default-dense 3.03 s)"
    assert row["CPU"] == "AMD EPYC, AVX2 only"


def test_score_names_each_mode_s_results_apart():
    spec = importlib.util.spec_from_file_location("clinical_score_under_test", ROOT / "benchmarks" / "clinical_notes" / "score.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.results_name("test") == "clinical_notes_test"
    assert module.results_name("test", "ICD10CM") == "clinical_notes_test_icd10cm"


def test_plain_runs_with_modifiers_partial_are_a_line_not_the_tables_plain_rows(report, tmp_path):  # noqa: F811
    partial = notes("dev", None, 0.746, 0.517)
    partial["clinical_notes"].update(modifiers="partial", spans_exact={"f1": 0.838, "gold": 132}, date="2026-12-03")
    partial["date"] = "2026-12-03"  # newer than the default run: still not its row
    results = write(tmp_path, clinical_notes_dev=notes("dev", None, 0.7281, 0.4825), clinical_notes_dev_partial=partial)
    text = report.render(results, None)
    rows = table_under(text, "## Clinical notes and coding")
    assert [(r["mode"], r["mention F1 exact / overlap"]) for r in rows] == [("plain", "0.724 / 0.898")]
    assert "with `--modifiers partial`" in text and "dev 0.838 / 0.898, 0.746 / 0.517" in text

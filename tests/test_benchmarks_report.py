"""benchmarks/report.py writes BENCHMARKS.md from results JSON: tables best first, with CPU, command and commit on every row.

Runs on three tiny results files in tests/fixtures/bench_results/ (no benchmark data needed, well under a second).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "bench_results"


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("benchmarks_report_under_test", ROOT / "benchmarks" / "report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def written(report, tmp_path) -> tuple[Path, str]:
    results = tmp_path / "results"
    shutil.copytree(FIXTURES, results)
    notes = tmp_path / "notes.md"
    notes.write_text("A hand-written figure: 0.6515.\n")
    out = report.write_report(results, notes, tmp_path / "BENCHMARKS.md")
    return out, out.read_text(encoding="utf-8")


def table_under(text: str, heading: str) -> list[dict[str, str]]:
    """The rows of the first Markdown table after ``heading``, as dicts keyed by the header cells."""
    lines = text[text.index(heading):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    block = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        block.append([cell.strip() for cell in line.strip("|").split(" | ")])
    header, _, *rows = block
    assert all(len(row) == len(header) for row in rows)
    return [dict(zip(header, row)) for row in rows]


def test_writes_the_file_atomically_and_nothing_else(written, tmp_path):
    out, text = written
    assert text.startswith("# Benchmarks\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["BENCHMARKS.md", "notes.md", "results"]
    assert "Generated from the 3 results files" in text
    assert len(text.splitlines()) < 250


def test_lexical_rows_best_first_with_provenance(written):
    rows = table_under(written[1], "## Lexical linking")
    assert [r["generator"] for r in rows] == ["fused"]  # one row per setting: the generators alone beside the fused figure
    assert [(r["Acc@1"], r["Acc@1 TF-IDF / BM25 alone"]) for r in rows] == [("0.9000", "0.8000 / 0.8500")]
    for row in rows:
        assert row["commit"] == "aaa1111" and row["results"] == "lexical_linking"
        assert row["command"] == "`python benchmarks/lexical/lexical_linking.py`"  # the recorded old path, shown where the script is now
        assert row["CPU"] == "CPU not recorded" and row["peak RSS"] == "-"
    assert rows[0]["time"] == "build 3.10 s, link 0.59 s"


def test_dense_rows_best_first_and_the_recorded_cpu(written):
    rows = table_under(written[1], "## Dense linking")
    assert [r["model / method"] for r in rows] == ["strong", "weak"]
    strong, weak = rows
    assert (strong["KB only"], strong["dense"], strong["hybrid (TF-IDF)"], strong["+ kNN"]) == ("0.8500", "0.9100", "0.9200 at 0.25", "-")
    assert (weak["dense"], weak["+ kNN"], weak["time"]) == ("0.7500", "0.7400", "90.0 s")
    assert strong["CPU"] == "Intel(R) Xeon(R) Platinum 8480+ (AVX2 AVX-512 AVX512-BF16 AMX)"
    assert strong["commit"] == "bbb2222" and "--section dense_tiny" in strong["command"]


def test_reranking_and_what_did_not_help(written):
    (row,) = table_under(written[1], "## Reranking")
    assert (row["retrieval alone"], row["+ cross-encoder"], row["cross-encoder alone"]) == ("0.9100", "0.9000", "0.7000")
    assert row["peak RSS"] == "2,048 MB" and row["command"].startswith("`python benchmarks/rerank/rerank_linking.py ")
    failed = table_under(written[1], "## What did not help")
    assert {"tried": "cross-encoder reranker (top 8, weight 0.02)", "on": "NCBI Disease test, memory traindev", "without": "0.9100",
            "with": "0.9000 (dev 0.8800 -> 0.8900)", "results": "rerank_tiny", "commit": "ccc3333"} in failed
    assert any(r["tried"].startswith("kNN reranker") and r["with"].startswith("lower for 1") for r in failed)


def test_speed_machines_and_notes(written):
    text = written[1]
    (row,) = table_under(text, "## Speed")
    assert row["mentions/s stream (n)"] == "5,668 (972)" and row["peak RSS"] == "304 MB"
    assert "CPU not recorded (2 results)" in text and "Platinum 8480+ (AVX2 AVX-512 AVX512-BF16 AMX) (1 result)" in text
    assert text.rstrip().endswith("A hand-written figure: 0.6515.")
    assert "## KB building" not in text and "## Scale" not in text  # no results, no empty tables


def test_an_unknown_results_file_is_named_not_dropped(report, tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "results")
    (tmp_path / "results" / "mystery.json").write_text(json.dumps({"commit": "ddd4444", "command": "python x.py", "what": 1}))
    text = report.render(tmp_path / "results", None)
    assert "Results no table shows yet: mystery." in text


def test_the_checked_in_benchmarks_md_is_what_the_results_give(report):
    assert (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8") == report.render(), "run: python benchmarks/report.py"


def test_training_seeds_are_reported_per_seed_with_their_median(report, tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "results")
    per_seed = [{"seed": 13, "test_recall@1": 0.8364, "test_mapping_f1": 0.8506, "dev_out_of_fold_top1": 0.8711},
                {"seed": 14, "test_recall@1": 0.8240, "test_mapping_f1": 0.8400, "dev_out_of_fold_top1": 0.8690},
                {"seed": 15, "test_recall@1": 0.8261, "test_mapping_f1": 0.8419, "dev_out_of_fold_top1": None}]
    median = {"test_recall@1": 0.8261, "test_mapping_f1": 0.8419}  # dev's is absent: one seed has no figure
    (tmp_path / "results" / "align_seeds_icd10cm.json").write_text(json.dumps({
        "commit": "eee5555", "command": "python benchmarks/align/align_do.py --seeds 13,14,15", "alignment": {"target": "icd10cm", "aligner_seed": [13, 14, 15]},
        "alignment_seeds": [{"system": "medlink + aligner", "per_seed": per_seed, "median": median}], "seed_rows": []}))
    text = " ".join(report.render(tmp_path / "results", None).split())
    assert ("**Training seeds** (DO -> icd10cm, medlink + aligner; seeds 13 / 14 / 15, the same split): test R@1 0.836 / 0.824 / 0.826 "
            "(median 0.826); test mapping F1 0.851 / 0.840 / 0.842 (median 0.842); dev out of fold 0.871 / 0.869 / - (median -).") in text
    assert "align_seeds_icd10cm)" in text and "Results no table shows yet: align_seeds" not in text


def test_warm_starts_of_every_run_share_one_table_with_their_index(report, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    lexical = shutil.copy(FIXTURES / "lexical_linking.json", results / "lexical_linking.json")
    assert lexical
    steps = {"import medlink.cli": 0.2, "default index check": 0.05, "rest of index load": 0.8, "first link": 0.06}
    for section, index, cpu in (("speed_dense", "default-dense", "AMD EPYC"), ("speed_lexical", "default", "AMD EPYC")):
        (results / f"{section}.json").write_text(json.dumps({
            "commit": "eee5555", "command": f"python benchmarks/scale/dense_speed.py --section {section}", "date": "2026-11-27",
            "machine": {"cpu_model": cpu, "cpu_flags": {"avx2": True}}, "encoding": [], "linking": None, "first_use": [],
            "isa_limit": None, "startup": [{"code": "this commit", "index": index, "cli_seconds_median": 1.25, "repeats": 5,
                                            "steps_median": {**steps, **({"import torch": 1.3} if index == "default-dense" else {})},
                                            "precisions": {"dense": "fp32"} if index == "default-dense" else {}}]}))
    text = report.render(results, None)
    rows = table_under(text, "Warm `medlink link --index INDEX")
    assert [(r["index"], r["CLI (runs)"], r["torch import"], r["encodes in"]) for r in rows] == [
        ("default-dense", "1.25 s (5)", "1.30 s", "fp32"), ("default", "1.25 s (5)", "-", "-")]
    assert text.count("Warm `medlink link") == 1


def test_the_dense_strip_check_shows_its_saving_and_both_accuracies(report, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(FIXTURES / "lexical_linking.json", results / "lexical_linking.json")
    group = lambda acc1: {"mentions": 10, "acc@1": acc1, "acc@5": 0.9, "dense acc@1": 0.5}  # noqa: E731
    (results / "episode_strip.json").write_text(json.dumps({
        "commit": "eee5555", "command": "python benchmarks/dense/episode_strip.py", "machine": {"cpu_model": "AMD EPYC", "cpu_flags": {"avx2": True}},
        "seed": 1, "names": 150, "texts_after_strip": 100, "tokens": 2000, "tokens_after_strip": 1100, "names_matched_elsewhere": {"MEDIC": 0, "AAP": 2},
        "rows": [{"strip": True, "build_seconds": 200.0, "cache": "cold", "in-KB": group(0.6), "qualified": group(0.7)},
                 {"strip": False, "build_seconds": 150.0, "cache": "warm", "in-KB": group(0.65), "qualified": group(0.75)}]}))
    text = report.render(results, None)
    assert "150 names are 100 texts to encode, tokens 2,000 -> 1,100" in " ".join(text.split())
    assert "names it matches in MEDIC 0, in AAP 2:" in " ".join(text.split())
    rows = table_under(text, "default-dense's `strip`")
    assert [(r["strip"], r["index build"], r["in-KB Acc@1"], r["qualified Acc@1"], r["qualified dense Acc@1"]) for r in rows] == [
        ("on", "3.3 min", "0.6000", "0.7000", "0.5000"), ("off", "2.5 min", "0.6500", "0.7500", "0.5000")]
    assert "Results no table shows yet" not in text

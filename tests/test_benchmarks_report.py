"""benchmarks/report.py writes BENCHMARKS.md from results JSON: a headline table first, short sections each naming its runs
(results file, CPU, commit, command) once, the whole file within a line budget, no results file dropped.

Runs on three tiny results files in tests/fixtures/bench_results/ and the checked-in results (no benchmark data needed,
a second or two).
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "bench_results"
MACHINE = {"cpu_model": "AMD EPYC", "cpu_flags": {"avx2": True}}


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("benchmarks_report_under_test", ROOT / "benchmarks" / "report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def results(tmp_path) -> Path:
    shutil.copytree(FIXTURES, tmp_path / "results")
    return tmp_path / "results"


@pytest.fixture()
def written(report, results, tmp_path) -> tuple[Path, str]:
    notes = tmp_path / "notes.md"
    notes.write_text("## Speed\n- A hand-written figure: 0.6515.\n## A title no section has\n- Another: 12 s.\n")
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
        block.append([cell.strip() for cell in re.split(r"(?<!\\) \| ", line.strip().strip("|"))])
    header, _, *rows = block
    assert all(len(row) == len(header) for row in rows)
    return [dict(zip(header, row, strict=True)) for row in rows]


def section(text: str, title: str) -> str:
    """The text of one '## ' section, up to the next."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def headings(text: str) -> list[str]:
    return [line[3:] for line in text.splitlines() if line.startswith("## ")]


# ---- the checked-in file ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def committed() -> str:
    return (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")


def test_the_checked_in_benchmarks_md_is_what_the_results_give(report, committed):
    assert committed == report.render(), "run: python benchmarks/report.py"


def test_check_passes_on_the_committed_file_and_fails_on_a_stale_one(tmp_path):
    command = [sys.executable, str(ROOT / "benchmarks" / "report.py"), "--check"]
    assert subprocess.run(command, capture_output=True, text=True, cwd=ROOT).returncode == 0
    stale = tmp_path / "BENCHMARKS.md"
    stale.write_text((ROOT / "BENCHMARKS.md").read_text(encoding="utf-8").replace("## Speed", "## Speeds"), encoding="utf-8")
    run = subprocess.run([*command, "--out", str(stale)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 1 and "is not what" in run.stderr


def test_the_committed_file_keeps_the_line_budget(report, committed):
    assert report.LINE_BUDGET == 300
    assert committed.count("\n") <= report.LINE_BUDGET
    long_prose = [line for line in committed.splitlines() if len(line) > 400 and not line.startswith(("|", "- Run `"))]
    assert not long_prose, long_prose[:1]


def test_the_headline_table_comes_first_and_links_each_row_to_a_section(committed):
    assert headings(committed)[0] == "Headline figures"
    first_table = next(i for i, line in enumerate(committed.splitlines()) if line.startswith("|"))
    assert first_table < committed.splitlines().index("## Headline figures") + 6
    rows = table_under(committed, "## Headline figures")
    assert 15 <= len(rows) <= 25
    anchors = {re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-") for title in headings(committed)}
    for row in rows:
        link = re.fullmatch(r"\[[^\]]+\]\(#([\w-]+)\)", row["task"])
        assert link and link.group(1) in anchors, row["task"]
    tasks = " ".join(row["task"] for row in rows)
    for asked_first in ("Linking", "NIL", "Documents", "Assertion", "Alignment", "Speed", "Robustness"):
        assert asked_first in tasks


def test_headline_figures_are_the_ones_the_sections_show(committed):
    rows = {row["task"].split("](")[0].strip("["): row for row in table_under(committed, "## Headline figures")}
    documents = rows["Documents"]
    assert documents["medlink"] == "0.8035 [0.765-0.839] / 0.8115 [0.763-0.858]"
    assert "| 0.855 / 0.758 / 0.8035 [0.765-0.839] | 0.8115 [0.763-0.858] |" in section(committed, "Documents")
    assert documents["published"].startswith("TaggerOne 0.807")
    peers = rows["Documents, peers"]
    assert peers["best peer, same run"].startswith("gilda") and float(peers["medlink"]) > float(peers["best peer, same run"].rsplit(" ", 1)[1])


def test_published_anchors_name_their_source(report):
    anchors = json.loads((ROOT / "benchmarks" / "anchors.json").read_text(encoding="utf-8"))
    for key, anchor in anchors.items():
        if not key.startswith("_"):
            assert anchor["figure"] and anchor["source"], key


def test_sections_name_their_runs_and_tables_no_provenance_columns(committed):
    for line in committed.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            assert not {"command", "commit", "results", "CPU"} <= {cell.strip() for cell in line.split("|")}
    for title in headings(committed)[1:]:
        text = section(committed, title)
        if title != "Notes":
            assert re.search(r"^- Run `\w+` \([^;]+; [0-9a-f]{7}[^)]*\): `python benchmarks/\w+/\w+\.py", text, re.M), title


def test_no_results_file_is_dropped(committed):
    results = sorted(path.stem for path in (ROOT / "benchmarks" / "results").glob("*.json"))
    for name in results:
        assert f"`{name}`" in committed or re.search(rf"[\s,]{name}[,.]", committed), name


def test_notes_source_is_short_bullets():
    text = re.sub(r"<!--.*?-->", "", (ROOT / "benchmarks" / "notes.md").read_text(encoding="utf-8"), flags=re.S)
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines and all(line.startswith(("## ", "- ")) and len(line) <= 300 for line in lines)


# ---- the generator on tiny results ---------------------------------------------------------------------------------------

def test_writes_the_file_atomically_and_nothing_else(written, tmp_path):
    out, text = written
    assert text.startswith("# Benchmarks\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["BENCHMARKS.md", "notes.md", "results"]
    assert "From the 3 results files" in text
    assert headings(text)[0] == "Headline figures"


def test_lexical_rows_and_their_run(written):
    text = written[1]
    rows = table_under(text, "## Lexical linking")
    assert [(r["KB / memory"], r["Acc@1"], r["TF-IDF / BM25 alone"]) for r in rows] == [("KB only: train_dictionary.txt", "0.9000", "0.8000 / 0.8500")]
    assert "command" not in rows[0] and "commit" not in rows[0]
    # the recorded old path, shown where the script is now
    assert "- Run `lexical_linking` (CPU not recorded; aaa1111): `python benchmarks/lexical/lexical_linking.py`" in section(text, "Lexical linking")


def test_dense_rows_best_first_and_the_recorded_cpu(written):
    text = written[1]
    rows = table_under(text, "## Dense linking and reranking")
    assert [r["model / method"] for r in rows] == ["strong"]  # one trained model a dataset: the best (the others in the JSON)
    (strong,) = rows
    assert (strong["KB only"], strong["dense"], strong["hybrid"], strong["+ kNN"]) == ("0.8500", "0.9100", "0.9200 at 0.25", "-")
    assert ("- Run `dense_tiny` (Intel(R) Xeon(R) Platinum 8480+ (AVX2 AVX-512 AVX512-BF16 AMX); bbb2222): `python benchmarks/dense/dense_linking.py "
            "--model weak=weak-model --model strong=strong-model --skip-aap --section dense_tiny`") in text


def test_the_knn_reranker_not_adopted_and_the_cross_encoder_rerank_run_named_not_shown(written):
    text = section(written[1], "Dense linking and reranking")
    assert "the kNN reranker" in text and "lower for 1 of 1 models" in text
    # a cross-encoder over dense retrieval: in the JSON and docs/benchmark-history.md since issue 52 (the line budget)
    assert "A cross-encoder reranking" not in text and "rerank_tiny" not in text
    assert re.search(r"Not shown \(earlier or minor runs\): rerank_tiny\.", written[1])


def test_speed_headline_and_notes_in_their_section(written):
    text = written[1]
    (row,) = table_under(text, "## Speed")
    assert row["mentions/s (distinct)"] == "5,668 (2,249)" and row["peak RSS"] == "304 MB" and row["CPU"] == "not recorded"
    headline = table_under(text, "## Headline figures")
    assert [r["task"] for r in headline] == ["[Linking, lexical](#lexical-linking)", "[Linking, best trained](#dense-linking-and-reranking)",
                                            "[Speed, linking](#speed)", "[Index build](#speed)"]
    assert headline[-1]["medlink"] == "3.50 s"
    assert "- A hand-written figure: 0.6515." in section(text, "Speed")
    assert headings(text)[-1] == "Notes" and "- Another: 12 s." in section(text, "Notes")  # a note whose title no section has: at the end
    assert "## KB building and scale" not in text and "## Documents" not in text  # no results, no empty section


def test_a_note_over_300_characters_is_refused(report, results, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("## Speed\n- " + "x" * 300 + "\n")
    with pytest.raises(ValueError, match="at most 300"):
        report.render(results, notes)


def test_an_unknown_results_file_is_listed_not_dropped(report, results):
    (results / "mystery.json").write_text(json.dumps({"commit": "ddd4444", "command": "python x.py", "what": 1}))
    text = report.render(results, None)
    assert "Results no section reads yet: mystery." in text
    assert text.count("\n") <= report.LINE_BUDGET


def test_a_known_file_no_section_shows_is_named(report, results):
    group = lambda acc1: {"mentions": 10, "acc@1": acc1, "acc@5": 0.9, "dense acc@1": 0.5}  # noqa: E731
    (results / "episode_strip.json").write_text(json.dumps({
        "commit": "eee5555", "command": "python benchmarks/dense/episode_strip.py", "machine": MACHINE, "seed": 1, "names": 150,
        "texts_after_strip": 100, "tokens": 2000, "tokens_after_strip": 1100,
        "rows": [{"strip": True, "build_seconds": 200.0, "cache": "cold", "in-KB": group(0.6)}]}))
    text = report.render(results, None)
    assert re.search(r"Not shown \(earlier or minor runs\): episode_strip, rerank_tiny\.", text)
    assert "Results no section reads yet" not in text


def test_the_headline_refuses_more_than_25_rows_or_a_link_to_no_section(report, results, monkeypatch):
    headline = sys.modules["report_headline"]
    row = headline.Row("Speed, linking", "Speed", "data", "metric", "1")
    monkeypatch.setattr(headline, "ROWS", [lambda get, known: [row] * 26])
    with pytest.raises(ValueError, match="26 rows"):
        report.render(results, None)
    monkeypatch.setattr(headline, "ROWS", [lambda get, known: [headline.Row("Lost", "No such section", "d", "m", "1")]])
    with pytest.raises(ValueError, match="No such section"):
        report.render(results, None)


def test_training_seeds_are_reported_per_seed_with_their_median(report, results):
    per_seed = [{"seed": 13, "test_recall@1": 0.8364, "test_mapping_f1": 0.8506, "dev_out_of_fold_top1": 0.8711},
                {"seed": 14, "test_recall@1": 0.8240, "test_mapping_f1": 0.8400, "dev_out_of_fold_top1": 0.8690},
                {"seed": 15, "test_recall@1": 0.8261, "test_mapping_f1": 0.8419, "dev_out_of_fold_top1": None}]
    median = {"test_recall@1": 0.8261, "test_mapping_f1": 0.8419}  # dev's is absent: one seed has no figure
    (results / "align_seeds_icd10cm.json").write_text(json.dumps({
        "commit": "eee5555", "command": "python benchmarks/align/align_do.py --seeds 13,14,15",
        "alignment": {"target": "icd10cm", "aligner_seed": [13, 14, 15]},
        "alignment_seeds": [{"system": "medlink + aligner", "per_seed": per_seed, "median": median}], "seed_rows": []}))
    text = " ".join(report.render(results, None).split())
    assert ("- Training seeds (`align_seeds_icd10cm`, medlink + aligner): R@1 median 0.826 (0.836 / 0.824 / 0.826), mapping F1 median 0.842."
            in text)
    assert "- Run `align_seeds_icd10cm` (CPU not recorded; eee5555): `python benchmarks/align/align_do.py --seeds 13,14,15`" in text
    assert "Results no section reads yet" not in text


def test_warm_starts_of_every_run_share_one_line_with_their_index(report, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(FIXTURES / "lexical_linking.json", results / "lexical_linking.json")
    steps = {"import medlink.cli": 0.2, "default index check": 0.05, "rest of index load": 0.8, "first link": 0.06}
    for name, index in (("speed_dense", "default-dense"), ("speed_lexical", "default")):
        (results / f"{name}.json").write_text(json.dumps({
            "commit": "eee5555", "command": f"python benchmarks/scale/dense_speed.py --section {name}", "date": "2026-11-27",
            "machine": MACHINE, "encoding": [], "linking": None, "first_use": [], "isa_limit": None,
            "startup": [{"code": "this commit", "index": index, "cli_seconds_median": 1.25 if index == "default" else 3.0, "repeats": 5,
                         "steps_median": steps}]}))
    text = report.render(results, None)
    speed = section(text, "Speed")
    assert speed.count("Warm `medlink link") == 1
    assert "default-dense 3.00 s (AMD EPYC, AVX2 only); default 1.25 s (AMD EPYC, AVX2 only)." in speed
    (start,) = [r for r in table_under(text, "## Headline figures") if r["task"].startswith("[Start-up]")]
    assert start["medlink"] == "1.25 s (default-dense 3.00 s)" and start["CPU"] == "AMD EPYC, AVX2 only"

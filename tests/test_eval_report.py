import json
import subprocess
import sys

from medlink.eval import EvalReport, LabeledMention, evaluate_rankings


def lm(text, *gold):
    return LabeledMention(text, (text,), frozenset(gold))


def small_report():
    mentions = [lm("heart attack", "A"), lm("flu", "B"), lm("sore joints", "C")]
    report = evaluate_rankings([["A"], ["X", "B"], ["Y"]], mentions, train=[lm("flu", "B")])
    report.timing["index_seconds"] = 0.5  # filled by the caller
    report.meta["title"] = "fixture"
    return report


def test_json_is_one_object_with_the_headline_numbers():
    data = json.loads(small_report().to_json())
    for key in ("n", "acc@1", "acc@5", "mrr", "recall@64", "nrecall@1", "subpopulations", "timing", "meta"):
        assert key in data
    assert data["n"] == 3 and data["acc@1"] == 1 / 3 and data["mrr"] == (1 + 0.5) / 3
    assert data["subpopulations"]["seen mention"]["n"] == 1 and data["subpopulations"]["seen mention"]["acc@1"] == 0.0
    assert data["timing"] == {"index_seconds": 0.5}
    assert "records" not in data
    records = json.loads(small_report().to_json(include_records=True))["records"]
    assert records[2]["rank"] is None and records[1]["gold"] == ["B"]


def test_markdown_has_overall_then_one_row_per_subpopulation():
    report = small_report()
    lines = report.to_markdown().splitlines()
    assert lines[0] == "| subset | n | acc@1 | acc@5 | mrr | recall@64 | nrecall@1 |"
    assert lines[2] == "| all | 3 | 33.3 | 66.7 | 50.0 | 66.7 | 50.0 |"
    assert lines.index("") == 2 + 1 + len(report.subpopulations)  # then the 95% intervals, mentions resampled
    assert lines[-1].startswith("95% intervals (mentions resampled, 1,000 times): acc@1 ")
    assert "| composite | 0 | – |" in report.to_markdown()


def test_plot_writes_a_png_atomically(tmp_path):
    path = small_report().plot(tmp_path / "charts" / "acc.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in path.parent.iterdir()] == ["acc.png"]  # no temporary file left behind


def test_records_as_json_lines(tmp_path):
    path = small_report().write_records(tmp_path / "records.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["text"] for r in rows] == ["heart attack", "flu", "sore joints"]


def test_importing_the_package_does_not_import_matplotlib():
    code = "import sys, medlink.eval; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_report_round_trips_as_a_dataclass():
    report = EvalReport({"n": 0, "acc@1": None})
    assert report["n"] == 0 and json.loads(report.to_json())["acc@1"] is None
    assert "| all | 0 | – |" in report.to_markdown()


def test_mean_over_folds():
    from medlink.eval import mean_over_folds

    folds = [EvalReport({"n": 10, "acc@1": 0.8, "acc@5": 0.9, "mrr": 0.85}), EvalReport({"n": 12, "acc@1": 0.9, "acc@5": 1.0, "mrr": 0.95})]
    summary = mean_over_folds(folds)
    assert summary["folds"] == 2 and summary["n"] == 22
    assert abs(summary["acc@1"] - 0.85) < 1e-12 and abs(summary["acc@1 std"] - 0.05) < 1e-12

"""benchmarks/report.py's robustness section and headline rows: the document fuzzing row, the long-document rows and the
failures summed over the suites, from tiny results."""

from __future__ import annotations

import json

from tests.test_benchmarks_report import report, section, table_under  # noqa: F401 - the fixture

MACHINE = {"cpu_model": "AMD EPYC", "cpu_flags": {"avx2": True}}
XEON = {"cpu_model": "Intel(R) Xeon(R) Processor @ 2.00GHz", "cpu_flags": {"avx2": True, "avx512f": True}}
FUZZ = {"commit": "abc1234", "machine": XEON, "command": "python benchmarks/robustness/fuzz_documents.py --per-format 2",
        "cases": 4, "by_format": {"pubtator": {"loaded": 1, "refused": 1}, "jsonl": {"loaded": 2}}, "total": {"loaded": 3, "refused": 1},
        "failures": []}
LONG = {"commit": "abc1234", "machine": MACHINE, "command": "python benchmarks/documents/long_document.py", "annotator": "dictionary finder",
        "sizes": [{"kb": 64, "seconds": 0.5, "chars_per_s": 131072, "peak_rss_mb": 300},
                  {"kb": 1024, "seconds": 10.0, "chars_per_s": 104858, "peak_rss_mb": 350},
                  {"kb": 4096, "characters": 4194304, "timed_out_after_s": 300}],
        "throughput_ratio": {"1MB/64KB": 0.8}}
WINDOWED = {"commit": "def5678", "machine": XEON, "index": "MEDIC lexical", "annotate": "medlink annotate ...",
            "by_label": {label: {"command": f"python benchmarks/robustness/long_documents.py --label {label}", "commit": commit,
                                 "rows": [{"corpus": "dense", "mb": 10, "seconds": seconds, "peak_rss_mb": rss}]}
                         for label, commit, seconds, rss in (("before", "aaa0001", 896.0, 1875), ("after", "bbb0002", 78.9, 738))}}
KILLS = {"commit": "abc1234", "machine": MACHINE, "command": "python benchmarks/robustness/kill_trials.py --trials 2", "trials_per_command": 2,
         "outcomes": {"kb build": {"left complete, rerun ok": 2}, "annotate --out": {"left none, rerun ok": 1, "left complete, rerun ok": 1}},
         "broken_or_failed": 0}


def test_document_fuzzing_and_a_long_document_are_shown(report, tmp_path):  # noqa: F811
    results = tmp_path / "results"
    results.mkdir()
    (results / "fuzz_documents.json").write_text(json.dumps(FUZZ))
    (results / "long_document.json").write_text(json.dumps(LONG))
    text = report.render(results, None)
    fuzz, long = table_under(text, "## Robustness")
    assert fuzz == {"what": "4 damaged document files (2 formats, read as `annotate --input` does)", "outcomes": "loaded 3, refused 1"}
    assert long["outcomes"] == "131,072/s, 104,858/s, over 5.0 min; 1 MB / 64 KB 0.80"
    assert "- Run `fuzz_documents` (Intel(R) Xeon(R) Processor @ 2.00GHz (AVX2 AVX-512); abc1234): " in section(text, "Robustness")
    (row,) = table_under(text, "## Headline figures")
    assert (row["medlink"], row["CPU"]) == ("0 of 4 damaged files used or crashed (1 refused by name, the rest read with counts)", "Intel Xeon, AVX-512")


def test_windowed_long_documents_replace_the_older_row_and_kills_are_summed(report, tmp_path):  # noqa: F811
    results = tmp_path / "results"
    results.mkdir()
    for name, data in (("long_document", LONG), ("long_documents", WINDOWED), ("kill_trials", KILLS)):
        (results / f"{name}.json").write_text(json.dumps(data))
    text = report.render(results, None)
    rows = table_under(text, "## Robustness")
    assert [row["outcomes"] for row in rows] == ["left complete, rerun ok 3, left none, rerun ok 1",
                                                 "dense 10 MB: 14.9 min, 1,875 MB → 78.9 s, 738 MB"]
    assert "`python benchmarks/robustness/long_documents.py --label after`" in text  # the last run's command
    assert "long_document." in text.split("Not shown (earlier or minor runs)")[1]  # the older row: named, not shown
    (kills,) = table_under(text, "## Headline figures")
    assert kills["medlink"] == "0 of 4 kill -9 trials broke an output" and kills["CPU"] == "AMD EPYC, AVX2 only"

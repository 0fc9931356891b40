"""benchmarks/report.py's robustness section: the document fuzzing row and the long-document row, from tiny results."""

from __future__ import annotations

import json

from tests.test_benchmarks_report import report, table_under  # noqa: F401 - the fixture

MACHINE = {"cpu_model": "AMD EPYC", "cpu_flags": {"avx2": True}}
FUZZ = {"commit": "abc1234", "machine": MACHINE, "command": "python benchmarks/robustness/fuzz_documents.py --per-format 2",
        "cases": 4, "by_format": {"pubtator": {"loaded": 1, "refused": 1}, "jsonl": {"loaded": 2}}, "total": {"loaded": 3, "refused": 1}}
LONG = {"commit": "abc1234", "machine": MACHINE, "command": "python benchmarks/documents/long_document.py", "annotator": "dictionary finder",
        "sizes": [{"kb": 64, "seconds": 0.5, "chars_per_s": 131072, "peak_rss_mb": 300},
                  {"kb": 1024, "seconds": 10.0, "chars_per_s": 104858, "peak_rss_mb": 350},
                  {"kb": 4096, "characters": 4194304, "timed_out_after_s": 300}],
        "throughput_ratio": {"1MB/64KB": 0.8}}


def test_document_fuzzing_and_long_documents_are_shown(report, tmp_path):  # noqa: F811
    results = tmp_path / "results"
    results.mkdir()
    (results / "fuzz_documents.json").write_text(json.dumps(FUZZ))
    (results / "long_document.json").write_text(json.dumps(LONG))
    text = report.render(results, None)
    rows = {row["results"]: row for row in table_under(text, "## Robustness")}
    fuzz, long = rows["fuzz_documents"], rows["long_document"]
    assert fuzz["what"].startswith("4 damaged document files (pubtator, jsonl;") and fuzz["outcomes"] == "loaded 3, refused 1"
    assert long["outcomes"] == ("64 KB 131,072/s (0.50 s), 1 MB 104,858/s (10.0 s), 4 MB over 5.0 min; 1 MB / 64 KB throughput 0.80; "
                                "peak RSS 350 MB") and long["CPU"].startswith("AMD EPYC")

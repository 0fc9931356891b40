"""BENCHMARKS.md's cross-corpus table and the peers' BC5CDR column (benchmarks/report_documents.py, issue 53), on a tiny
made-up run: one row per training set, a column pair per pipeline, a "-" where a pipeline has no row."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # report_documents imports report_cells as the generator does

import report_documents  # noqa: E402


def scores(linking: float, concepts: float) -> dict:
    return {"mentions": {"f1": 0.9}, "linking": {"f1": linking}, "concepts": {"f1": concepts},
            "intervals": {"linking": {"f1": [linking - 0.01, linking + 0.01]}}}


def test_one_row_per_training_and_tagger_columns_only_where_run():
    run = {"rows": [{"pipeline": "dictionary", "trained_on": "none", "ncbi-test": scores(0.6, 0.65), "bc5cdr-dev": scores(0.67, 0.69)},
                    {"pipeline": "dictionary", "trained_on": "both", "ncbi-test": scores(0.75, 0.8), "bc5cdr-dev": scores(0.8, 0.83)},
                    {"pipeline": "tagger + dictionary, confirmed, + all", "trained_on": "both", "ncbi-test": scores(0.8, 0.82),
                     "bc5cdr-dev": scores(0.84, 0.86)}]}
    header, _, *rows = report_documents.cross_corpus_table(run)
    assert header.split(" | ")[1:3] == ["NCBI test", "BC5CDR dev"] and "BC5CDR dev, tagger + dictionary" in header
    assert rows[0].startswith("| nothing (MEDIC's names) | 0.6000 [0.590-0.610] / 0.6500 |") and rows[0].endswith("| - | - |")
    assert rows[1].endswith("| 0.8000 [0.790-0.810] / 0.8200 | 0.8400 [0.830-0.850] / 0.8600 |")
    assert "tagger + dictionary" in report_documents.cross_corpus_caption(run)


def test_the_peers_table_gains_a_bc5cdr_column_by_system():
    row = lambda system, f1: {"system": system, "split": "test", "mentions": {"f1": f1}, "concepts": {"f1": f1},  # noqa: E731
                              "linking": {"precision": f1, "recall": f1, "f1": f1}, "abstracts_per_second": 10.0, "peak_rss_mb": 100.0}
    run = {"rows": [row("medlink", 0.76), row("medlink (MEDIC only)", 0.6), row("gilda + train mentions", 0.66)]}
    plain = report_documents.peers_table(run)
    assert len(plain) == 5 and "BC5CDR" not in plain[0]
    elsewhere = {"medlink": {"linking": {"f1": 0.69}, "concepts": {"f1": 0.72}}}
    header, _, *rows = report_documents.peers_table(run, ("medlink (MEDIC only)",), elsewhere)
    assert "BC5CDR dev linking / concept F1" in header and len(rows) == 2
    assert "| 0.6900 / 0.7200 |" in rows[0] and rows[1].startswith("| gilda + train mentions") and "| - |" in rows[1]

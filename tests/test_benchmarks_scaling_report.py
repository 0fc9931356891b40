"""benchmarks/report.py shows scaling.py's results (what a KB costs by size and batch size) in "KB building and scale": a
one-line summary with the figure under it and the run's provenance, within the line budget; and scaling.py draws the
figure from such results. Tiny fake results files, no benchmark data (a second or two).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "bench_results"
MACHINE = {"cpu_model": "Intel(R) Xeon(R) Processor", "cpu_flags": {"avx2": True, "avx512f": True}, "cpus_available": 2}


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def report():
    return load("benchmarks_report_under_test_scaling", ROOT / "benchmarks" / "report.py")


def size(names: int, config: str, rates: dict[int, float]) -> dict:
    return {"target_names": names, "kb": f"synthetic-{names}.sqlite", "concepts": names // 3, "names": names, "config": config,
            "load_average_before": 1.0, "build_seconds": names / 1000, "build_seconds_all": [names / 1000], "build_peak_rss_mb": 200 + names / 100,
            "index_size_mb": names / 1000, "link_process_peak_rss_mb": 150 + names / 200, "link_process_seconds": 30.0, "load_seconds": 0.2,
            "queries": 64, "distinct": 64, "link_peak_rss_mb": 150 + names / 200,
            "batches": [{"batch_size": b, "mentions_per_second": r, "all": [r], "mentions_timed": [64], "peak_rss_mb_after": 150.0}
                        for b, r in rates.items()]}


def scaling(configs=("default",)) -> dict:
    rates = {1: 400.0, 16: 1500.0, 4096: 2500.0}
    return {"commit": "fff6666", "date": "2026-12-02", "machine": MACHINE, "command": "python benchmarks/scale/scaling.py --names 10000 100000",
            "load_average_at_start": [1.5, 1.2, 1.0], "k": 5, "batch_sizes": [1, 16, 4096], "repeats": 3, "build_repeats": 1,
            "max_seconds": 15.0, "queries": 64, "plot": "benchmarks/results/scaling.png", "complete": True,
            "reference": {"source": "lexical_scale", "commit": "d162860", "cpu": "AMD EPYC, AVX2 only", "config": "tfidf_only",
                          "names": 4408729, "batch_size": 2000, "mentions_per_second": 289.5, "build_seconds": 627.8,
                          "build_peak_rss_mb": 8285.7, "link_peak_rss_mb": 9186.3},
            "by_kb_size": [size(n, c, rates) for c in configs for n in (10_000, 100_000)]}


@pytest.fixture()
def results(tmp_path) -> Path:
    shutil.copytree(FIXTURES, tmp_path / "results")
    (tmp_path / "results" / "scaling.json").write_text(json.dumps(scaling()))
    return tmp_path / "results"


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def test_the_scaling_figure_its_summary_and_its_run_in_the_kb_section(report, results):
    text = report.render(results, None)  # refuses nothing
    kb = section(text, "KB building and scale")
    assert "![KB names against mentions/s and peak RSS](benchmarks/results/scaling.png)" in kb
    summary = next(line for line in kb.splitlines() if line.startswith("- What a KB costs"))
    assert "default lexical config, k 5" in summary and "mentions/s (distinct) at batch 1/16/4,096; link peak, batch 1 → 4,096" in summary
    assert "10,000: 10.0 s, 300 MB; 400/1,500/2,500; 150 → 200 MB" in summary and "100,000: 1.7 min, 1,200 MB; 400/1,500/2,500; 150 → 650 MB" in summary
    assert "★" not in summary  # no lexical_scale results here (the figure draws its star from scaling.json's copy)
    assert ("- Run `scaling` (Intel(R) Xeon(R) Processor (AVX2 AVX-512), load average 1.5 at start; fff6666): "
            "`python benchmarks/scale/scaling.py --names 10000 100000`") in kb
    assert all(len(line) <= 300 for line in kb.splitlines())
    assert "Results no section reads yet" not in text and "scaling" not in text.split("Not shown (earlier or minor runs)", 1)[-1]
    assert text.count("\n") <= report.LINE_BUDGET


def test_two_configs_are_labelled_and_runs_share_lines_where_they_fit(report, results):
    (results / "scaling.json").write_text(json.dumps(scaling(("default", "tfidf_only"))))
    machine = {"cpu_model": "AMD EPYC", "cpu_flags": {"avx2": True}}
    (results / "lexical_scale.json").write_text(json.dumps({
        "commit": "d162860", "machine": machine, "command": "python benchmarks/scale/lexical_scale.py", "agreement_queries": 500,
        "top1_score_as_exhaustive": 0.986, "names": 4408729, "build_seconds": 627.8, "build_peak_rss_mb": 8285.7, "mentions_per_second": 298.2,
        "link_peak_rss_mb": 9186.3}))
    kb = section(report.render(results, None), "KB building and scale")
    lines = kb.splitlines()
    summary = next(i for i, line in enumerate(lines) if line.startswith("- What a KB costs"))
    end = next(i for i in range(summary + 1, len(lines)) if not lines[i].startswith("  "))
    bullet = " ".join(line.strip() for line in lines[summary:end])  # over 300 characters: cut at spaces into indented lines
    assert "default / tfidf_only" in bullet and "650 MB (tfidf_only)" in bullet and "200 MB (default)" in bullet
    # lexical_scale's line joins the summary (the figure's star), every figure kept; the figure at the bullet's end
    assert ("★ 4,408,729, TF-IDF alone (`lexical_scale`): 10.5 min, 8,286 MB; 298/s in one call; 9,186 MB; first score as scoring "
            "every name: 98.6% of queries.") in bullet
    assert "- TF-IDF alone over the synthetic" not in kb
    assert lines[end - 1].endswith("![KB names against mentions/s and peak RSS](benchmarks/results/scaling.png)")
    assert all(len(line) <= 300 for line in lines)
    # the section's two runs on one line (each still named as a run)
    (runs,) = [line for line in lines if line.startswith("- Run `")]
    assert runs.startswith("- Run `lexical_scale` (AMD EPYC (AVX2); d162860)") and "; run `scaling` (" in runs


def test_scaling_draws_its_figure_from_the_results(tmp_path):
    pytest.importorskip("matplotlib")
    sys.path.insert(0, str(ROOT))
    module = load("benchmarks_scaling_under_test", ROOT / "benchmarks" / "scale" / "scaling.py")
    out = module.plot(scaling(("default", "tfidf_only")), tmp_path / "scaling.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    assert module.cpu_name(MACHINE) == "Intel Xeon, AVX-512"

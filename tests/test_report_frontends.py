"""benchmarks/report.py's sections on the service, the spaCy component and the Ray engine (issue 51), from tiny results:
the load table with Gilda's server as a peer row, the load average each run was measured under, the spaCy run not taken
for a robustness file, and Ray 'not yet measured' until its results exist."""

from __future__ import annotations

import json

from tests.test_benchmarks_report import report, section, table_under  # noqa: F401 - the fixture

XEON = {"cpu_model": "Intel(R) Xeon(R) Processor @ 2.00GHz", "cpu_flags": {"avx2": True, "avx512f": True}}
LOAD = {"commit": "abc1234", "machine": XEON, "command": "python benchmarks/service/load.py", "load_average_at_start": [7.3, 6.3, 5.7],
        "index": "default", "start": {"runs": [{"seconds_to_healthy": 2.0, "index_load_seconds": 1.5}], "seconds_to_healthy_median": 2.0,
                                      "index_load_seconds_median": 1.5},
        "one_client": {"requests": 200, "http_p50_ms": 53.1, "library_p50_ms": 44.3},
        "rows": [{"workers": w, "scenario": scenario, "users": 16, "seconds": 60, "requests": 1000 * w, "errors": 0, "requests_per_second": rate,
                  "p50_ms": p50, "p95_ms": p50 * 2, "p99_ms": p50 * 3, "mean_ms": p50, "worker_peak_rss_mb": [690.4] * w}
                 for w, scenario, rate, p50 in ((1, "/link (10 mentions)", 17.4, 830.0), (2, "/link (10 mentions)", 24.3, 590.0),
                                                (2, "/annotate (1 abstract)", 42.5, 340.0))]}
ONE_CLIENT = {**LOAD, "commit": "def5678", "command": "python benchmarks/service/load.py --workers 1 --scenarios '' --name service_one_client",
              "load_average_at_start": [4.61, 5.0, 5.9], "start": None, "one_client": {"requests": 200, "http_p50_ms": 34.0, "library_p50_ms": 28.9},
              "rows": []}
PEER = {"commit": "abc1234", "machine": XEON, "command": "python benchmarks/service/peer.py", "load_average_at_start": [14.22, 12.0, 8.4],
        "dictionary": "NCBI Disease test dictionary",
        "rows": [{"server": "gilda==1.6.1", "start_seconds": 14.23, "mentions": 343, "acc1": 0.5569, "sequential_p50_ms": 6.95, "sequential_p99_ms": 13.9,
                  "load": {"requests": 9704, "errors": 0, "requests_per_second": 334.0, "p50_ms": 50.0, "p99_ms": 78.0}},
                 {"server": "medlink serve --workers 2", "start_seconds": 14.04, "mentions": 343, "acc1": 0.6822, "sequential_p50_ms": 16.61,
                  "sequential_p99_ms": 23.8, "acc1_first_candidate_nil_ignored": 0.793,
                  "load": {"requests": 1828, "errors": 0, "requests_per_second": 62.8, "p50_ms": 280.0, "p99_ms": 530.0}}]}
FUZZ = {"commit": "abc1234", "machine": XEON, "command": "python benchmarks/service/fuzz.py --max-examples 300", "load_average_at_start": [5.76, 6.6, 6.8],
        "index": "default", "schemathesis": {"requests": 2652, "by_status": {"200": 1170, "404": 137, "422": 1345}, "responses_500_or_more": 0,
                                             "summary": ["Schemathesis v4.32.5"]},
        "bad_inputs": [{"input": "malformed JSON", "status": 422, "detail": "not valid JSON"}, {"input": "too big", "status": 413, "detail": "over"}]}
SPACY = {"commit": "e66f6e6", "machine": XEON, "command": "python benchmarks/batch/spacy_pipe.py --repeats 9", "repeats": 9,
         "dataset": "NCBI Disease test abstracts (title + abstract), 100 documents", "index": "MEDIC (06Jul2012) default lexical index, fitted",
         "medlink_annotate": {"abstracts_per_second": 62.8}, "spacy_pipe": {"abstracts_per_second": 69.0, "spacy": "3.8.18"}, "throughput_ratio": 1.1,
         "spans": {"documents_identical": 100, "documents_differing": 0, "spans": 938, "examples": []}}
RAY = {"commit": "aaa9999", "machine": XEON, "command": "python benchmarks/batch/ray_scale.py", "dataset": "NCBI Disease abstracts (title + abstract)",
       "local": {"wall_seconds": 20.0, "documents_per_second_wall": 89.6},
       "ray_runs": {w: [{"documents": 1793, "documents_per_second": rate, "load_average_1min_before_after": [3.2, 4.1]}] for w, rate in (("1", 60.0), ("2", 105.0))},
       "documents_per_second": {"1": 60.0, "2": 105.0}, "speedup_2_over_1": 1.75, "best_documents_per_second": {"1": 62.0, "2": 110.0},
       "speedup_2_over_1_best": 1.774, "identical_to_local": {"1": True, "2": True},
       "kill_trials": [{"at": 100, "killed": True, "identical": True}] * 10, "kill_trials_identical": 10,
       "projection_36m_abstracts": {"per_core_documents_per_second": 52.5, "core_hours": 190, "hours_on": {"2": 95.2, "16": 11.9},
                                    "cores_for_one_day": 8, "assumes": "one actor a core"}}


def write(tmp_path, **files):
    results = tmp_path / "results"
    results.mkdir()
    for name, data in files.items():
        (results / f"{name}.json").write_text(json.dumps(data))
    return results


def test_the_service_section_shows_load_gildas_peer_row_fuzzing_and_the_load_average(report, tmp_path):  # noqa: F811
    text = report.render(write(tmp_path, service_load=LOAD, service_one_client=ONE_CLIENT, service_peer_gilda=PEER, service_fuzz=FUZZ), None)
    rows = {(r["server"], r["request"]): r for r in table_under(text, "## Service")}
    two = rows[("medlink, 2 workers (default index)", "/link (10 mentions)")]
    assert (two["req/s"], two["p50 / p99"], two["peak RSS per worker"], two["load average"]) == ("24.3", "590 / 1,770 ms", "690 MB / 690 MB", "7.3")
    assert rows[("medlink, 1 worker (default index)", "/link (10 mentions)")]["one client p50 (/ p99)"] == "53 ms (44 ms in process)"
    gilda = rows[("gilda 1.6.1 (NCBI test dictionary)", "/ground (1 mention)")]
    assert (gilda["Acc@1"], gilda["one client p50 (/ p99)"], gilda["req/s"], gilda["load average"]) == ("0.557", "7.0 / 14 ms", "334.0", "14.2")
    assert rows[("medlink, 2 workers (NCBI test dictionary)", "/ground (1 mention)")]["Acc@1"] == "0.682 (first candidate 0.793)"
    service = " ".join(section(text, "Service").split())
    assert "One client's `/link` p50 in" not in service  # a one-client run alone: named under 'Not shown', its figure in the JSON
    assert "Worker start (median of fresh `medlink serve`, to the first healthy answer; of it the index load): default index" in service
    assert "2,652 requests, 0 answers >= 500 (2xx 1,170, 4xx 1,482); 2 hand-made bad requests" in service and "2 answered 4xx" in service
    assert "`/link` p50 <= 30 / p99 <= 150 ms: 590 / 1,770 ms" in service and "default-dense under load: not yet measured" in service
    assert "30 ms needs 533 req/s (24.3 here)" in service
    assert ("- Run `service_peer_gilda` (Intel(R) Xeon(R) Processor @ 2.00GHz (AVX2 AVX-512), load average 14.2 at start; abc1234): "
            "`python benchmarks/service/peer.py`") in service
    (row,) = [r for r in table_under(text, "## Headline figures") if r["task"] == "[Service](#service)"]
    assert (row["medlink"], row["CPU"]) == ("590 / 1,770 ms (24.3)", "Intel Xeon, AVX-512; load average 7.3")
    assert "Results no section reads yet" not in text and "Not shown (earlier or minor runs): service_one_client." in text


def test_the_spacy_run_is_its_own_kind_and_ray_is_not_yet_measured(report, tmp_path):  # noqa: F811
    text = report.render(write(tmp_path, batch_spacy_pipe=SPACY), None)
    assert "## Robustness" not in text  # its throughput_ratio once made it a long-document robustness file
    batch = " ".join(section(text, "spaCy and Ray").split())
    assert "69 against 63 abstracts/s (1.10x; issue 51: within 10%); spans and ids identical in 100 of 100 documents" in batch
    assert "Intel Xeon, AVX-512, load average not recorded." in batch
    assert "`python benchmarks/batch/ray_scale.py`): not yet measured." in batch
    (row,) = table_under(text, "## Headline figures")
    assert row["task"] == "[spaCy component](#spacy-and-ray)" and row["medlink"] == "69 (`medlink annotate` 63); 100 of 100"


def test_ray_results_replace_not_yet_measured_and_add_a_headline_row(report, tmp_path):  # noqa: F811
    text = report.render(write(tmp_path, batch_spacy_pipe=SPACY, batch_ray=RAY), None)
    batch = " ".join(section(text, "spaCy and Ray").split())
    assert "not yet measured" not in batch
    assert "2 actors 105.0 documents/s against 1 actor 60.0 (1.75x, best runs 1.77x; issue 51: >= 1.7x)" in batch
    assert "Output identical to the one-process run: 1 actor yes, 2 actors yes. Load average 3.2-4.1." in batch
    assert "resumed runs gave output identical to the one-process run" in batch and "190 core-hours (95.2 h on 2, 11.9 h on 16 cores)" in batch
    assert "run `batch_ray` (" in batch.lower()  # its provenance, alone or beside another run's on one line
    ray = [r for r in table_under(text, "## Headline figures") if r["task"].startswith("[Corpus on Ray]")]
    assert ray and ray[0]["CPU"] == "Intel Xeon, AVX-512; load average 3.2-4.1"

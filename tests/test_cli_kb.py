import json
import subprocess
import sys

import pytest


def medlink(*args, check=True):
    """Run the real command line (a subprocess, so exit codes and stderr are the user's)."""
    result = subprocess.run([sys.executable, "-m", "medlink", *map(str, args)], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"medlink {args} failed ({result.returncode}): {result.stderr}")
    return result


def medlink_without(module: str, *args):
    """The command line as on an install that lacks ``module`` (hidden from imports), e.g. without the dense extra."""
    hide = f"import sys; sys.modules[{module!r}] = None; from medlink.cli import main; sys.argv[0] = 'medlink'; main()"
    return subprocess.run([sys.executable, "-c", hide, *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def kb_file(tmp_path, fixtures):
    out = tmp_path / "kb.sqlite"
    medlink("kb", "build", out, f"obo:{fixtures / 'obo' / 'mini_hp.obo'}", f"icd10cm:{fixtures / 'icd10cm' / 'mini_tabular.xml'}", "--quiet")
    return out


def test_build_info_json(kb_file):
    info = json.loads(medlink("kb", "info", kb_file, "--json").stdout)
    # 5 HPO is_a/part_of + 21 ICD is_a + 4 excludes whose cited code is in the fixture (2 cite absent codes)
    assert (info["concepts"], info["relations"]) == (5 + 23, 5 + 21 + 4)
    assert info["names"] >= info["concepts"]


def test_show_and_search(kb_file):
    shown = medlink("kb", "show", kb_file, "HP:0001262").stdout
    assert shown.startswith("HP:0001250  Seizure  (requested HP:0001262)")
    assert "parent:     HP:0012638  Abnormal nervous system physiology" in shown
    found = medlink("kb", "search", kb_file, "HEART ATTACK", "nothing like it").stdout.splitlines()
    assert found[0].split("\t")[:3] == ["HEART ATTACK", "HP:0001658", "Myocardial infarction"]
    assert found[1] == "nothing like it: no exact match"
    hits = json.loads(medlink("kb", "search", kb_file, "diabetes NOS", "--json").stdout)
    assert hits["matches"][0]["id"] == "ICD10CM:E11" and hits["matches"][0]["kind"] == "inclusion"


def test_normalisation_options_are_recorded_and_used_by_search(tmp_path):
    tsv = tmp_path / "names.tsv"
    tsv.write_text("id\tname\nC1\tHER2+ breast cancer\nC2\tHER2- breast cancer\nC3\tAIDS\nC4\tBehçet disease\n", encoding="utf-8")
    plain, kept = tmp_path / "plain.sqlite", tmp_path / "kept.sqlite"
    medlink("kb", "build", plain, f"tsv:{tsv}", "-q")
    medlink("kb", "build", kept, f"tsv:{tsv}", "-q", "--keep-punctuation", "+-", "--keep-case", "--keep-accents")
    ids = lambda kb, text: [m["id"] for m in json.loads(medlink("kb", "search", kb, text, "--json").stdout)["matches"]]  # noqa: E731
    assert sorted(ids(plain, "her2+ breast cancer")) == ["C1", "C2"]  # "+" and "-" both become spaces
    assert ids(kept, "HER2+ breast cancer") == ["C1"] and ids(kept, "aids") == [] and ids(kept, "AIDS") == ["C3"]
    assert ids(plain, "behcet disease") == ["C4"] and ids(kept, "Behcet disease") == [] and ids(kept, "Behçet disease") == ["C4"]
    shown = json.loads(medlink("kb", "info", kept, "--json").stdout)["normalizer"]
    assert shown["fold_accents"] is False and shown["casefold"] is False and shown["keep"] == "+-"
    assert "fold_accents off" in medlink("kb", "info", kept).stdout


def test_unknown_concept_exit_code(kb_file):
    result = medlink("kb", "show", kb_file, "HP:404", check=False)
    assert result.returncode == 1 and "no concept 'HP:404'" in result.stderr


def test_bad_input_messages(tmp_path, fixtures):
    unknown = medlink("kb", "build", tmp_path / "x.sqlite", "rrf:somewhere", check=False)
    assert unknown.returncode == 2 and "known formats: askapatient, biosyn" in unknown.stderr and "Traceback" not in unknown.stderr
    missing = medlink("kb", "build", tmp_path / "x.sqlite", f"obo:{tmp_path / 'absent.obo'}", check=False)
    assert missing.returncode == 2 and "absent.obo (no such file)" in missing.stderr
    malformed = fixtures / "biosyn" / "malformed.txt"
    bad = medlink("kb", "build", tmp_path / "x.sqlite", f"biosyn:{malformed}", "-q", check=False)
    assert bad.returncode == 2 and f"{malformed}:2:" in bad.stderr
    assert not (tmp_path / "x.sqlite").exists()
    skipped = medlink("kb", "build", tmp_path / "x.sqlite", f"biosyn:{malformed}", "-q", "--skip-invalid")
    assert "skipped 2 invalid lines" in skipped.stderr and f"{malformed}:2:" in skipped.stderr


def test_a_dense_index_build_without_the_dense_extra_stops_before_any_work(kb_file, tmp_path):
    """It says what to install at once, not after fitting probabilities on the KB, and leaves no folder behind."""
    result = medlink_without("faiss", "index", "build", "--kb", kb_file, "--out", tmp_path / "index", "--config", "default-dense")
    assert result.returncode == 2 and "neural models need faiss: install medlink's dense extra" in result.stderr
    assert "pseudo-mention" not in result.stderr and "Traceback" not in result.stderr and not (tmp_path / "index").exists()

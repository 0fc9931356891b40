import json
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES


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


def test_build_says_what_the_kb_holds(tmp_path, fixtures):
    done = medlink("kb", "build", tmp_path / "kb.sqlite", f"obo:{fixtures / 'obo' / 'mini_hp.obo'}", "--quiet")
    info = json.loads(medlink("kb", "info", tmp_path / "kb.sqlite", "--json").stdout)
    assert f": {info['concepts']:,} concepts, {info['names']:,} names (checksum " in done.stdout
    assert "records read (a concept, a name, an id or a relation each)" in done.stderr


def test_show_and_search(kb_file):
    shown = medlink("kb", "show", kb_file, "HP:0001262").stdout
    assert shown.startswith("HP:0001250  Seizure  (requested HP:0001262)")
    assert "parent:     HP:0012638  Abnormal nervous system physiology" in shown
    found = medlink("kb", "search", kb_file, "HEART ATTACK", "nothing like it").stdout.splitlines()
    assert found[0].split("\t")[:3] == ["HEART ATTACK", "HP:0001658", "Myocardial infarction"]
    assert found[1] == "nothing like it: no exact match"
    hits = json.loads(medlink("kb", "search", kb_file, "diabetes NOS", "--json").stdout)
    assert hits["matches"][0]["id"] == "ICD10CM:E11" and hits["matches"][0]["kind"] == "inclusion"
    missing = medlink("kb", "show", kb_file, "0001250", check=False)  # the prefix left out: the ids that carry it named
    assert missing.returncode == 1 and missing.stderr.strip().endswith("its ids carry a prefix: HP:0001250")
    assert "prefix" not in medlink("kb", "show", kb_file, "00012_0", check=False).stderr  # "_" is no wildcard


def test_normalisation_options_are_recorded_and_used_by_search(tmp_path):
    tsv = tmp_path / "names.tsv"
    tsv.write_text("id\tname\nC1\tHER2+ breast cancer\nC2\tHER2- breast cancer\nC3\tAIDS\nC4\tBehçet disease\n", encoding="utf-8")
    plain, kept = tmp_path / "plain.sqlite", tmp_path / "kept.sqlite"
    medlink("kb", "build", plain, f"tsv:{tsv}", "-q")
    medlink("kb", "build", kept, f"tsv:{tsv}", "-q", "--keep-punctuation", "+-", "--keep-case", "--keep-accents")
    ids = lambda kb, text: [m["id"] for m in json.loads(medlink("kb", "search", kb, text, "--json").stdout)["matches"]]  # noqa: E731
    assert ids(plain, "her2+ breast cancer") == ["C1"] and ids(plain, "HER2 negative breast cancer") == ["C2"]  # a sign is read as its word
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


@pytest.fixture
def align_kbs(tmp_path):
    """The alignment fixture's two KBs and an SSSOM file between them (what 'medlink kb augment' reads)."""
    from pathlib import Path

    from medlink.kb.build import build_kb

    fixtures = Path(__file__).parent / "fixtures" / "align"
    build_kb(tmp_path / "src.sqlite", [f"obo:{fixtures / 'source.obo'}"], progress=False)
    build_kb(tmp_path / "tgt.sqlite", [f"tsv=ICD10CM:{fixtures / 'target.tsv'}"], progress=False)
    mappings = tmp_path / "m.sssom.tsv"
    mappings.write_text("# curie_map:\n#   DOID: http://purl.obolibrary.org/obo/DOID_\nsubject_id\tpredicate_id\tobject_id\tconfidence\n"
                        "DOID:10763\tskos:exactMatch\tICD10CM:I10\t0.90\nDOID:8893\tskos:exactMatch\tICD10CM:L40\t0.95\n")
    return tmp_path / "src.sqlite", tmp_path / "tgt.sqlite", mappings


@pytest.mark.slow  # subprocesses: the user's exit codes and output
def test_kb_augment_show_info_and_unaugment(align_kbs, tmp_path):
    source, target, mappings = align_kbs
    out, back = tmp_path / "aug.sqlite", tmp_path / "back.sqlite"
    done = medlink("kb", "augment", source, "--from", mappings, "--with", target, "--out", out, "-q")
    assert f"wrote {out}: 2 mappings used" in done.stdout
    shown = medlink("kb", "show", out, "DOID:10763").stdout
    assert f"Essential (primary) hypertension  [carried: ICD10CM:I10 skos:exactMatch 0.9000; {mappings}:4]" in shown
    assert f"type:       category  [carried: ICD10CM:I10 skos:exactMatch 0.9000; {mappings}:4]" in shown
    assert "high blood pressure  [carried" not in shown  # the KB's own synonym is not marked
    carried = json.loads(medlink("kb", "show", out, "DOID:8893", "--json").stdout)["augmented"]
    assert {(c["field"], c["object_id"], c["confidence"]) for c in carried} >= {("definition", "ICD10CM:L40", 0.95)}
    info = medlink("kb", "info", out).stdout
    assert "augmented:" in info and "kb unaugment" in info and f"augmented from:    {source} (checksum" in info
    assert f"augmentation 1:    {mappings} with {target}" in info
    assert json.loads(medlink("kb", "info", out, "--json").stdout)["augmentation"]["concepts"] == 2
    assert json.loads(medlink("kb", "info", source, "--json").stdout)["augmentation"] is None
    undone = medlink("kb", "unaugment", out, "--out", back)
    original = json.loads(medlink("kb", "info", source, "--json").stdout)["checksum"]
    assert "the original's" in undone.stdout and json.loads(medlink("kb", "info", back, "--json").stdout)["checksum"] == original
    assert "[carried" not in medlink("kb", "show", back, "DOID:10763").stdout
    refused = medlink("kb", "unaugment", source, "--out", tmp_path / "x.sqlite", check=False)
    assert refused.returncode == 2 and "not an augmented KB" in refused.stderr


@pytest.mark.slow  # subprocesses: the user's exit codes and stderr
def test_kb_augment_errors_speak_of_kb_and_with(align_kbs, tmp_path):
    source, target, mappings = align_kbs
    out = tmp_path / "aug.sqlite"
    missing = medlink("kb", "augment", tmp_path / "nope.sqlite", "--from", mappings, "--with", target, "--out", out, check=False)
    assert missing.returncode == 2 and f"error: KB {tmp_path / 'nope.sqlite'}: no such KB file" in missing.stderr
    other = medlink("kb", "augment", source, "--from", mappings, "--with", tmp_path / "nope.sqlite", "--out", out, check=False)
    assert other.returncode == 2 and f"error: --with {tmp_path / 'nope.sqlite'}: no such KB file" in other.stderr
    itself = medlink("kb", "augment", source, "--from", mappings, "--with", source, "--out", out, check=False)
    assert itself.returncode == 2 and "KB and --with are the same file" in itself.stderr and "augmenting a KB from itself" in itself.stderr
    latin = tmp_path / "latin.tsv"
    latin.write_bytes(b"latin\xe9\tx\n")
    undecodable = medlink("kb", "augment", source, "--from", latin, "--with", target, "--out", out, check=False)
    assert undecodable.returncode == 2 and f"error: {latin}:1: not UTF-8 (byte 0xe9 at byte offset 5)" in undecodable.stderr
    for result in (missing, other, itself, undecodable):
        assert "--source" not in result.stderr and "--target" not in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()


def test_ctrl_c_in_a_command_says_what_was_left_and_exits_130(tmp_path, monkeypatch, capsys):
    import medlink.kb.build
    from medlink.cli import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(medlink.kb.build, "build_kb", interrupted)
    monkeypatch.setattr(sys, "argv", ["medlink", "kb", "build", str(tmp_path / "kb.sqlite"), f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 130
    assert "interrupted; nothing half-written was left: run it again to start over" in capsys.readouterr().err
    from medlink.cli import interrupted as said  # each command's own way to continue

    assert said(["medlink", "train", "tagger", "--resume"]).endswith("run it again with --resume to continue from the last checkpoint")
    assert said(["medlink", "-q", "annotate", "x"]).endswith("with --out, the same command continues where it stopped")


def test_ctrl_c_while_the_command_line_loads_is_one_line_and_exit_130(monkeypatch, capsys):
    from medlink import launch

    class InterruptedImport:  # Ctrl-C while ``medlink.cli`` (and numpy, torch... under it) is being imported
        def find_spec(self, name, path=None, target=None):
            if name == "medlink.cli":
                raise KeyboardInterrupt

    monkeypatch.delitem(sys.modules, "medlink.cli")
    monkeypatch.setattr(sys, "meta_path", [InterruptedImport(), *sys.meta_path])
    with pytest.raises(SystemExit) as done:
        launch.main()
    assert done.value.code == 130 and capsys.readouterr().err == "interrupted while starting; nothing was written\n"

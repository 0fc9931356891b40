import json

import pytest

from tests.test_cli_kb import medlink

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def kb_file(tmp_path_factory):
    from tests.conftest import FIXTURES

    work = tmp_path_factory.mktemp("cli-train")
    medlink("kb", "build", work / "kb.sqlite", f"obo:{FIXTURES / 'obo' / 'mini_hp.obo'}", f"icd10cm:{FIXTURES / 'icd10cm' / 'mini_tabular.xml'}", "-q")
    return work / "kb.sqlite"


def test_train_pairs_then_zero_shot_bi_encoder_then_dense_index(kb_file, tmp_path):
    from tests.conftest import FIXTURES

    out = medlink("train", "pairs", "--kb", kb_file, "--out", tmp_path / "pairs", "--tasks", "syn,graph,icd", "--dev-fraction", "0").stdout
    assert "pairs written to" in out
    summary = json.loads((tmp_path / "pairs" / "pairs.json").read_text())
    assert summary["written"]["train"] > 0
    assert (tmp_path / "pairs" / "negatives.tsv").read_text().count("excludes1") >= 2
    trained = medlink("train", "bi-encoder", "--kb", kb_file, "--pairs", tmp_path / "pairs", "--out", tmp_path / "model", "--batch-size", "4",
                      "--max-steps-per-epoch", "2").stdout
    assert "wrote" in trained and (tmp_path / "model" / "model.safetensors").is_file()
    config = tmp_path / "dense.json"
    config.write_text(json.dumps({"generators": [{"name": "dense", "type": "dense", "names": "kb", "params": {"model": str(tmp_path / "model")}}]}))
    medlink("index", "build", "--kb", kb_file, "--out", tmp_path / "index", "--config", config)
    hits = json.loads(medlink("link", "--index", tmp_path / "index", "--json", "--k", "3", "seizures").stdout)
    assert hits["candidates"] and all(c["scores"].keys() == {"dense"} for c in hits["candidates"])
    assert FIXTURES.exists()


def test_train_without_data_or_model_is_refused(kb_file, tmp_path):
    nothing = medlink("train", "bi-encoder", "--kb", kb_file, "--out", tmp_path / "m", check=False)
    assert nothing.returncode == 2 and "nothing to train on" in nothing.stderr
    (tmp_path / "empty-model").mkdir()
    (tmp_path / "pairs").mkdir()
    (tmp_path / "pairs" / "pairs.train.tsv").write_text("task\tleft\tright\tleft_id\tright_id\tleft_kind\tright_kind\nsyn\ta\tb\tX\tX\tsynonym\tsynonym\n")
    bad_model = medlink("train", "bi-encoder", "--kb", kb_file, "--pairs", tmp_path / "pairs", "--model", tmp_path / "empty-model",
                        "--out", tmp_path / "m", check=False)
    assert bad_model.returncode == 2 and "config.json is missing" in bad_model.stderr

import json

import pytest

from tests.test_cli_kb import medlink, medlink_without

pytest.importorskip("torch")

pytestmark = [pytest.mark.slow, pytest.mark.dense]  # CLI runs that train, each a few seconds to half a minute


@pytest.fixture(scope="module")
def kb_file(tmp_path_factory):
    from tests.conftest import FIXTURES

    work = tmp_path_factory.mktemp("cli-train")
    medlink("kb", "build", work / "kb.sqlite", f"obo:{FIXTURES / 'obo' / 'mini_hp.obo'}", f"icd10cm:{FIXTURES / 'icd10cm' / 'mini_tabular.xml'}", "-q")
    return work / "kb.sqlite"


def test_train_pairs_then_zero_shot_bi_encoder_then_dense_index(kb_file, tmp_path):
    from tests.conftest import FIXTURES

    out = medlink("train", "pairs", "--kb", kb_file, "--out", tmp_path / "pairs", "--tasks", "syn,graph,icd", "--dev-fraction", "0.3").stdout
    assert "pairs written to" in out
    summary = json.loads((tmp_path / "pairs" / "pairs.json").read_text())
    assert summary["written"]["train"] > 0
    assert (tmp_path / "pairs" / "negatives.tsv").read_text().count("excludes1") >= 2
    trained = medlink("train", "bi-encoder", "--kb", kb_file, "--pairs", tmp_path / "pairs", "--out", tmp_path / "model", "--batch-size", "4",
                      "--max-steps-per-epoch", "2").stdout
    assert "wrote" in trained and (tmp_path / "model" / "model.safetensors").is_file()
    report = json.loads((tmp_path / "model" / "training.json").read_text())  # no --dev: the held-out pairs are the dev set
    assert report["examples"]["kg_dev"] == summary["written"]["dev"] > 0 and 0 <= report["epochs"][0]["dev_acc@1"] <= 1
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


def test_train_cross_encoder_then_rerank_in_an_index(tmp_path):
    from tests.conftest import FIXTURES

    kb = tmp_path / "kb.sqlite"
    medlink("kb", "build", kb, f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q")
    mentions = f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}"
    trained = medlink("train", "cross-encoder", "--kb", kb, "--train", mentions, "--dev", mentions, "--out", tmp_path / "ce",
                      "--epochs", "1", "--candidates", "3", "--batch-size", "4").stdout
    assert "wrote" in trained and (tmp_path / "ce" / "model.safetensors").is_file()
    assert json.loads((tmp_path / "ce" / "training.json").read_text())["epochs"][0]["dev_acc@1"] is not None
    config = tmp_path / "rerank.json"
    config.write_text(json.dumps({"generators": [{"name": "tfidf", "type": "tfidf"}],
                                  "reranker": {"type": "cross-encoder", "model": str(tmp_path / "ce"), "top": 3, "weight": 0.1}}))
    medlink("index", "build", "--kb", kb, "--out", tmp_path / "index", "--config", config)
    hits = json.loads(medlink("link", "--index", tmp_path / "index", "--json", "--k", "3", "breast cancer").stdout)
    assert hits["candidates"] and all("cross-encoder" in c["scores"] for c in hits["candidates"])


def test_cross_encoder_training_refuses_mentions_outside_the_kb(kb_file, tmp_path):
    from tests.conftest import FIXTURES

    refused = medlink("train", "cross-encoder", "--kb", kb_file, "--train", f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}",
                      "--out", tmp_path / "ce", check=False)
    assert refused.returncode == 2 and "no training mention has a gold concept in the KB" in refused.stderr


@pytest.mark.parametrize("kind", ["bi-encoder", "cross-encoder"])
def test_training_without_the_dense_extra_says_what_to_install(kb_file, tmp_path, kind):
    result = medlink_without("torch", "train", kind, "--kb", kb_file, "--out", tmp_path / "m", "--train", f"biosyn:{tmp_path / 'mentions'}")
    assert result.returncode == 2 and "neural models need torch: install medlink's dense extra (in medlink's source folder: pip install '.[dense]'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("arguments, message", [
    (["bi-encoder", "--lr", "-1"], "the learning rate (--lr) must be > 0, not -1.0"),
    (["bi-encoder", "--tau", "0"], "tau (--tau) must be > 0, not 0.0"),  # trained a model of NaN weights and said 'wrote'
    (["bi-encoder", "--hard-negatives", "-2"], "hard_negatives (--hard-negatives) must be 0 or more, not -2"),
    (["bi-encoder", "--pairs", "{kb}"], "--pairs expects the folder 'medlink train pairs --out' wrote"),
    (["bi-encoder", "--out", "{kb}"], "is a file; give a folder for the model (nothing was written)"),
    (["pairs", "--out", "{kb}"], "is a file, not a pairs folder"),
    (["pairs", "--dev-fraction", "1"], "the dev fraction (--dev-fraction) must be in [0, 1)"),
])
def test_training_mistakes_get_one_clear_line(kb_file, tmp_path, arguments, message):
    from tests.conftest import FIXTURES

    given = [a.format(kb=kb_file) for a in arguments]
    defaults = {"--out": str(tmp_path / "out")}
    if given[0] == "bi-encoder":
        defaults["--train"] = f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}"
    extra = [item for option, value in defaults.items() if option not in given for item in (option, value)]
    before = kb_file.read_bytes()
    result = medlink("train", *given, "--kb", kb_file, *extra, check=False)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert kb_file.read_bytes() == before


def test_plain_link_output_names_the_knn_neighbours_that_voted(tmp_path):
    from tests.conftest import FIXTURES

    kb = tmp_path / "kb.sqlite"
    medlink("kb", "build", kb, f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q")
    config = tmp_path / "knn.json"
    config.write_text(json.dumps({"generators": [{"name": "dense", "type": "dense", "names": "kb"}],
                                  "reranker": {"type": "knn", "generator": "dense", "k": 2, "lambda_": 0.5, "beta1": 0.05, "beta2": 0.1}}))
    medlink("index", "build", "--kb", kb, "--out", tmp_path / "index", "--config", config,
            "--memory", f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}")
    first = medlink("link", "--index", tmp_path / "index", "--k", "1", "ataxia telangiectasia").stdout.splitlines()[0]
    assert first.startswith("ataxia telangiectasia\t1\tD001260\t") and "neighbours 'ataxia telangiectasia' 1.00" in first

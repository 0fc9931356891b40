import json
import os
from dataclasses import replace

import pytest

pytest.importorskip("torch")

from medlink.errors import MedlinkError  # noqa: E402
from medlink.training import trainer as trainer_module  # noqa: E402
from medlink.training.examples import ConceptNames, Example, supervised_mentions  # noqa: E402
from medlink.training.losses import contrastive_loss  # noqa: E402
from medlink.training.trainer import TrainConfig, train_bi_encoder  # noqa: E402

pytestmark = pytest.mark.dense


@pytest.fixture
def mentions(kb, fixtures):
    return supervised_mentions(kb, [f"biosyn:{fixtures / 'eval' / 'biosyn_processed'}"])


def test_contrastive_loss_masks_same_concept_and_uses_hard_negatives():
    import torch

    a = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [1.0, 0.05]]), dim=-1)
    p = a.clone()
    # both anchors share a concept: each other's positive is not a negative, so the loss is ~0
    assert contrastive_loss(a, p, ["C1", "C1"], tau=0.05) < 1e-3
    # different concepts with near-identical vectors: a large loss
    assert contrastive_loss(a, p, ["C1", "C2"], tau=0.05) > 0.5
    hard = torch.nn.functional.normalize(torch.tensor([[1.0, 0.01], [0.0, 1.0]]), dim=-1)
    with_negative = contrastive_loss(a, p, ["C1", "C1"], 0.05, hard, [["C9"], ["C1"]])
    assert with_negative > 0.3  # anchor 0 has a close hard negative; anchor 1's "negative" is its own concept: masked


def test_supervised_mentions_resolve_gold_ids_and_skip_composites(mentions):
    assert ("adenomatous polyposis coli", "D011125") in mentions
    assert all("|" not in text for text, _ in mentions)
    assert ("acth deficiency", "C535668") in mentions  # gold "201400|C535668": the first id the KB knows


@pytest.mark.slow
def test_training_saves_a_model_folder_and_report(kb, mentions, tmp_path):
    report = train_bi_encoder(kb, tmp_path / "model", mentions=mentions, dev=mentions,
                              config=TrainConfig(epochs=1, batch_size=4, hard_negatives=2, checkpoint_every=1), progress=False)
    assert report.epochs[0]["steps"] >= 2 and report.epochs[0]["loss"] > 0
    assert 0 <= report.epochs[0]["dev_acc@1"] <= 1
    assert (tmp_path / "model" / "model.safetensors").is_file() and not (tmp_path / "model" / "checkpoint").exists()
    assert [p.name for p in (tmp_path / "model").glob(".*")] == [".medlink-files.json"]  # staged aside and moved in: nothing left over but its record
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "model" / "model.safetensors").stat().st_mode & 0o777 == 0o666 & ~umask  # readable like any other file, not 0600
    saved = json.loads((tmp_path / "model" / "training.json").read_text())
    assert saved["kb"]["checksum"] == kb.checksum and saved["config"]["hard_negatives"] == 2


@pytest.mark.slow
def test_interrupted_training_resumes_from_the_last_checkpoint(kb, mentions, tmp_path, monkeypatch, interrupt_on_third_call):
    import torch
    from safetensors.torch import load_file

    config = TrainConfig(epochs=1, batch_size=2, checkpoint_every=1, hard_negatives=1, learning_rate=5e-3)  # steps big enough to change the negatives
    real = interrupt_on_third_call(trainer_module, "_batch_loss")
    with pytest.raises(KeyboardInterrupt):
        train_bi_encoder(kb, tmp_path / "model", mentions=mentions, config=config, progress=False)
    state = json.loads((tmp_path / "model" / "checkpoint" / "state.json").read_text())
    assert {key: state[key] for key in ("epoch", "step", "history")} == {"epoch": 0, "step": 2, "history": []}
    with pytest.raises(MedlinkError, match=r"cannot resume with other settings or data \(config.batch_size: checkpoint 2, now 4"):
        train_bi_encoder(kb, tmp_path / "model", mentions=mentions, config=replace(config, batch_size=4), resume=True, progress=False)
    ran = []
    monkeypatch.setattr(trainer_module, "_batch_loss", lambda *args: ran.append(1) or real(*args))
    report = train_bi_encoder(kb, tmp_path / "model", mentions=mentions, config=config, resume=True, progress=False)
    total = len(trainer_module._batches(mentions, 2))
    assert len(ran) == total - 2  # only the steps after the checkpoint ran
    assert report.epochs[0]["steps"] == total and report.epochs[0]["resumed_at_step"] == 2
    train_bi_encoder(kb, tmp_path / "whole", mentions=mentions, config=config, progress=False)
    resumed, whole = (load_file(tmp_path / folder / "model.safetensors") for folder in ("model", "whole"))
    assert all(torch.equal(resumed[name], whole[name]) for name in whole)  # the epoch's hard negatives and dropout resumed too


def test_a_diverging_loss_stops_training_before_the_weights_are_spoilt(kb, mentions, tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(trainer_module, "_batch_loss", lambda *args: torch.tensor(float("nan"), requires_grad=True))
    with pytest.raises(MedlinkError, match="training diverged: the loss is nan at epoch 1, step 1; train again with a lower --lr or a higher --tau"):
        train_bi_encoder(kb, tmp_path / "model", mentions=mentions, config=TrainConfig(epochs=1, batch_size=2), progress=False)
    assert not (tmp_path / "model" / "model.safetensors").exists()


@pytest.mark.parametrize("settings, message", [
    ({"tau": 0}, r"tau \(--tau\) must be > 0, not 0"),
    ({"learning_rate": -1}, r"learning rate \(--lr\) must be > 0, not -1"),
    ({"hard_negatives": -2}, r"hard_negatives \(--hard-negatives\) must be 0 or more, not -2"),
    ({"kg_weight": -1}, r"kg_weight \(--kg-weight\) must be 0 \(off\) or more"),
    ({"pooling": "max"}, r"pooling \(--pooling\) must be one of mean, cls, not 'max'"),
])
def test_settings_that_cannot_train_are_refused(settings, message):
    with pytest.raises(MedlinkError, match=message):
        TrainConfig(**settings)


def test_an_output_that_is_not_a_training_folder_is_left_alone(kb, mentions, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "notes.txt").write_text("mine")
    for out, message in ((tmp_path / "notes.txt", "is a file"), (tmp_path / "folder", "holds no earlier training output")):
        with pytest.raises(MedlinkError, match=message):
            train_bi_encoder(kb, out, mentions=mentions, config=TrainConfig(epochs=1, batch_size=2), progress=False)
    assert (tmp_path / "notes.txt").read_text() == "mine" and sorted(p.name for p in (tmp_path / "folder").iterdir()) == ["notes.txt"]


@pytest.mark.slow
def test_a_run_killed_while_staging_can_be_run_again(kb, mentions, tmp_path):
    (tmp_path / "model" / ".checkpoint.tmp").mkdir(parents=True)  # killed while writing its first checkpoint
    report = train_bi_encoder(kb, tmp_path / "model", mentions=mentions, config=TrainConfig(epochs=1, batch_size=4), progress=False)
    assert report.epochs and (tmp_path / "model" / "training.json").is_file()


def test_nothing_to_train_on_is_an_error_not_an_untrained_copy(kb, tmp_path):
    with pytest.raises(MedlinkError, match="nothing to train on"):
        train_bi_encoder(kb, tmp_path / "model", mentions=[], kg_examples=[], progress=False)
    assert not (tmp_path / "model").exists()


@pytest.mark.slow
def test_kg_pairs_alone_train_zero_shot(kb, tmp_path):
    names = ConceptNames.from_kb(kb)
    pairs = [Example(a, b, cid, cid) for cid, ns in names.names.items() for a, b in zip(ns, ns[1:])]
    report = train_bi_encoder(kb, tmp_path / "zs", kg_examples=pairs, config=TrainConfig(epochs=1, batch_size=2), progress=False)
    assert report.examples == {"mentions": 0, "kg_pairs": len(pairs), "dev": 0} and report.epochs[0]["steps"] >= 1


@pytest.mark.slow
def test_kg_pairs_with_mentions_add_an_auxiliary_batch_at_every_step(kb, mentions, tmp_path, monkeypatch):
    names = ConceptNames.from_kb(kb)
    pairs = [Example(a, b, cid, cid) for cid, ns in names.names.items() for a, b in zip(ns, ns[1:])]
    calls = []
    real = trainer_module._batch_loss

    def spy(encoder, batch, negatives, config):
        calls.append(({e.anchor for e in batch}, negatives is None))
        return real(encoder, batch, negatives, config)

    monkeypatch.setattr(trainer_module, "_batch_loss", spy)
    report = train_bi_encoder(kb, tmp_path / "aux", mentions=mentions, kg_examples=pairs,
                              config=TrainConfig(epochs=1, batch_size=2, hard_negatives=1), progress=False)
    steps = report.epochs[0]["steps"]
    assert report.examples == {"mentions": len(mentions), "kg_pairs": len(pairs), "dev": 0}
    assert len(calls) == 2 * steps  # one supervised batch, then one KG batch, per step
    mention_texts, kg_texts = {text for text, _ in mentions}, {e.anchor for e in pairs}
    assert all(anchors <= mention_texts and not plain for anchors, plain in calls[0::2])  # with hard negatives
    assert all(anchors <= kg_texts and plain for anchors, plain in calls[1::2])  # in-batch negatives only


@pytest.mark.slow
def test_held_out_pairs_judge_zero_shot_training(kb, tmp_path):
    from medlink.encoders.transformer import Encoder
    from medlink.training.trainer import pair_dev_accuracy

    encoder = Encoder()
    synonyms = [Example("heart attack", "myocardial infarction", "D1", "D1"), Example("sugar diabetes", "diabetes mellitus", "D2", "D2"),
                Example("kidney stone", "nephrolithiasis", "D3", "D3")]
    assert pair_dev_accuracy(encoder, synonyms) == 1.0
    misled = [Example("heart attack", "cerebral stroke", "D1", "D1"), Example("myocardial infarct", "myocardial infarction", "D9", "D9"),
              *synonyms[1:]]
    assert pair_dev_accuracy(encoder, misled) == pytest.approx(3 / 4)  # "heart attack" finds D9's name, not its partner's
    self_only = [Example("asthma", "asthma", "D4", "D4"), Example("gout", "asthma", "D5", "D4")]
    assert pair_dev_accuracy(encoder, self_only) == 0.5  # "asthma" may not retrieve its own string
    twice = [Example("asthma", "asthma", "D4", "D4"), Example("asthma", "asthma", "D4", "D6"), Example("gout", "asthma", "D5", "D4")]
    assert pair_dev_accuracy(encoder, twice) == pytest.approx(1 / 3)  # every copy of its own string is hidden from "asthma"
    # tasks come one after another in pairs.dev.tsv: a sample of 7 from 12 must reach the last task, not stop after the first 7
    long_file = synonyms * 3 + [Example("gout", "nephrolithiasis", "D7", "D7")] * 3  # never right: D3's identical name comes first
    assert pair_dev_accuracy(encoder, synonyms * 3, limit=7) == 1.0 and pair_dev_accuracy(encoder, long_file, limit=7) < 1.0
    assert pair_dev_accuracy(encoder, []) is None
    names = ConceptNames.from_kb(kb)
    pairs = [Example(a, b, cid, cid) for cid, ns in names.names.items() for a, b in zip(ns, ns[1:])]
    report = train_bi_encoder(kb, tmp_path / "zs", kg_examples=pairs[1:], kg_dev=pairs[:1] + synonyms,
                              config=TrainConfig(epochs=1, batch_size=2), progress=False)
    assert report.examples["kg_dev"] == 4 and 0 <= report.epochs[0]["dev_acc@1"] <= 1


def test_mention_positives_draw_from_names_and_other_mentions():
    import random

    from medlink.training.examples import mentions_by_concept, sample_examples

    names = ConceptNames({"D1": ["myocardial infarction"], "D2": ["diabetes mellitus"]})
    mentions = [("heart attack", "D1"), ("mi", "D1"), ("heart attack", "D1"), ("t2dm", "D2")]
    others = mentions_by_concept(mentions)
    assert others == {"D1": ["heart attack", "mi"], "D2": ["t2dm"]}
    drawn = {(e.anchor, e.positive) for seed in range(30) for e in sample_examples(mentions, names, random.Random(seed), others)}
    assert ("heart attack", "mi") in drawn and ("mi", "heart attack") in drawn and ("heart attack", "myocardial infarction") in drawn
    assert ("t2dm", "t2dm") not in drawn  # never the anchor itself
    plain = {e.positive for seed in range(30) for e in sample_examples(mentions, names, random.Random(seed))}
    assert plain == {"myocardial infarction", "diabetes mellitus"}


@pytest.mark.slow
def test_distinct_mentions_train_on_each_mention_once(kb, mentions, tmp_path):
    repeated = mentions + mentions[:3]  # AskAPatient-style repeats of the same (mention, concept)
    config = TrainConfig(epochs=1, batch_size=2, distinct_mentions=True)
    report = train_bi_encoder(kb, tmp_path / "model", mentions=repeated, config=config, progress=False)
    assert report.examples["mentions"] == len(set(mentions)) < len(repeated)
    assert json.loads((tmp_path / "model" / "training.json").read_text())["config"]["distinct_mentions"] is True


def test_hard_negatives_pad_when_the_gold_concept_owns_the_nearest_names():
    """Padding draws fresh random names until p negatives are found, never the gold concept (it once looped forever)."""
    from medlink.encoders.transformer import Encoder
    from medlink.errors import MedlinkError
    from medlink.training.negatives import NameIndex, hard_negatives

    gold_names = [f"heart attack variant {i}" for i in range(40)]  # more than the 4p + 16 neighbours searched
    names = ConceptNames({"GOLD": gold_names, "A": ["asthma"], "B": ["gout"]})
    encoder = Encoder()
    index = NameIndex(encoder, names, progress=False)
    examples = [Example("heart attack", gold_names[0], "GOLD", "GOLD")] * 3
    for negatives in hard_negatives(encoder, index, examples, p=4):
        assert len(negatives) == 4 and all(concept != "GOLD" for _, concept in negatives)
        assert {concept for _, concept in negatives} <= {"A", "B"}  # only two other concepts: they repeat
    with pytest.raises(MedlinkError, match="at least two concepts"):
        hard_negatives(encoder, NameIndex(encoder, ConceptNames({"GOLD": gold_names}), progress=False), examples[:1], p=2)

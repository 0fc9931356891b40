"""Per-epoch dev accuracy judged among a pool of candidates chosen once (gold + lexical neighbours), not the whole KB."""

import json

import pytest

from medlink.training.examples import ConceptNames, supervised_mentions
from medlink.training.negatives import dev_pool
from tests.conftest import FIXTURES


def test_the_pool_holds_every_gold_concept_and_the_closest_others(kb):
    names = ConceptNames.from_kb(kb)
    dev = [("colorectal cancers", "D015179"), ("renal disease", "D007674")]
    pool = dev_pool(names, dev, 2)
    assert {"D015179", "D007674"} <= set(pool.names) and len(pool.names) <= 2 * 2 + 2
    assert all(pool.names[c] == names.names[c] for c in pool.names)  # whole concepts: all their names
    large = dev_pool(names, dev, 100)
    assert "D006222" not in large.names and set(large.names) < set(names.names)  # hamartoma shares no character n-gram with either


@pytest.mark.slow
@pytest.mark.dense
def test_training_records_the_pool_it_judged_dev_in(kb, tmp_path):
    pytest.importorskip("torch")
    from medlink.training.trainer import TrainConfig, train_bi_encoder

    mentions = supervised_mentions(kb, [f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}"])
    config = TrainConfig(epochs=1, batch_size=4, dev_pool=2, precision="fp32", max_steps_per_epoch=2)
    report = train_bi_encoder(kb, tmp_path / "model", mentions=mentions, dev=mentions[:4], config=config, progress=False)
    saved = json.loads((tmp_path / "model" / "training.json").read_text())
    assert saved["config"]["dev_pool"] == 2 and 4 >= saved["examples"]["dev"] and saved["examples"]["dev_concepts"] < len(kb)
    assert 0 <= report.epochs[0]["dev_acc@1"] <= 1

"""Dev tuning: retrieve once, search fusion weights and reranker settings over the cache, write or apply the choice."""

import itertools
import json

import pytest

from medlink.eval import load_dataset
from medlink.eval.metrics import equivalent_ids_from_kb
from medlink.linking.config import LinkerConfig
from medlink.linking.index import build_index
from medlink.linking.linker import Linker
from medlink.linking.manifest import read_manifest
from medlink.retrieval.fusion import Fusion
from medlink.tuning import Tuner, tune
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink

DEV = f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}"


def lexical(kb, weights):
    config = {"generators": [{"name": "exact", "type": "exact"}, {"name": "tfidf", "type": "tfidf"}, {"name": "bm25", "type": "bm25"}],
              "fusion": {"method": "weighted", "weights": weights}}
    return Linker.build(kb, LinkerConfig.from_dict(config))


def test_the_cache_gives_what_linking_gives_under_any_fusion(kb):
    linker = lexical(kb, {"exact": 1.0, "tfidf": 1.0, "bm25": 0.25})
    mentions = load_dataset(DEV)
    tuner = Tuner(linker, mentions, equivalent_ids_from_kb(kb))
    for fusion in (Fusion("weighted", {"exact": 0.0, "tfidf": 1.0, "bm25": 2.0}), Fusion("rrf", {"exact": 1.0, "tfidf": 1.0, "bm25": 1.0})):
        linker.config.fusion = fusion
        direct = {r.mention.text: [c.concept_id for c in r.candidates] for r in linker.link(tuner.keys, k=64)}
        cached = {r.mention.text: [c.concept_id for c in r.candidates] for r in tuner.fused(fusion)}
        assert cached == direct


def test_fusion_search_never_chooses_worse_than_the_config_on_dev(kb):
    linker = lexical(kb, {"exact": 0.0, "tfidf": 0.0, "bm25": 1.0})  # a poor start: BM25 alone
    mentions = load_dataset(DEV)
    config, report = tune(linker, mentions, ["fusion"], equivalent_ids_from_kb(kb), "fixture dev")
    assert report.after["acc@1"] >= report.before["acc@1"] and report.after["acc@1"] > 0
    assert config.fusion.weights != {"exact": 0.0, "tfidf": 0.0, "bm25": 1.0} or report.after == report.before
    assert config.tuned["dev"] == "fixture dev" and config.tuned["before"] == report.before
    assert LinkerConfig.from_dict(config.to_dict()).tuned == config.tuned  # the record survives a round trip


def test_unknown_searches_are_refused(kb):
    with pytest.raises(Exception, match="unknown search 'knn'; this index can tune: fusion, rerankers"):
        tune(lexical(kb, {}), load_dataset(DEV), ["knn"])


@pytest.mark.slow
def test_tune_command_writes_and_applies_the_choice(kb, tmp_path):
    build_index(kb, tmp_path / "index", LinkerConfig.from_dict({
        "generators": [{"name": "exact", "type": "exact"}, {"name": "tfidf", "type": "tfidf"}, {"name": "bm25", "type": "bm25"}],
        "fusion": {"weights": {"exact": 0.0, "tfidf": 0.0, "bm25": 1.0}}}))
    result = medlink("tune", "--index", tmp_path / "index", "--dev", DEV, "--search", "fusion", "--out", tmp_path / "tuned.json", "--apply")
    assert "dev Acc@1" in result.stdout
    written = json.loads((tmp_path / "tuned.json").read_text())
    assert written["tuned"]["after"]["acc@1"] >= written["tuned"]["before"]["acc@1"]
    assert read_manifest(tmp_path / "index")["config"] == written  # applied: the index links with it, no rebuild
    Linker.load(tmp_path / "index")
    refused = medlink("tune", "--index", tmp_path / "index", "--dev", DEV, check=False)
    assert refused.returncode == 2 and "--out CONFIG and/or --apply" in refused.stderr


@pytest.mark.dense
def test_knn_settings_are_searched_over_one_retrieval(kb):
    pytest.importorskip("torch")
    from medlink.linking.memory import memory_from_datasets

    config = LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "params": {"precision": "fp32"}}],
                                     "rerankers": [{"type": "knn", "lambda_": 0.9, "beta1": 0.01, "beta2": 1.0, "k": 4}]})
    linker = Linker.build(kb, config, memory_from_datasets(kb, [DEV]))
    searches = []
    real = linker.search
    linker.search = lambda *args: searches.append(args) or real(*args)
    chosen, report = tune(linker, load_dataset(DEV), ["knn"], equivalent_ids_from_kb(kb))
    assert len(searches) == 1  # every kNN setting reused the one retrieval
    grid = linker.rerankers[0].TUNING_GRID
    assert report.to_dict()["trials"] == 1 + len(list(itertools.product(*grid.values())))
    assert report.after["acc@1"] >= report.before["acc@1"]
    assert set(chosen.rerankers[0]) == {"type", "generator", "k", "lambda_", "beta1", "beta2"}

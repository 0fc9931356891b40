"""The linker's seams: mentions in, one LinkResult per mention out; every id of a concept; rerankers as a registered,
ordered list; one checked schema for every setting."""

import json
import re

import pytest

from medlink.core import Candidate, LinkResult, Mention
from medlink.errors import MedlinkError
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.config import LinkerConfig
from medlink.linking.linker import Linker
from medlink.linking.output import in_namespace, prefer_namespace, result_json, result_lines
from medlink.params import Param
from medlink.rerank import base as rerank_base
from tests.test_cli_kb import medlink

MEDIC_LIKE = """\
D008228||Lymphoma, Non-Hodgkin|NHL
605027|D015451||Leukemia, Lymphocytic, Chronic, B-Cell|B-cell chronic lymphocytic leukemia|CLL
C567755|613097||Tooth Agenesis, Selective, 6|STHAG6
D003924||Diabetes Mellitus, Type 2|T2DM|NIDDM
"""


@pytest.fixture(scope="module")
def medic_kb(tmp_path_factory):
    work = tmp_path_factory.mktemp("medic-like")
    (work / "medic.txt").write_text(MEDIC_LIKE)
    build_kb(work / "kb.sqlite", [f"biosyn:{work / 'medic.txt'}"], progress=False)
    return KB.open(work / "kb.sqlite")


@pytest.fixture(scope="module")
def linker(medic_kb):
    return Linker.build(medic_kb)


def test_one_result_per_mention_keeps_the_mention_its_place_and_why_it_failed(linker):
    cll = Mention("CLL", doc_id="pmid1", start=10, end=13, left="patients with", right="were treated")
    results = linker.link([cll, "t2dm", "", "???", "CLL"], k=2)
    assert [r.mention for r in results] == [cll, Mention("t2dm"), Mention(""), Mention("???"), Mention("CLL")]
    assert [r.best.concept_id if r.best else None for r in results] == ["605027", "D003924", None, None, "605027"]
    assert [r.error for r in results] == [None, None, "empty mention", "nothing to link after normalisation (only punctuation or symbols)", None]
    assert results[0].candidates is not results[4].candidates and results[0].candidates[0] is not results[4].candidates[0]
    assert results[0].nil is None and results[0].probability is None  # room for the NIL and calibration stages


def test_a_batch_of_only_unlinkable_mentions_is_answered_not_a_traceback(linker):
    results = linker.link(["???"], k=3)
    assert results == [LinkResult(Mention("???"), [], "nothing to link after normalisation (only punctuation or symbols)")]


def test_every_id_of_a_concept_is_in_the_output(linker):
    best = linker.link(["chronic lymphocytic leukemia"], k=1)[0].best
    assert (best.concept_id, best.alt_ids, best.ids) == ("605027", ["D015451"], ["605027", "D015451"])
    as_json = result_json(linker.link(["CLL"], k=1)[0])
    assert as_json["candidates"][0]["id"] == "605027" and as_json["candidates"][0]["alt_ids"] == ["D015451"]
    assert "also D015451" in result_lines(linker.link(["CLL"], k=1)[0])[0]


def test_a_preferred_namespace_becomes_the_primary_id():
    omim_first = Candidate("605027", 1.0, alt_ids=["D015451"])
    assert prefer_namespace(omim_first, ["MESH"]).ids == ["D015451", "605027"]
    assert prefer_namespace(omim_first, ["OMIM"]) is omim_first
    assert prefer_namespace(Candidate("HP:0001658", 1.0, alt_ids=["UMLS:C0027051"]), ["umls"]).concept_id == "UMLS:C0027051"
    assert prefer_namespace(Candidate("D003924", 1.0), ["OMIM"]).concept_id == "D003924"  # nothing in OMIM: unchanged
    assert in_namespace("MESH:D015451", "MESH") and in_namespace("D015451", "mesh") and not in_namespace("605027", "MESH")


@pytest.mark.slow
def test_link_json_and_prefer_prefix_through_the_cli(medic_kb, tmp_path):
    medlink("index", "build", "--kb", medic_kb.path, "--out", tmp_path / "index")
    plain = json.loads(medlink("link", "--index", tmp_path / "index", "--json", "--k", "1", "CLL").stdout)
    assert plain["candidates"][0]["id"] == "605027" and plain["candidates"][0]["alt_ids"] == ["D015451"]
    mesh = json.loads(medlink("link", "--index", tmp_path / "index", "--json", "--k", "1", "--prefer-prefix", "MESH", "CLL").stdout)
    assert mesh["candidates"][0]["id"] == "D015451" and mesh["candidates"][0]["alt_ids"] == ["605027"]


class Reverse:
    """A reranker from outside medlink: reverses each ranking (and says so), to show the protocol and the registry."""

    type = "reverse"
    PARAMS = {"label": Param(str, default="reversed")}
    requires_generator = None

    def __init__(self, settings):
        self.settings = rerank_base.own_settings(self.type, self.PARAMS, settings)

    @classmethod
    def build(cls, settings, parts):
        return cls(settings)

    @classmethod
    def load(cls, directory, settings, parts):
        assert (directory / "marker.txt").read_text() == "saved"
        return cls(settings)

    def save(self, directory):
        directory.mkdir(parents=True)
        (directory / "marker.txt").write_text("saved")

    def with_settings(self, **changes):
        return Reverse({**self.settings, **changes})

    def rerank(self, mentions, results):
        return rerank_base.replaced_candidates(results, [[c.copy(evidence=[*c.evidence, {"by": self.settings["label"]}])
                                                          for c in reversed(r.candidates)] for r in results])


@pytest.fixture
def reverse_registered(monkeypatch):
    monkeypatch.setitem(rerank_base.RERANKERS, "reverse", "tests.test_pipeline_shape:Reverse")


def test_a_registered_reranker_plugs_in_runs_in_order_and_survives_save_and_load(medic_kb, tmp_path, reverse_registered):
    lexical = Linker.build(medic_kb).link(["lymphoma"], k=3)[0].candidates
    config = LinkerConfig.from_dict({"generators": [{"name": "exact", "type": "exact"}, {"name": "tfidf", "type": "tfidf"}],
                                     "rerankers": [{"type": "reverse", "label": "first"}, {"type": "reverse", "label": "second"}]})
    reranked = Linker.build(medic_kb, config)
    twice = reranked.link(["lymphoma"], k=3)[0].candidates
    assert [c.concept_id for c in twice][:1] == [lexical[0].concept_id]  # reversed twice over the whole list, then cut to k
    assert [e["by"] for e in twice[0].evidence if "by" in e] == ["first", "second"]
    once = reranked.link(["lymphoma"], k=3, rerank=False)[0].candidates
    assert all("by" not in e for c in once for e in c.evidence)
    reranked.save(tmp_path / "index")
    assert sorted(p.name for p in (tmp_path / "index" / "rerankers").iterdir()) == ["0-reverse", "1-reverse"]
    loaded = Linker.load(tmp_path / "index")
    assert [r.settings["label"] for r in loaded.rerankers] == ["first", "second"]
    assert [c.concept_id for c in loaded.link(["lymphoma"], k=3)[0].candidates] == [c.concept_id for c in twice]


@pytest.mark.parametrize("config, message", [
    ({"generators": [{"name": "bm25", "type": "bm25", "params": {"k_1": 1.5}}]},
     "generators[0] (bm25) params: unknown key 'k_1'; known: k1, b, method, stem"),  # was silently ignored
    ({"generators": [{"name": "tfidf", "type": "tfidf", "params": {"ngram_range": [2]}}]},
     "generators[0] (tfidf) params: 'ngram_range' must be a list of 2 integers >= 1, not [2]"),
    ({"generators": [{"name": "exact", "type": "exact", "params": {"k": 3}}]}, "generators[0] (exact) params: unknown key 'k'; known: words"),
    ({"generators": [{"name": "tfidf", "type": "tfidf"}], "fusion": {"weights": {"tfdf": 1.0}}},
     "fusion: weights name no generator of this config: 'tfdf'; generators: tfidf"),
    ({"generators": [{"name": "tfidf", "type": "tfidf"}], "fusion": {"weights": {"tfidf": -1}}},
     "fusion: 'weights' must be an object whose values are numbers >= 0, not {'tfidf': -1}"),
    ({"generators": [{"name": "tfidf", "type": "tfidf"}], "fusion": {"method": "sum"}}, "fusion: 'method' must be one of weighted, rrf, not 'sum'"),
    ({"generators": [{"name": "tfidf", "type": "tfidf"}], "k_per_generator": 0}, "'k_per_generator' must be an integer >= 1, not 0"),
    ({"generators": [{"name": "tfidf", "type": "tfidf"}], "rerankers": [{"type": "knn"}]},
     "rerankers[0]: 'generator' must name a dense generator of this config (got 'dense')"),
    ({"generators": [{"name": "tfidf", "type": "tfidf"}], "rerankers": [{"type": "colbert"}]},
     f"rerankers[0]: 'type' must be one of {', '.join(rerank_base.RERANKERS)}, not 'colbert'"),
    ({"generators": [{"name": "tfidf", "type": "tfidf"}], "generator": []}, "unknown key 'generator'"),
])
def test_every_setting_is_checked_when_a_config_is_read(config, message):
    with pytest.raises(MedlinkError, match=re.escape(f"my.json: {message}")):
        LinkerConfig.from_dict(config, "my.json")


def test_a_config_file_mistake_names_the_file_and_field(tmp_path):
    path = tmp_path / "typo.json"
    path.write_text(json.dumps({"generators": [{"name": "tfidf", "type": "tfidf", "params": {"min_df": "2"}}]}))
    with pytest.raises(MedlinkError, match=re.escape(f"{path}: generators[0] (tfidf) params: 'min_df' must be an integer >= 1, not '2'")):
        LinkerConfig.from_file(path)


def test_the_top_candidates_do_not_depend_on_how_many_are_asked_for(medic_kb):
    """Each generator looks k_per_generator deep whatever k is: a deeper list would add RRF votes and reorder the top."""
    config = LinkerConfig.from_dict({"generators": [{"name": "tfidf", "type": "tfidf"}, {"name": "bm25", "type": "bm25"}],
                                     "fusion": {"method": "rrf"}, "k_per_generator": 2})
    linker = Linker.build(medic_kb, config)
    mentions = ["lymphocytic leukemia", "diabetes", "tooth"]
    short, long = linker.link(mentions, k=1), linker.link(mentions, k=10)
    assert [r.candidates[0].concept_id for r in short] == [r.candidates[0].concept_id for r in long]
    assert [[c.concept_id for c in r.candidates] for r in linker.link(mentions, k=3)] == [[c.concept_id for c in r.candidates[:3]] for r in long]


def test_a_jsonl_mention_keeps_its_place_through_linking(tmp_path, medic_kb):
    from medlink.corpora.mention_files import read_mentions
    from medlink.errors import InputFormatError

    path = tmp_path / "m.jsonl"
    path.write_text('{"mention": "CLL", "doc_id": "d1", "start": 4, "end": 7, "left": "chronic", "right": "relapse"}\n{"text": "t2dm"}\n')
    mentions = list(read_mentions(path, "jsonl"))
    assert mentions == [Mention("CLL", "d1", 4, 7, "chronic", "relapse"), "t2dm"]
    rendered = [result_json(r) for r in Linker.build(medic_kb).link(mentions, k=1)]
    assert {k: rendered[0][k] for k in ("mention", "doc_id", "start", "end")} == {"mention": "CLL", "doc_id": "d1", "start": 4, "end": 7}
    path.write_text('{"mention": "CLL", "start": "4"}\n')
    with pytest.raises(InputFormatError, match=r'm.jsonl:1: "start" must be an integer'):
        list(read_mentions(path, "jsonl"))

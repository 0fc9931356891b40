import json
import logging
import subprocess
import sys

import pytest

from medlink.errors import MedlinkError
from medlink.kb.build import build_kb
from medlink.linking.config import LinkerConfig
from medlink.linking.index import build_index
from medlink.linking.linker import MAX_MENTION_CHARS, Linker
from medlink.linking.manifest import INDEX_FORMAT_VERSION


@pytest.fixture
def index_dir(tmp_path, kb, fixtures):
    build_index(kb, tmp_path / "index", memory=[f"biosyn:{fixtures / 'eval' / 'biosyn_processed'}"])
    return tmp_path / "index"


def top(results):
    return [r.candidates[0].concept_id if r.candidates else None for r in results]


def test_linking_ranks_and_names_candidates(index_dir):
    linker = Linker.load(index_dir)
    results = linker.link(["Colorectal Cancers", "ataxia-telangiectasia", "renal disease", "", "   "], k=3)
    assert top(results) == ["D015179", "D001260", "D007674", None, None]
    best = results[1].candidates[0]
    assert best.name == "ataxia telangiectasia" and best.matched_name == "ataxia telangiectasia"
    assert set(best.scores_by_stage) == {"exact", "words", "tfidf", "bm25"}  # a name: not completed
    assert all(len(r.candidates) <= 3 for r in results)
    assert [r.mention.text for r in results] == ["Colorectal Cancers", "ataxia-telangiectasia", "renal disease", "", "   "]
    assert [r.error for r in results[3:]] == ["empty mention"] * 2 and results[0].error is None


def test_save_load_round_trip_gives_identical_results(kb, tmp_path):
    built = Linker.build(kb)
    built.save(tmp_path / "idx")
    loaded = Linker.load(tmp_path / "idx")
    mentions = ["breast tumour", "ovarian neoplasm", "hamartomas", "polyposis coli"]
    for a, b in zip(built.link(mentions, k=5), loaded.link(mentions, k=5)):
        assert [(c.concept_id, round(c.score, 5)) for c in a.candidates] == [(c.concept_id, round(c.score, 5)) for c in b.candidates]


def test_manifest_records_kb_config_memory_and_versions(index_dir, kb):
    manifest = json.loads((index_dir / "manifest.json").read_text())
    assert manifest["format_version"] == INDEX_FORMAT_VERSION
    assert manifest["kb"]["checksum"] == kb.checksum and manifest["kb"]["concepts"] == len(kb)
    assert [g["name"] for g in manifest["config"]["generators"]] == ["exact", "words", "thesaurus", "completion", "tfidf", "bm25"]
    assert manifest["memory"]["entries"] > 0 and manifest["memory"]["composite_parts"] >= 2  # a composite's parts, each with its id
    assert {"medlink", "scikit-learn", "bm25s"} <= set(manifest["packages"])
    assert (index_dir / "memory.tsv").read_text().count("\n") == manifest["memory"]["entries"]


def test_memory_mentions_are_searched_and_marked(index_dir):
    linker = Linker.load(index_dir)
    memory_lines = (index_dir / "memory.tsv").read_text().splitlines()
    text, concept, document = memory_lines[0].split("\t")  # each mention's document kept (calibration folds by document)
    assert document.startswith("1:")
    hit = linker.link([text], k=1)[0].candidates[0]
    assert hit.concept_id == concept and hit.evidence[0]["origin"] == "memory"


def test_index_of_a_changed_kb_is_refused(tmp_path, fixtures):
    kb_path = tmp_path / "kb.sqlite"
    build_kb(kb_path, [f"biosyn:{fixtures / 'eval' / 'dictionary.txt'}"], progress=False)
    build_index(kb_path, tmp_path / "idx")
    build_kb(kb_path, [f"biosyn:{fixtures / 'biosyn' / 'medic_small.txt'}"], progress=False)
    with pytest.raises(MedlinkError, match="rebuild the index: medlink index build"):
        Linker.load(tmp_path / "idx")


def test_index_of_another_format_version_is_refused(index_dir):
    manifest = json.loads((index_dir / "manifest.json").read_text())
    manifest["format_version"] = "0"
    (index_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(MedlinkError, match="index format version '0'.*medlink index build"):
        Linker.load(index_dir)


def test_not_an_index(tmp_path):
    with pytest.raises(MedlinkError, match="not a medlink index"):
        Linker.load(tmp_path)


def test_load_reads_a_default_index_name_as_the_cli_does(index_dir, monkeypatch):
    from medlink.linking import index as index_module

    import medlink

    monkeypatch.setattr(index_module, "default_index_dir", lambda name: index_dir)  # the default index, without building it here
    assert top(medlink.load_index("default").link(["colorectal cancer"])) == top(Linker.load(index_dir).link(["colorectal cancer"]))
    assert top(medlink.load_index(index_dir).link(["colorectal cancer"])) == top(Linker.load(index_dir).link(["colorectal cancer"]))
    with pytest.raises(MedlinkError, match="did you mean 'default'"):
        medlink.load_index("defualt")


def test_long_mentions_are_truncated_with_a_warning(index_dir, caplog):
    linker = Linker.load(index_dir)
    with caplog.at_level(logging.WARNING):
        result = linker.link(["breast cancer " * 10_000], k=1)
    assert "truncated" in caplog.text and str(MAX_MENTION_CHARS) in caplog.text
    assert top(result) == ["D001943"]


def test_generator_selection_and_config_errors(index_dir, tmp_path):
    linker = Linker.load(index_dir)
    only_exact = linker.link(["tumour", "tumours"], k=2, generators=["exact"])
    assert top(only_exact) == ["D009369", None]
    with pytest.raises(MedlinkError, match="unknown generator 'dnese'; this index has "):
        linker.link(["x"], generators=["exact", "dnese"])  # a typo must not quietly run another configuration
    with pytest.raises(MedlinkError, match="no generator selected"):
        linker.link(["x"], generators=[])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"generators": [{"name": "x", "type": "nope"}]}))
    with pytest.raises(MedlinkError, match=r"bad.json: generators\[0\]: 'type' must be one of exact, completion, thesaurus, tfidf, bm25, dense, not 'nope'"):
        LinkerConfig.from_file(bad)
    bad.write_text("{not json")
    with pytest.raises(MedlinkError, match="bad.json:1: not valid JSON"):
        LinkerConfig.from_file(bad)


def test_single_generator_config_keeps_raw_scores(kb, tmp_path):
    config = LinkerConfig.from_dict({"generators": [{"name": "tfidf", "type": "tfidf", "names": "kb"}]})
    linker = Linker.build(kb, config)
    best = linker.link(["colorectal cancer"], k=1)[0].candidates[0]
    assert best.concept_id == "D015179" and best.score == pytest.approx(1.0, abs=1e-5)


def test_an_index_never_replaces_a_file_or_a_foreign_folder(kb, index_dir, tmp_path):
    kb_copy = tmp_path / "kb-copy.sqlite"
    kb_copy.write_bytes(kb.path.read_bytes())
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("mine")
    with pytest.raises(MedlinkError, match="is a file, not a medlink index"):
        build_index(kb, kb_copy)
    with pytest.raises(MedlinkError, match="is a folder that is not a medlink index"):
        build_index(kb, notes)
    assert kb_copy.read_bytes() == kb.path.read_bytes() and (notes / "todo.txt").read_text() == "mine"
    assert not list(tmp_path.glob(".*.old")) and not list(tmp_path.glob(".*.tmp"))
    build_index(kb, index_dir)  # an earlier index is replaced, as before
    assert Linker.load(index_dir).link(["tumour"], k=1)[0].candidates


def test_the_readme_example_config_is_a_valid_config():
    from pathlib import Path

    config = LinkerConfig.from_file(Path(__file__).resolve().parents[1] / "examples" / "hybrid.json")
    assert [g.type for g in config.generators] == ["exact", "tfidf", "bm25", "dense"] and [r["type"] for r in config.rerankers] == ["knn"]


def test_a_candidate_that_bm25_found_through_a_spelling_correction_says_so(kb, tmp_path):
    from medlink.linking.output import explanation_lines

    build_index(kb, tmp_path / "index")  # the default config: BM25 with spelling
    linker = Linker.load(tmp_path / "index")
    misspelt, spelt = linker.link(["hamartomma", "hamartoma"], k=3)
    assert top([misspelt]) == top([spelt]) == ["D006222"]
    assert {"spelling": "bm25 read 'hamartomma' as 'hamartoma'"} in misspelt.candidates[0].evidence
    assert "     bm25 read 'hamartomma' as 'hamartoma'" in explanation_lines(misspelt)
    assert not any("spelling" in e for c in spelt.candidates for e in c.evidence)
    bm25 = linker.generators["bm25"]
    saved = bm25.speller.frequencies  # read from the index's spelling_words.json, not gathered again
    assert bm25.name_words.saved is not None and saved == bm25.name_words.gathered() and saved["hamartoma"] >= 1


def test_a_config_whose_generators_all_search_a_memory_not_given_is_refused(kb):
    config = LinkerConfig.from_dict({"generators": [{"name": "completion", "type": "completion", "names": "memory"}]})
    with pytest.raises(MedlinkError, match=r"searches the memory only \('names': 'memory': completion\) and no memory was given"):
        Linker.build(kb, config)


def test_the_reference_shows_the_default_preset_as_it_is():
    from pathlib import Path

    from medlink.linking.config import default_config

    text = (Path(__file__).parents[1] / "docs" / "reference.md").read_text(encoding="utf-8")
    shown = text.split("The `default` preset as a file", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    assert LinkerConfig.from_dict(json.loads(shown)).to_dict() == default_config().to_dict()


def test_a_short_call_imports_no_scipy(index_dir):
    """A few mentions are linked without importing scipy.sparse (its import was a sixth of a warm `medlink link`): the
    index's matrices load as arrays, and a short search sums them with numpy; a misspelt mention reaches TF-IDF too."""
    code = (
        "import sys; from medlink.linking.linker import Linker; "
        f"results = Linker.load({str(index_dir)!r}).link(['Colorectal Cancers', 'renal diseaze'], k=3); "
        "print(*[r.candidates[0].concept_id for r in results], 'scipy.sparse' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["D015179", "D007674", "False"]

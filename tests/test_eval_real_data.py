"""The loaders and the harness on the real benchmark files in ../shared/data (skipped when absent)."""

import pytest

from medlink.core import Candidate
from medlink.eval import equivalent_ids_from_kb, evaluate, load_askapatient, load_biosyn, load_dataset, load_pubtator_documents
from medlink.kb import KB, build_kb
from tests.conftest import shared_data

pytestmark = pytest.mark.real_data


@pytest.mark.parametrize("split, expected", [("train", 5134), ("dev", 787), ("test", 960), ("traindev", 5921)])
def test_ncbi_processed_counts(split, expected):
    # The README's numbers. processed_train has 5,134 mentions where the PubTator training file
    # has 5,145: PMID 8528200 (11 mentions) appears twice in the PubTator file but once here.
    mentions = load_biosyn(shared_data(f"ncbi-disease/processed_{split}"))
    assert len(mentions) == expected


def test_ncbi_test_composites_and_alternatives():
    mentions = load_biosyn(shared_data("ncbi-disease/processed_test"))
    composite = [m for m in mentions if m.is_composite]
    assert len(composite) == 8  # 13 test mentions carry several ids; 5 of them are one span (alternatives or unsplit)
    assert all(len(m.parts) <= len(m.gold) for m in composite)
    assert sum(len(m.gold) > 1 for m in mentions) == 13


@pytest.mark.parametrize(
    "name, documents, mentions, deduplicated",
    [("NCBItestset_corpus.txt", 100, 960, (100, 960)), ("NCBIdevelopset_corpus.txt", 100, 787, (100, 787)), ("NCBItrainset_corpus.txt", 593, 5145, (592, 5134))],
)
def test_pubtator_counts_match_the_processed_files(name, documents, mentions, deduplicated):
    path = shared_data(f"ncbi-disease-pubtator/{name}")
    docs = load_pubtator_documents(path)
    assert (len(docs), sum(len(d.mentions) for d in docs)) == (documents, mentions)
    unique = load_pubtator_documents(path, skip_duplicate_documents=True)
    assert (len(unique), sum(len(d.mentions) for d in unique)) == deduplicated
    assert all(d.text[m.start : m.end] == m.text for d in unique for m in d.mentions)


def test_pubtator_and_processed_test_annotate_the_same_spans():
    pubtator = load_dataset(f"pubtator:{shared_data('ncbi-disease-pubtator/NCBItestset_corpus.txt')}")
    processed = load_dataset(f"biosyn:{shared_data('ncbi-disease/processed_test')}")
    assert {(m.doc_id, m.start, m.end) for m in pubtator} == {(m.doc_id, m.start, m.end) for m in processed}


@pytest.mark.parametrize("split, expected", [("train", 15612), ("validation", 845), ("test", 867)])
def test_askapatient_fold0_counts(split, expected):
    assert len(load_askapatient(shared_data(f"askapatient/AskAPatient.fold-0.{split}.txt"))) == expected


def test_askapatient_latin1_is_decoded():
    mentions = load_askapatient(shared_data("askapatient/AskAPatient.fold-1.validation.txt"))
    assert "Sjögren's syndrome" in {m.gold_name for m in mentions}


def test_exact_match_linker_on_ncbi_test(tmp_path):
    """End to end: exact name lookup in test_dictionary; found exactly when the mention is a direct match."""
    out = tmp_path / "test_dictionary.sqlite"
    build_kb(out, [f"biosyn:{shared_data('ncbi-disease/test_dictionary.txt')}"], progress=False)
    test = load_biosyn(shared_data("ncbi-disease/processed_test"))
    train = load_biosyn(shared_data("ncbi-disease/processed_traindev"))
    with KB.open(out) as kb:
        equivalent = equivalent_ids_from_kb(kb)
        assert all(kb.resolve(g) for m in test for g in m.gold)  # every gold id is in the dictionary
        report = evaluate(lambda texts: [[Candidate(c, 1.0, n) for c, n, _ in kb.lookup(t)] for t in texts], test, equivalent_ids=equivalent, train=train, kb=kb)
    assert report["n"] == 960
    assert report["hits@64"] == report.subpopulations["direct match"]["n"]
    assert report.subpopulations["not direct match"]["acc@5"] == 0.0
    assert report.subpopulations["seen mention"]["n"] + report.subpopulations["unseen mention"]["n"] == 960
    assert 0.7 < report["acc@1"] < 0.85  # exact lookup alone; the published neural linkers reach 0.91-0.93

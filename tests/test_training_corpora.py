"""Training from several corpora (issue 53 item 1): the tagger, the mention memory, the learned exclusions and the span
selector read any number of PubTator / BioC / JSONL corpora, their types kept, with a ``--types`` filter."""

from __future__ import annotations

import json

import pytest

from medlink.corpora.datasets import load_dataset
from medlink.corpora.document_files import read_documents, write_documents
from medlink.corpora.entity_types import parse_types
from medlink.errors import MedlinkError
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.memory import memory_from_datasets
from medlink.text.bio import SINGLE_TYPE
from medlink.training.tagger_data import collapsed_type, gold_spans, mention_types, read_annotated
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink

CDR = FIXTURES / "types" / "cdr_small.pubtator"
NCBI = FIXTURES / "documents" / "small.pubtator"
TAGGER_TRAIN = FIXTURES / "tagger" / "train.pubtator"


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """The BC5CDR-like fixture in each document format, and NCBI's small fixture."""
    folder = tmp_path_factory.mktemp("corpora")
    documents = list(read_documents(CDR, "pubtator"))
    specs = {"pubtator": f"pubtator:{CDR}"}
    for fmt, suffix in (("bioc", "xml"), ("bioc-json", "json"), ("jsonl", "jsonl")):
        write_documents(documents, folder / f"cdr.{suffix}", fmt)
        specs[fmt] = f"{fmt}:{folder / f'cdr.{suffix}'}"
    return specs


@pytest.mark.parametrize("fmt", ["pubtator", "bioc", "bioc-json", "jsonl"])
def test_training_documents_come_in_every_format_with_their_types(corpora, fmt):
    documents, record = read_annotated(corpora[fmt])
    assert len(documents) == 2 and record["mentions"] == 12 and record["mentions_by_type"] == "7 Disease, 5 Chemical"
    assert "types" not in record
    diseases, record = read_annotated(corpora[fmt], parse_types("Disease"))
    assert [a.text for a in diseases[1].annotations] == ["myocardial infarction", "Chest pain", "myocardial infarction"]
    assert record["mentions"] == 7 and record["types"] == ["disease"] and record["left_out"] == "5 Chemical"
    assert record["document_sha256"] == read_annotated(f"pubtator:{CDR}")[1]["document_sha256"]  # documents known by their text


def test_a_spec_without_a_training_format_is_refused():
    with pytest.raises(MedlinkError, match="pubtator, bioc, bioc-json, jsonl"):
        read_annotated(f"biosyn:{CDR}")


def test_the_tagger_learns_entity_types():
    ncbi = read_annotated(f"pubtator:{NCBI}")[0]
    cdr = read_annotated(f"pubtator:{CDR}")[0]
    chemicals = read_annotated(f"pubtator:{CDR}", parse_types("Chemical"))[0]
    assert collapsed_type(ncbi) == "Disease"  # NCBI's four classes are one type
    assert collapsed_type(chemicals) == mention_types(chemicals, True)[0] == "Chemical"  # a chemical tagger tags Chemical
    assert collapsed_type(cdr) == SINGLE_TYPE and collapsed_type([]) == SINGLE_TYPE
    assert mention_types([*ncbi, *cdr], False) == ["Chemical", "Disease"]  # kept: entity types, not NCBI's subtypes
    assert {span.type for span in gold_spans(ncbi[0], None)} == {"Disease"}
    assert {span.type for span in gold_spans(cdr[1], "Disease")} == {"Disease"}


def test_mention_datasets_read_documents_of_any_format_and_some_types(corpora):
    for fmt in ("pubtator", "bioc", "bioc-json", "jsonl"):
        mentions = load_dataset(corpora[fmt])
        assert len(mentions) == 12 and {m.semantic_type for m in mentions} == {"Disease", "Chemical"}
        chemicals = load_dataset(corpora[fmt], parse_types("Chemical"))
        assert [m.text for m in chemicals] == ["Lithium", "Lithium", "amiloride", "Cocaine", "cocaine"]
    assert len(load_dataset(f"pubtator:{NCBI}", parse_types("Disease"))) == len(load_dataset(f"pubtator:{NCBI}"))


@pytest.fixture(scope="module")
def typed_kb(tmp_path_factory):
    path = build_kb(tmp_path_factory.mktemp("kb") / "kb.sqlite", [f"tsv:{FIXTURES / 'types' / 'kb.tsv'}"], progress=False).path
    with KB.open(path) as kb:
        yield kb


def test_a_memory_reads_several_corpora_and_keeps_some_types(typed_kb, corpora):
    memory = memory_from_datasets(typed_kb, [corpora["pubtator"], corpora["jsonl"]], parse_types("Disease"))
    assert len(memory.pairs) == 14 and {concept for _, concept in memory.pairs} == {"D018500", "D001714", "D011141", "D009203", "D002637"}
    assert memory.summary()["types"] == ["disease"] and memory.documents[0] == "1:20001" and memory.documents[-1] == "2:20002"
    assert "types" not in memory_from_datasets(typed_kb, [corpora["bioc"]]).summary()


@pytest.mark.slow
def test_index_memory_and_exclusions_from_several_corpora(tmp_path, typed_kb, corpora):
    index = tmp_path / "index"
    built = medlink("index", "build", "--kb", typed_kb.path, "--out", index, "--memory", corpora["pubtator"], "--memory", corpora["bioc"],
                    "--memory-types", "Disease", "--calibrate", "none", "--quiet")
    assert "memory: 14 entries of types disease" in built.stderr
    assert {line.split("\t")[1] for line in (index / "memory.tsv").read_text().splitlines()} <= {"D018500", "D001714", "D011141", "D009203", "D002637"}
    refused = medlink("index", "build", "--kb", typed_kb.path, "--out", tmp_path / "other", "--memory-types", "Disease", check=False)
    assert refused.returncode != 0 and "give --memory too" in refused.stderr
    names = tmp_path / "exclude.txt"
    # as diseases, the chemicals' names are never marked: the dictionary finds them, the annotators did not mark them
    learned = medlink("train", "exclusions", "--index", index, "--documents", corpora["pubtator"], "--documents", corpora["jsonl"],
                      "--types", "Disease", "--out", names)
    written = names.read_text().splitlines()
    assert written[0].startswith("# names medlink's dictionary finder leaves out") and "types Disease" in written[0]
    assert set(written[1:]) == {"lithium", "cocaine", "amiloride"} and "wrote" in learned.stdout and "7 Disease mentions" in learned.stderr
    everything = medlink("train", "exclusions", "--index", index, "--documents", corpora["pubtator"], "--out", names)
    assert names.read_text().splitlines()[1:] == [] and "0 names" in everything.stdout  # every match marked, of either type
    mine = tmp_path / "mine.txt"
    mine.write_text("my own names\n")
    kept = medlink("train", "exclusions", "--index", index, "--documents", corpora["pubtator"], "--out", mine, check=False)
    assert kept.returncode != 0 and mine.read_text() == "my own names\n"


@pytest.mark.slow
@pytest.mark.dense
def test_a_tagger_trains_on_several_corpora_with_types(tmp_path, corpora):
    pytest.importorskip("torch")
    from transformers import AutoTokenizer, BertConfig, BertForTokenClassification

    from medlink.encoders.transformer import default_model_dir

    tokenizer = AutoTokenizer.from_pretrained(default_model_dir())
    model = tmp_path / "tiny"
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=64, num_labels=3)
    BertForTokenClassification(config).save_pretrained(model)
    tokenizer.save_pretrained(model)
    common = ["--model", model, "--epochs", "1", "--max-length", "64", "--quiet"]
    mixed = medlink("train", "tagger", "--train", corpora["pubtator"], "--train", f"pubtator:{TAGGER_TRAIN}", "--out", tmp_path / "mixed", *common)
    assert "(Chemical, Disease), all learned as one ('Disease'); --types with one of them" in mixed.stderr
    medlink("train", "tagger", "--train", corpora["jsonl"], "--train", f"pubtator:{TAGGER_TRAIN}", "--dev", corpora["bioc"],
            "--types", "Chemical", "--out", tmp_path / "chemical", *common)
    info = json.loads((tmp_path / "chemical" / "medlink_tagger.json").read_text())
    assert info["labels"] == ["O", "B-Chemical", "I-Chemical"]
    assert info["data"]["train"][0]["mentions"] == 5 and info["data"]["train"][0]["types"] == ["chemical"]
    assert info["data"]["train"][1]["mentions"] == 0 and info["data"]["dev"][0]["left_out"] == "7 Disease"  # NCBI-like: no chemical
    medlink("train", "tagger", "--train", corpora["bioc-json"], "--train", f"pubtator:{NCBI}", "--keep-types", "--out", tmp_path / "kept", *common)
    kept = json.loads((tmp_path / "kept" / "medlink_tagger.json").read_text())
    assert kept["labels"] == ["O", "B-Chemical", "I-Chemical", "B-Disease", "I-Disease"]
    refused = medlink("train", "tagger", "--train", f"pubtator:{NCBI}", "--types", "Chemical", "--out", tmp_path / "none", *common, check=False)
    assert refused.returncode != 0 and "of the --types given" in refused.stderr


def test_a_selector_fits_on_several_corpora_of_some_types(tmp_path, corpora):
    from medlink.text.finders.selector.fitting import fitting_documents

    documents, records, repeated = fitting_documents([corpora["pubtator"], corpora["jsonl"]], {}, [], parse_types("Disease"))
    assert repeated == 2 and len(documents) == 2  # the same texts in two formats: known again
    assert all(a.type == "Disease" for d in documents for a in d.annotations) and records[0]["types"] == ["disease"]
    with pytest.raises(MedlinkError, match="the index holds the mentions"):
        fitting_documents([corpora["pubtator"]], {}, [corpora["bioc"]])  # a BioC memory's documents are known too
    with pytest.raises(MedlinkError, match="of the --types given"):
        fitting_documents([f"pubtator:{NCBI}"], {}, [], parse_types("Chemical"))

"""Entity types through the pipeline (issue 53): one vocabulary, types kept by every reader, dictionary spans typed from
the KB and written out, ``medlink score --types``."""

from __future__ import annotations

import json

import pytest

from medlink.core import Document
from medlink.corpora.document_files import read_documents, write_documents
from medlink.corpora.entity_types import (
    CHEMICAL,
    DISEASE,
    concept_types,
    entity_type,
    has_type,
    kb_type,
    parse_types,
    source_type,
    type_of_mask,
)
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.text.finders.dictionary import DictionaryFinder
from medlink.text.normalize import normalize
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink

TYPES = FIXTURES / "types"
CDR = TYPES / "cdr_small.pubtator"


def test_corpus_labels_map_to_one_vocabulary():
    for label in ("SpecificDisease", "DiseaseClass", "Modifier", "CompositeMention", "Disease", "disease", " DiseaseOrPhenotypicFeature "):
        assert entity_type(label) == DISEASE
    assert entity_type("Chemical") == entity_type("ChemicalEntity") == CHEMICAL
    assert entity_type("Procedure") == "Procedure"  # a user's own type, kept as written
    assert entity_type("") is entity_type(None) is None


def test_a_types_option_reads_lists_and_names_of_either_case():
    assert parse_types("Disease,Chemical") == parse_types(["disease", " CHEMICAL"]) == frozenset({"disease", "chemical"})
    assert parse_types("SpecificDisease") == frozenset({"disease"})
    assert parse_types([]) is None and parse_types("") is None
    wanted = parse_types("Disease")
    assert has_type("Modifier", wanted) and not has_type("Chemical", wanted)
    assert has_type(None, wanted)  # nothing says an untyped span is of another type
    assert has_type("Chemical", None)  # no filter


def test_kb_types_and_sources_say_a_concepts_type():
    assert kb_type("Disease or Syndrome") == kb_type("disorder") == kb_type("tree:C") == kb_type("Disease") == DISEASE
    assert kb_type("Pharmacologic Substance") == kb_type("substance") == kb_type("tree:D") == CHEMICAL
    assert kb_type("billable") is None and kb_type("body structure") is None
    assert source_type("ICD-10-CM") == source_type("hp") == source_type("doid_2016-09-01") == DISEASE
    assert source_type("biosyn", ["data/medic/medic_06Jul2012.txt"]) == DISEASE
    assert source_type("biosyn", ["data/bc5cdr-chemical/train_dictionary.txt"]) == CHEMICAL
    assert source_type("biosyn", ["data/medic.txt", "data/chemicals.txt"]) is None  # they disagree: no type
    assert source_type("my_terms") is None
    assert type_of_mask(0) is None and type_of_mask(0b11) is None and type_of_mask(0b10) == CHEMICAL


@pytest.fixture(scope="module")
def typed_kb(tmp_path_factory):
    path = build_kb(tmp_path_factory.mktemp("typed") / "kb.sqlite", [f"tsv:{TYPES / 'kb.tsv'}"], progress=False).path
    with KB.open(path) as kb:
        yield kb


def test_concepts_take_their_kb_types_then_their_source(typed_kb, tmp_path):
    typed = concept_types(typed_kb)
    assert typed["D018500"] == typed["D002637"] == DISEASE and typed["D008094"] == typed["D003042"] == CHEMICAL
    assert "X003" not in typed  # no type, and a source ("kb", the file's stem) that says none
    medic = build_kb(tmp_path / "medic.sqlite", [f"biosyn:{FIXTURES / 'biosyn' / 'medic_small.txt'}"], progress=False).path
    with KB.open(medic) as kb:
        assert set(concept_types(kb).values()) == {DISEASE} and len(concept_types(kb)) == len(kb)


def typed_finder(kb: KB) -> DictionaryFinder:
    typed = concept_types(kb)
    pairs = [(text, cid) for cid, text, _kind in kb.iter_names()]
    return DictionaryFinder.build([t for t, _ in pairs], kb.normalize, types=[typed.get(c) for _, c in pairs])


def test_dictionary_spans_take_their_names_type(typed_kb, tmp_path):
    finder = typed_finder(typed_kb)
    text = "Lithium caused polyuria; a cold and infarctions followed, then nephrogenic diabetes insipidus."
    found = {a.text: a.type for a in finder.find(Document.from_text(text))}
    assert found["Lithium"] == CHEMICAL and found["polyuria"] == DISEASE and found["nephrogenic diabetes insipidus"] == DISEASE
    assert found["cold"] is None  # a disease's name and a drug's: the linked concept tells
    assert found["infarctions"] is None  # an untyped concept's name (found approximately: a plural)
    finder.save(tmp_path / "finder")
    again = DictionaryFinder.load(tmp_path / "finder")
    assert {a.text: a.type for a in again.find(Document.from_text(text))} == found
    untyped = DictionaryFinder.build(["Lithium"], normalize)
    untyped.save(tmp_path / "old")
    description = json.loads((tmp_path / "old" / "dictionary.json").read_text())
    assert "entity_types" not in description  # a finder built without types (as before them) reads back without
    assert [a.type for a in DictionaryFinder.load(tmp_path / "old").find(Document.from_text("Lithium"))] == [None]


@pytest.mark.parametrize("fmt", ["pubtator", "bioc", "bioc-json", "jsonl"])
def test_every_document_format_keeps_the_types_it_reads(tmp_path, fmt):
    documents = list(read_documents(CDR, "pubtator"))
    assert [a.type for a in documents[1].annotations] == ["Chemical", "Disease", "Disease", "Chemical", "Disease"]
    out = tmp_path / f"out.{fmt}"
    write_documents(documents, out, fmt)
    again = list(read_documents(out, fmt))
    assert [[(a.span, a.type, a.ids) for a in d.annotations] for d in again] == [[(a.span, a.type, a.ids) for a in d.annotations] for d in documents]


@pytest.mark.slow
def test_annotate_writes_the_dictionarys_types_and_score_restricts_to_some(tmp_path, typed_kb):
    index = tmp_path / "index"
    medlink("index", "build", "--kb", typed_kb.path, "--out", index, "--calibrate", "none", "--quiet")
    out = tmp_path / "predicted.pubtator"
    medlink("annotate", "--index", index, "--input", CDR, "--format", "pubtator", "--output-format", "pubtator", "--out", out)
    rows = [line.split("\t") for line in out.read_text().splitlines() if line.count("\t") >= 5]
    assert {(row[3], row[4]) for row in rows} >= {("Lithium", "Chemical"), ("polyuria", "Disease"), ("Cocaine", "Chemical")}
    assert all(row[4] for row in rows)  # every dictionary span of this KB has a type
    scored = {}
    for types in ("Disease", "Chemical", None):
        result = medlink("score", "--gold", CDR, "--predicted", out, "--json", *(["--types", types] if types else []))
        scored[types] = json.loads(result.stdout)
        if types:
            assert f"note: --gold: left out" in result.stderr and scored[types]["types"] == [types.lower()]
    disease, chemical, both = (scored[t]["mentions"] for t in ("Disease", "Chemical", None))
    assert disease["fn"] + disease["tp"] == 7 and chemical["fn"] + chemical["tp"] == 5  # the gold's spans of each type
    assert disease["tp"] + chemical["tp"] == both["tp"] and disease["fp"] + chemical["fp"] == both["fp"]


def test_score_keeps_untyped_spans_and_says_so(tmp_path):
    predicted = tmp_path / "predicted.pubtator"
    lines = CDR.read_text().splitlines()
    predicted.write_text("\n".join(line if line.count("\t") < 5 else "\t".join([*line.split("\t")[:4], "", line.split("\t")[5]]) for line in lines) + "\n")
    result = medlink("score", "--gold", CDR, "--predicted", predicted, "--types", "Disease", "--json")
    scores = json.loads(result.stdout)
    assert scores["mentions"]["tp"] == 7 and scores["mentions"]["fp"] == 5  # the untyped chemical spans are kept, and wrong
    assert "--predicted: kept 12 span(s) without a type" in result.stderr

"""A mention that is a code of the index ("I10", "E11.9", "HP:0001658") links to that concept, certain, first."""

from __future__ import annotations

import pytest

from medlink.kb.build import build_kb
from medlink.linking.codes import CodeLookup
from medlink.linking.index import build_index
from medlink.linking.linker import Linker
from tests.conftest import FIXTURES

IDS = ["ICD10CM:I10", "ICD10CM:E11.9", "ICD10CM:E11", "HP:0001658", "ICD10CM:S72.001A"]


def test_every_way_a_user_writes_a_code_finds_it():
    lookup = CodeLookup(IDS, {"HP:0001658": ["UMLS:C0027051"], "ICD10CM:I10": ["C0085580"]})
    assert lookup.concept_of("I10") == "ICD10CM:I10"
    assert lookup.concept_of(" E11.9 ") == "ICD10CM:E11.9"
    assert lookup.concept_of("e119") == "ICD10CM:E11.9"  # undotted, lower case
    assert lookup.concept_of("S72001A") == "ICD10CM:S72.001A"
    assert lookup.concept_of("icd10cm:e11") == "ICD10CM:E11"
    assert lookup.concept_of("HP:0001658") == "HP:0001658"
    assert lookup.concept_of("UMLS:C0027051") == "HP:0001658" and lookup.concept_of("C0085580") == "ICD10CM:I10"  # alt ids


@pytest.mark.parametrize("text", ["T2DM", "I 10", "heart attack", "E11.99", "HP:0009999", "MI", "10", "I10 and E11", ""])
def test_what_is_no_code_of_the_index_is_left_to_search(text):
    assert CodeLookup(IDS, {}).concept_of(text) is None


@pytest.fixture(scope="module")
def medic_like_index(tmp_path_factory):
    work = tmp_path_factory.mktemp("codes")
    build_kb(work / "kb.sqlite", [f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"], progress=False)
    build_index(work / "kb.sqlite", work / "index")
    return Linker.load(work / "index")


def test_a_code_mention_links_first_with_certainty_and_keeps_k(medic_like_index):
    by_code, by_prefix, by_alt, name, unknown = medic_like_index.link(["D015179", "MESH:D015179", "175100", "colorectal cancer", "D999999"], k=2)
    assert [c.concept_id for c in by_code.candidates][:1] == ["D015179"] and len(by_code.candidates) == 2
    assert by_code.candidates[0].probability == 1.0 and by_code.nil is False and by_code.probability == 1.0
    assert by_code.candidates[0].evidence == [{"code": "'D015179' is the id D015179"}]
    assert by_code.candidates[0].name == "colorectal neoplasms"
    assert by_prefix.candidates[0].concept_id == "D015179"  # a prefix the index's ids do not carry
    assert by_alt.candidates[0].concept_id == "D011125"  # an OMIM alt id
    assert name.candidates[0].concept_id == "D015179" and name.candidates[0].scores_by_stage.get("code") is None  # searched
    assert all(c.scores_by_stage.get("code") is None for c in unknown.candidates)


def test_codes_written_in_text_are_found_and_linked_beside_the_names(medic_like_index):
    from medlink.linking.annotator import Annotator

    annotator = Annotator(medic_like_index, [medic_like_index.dictionary_finder()])
    text = "Colorectal cancer (D015179) and code d015179, 250 mg, ref 175100, D999999."
    spans = annotator.annotate_text(text).annotations
    assert [(s.text, s.source, s.ids) for s in spans] == [
        ("Colorectal cancer", "dictionary", ("D015179",)),
        ("D015179", "code", ("D015179",)),  # lower case, a number (even an alt id) and an unknown code are no codes in text
    ]
    assert spans[1].result.candidates[0].probability == 1.0

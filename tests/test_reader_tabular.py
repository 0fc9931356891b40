"""medlink JSONL and TSV readers: the documented schema, and errors naming file, line and field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from medlink.errors import InputFormatError, MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers import READERS
from medlink.kb.readers.tabular import read_jsonl, read_tsv
from medlink.kb.records import (
    ConceptRecord,
    IdAliasRecord,
    NameRecord,
    RelationRecord,
    TypeRecord,
    XrefRecord,
)

FIXTURES = Path(__file__).parent / "fixtures" / "custom"


def of(records, cls, concept_id=None):
    key = "head" if cls is RelationRecord else "id" if cls is ConceptRecord else "concept_id"
    return [r for r in records if isinstance(r, cls) and (concept_id is None or getattr(r, key) == concept_id)]


def names(records, concept_id):
    return [(r.text, r.kind) for r in of(records, NameRecord, concept_id)]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_registered_formats():
    assert READERS["jsonl"].load() is read_jsonl
    assert READERS["tsv"].load() is read_tsv
    assert READERS["jsonl"].default_prefix == READERS["tsv"].default_prefix == ""


# ---------------------------------------------------------------------------------------- JSONL


@pytest.fixture(scope="module")
def jsonl_records():
    return list(read_jsonl(FIXTURES / "terms.jsonl"))


def test_jsonl_concepts(jsonl_records):
    concepts = of(jsonl_records, ConceptRecord)
    assert [(c.id, c.name) for c in concepts] == [
        ("C001", "Cardiovascular disorder"),
        ("C002", "Myocardial infarction"),
        ("C003", "Cardiogenic shock"),
        ("C010", "Heart"),
    ]
    assert concepts[1].definition == "Necrosis of heart muscle caused by an obstruction of its blood supply."
    assert concepts[2].definition is None  # "definition": null is the same as leaving it out
    assert {c.source for c in concepts} == {"terms"}  # the file name


def test_jsonl_names(jsonl_records):
    assert names(jsonl_records, "C002") == [
        ("Myocardial infarction", "preferred"),
        ("Heart attack", "synonym"),
        ("Cardiac infarction", "synonym"),
        ("Infarto de miocardio", "synonym"),
        ("Silent myocardial infarction", "synonym"),
        # {"text": "Myocardial infarction"} repeats the name: kept once
        ("MI", "abbreviation"),
        ("AMI", "abbreviation"),
    ]
    by_text = {r.text: r for r in of(jsonl_records, NameRecord, "C002")}
    assert by_text["Cardiac infarction"].scope == "EXACT"
    assert by_text["Silent myocardial infarction"].scope == "NARROW"
    assert by_text["Infarto de miocardio"].lang == "es"
    assert by_text["Heart attack"].scope is None and by_text["Heart attack"].lang == "en"
    assert names(jsonl_records, "C010") == [("Heart", "preferred")]


def test_jsonl_types_relations_xrefs_alt_ids(jsonl_records):
    assert [t.type for t in of(jsonl_records, TypeRecord, "C002")] == ["disorder"]
    assert [(r.relation, r.tail) for r in of(jsonl_records, RelationRecord, "C002")] == [
        ("is_a", "C001"),
        ("finding_site", "C010"),  # {"relation": ..., "target": ...}
        ("has_complication", "C003"),  # [relation, target]
    ]
    assert [x.xref for x in of(jsonl_records, XrefRecord, "C002")] == ["MESH:D009203", "ICD10CM:I21.9"]
    assert of(jsonl_records, IdAliasRecord) == [IdAliasRecord("OLD-17", "C002", "alt_id")]
    assert len(jsonl_records) == 25


def test_jsonl_prefix_qualifies_ids_but_not_xrefs():
    records = list(read_jsonl(FIXTURES / "terms.jsonl", prefix="CARDIO", source="cardio-terms"))
    assert of(records, ConceptRecord)[1] == ConceptRecord(
        "CARDIO:C002", "Myocardial infarction", "cardio-terms", "Necrosis of heart muscle caused by an obstruction of its blood supply."
    )
    assert [(r.relation, r.tail) for r in of(records, RelationRecord, "CARDIO:C002")] == [
        ("is_a", "CARDIO:C001"), ("finding_site", "CARDIO:C010"), ("has_complication", "CARDIO:C003"),
    ]
    assert of(records, IdAliasRecord) == [IdAliasRecord("CARDIO:OLD-17", "CARDIO:C002", "alt_id")]
    assert [x.xref for x in of(records, XrefRecord, "CARDIO:C002")] == ["MESH:D009203", "ICD10CM:I21.9"]


def test_jsonl_unknown_key_is_rejected_with_its_name_and_line():
    path = FIXTURES / "bad_unknown_key.jsonl"
    with pytest.raises(InputFormatError) as info:
        list(read_jsonl(path))
    assert (info.value.path, info.value.line) == (str(path), 2)
    assert 'unknown key "synonym"' in info.value.message
    assert 'did you mean "synonyms"' in info.value.message


def test_jsonl_unknown_key_inside_a_synonym(tmp_path):
    path = write(tmp_path, "t.jsonl", json.dumps({"id": "X", "name": "x", "synonyms": [{"text": "y", "type": "abbreviation"}]}) + "\n")
    with pytest.raises(InputFormatError, match=r'unknown key "type" in synonyms\[0\]'):
        list(read_jsonl(path))


@pytest.mark.parametrize(
    "line, expected",
    [
        ({"id": "X", "name": "x", "synonyms": "y"}, 'field "synonyms" must be an array'),
        ({"id": "X", "name": "x", "synonyms": [3]}, r'field "synonyms\[0\]" must be a string or an object'),
        ({"id": "X", "name": "x", "synonyms": [{"kind": "synonym"}]}, r'synonyms\[0\] has no "text"'),
        ({"id": "X", "name": "x", "synonyms": [{"text": "y", "kind": "acronym"}]}, r'synonyms\[0\].kind is "acronym"'),
        ({"id": "X", "name": "x", "synonyms": [{"text": "y", "kind": "preferred"}]}, '"preferred" is the concept'),
        ({"id": "X", "name": ""}, 'field "name" must not be empty'),
        ({"id": "X"}, 'missing required key "name"'),
        ({"id": ["X"], "name": "x"}, 'field "id" must be a string, got array'),
        ({"id": "X", "name": "x", "types": "disorder"}, 'field "types" must be an array of strings'),
        ({"id": "X", "name": "x", "abbreviations": ["MI", None]}, r'field "abbreviations\[1\]" must be a string, got null'),
        ({"id": "X", "name": "x", "definition": ["a"]}, 'field "definition" must be a string'),
        ({"id": "X", "name": "x", "parents": "Y"}, 'field "parents" must be an array'),
        ({"id": "X", "name": "x", "relations": [["is_a"]]}, r"relations\[0\] must be"),
        ({"id": "X", "name": "x", "relations": [{"relation": "is_a"}]}, r'relations\[0\] has no "target"'),
        ({"id": "X", "name": "x", "relations": [{"rel": "is_a", "target": "Y"}]}, r'unknown key "rel" in relations\[0\]'),
        ({"id": "X", "name": "x", "xrefs": {"MESH": "D1"}}, 'field "xrefs" must be an array'),
        ({"id": "X", "name": "x", "alt_ids": [""]}, r'field "alt_ids\[0\]" must not be empty'),
    ],
)
def test_jsonl_wrong_types_name_field_and_line(tmp_path, line, expected):
    good = json.dumps({"id": "A", "name": "a"})
    path = write(tmp_path, "t.jsonl", f"{good}\n\n{json.dumps(line)}\n")
    with pytest.raises(InputFormatError, match=expected) as info:
        list(read_jsonl(path))
    assert (info.value.path, info.value.line) == (str(path), 3)


def test_jsonl_bad_lines_fail_at_the_first():
    path = FIXTURES / "bad_lines.jsonl"
    with pytest.raises(InputFormatError) as info:
        list(read_jsonl(path))
    assert info.value.line == 2
    assert str(info.value).startswith(f"{path}:2: ")


def test_jsonl_skip_invalid_counts_skipped_lines():
    path = FIXTURES / "bad_lines.jsonl"
    policy = InvalidLinePolicy(skip_invalid=True)
    records = list(read_jsonl(path, policy=policy))
    # lines 2 (wrong type), 3 (broken JSON), 4 (numeric id), 6 (array), 7 (no id); line 5 is blank
    assert policy.total_skipped == 5
    assert [c.id for c in of(records, ConceptRecord)] == ["C001", "C008"]
    assert of(records, NameRecord, "C002") == []  # a skipped line leaves nothing behind
    assert of(records, TypeRecord) == [TypeRecord("C008", "body structure")]


@pytest.mark.parametrize(
    "lineno, expected",
    [(3, "invalid JSON at column"), (4, 'field "id" must be a string, got number 4'), (6, "expected one JSON object per line"), (7, 'missing required key "id"')],
)
def test_jsonl_each_bad_line_message(tmp_path, lineno, expected):
    lines = (FIXTURES / "bad_lines.jsonl").read_text().splitlines()
    path = write(tmp_path, "t.jsonl", "\n" * (lineno - 1) + lines[lineno - 1] + "\n")
    with pytest.raises(InputFormatError, match=expected) as info:
        list(read_jsonl(path))
    assert info.value.line == lineno


def test_jsonl_repeated_id_adds_synonyms_not_a_second_preferred_name(tmp_path):
    path = write(
        tmp_path, "t.jsonl",
        json.dumps({"id": "X", "name": "Heart attack"}) + "\n" + json.dumps({"id": "X", "name": "MI", "types": ["disorder"]}) + "\n",
    )
    records = list(read_jsonl(path))
    assert names(records, "X") == [("Heart attack", "preferred"), ("MI", "synonym")]
    assert of(records, TypeRecord) == [TypeRecord("X", "disorder")]


def test_jsonl_missing_file(tmp_path):
    with pytest.raises(MissingInputError, match="nope.jsonl"):
        read_jsonl(tmp_path / "nope.jsonl")


def test_jsonl_bom_gzip_and_undecodable_line(tmp_path):
    text = "\ufeff" + json.dumps({"id": "A", "name": "Ä"}, ensure_ascii=False) + "\n"
    assert names(list(read_jsonl(write(tmp_path, "bom.jsonl", text))), "A") == [("Ä", "preferred")]
    packed = tmp_path / "terms.jsonl.gz"
    packed.write_bytes(gzip.compress((FIXTURES / "terms.jsonl").read_bytes()))
    records = list(read_jsonl(packed))
    assert records == list(read_jsonl(FIXTURES / "terms.jsonl"))
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(b'{"id": "A", "name": "a"}\n{"id": "B", "name": "\xe9"}\n')
    with pytest.raises(InputFormatError, match="UTF-8") as info:
        list(read_jsonl(latin1))
    assert info.value.line == 2


# ------------------------------------------------------------------------------------------ TSV


@pytest.fixture(scope="module")
def tsv_records():
    return list(read_tsv(FIXTURES / "terms.tsv"))


def test_tsv_names_and_default_kinds(tsv_records):
    assert names(tsv_records, "C002") == [
        ("Myocardial infarction", "preferred"),  # first row of the id
        ("Heart attack", "synonym"),  # later rows
        ("MI", "abbreviation"),
        ("Acute myocardial infarction", "inclusion"),
    ]
    # explicit kinds: the synonym row comes first, the preferred one second
    assert names(tsv_records, "C003") == [("Shock, cardiogenic", "synonym"), ("Cardiogenic shock", "preferred")]
    # C001 reappears on the last line: its name there is a synonym
    assert names(tsv_records, "C001") == [("Cardiovascular disorder", "preferred"), ("Cardiovascular disease", "synonym")]


def test_tsv_concepts(tsv_records):
    named = [(c.id, c.name) for c in of(tsv_records, ConceptRecord) if c.name]
    assert named == [("C001", "Cardiovascular disorder"), ("C002", "Myocardial infarction"), ("C003", "Cardiogenic shock"), ("C010", "Heart")]
    c002 = of(tsv_records, ConceptRecord, "C002")
    assert c002 == [ConceptRecord("C002", "Myocardial infarction", "terms", "Necrosis of heart muscle caused by an obstruction of its blood supply.")]
    assert all(c.name is None for c in of(tsv_records, ConceptRecord) if c.name != dict(named).get(c.id))


def test_tsv_types_parents_xrefs(tsv_records):
    assert [t.type for t in of(tsv_records, TypeRecord, "C002")] == ["disorder"]  # repeated on the MI row: once
    assert [(r.relation, r.tail) for r in of(tsv_records, RelationRecord, "C002")] == [("is_a", "C001")]
    assert [r.tail for r in of(tsv_records, RelationRecord, "C003")] == ["C001", "C002"]  # "C001|C002"
    assert [x.xref for x in of(tsv_records, XrefRecord, "C002")] == ["MESH:D009203", "ICD10CM:I21.9"]
    assert [t.type for t in of(tsv_records, TypeRecord, "C010")] == ["body structure"]


def test_tsv_prefix_qualifies_ids_and_parents_but_not_xrefs():
    records = list(read_tsv(FIXTURES / "terms.tsv", prefix="CARDIO"))
    assert RelationRecord("CARDIO:C003", "is_a", "CARDIO:C002", "terms") in records
    assert XrefRecord("CARDIO:C001", "MESH:D002318") in records
    assert {r.concept_id for r in of(records, NameRecord)} == {"CARDIO:C001", "CARDIO:C002", "CARDIO:C003", "CARDIO:C010"}


def test_tsv_header_missing_required_column():
    path = FIXTURES / "bad_header.tsv"
    with pytest.raises(InputFormatError) as info:
        list(read_tsv(path, policy=InvalidLinePolicy(skip_invalid=True)))  # a bad header is never skipped
    assert (info.value.path, info.value.line) == (str(path), 1)
    assert "missing required column(s) name" in info.value.message
    assert "header seen: id, label, kind" in info.value.message
    assert "id, name (required)" in info.value.message


@pytest.mark.parametrize(
    "text, expected, line",
    [
        ("# comment\n\nid\tname\tdefintion\n", 'unknown column "defintion".*did you mean "definition"', 3),
        ("id\tname\tsynonyms\n", 'unknown column "synonyms" in the header \\(one name per row', 1),
        ("id\tname\tid\n", "id appear more than once", 1),
        ("id,name\nX,x\n", "comma- or semicolon-separated", 1),
        ("#id\tname\nX\tx\n", "line 1 looks like the header but starts with '#'", 2),
        ("# only a comment\n", "no header line", None),
    ],
)
def test_tsv_header_errors(tmp_path, text, expected, line):
    path = write(tmp_path, "t.tsv", text)
    with pytest.raises(InputFormatError, match=expected) as info:
        list(read_tsv(path))
    assert info.value.line == line


def test_tsv_bad_rows_fail_at_the_first():
    path = FIXTURES / "bad_rows.tsv"
    with pytest.raises(InputFormatError) as info:
        list(read_tsv(path))
    assert (info.value.path, info.value.line) == (str(path), 3)
    assert "expected 3 tab-separated columns (id, name, kind) as in the header, found 2" in info.value.message


@pytest.mark.parametrize(
    "lineno, expected",
    [(3, "expected 3 tab-separated columns"), (5, 'empty "id"'), (6, 'empty "name" for id C002'), (7, 'unknown kind "acronym"')],
)
def test_tsv_each_bad_row_message(tmp_path, lineno, expected):
    lines = (FIXTURES / "bad_rows.tsv").read_text().split("\n")
    path = write(tmp_path, "t.tsv", lines[0] + "\n" + "\n" * (lineno - 2) + lines[lineno - 1] + "\n")
    with pytest.raises(InputFormatError, match=expected) as info:
        list(read_tsv(path))
    assert info.value.line == lineno


def test_tsv_skip_invalid_counts_skipped_rows():
    path = FIXTURES / "bad_rows.tsv"
    policy = InvalidLinePolicy(skip_invalid=True)
    records = list(read_tsv(path, policy=policy))
    assert policy.total_skipped == 4
    assert policy.skipped == {str(path): 4}
    assert [(c.id, c.name) for c in of(records, ConceptRecord)] == [("C001", "Cardiovascular disorder"), ("C010", "Heart")]


def test_tsv_second_explicit_preferred_name_is_an_error(tmp_path):
    path = write(tmp_path, "t.tsv", "id\tname\tkind\nX\tHeart attack\t\nX\tMyocardial infarction\tpreferred\n")
    with pytest.raises(InputFormatError, match="already has a preferred name") as info:
        list(read_tsv(path))
    assert info.value.line == 3


def test_tsv_minimal_columns_quotes_crlf_and_case(tmp_path):
    path = write(tmp_path, "t.tsv", 'ID\tName\r\nX\t"Heart ""attack"""\r\nX\t MI \r\n')
    records = list(read_tsv(path))
    assert names(records, "X") == [('Heart "attack"', "preferred"), ("MI", "synonym")]
    assert of(records, ConceptRecord) == [ConceptRecord("X", 'Heart "attack"', "t", None)]


def test_tsv_missing_file(tmp_path):
    with pytest.raises(MissingInputError, match="nope.tsv"):
        read_tsv(tmp_path / "nope.tsv")

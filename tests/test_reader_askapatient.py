import json

import pytest

from tests.conftest import shared_data
from medlink.errors import InputFormatError, MissingInputError
from medlink.kb import KB, build_kb
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.askapatient import read_askapatient_ontology
from medlink.kb.records import ConceptRecord, NameRecord


def test_primary_name_is_preferred_and_others_are_aliases(fixtures):
    records = list(read_askapatient_ontology(fixtures / "eval" / "askapatient" / "ontology.json"))
    concepts = [r for r in records if isinstance(r, ConceptRecord)]
    assert [(c.id, c.name) for c in concepts] == [
        ("57676002", "Arthralgia"), ("55300003", "Muscle cramp"), ("83901003", "Sjögren's syndrome"), ("3384011000036100", "Arthrotec"),
    ]
    names = [(r.concept_id, r.text, r.kind, r.scope) for r in records if isinstance(r, NameRecord)]
    assert ("57676002", "Arthralgia", "preferred", "primary") in names
    assert ("57676002", "Joint pain", "synonym", "synonym") in names
    assert ("83901003", "SS", "abbreviation", "abbreviation") in names
    assert len(names) == 6


def test_primary_kind_wins_over_position(tmp_path):
    path = tmp_path / "o.json"
    path.write_text(json.dumps({"1": [["synonym", "Sore joints"], ["primary", "Arthralgia"]]}))
    records = list(read_askapatient_ontology(path, prefix="SCTID"))
    assert records[0] == ConceptRecord("SCTID:1", "Arthralgia", "askapatient")
    assert [(r.text, r.kind) for r in records[1:]] == [("Sore joints", "synonym"), ("Arthralgia", "preferred")]


def test_malformed_entry_names_file_and_key(fixtures):
    path = fixtures / "eval" / "askapatient" / "bad_ontology.json"
    with pytest.raises(InputFormatError, match="'55300003'") as error:
        list(read_askapatient_ontology(path))
    assert str(path) in str(error.value)
    policy = InvalidLinePolicy(skip_invalid=True)
    ids = [r.id for r in read_askapatient_ontology(path, policy=policy) if isinstance(r, ConceptRecord)]
    assert ids == ["57676002", "83901003"] and policy.total_skipped == 1


@pytest.mark.parametrize(
    "content, line, message",
    [(b'{"1": [["primary", "a"]],\n "2": }', 2, "not valid JSON"), (b'{"1": [["primary", "\xff"]]}', 1, "UTF-8"), (b"[]", None, "JSON object")],
)
def test_unreadable_files(tmp_path, content, line, message):
    path = tmp_path / "o.json"
    path.write_bytes(content)
    with pytest.raises(InputFormatError, match=message) as error:
        list(read_askapatient_ontology(path))
    assert error.value.line == line


def test_missing_file(tmp_path):
    with pytest.raises(MissingInputError, match="nope.json"):
        list(read_askapatient_ontology(tmp_path / "nope.json"))


def test_registered_format_builds_a_kb(tmp_path, fixtures):
    out = tmp_path / "aap.sqlite"
    build_kb(out, [f"askapatient:{fixtures / 'eval' / 'askapatient' / 'ontology.json'}"], progress=False)
    with KB.open(out) as kb:
        assert len(kb) == 4
        assert [row[0] for row in kb.lookup("joint pain")] == ["57676002"]


@pytest.mark.real_data
def test_real_ontology_has_1036_concepts_covering_every_fold_id(tmp_path):
    path = shared_data("askapatient/askapatient_ontology.json")
    records = list(read_askapatient_ontology(path))
    ids = {r.id for r in records if isinstance(r, ConceptRecord)}
    assert len(ids) == 1036
    assert sum(isinstance(r, NameRecord) for r in records) == 1036  # one primary name each
    from medlink.eval import load_askapatient

    gold = {g for m in load_askapatient(shared_data("askapatient/AskAPatient.fold-0.train.txt")) for g in m.gold}
    assert gold <= ids

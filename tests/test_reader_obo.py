import pytest

from medlink.errors import InputFormatError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.obo import read_obo
from medlink.kb.records import ConceptRecord, IdAliasRecord, NameRecord, RelationRecord, XrefRecord


@pytest.fixture
def records(fixtures):
    return list(read_obo(fixtures / "obo" / "mini_hp.obo"))


def test_terms_definitions_and_obsolete_skipped(records):
    concepts = {r.id: r for r in records if isinstance(r, ConceptRecord)}
    assert set(concepts) == {"HP:0000001", "HP:0000118", "HP:0012638", "HP:0001250", "HP:0001658"}
    assert concepts["HP:0001250"].definition.startswith("A seizure is an intermittent abnormality")
    assert concepts["HP:0001250"].source == "mini_hp"


def test_synonym_scopes_types_escapes_and_dropped_obsolete_synonyms(records):
    names = {(r.text, r.kind, r.scope) for r in records if isinstance(r, NameRecord) and r.concept_id == "HP:0001250"}
    assert names == {
        ("Seizure", "preferred", None),
        ("Epileptic seizure", "synonym", "EXACT"),
        ("Seizures", "synonym", "EXACT plural_form"),
        ("Fits", "synonym", "EXACT layperson"),
        ("Sz", "abbreviation", "EXACT abbreviation"),
        ('The "falling" sickness', "synonym", "RELATED"),
    }


def test_relations_xrefs_and_id_aliases(records):
    relations = {(r.head, r.relation, r.tail) for r in records if isinstance(r, RelationRecord)}
    assert ("HP:0001250", "is_a", "HP:0012638") in relations
    assert ("HP:0001250", "part_of", "HP:0000118") in relations
    assert ("HP:0001658", "is_a", "HP:0000118") in relations  # is_a without a "! comment"
    xrefs = {r.xref for r in records if isinstance(r, XrefRecord) and r.concept_id == "HP:0001250"}
    assert xrefs == {"SNOMEDCT_US:91175000", "UMLS:C0036572"}
    aliases = {(r.alias, r.concept_id, r.reason) for r in records if isinstance(r, IdAliasRecord)}
    assert aliases == {
        ("HP:0001262", "HP:0001250", "alt_id"),
        ("HP:0002279", "HP:0001250", "alt_id"),
        ("HP:0000002", "HP:0001658", "replaced_by"),
    }


def test_include_obsolete_keeps_the_term(fixtures):
    records = list(read_obo(fixtures / "obo" / "mini_hp.obo", include_obsolete=True))
    assert "HP:0000002" in {r.id for r in records if isinstance(r, ConceptRecord)}


def test_typedef_stanzas_are_not_concepts(records):
    assert "part_of" not in {r.id for r in records if isinstance(r, ConceptRecord)}


def test_malformed_tag_line_fails_with_location(fixtures):
    path = fixtures / "obo" / "malformed.obo"
    with pytest.raises(InputFormatError) as error:
        list(read_obo(path))
    assert (error.value.path, error.value.line) == (str(path), 10)
    assert "tag: value" in error.value.message


def test_skip_invalid_counts_bad_lines_and_stanzas(fixtures):
    policy = InvalidLinePolicy(skip_invalid=True)
    records = list(read_obo(fixtures / "obo" / "malformed.obo", policy=policy))
    # the bad tag line, the unquoted synonym, and the stanza without a name
    assert policy.total_skipped == 3
    assert {r.id for r in records if isinstance(r, ConceptRecord)} == {"DOID:4", "DOID:9351"}

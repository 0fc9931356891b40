import sqlite3

import pytest

from medlink.errors import InputFormatError, MedlinkError, MissingInputError
from medlink.kb import build as build_module
from medlink.kb.build import SourceSpec, build_kb
from medlink.kb.records import ConceptRecord, NameRecord, TypeRecord
from medlink.kb.store import KB


@pytest.fixture
def composite(tmp_path, fixtures):
    out = tmp_path / "composite.sqlite"
    report = build_kb(
        out,
        [f"obo:{fixtures / 'obo' / 'mini_hp.obo'}", f"icd10cm:{fixtures / 'icd10cm' / 'mini_tabular.xml'}", f"biosyn=MESH:{fixtures / 'biosyn' / 'medic_small.txt'}"],
        progress=False,
    )
    return report, KB.open(out)


def test_composite_kb_has_namespaced_ids_from_every_source(composite):
    report, kb = composite
    stats = kb.stats()
    assert stats["concepts"] == 5 + 23 + 5
    assert {"HP:0001250", "ICD10CM:E11.9", "MESH:D009203"} <= {cid for cid, _ in kb.iter_concepts()}
    assert [s["format"] for s in stats["sources"]] == ["obo", "icd10cm", "biosyn"]
    assert stats["names_by_kind"]["preferred"] == stats["concepts"]
    assert report.checksum == kb.checksum


def test_concept_lookup_resolves_alt_and_replaced_ids(composite):
    _, kb = composite
    seizure = kb.concept("HP:0001262")  # an alt_id
    assert seizure.id == "HP:0001250" and seizure.name == "Seizure"
    assert ("Fits", "synonym") in seizure.synonyms and ("Sz", "abbreviation") in seizure.synonyms
    assert seizure.parents == ["HP:0012638"]
    assert seizure.relations == [("part_of", "HP:0000118")]
    assert seizure.xrefs == ["SNOMEDCT_US:91175000", "UMLS:C0036572"]
    assert kb.resolve("HP:0000002") == "HP:0001658"  # obsolete, replaced_by
    assert kb.resolve("MESH:613097") == "MESH:C567755"
    assert kb.concept("HP:9999999") is None


def test_exact_lookup_by_normalised_name(composite):
    _, kb = composite
    assert kb.lookup("heart attack") == [("HP:0001658", "Heart attack", "synonym"), ("MESH:D009203", "Heart Attack", "synonym")]
    assert [hit[0] for hit in kb.lookup("  TYPE-2 diabetes   mellitus ")] == ["ICD10CM:E11"]
    assert kb.lookup("no such disease") == []


def test_graph_navigation(composite):
    _, kb = composite
    assert sorted(kb.children("HP:0000118")) == ["HP:0001658", "HP:0012638"]
    assert kb.parents("ICD10CM:T15.01XA") == ["ICD10CM:T15.01"]
    assert ("part_of", "HP:0001250", "in") in kb.neighbours("HP:0000118")
    assert ("excludes1", "ICD10CM:E11", "out") in kb.neighbours("ICD10CM:E10")


def test_xrefs_by_prefix_and_reverse(composite):
    _, kb = composite
    assert kb.xrefs("HP:0001250", prefix="UMLS") == ["UMLS:C0036572"]
    assert kb.concepts_with_xref("UMLS:C0027051") == ["HP:0001658"]


def test_iter_names_streams_everything(composite):
    _, kb = composite
    names = list(kb.iter_names(batch=3))
    assert len(names) == kb.stats()["names"]
    assert ("MESH:C567755", "STHAG6", "synonym") in names
    assert all(kind == "abbreviation" for _, _, kind in kb.iter_names(kinds=("abbreviation",)))


def test_checksum_is_deterministic_and_content_sensitive(tmp_path, fixtures):
    obo = f"obo:{fixtures / 'obo' / 'mini_hp.obo'}"
    first = build_kb(tmp_path / "a.sqlite", [obo], progress=False).checksum
    second = build_kb(tmp_path / "b.sqlite", [obo], progress=False).checksum
    other = build_kb(tmp_path / "c.sqlite", [obo, f"biosyn:{fixtures / 'biosyn' / 'dictionary_small.txt'}"], progress=False).checksum
    assert first == second != other


def test_merging_fills_missing_facts_and_names_unnamed_concepts(tmp_path, monkeypatch):
    records = [
        NameRecord("C1", "first name"),
        NameRecord("C1", "second name"),
        ConceptRecord("C1", definition="a definition"),
        ConceptRecord("C2", definition="never named"),
        TypeRecord("C2", "orphan type"),
    ]
    monkeypatch.setattr(build_module, "read_source", lambda *a, **k: iter(records))
    report = build_kb(tmp_path / "m.sqlite", ["jsonl:unused.jsonl"], progress=False)
    kb = KB.open(tmp_path / "m.sqlite")
    concept = kb.concept("C1")
    assert (concept.name, concept.definition) == ("first name", "a definition")
    assert "C2" not in kb
    assert report.finish.nameless_concepts_dropped == 1 and report.finish.orphan_rows_dropped == 1


def test_a_repeated_ids_other_preferred_names_become_synonyms(tmp_path):
    """kb-schema.md: the first preferred name stays the concept's name, a repeated id's name is added as a synonym."""
    (tmp_path / "a.tsv").write_text("id\tname\nC1\tAsthma\nC2\tFever\n")
    (tmp_path / "b.tsv").write_text("id\tname\nC1\tBronchial asthma\nC2\tFever\n")
    report = build_kb(tmp_path / "ab.sqlite", [f"tsv=X:{tmp_path / 'a.tsv'}", f"tsv=X:{tmp_path / 'b.tsv'}"], progress=False)
    kb = KB.open(tmp_path / "ab.sqlite")
    kinds = {(text, kind) for cid, text, kind in kb.iter_names() if cid == "X:C1"}
    assert kinds == {("Asthma", "preferred"), ("Bronchial asthma", "synonym")} and kb.concept("X:C1").name == "Asthma"
    assert report.finish.repeated_preferred_as_synonyms == 1 and report.finish.repeated_preferred_merged == 1
    assert [(text, kind) for cid, text, kind in kb.iter_names() if cid == "X:C2"] == [("Fever", "preferred")]  # the same name, once


def test_interrupted_build_leaves_nothing_behind(tmp_path, monkeypatch):
    def exploding(*args, **kwargs):
        yield NameRecord("C1", "a name")
        raise KeyboardInterrupt

    monkeypatch.setattr(build_module, "read_source", exploding)
    with pytest.raises(KeyboardInterrupt):
        build_kb(tmp_path / "kb.sqlite", ["jsonl:x.jsonl"], progress=False)
    assert list(tmp_path.iterdir()) == []


def test_failed_rebuild_keeps_the_previous_kb(tmp_path, fixtures):
    out = tmp_path / "kb.sqlite"
    build_kb(out, [f"obo:{fixtures / 'obo' / 'mini_hp.obo'}"], progress=False)
    with pytest.raises(InputFormatError):
        build_kb(out, [f"obo:{fixtures / 'obo' / 'malformed.obo'}"], progress=False)
    assert len(KB.open(out)) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb.sqlite"]


def test_skip_invalid_is_reported_per_source(tmp_path, fixtures):
    report = build_kb(tmp_path / "kb.sqlite", [f"biosyn:{fixtures / 'biosyn' / 'malformed.txt'}"], skip_invalid=True, progress=False)
    assert report.total_skipped == 2
    assert KB.open(tmp_path / "kb.sqlite").stats()["sources"][0]["skipped"] == 2


def test_source_spec_errors_are_actionable():
    with pytest.raises(MedlinkError, match="known formats: .*biosyn.*umls"):
        SourceSpec.parse("rrf:/some/where")
    with pytest.raises(MedlinkError, match=r"a source is FORMAT:PATH, e.g. tsv:codes.tsv"):  # a bare file name: the fix spelt out
        SourceSpec.parse("codes.tsv")
    with pytest.raises(MedlinkError, match="needs a path"):
        SourceSpec.parse("obo")
    assert SourceSpec.parse("umls=:/meta").prefix == ""
    assert SourceSpec.parse("umls:/meta").prefix == "UMLS"
    assert SourceSpec.parse("icd10cm").path is None


def test_opening_something_that_is_not_a_kb(tmp_path):
    with pytest.raises(MissingInputError, match="kb build"):
        KB.open(tmp_path / "absent.sqlite")
    (tmp_path / "junk.sqlite").write_text("not sqlite at all")
    with pytest.raises(MedlinkError, match="not a medlink KB"):
        KB.open(tmp_path / "junk.sqlite")
    sqlite3.connect(tmp_path / "other.sqlite").execute("CREATE TABLE t (x)")
    with pytest.raises(MedlinkError, match="not a medlink KB"):
        KB.open(tmp_path / "other.sqlite")


def test_kb_edits_add_facts_with_provenance_and_take_them_out_exactly(composite, tmp_path):
    """The KB API for augmentation: facts added to a copy (the KB itself untouched), each listed with its mapping, one
    already there skipped; unaugment gives back every table row for row and the original checksum."""
    from medlink.kb.edits import CarriedFact, augment, unaugment

    _, kb = composite
    facts = [
        CarriedFact("HP:0001250", "synonym", "Epileptic attack", "X:1", "skos:exactMatch", 0.9, 4),
        CarriedFact("HP:0001250", "synonym", "Seizure", "X:1", "skos:exactMatch", 0.9, 4),  # its own name: skipped
        CarriedFact("HP:0001250", "type", "disease", "X:1", "skos:exactMatch", 0.9, 4),
        CarriedFact("MESH:D009203", "definition", "Death of heart muscle.", "X:2", "skos:exactMatch", None, 5),
    ]
    added = augment(kb, tmp_path / "a.sqlite", facts, mapping_file="m.tsv", carried_with="m.tsv with x.sqlite", progress=False)
    assert added.added == {"synonyms": 1, "types": 1, "definitions": 1} and added.concepts == 2
    assert not kb.is_augmented() and kb.augmentation_summary() is None
    with KB.open(tmp_path / "a.sqlite") as augmented:
        assert augmented.is_augmented() and augmented.augmentation_rounds() == ["m.tsv with x.sqlite"]
        assert ("Epileptic attack", "synonym") in augmented.concept("HP:0001250").synonyms
        assert [(f["field"], f["line"]) for f in augmented.augmentations("HP:0001250")] == [("synonym", 4), ("type", 4)]
        assert augmented.checksum != kb.checksum and augmented.meta["augmented_from"] == f"{kb.path} (checksum {kb.checksum})"
    report = unaugment(tmp_path / "a.sqlite", tmp_path / "b.sqlite")
    assert (report.removed, report.rounds, report.checksum, report.matches_original) == (3, 1, kb.checksum, True)
    with sqlite3.connect(kb.path) as before, sqlite3.connect(tmp_path / "b.sqlite") as after:
        for table in ("concepts", "names", "types", "relations", "xrefs", "id_aliases"):
            query = f"SELECT * FROM {table} ORDER BY rowid"
            assert before.execute(query).fetchall() == after.execute(query).fetchall(), table
    with pytest.raises(MedlinkError, match="cannot add xref"):
        augment(kb, tmp_path / "c.sqlite", [CarriedFact("HP:0001250", "xref", "UMLS:C1", "X:1", "skos:exactMatch")],
                mapping_file="m.tsv", carried_with="m.tsv", progress=False)
    with pytest.raises(MedlinkError, match="one of the sources"):
        augment(kb, kb.path, facts, mapping_file="m.tsv", carried_with="m.tsv", progress=False)
    assert not (tmp_path / "c.sqlite").exists()

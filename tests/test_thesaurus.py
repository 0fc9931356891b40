import json
from pathlib import Path

import pytest

from medlink.errors import DamagedFileError, MedlinkError
from medlink.kb.synonym_sets import hpo_synonyms, packaged_synonym_sets, shorthand_synonyms
from medlink.retrieval.names import KB_ORIGIN, NameTable
from medlink.retrieval.thesaurus import REACH_FILE, ThesaurusGenerator, reach_by_key
from medlink.text import normalize

FIXTURES = Path(__file__).parent / "fixtures"
CONCEPTS = ["C1", "C2", "C3"]
# a clinician's KB: no lay names
NAMES = [("Insomnia", "C1", KB_ORIGIN), ("Myocardial infarction", "C2", KB_ORIGIN), ("Heart failure", "C3", KB_ORIGIN)]
SETS = [("Insomnia", "Trouble sleeping", "can't sleep"), ("Myocardial infarction", "Heart attack"), ("Cardiac arrest", "Heart stopped")]


@pytest.fixture
def table():
    return NameTable.build(NAMES, {c: i for i, c in enumerate(CONCEPTS)}, normalize)


def first_ids(generator, mentions):
    return [[c.concept_id for c in found] for found in generator.search([normalize(m) for m in mentions], k=5)]


def test_hpo_sets_hold_names_and_exact_synonyms_but_no_abbreviation_related_or_obsolete_name():
    seizure = [text for concept, text in hpo_synonyms(FIXTURES / "obo" / "mini_hp.obo") if concept == "HP:0001250"]
    assert seizure == ["Seizure", "Epileptic seizure", "Seizures", "Fits"]  # not "Sz", "Epilepsy" nor the "falling" sickness
    assert ("HP:0001658", "MI") not in set(hpo_synonyms(FIXTURES / "obo" / "mini_hp.obo"))


def test_the_packaged_sets_join_hpo_and_the_shorthand_list_by_concept():
    insomnia = packaged_synonym_sets()["HP:0100785"]
    assert "can't sleep" in insomnia  # the shorthand list's
    assert any("asleep" in text.lower() for text in insomnia)  # HPO's own lay wording
    assert not any(text == "CAD" for _, text in shorthand_synonyms())  # abbreviations stay out
    assert "Heart attack" in packaged_synonym_sets()["HP:0001658"]


def test_a_synonym_reaches_the_names_of_this_kb_that_another_member_spells(table):
    generator = ThesaurusGenerator(table, CONCEPTS, "thesaurus", reach_by_key(table, SETS, normalize))
    assert first_ids(generator, ["trouble sleeping", "sleeping trouble", "heart attacks", "heart stopped", "insomnia"]) == [
        ["C1"], ["C1"], ["C2"], [], []]  # word order and plurals forgiven; a set this KB names nothing of; its own name: the exact stages'


def test_the_reach_is_saved_with_the_index_and_a_damaged_one_is_refused_by_name(table, tmp_path):
    generator = ThesaurusGenerator(table, CONCEPTS, "thesaurus", reach_by_key(table, SETS, normalize))
    generator.save(tmp_path)
    loaded = ThesaurusGenerator.load(tmp_path, table, CONCEPTS, "thesaurus")
    assert loaded.reach == generator.reach and first_ids(loaded, ["heart attack"]) == [["C2"]]
    saved = json.loads((tmp_path / REACH_FILE).read_text())
    saved["reach"][next(iter(saved["reach"]))] = [len(table.keys)]  # a row past the table
    (tmp_path / REACH_FILE).write_text(json.dumps(saved))
    with pytest.raises(DamagedFileError, match=REACH_FILE):
        ThesaurusGenerator.load(tmp_path, table, CONCEPTS, "thesaurus")


def test_built_from_the_packaged_sets_it_carries_lay_wording_to_a_clinicians_kb(table):
    generator = ThesaurusGenerator.build(table, CONCEPTS, normalize=normalize)
    assert first_ids(generator, ["heart attack", "can't sleep", "difficulty staying or falling asleep"]) == [["C2"], ["C1"], ["C1"]]


def test_a_kb_that_has_a_sets_concept_says_its_names_itself():
    hpo_ids = ["HP:0001658", "C1"]
    table = NameTable.build([("Myocardial infarction", "HP:0001658", KB_ORIGIN), ("Insomnia", "C1", KB_ORIGIN)], {c: i for i, c in enumerate(hpo_ids)}, normalize)
    generator = ThesaurusGenerator.build(table, hpo_ids, normalize=normalize)  # as in a copy of the default KB without "Heart attack"
    assert first_ids(generator, ["heart attack", "can't sleep"]) == [[], ["C1"]]


def test_the_packaged_sets_are_kept_in_the_cache_directory_and_a_damaged_copy_is_made_again(tmp_path, monkeypatch):
    from medlink.kb import synonym_sets

    monkeypatch.setenv("MEDLINK_HOME", str(tmp_path))
    synonym_sets.packaged_synonym_sets.cache_clear()
    first = synonym_sets.packaged_synonym_sets()
    cache = tmp_path / synonym_sets.CACHE_NAME
    assert json.loads(cache.read_text())["sets"]["HP:0001658"] == list(first["HP:0001658"])
    cache.write_text('{"recipe": "x", "se')  # cut short
    synonym_sets.packaged_synonym_sets.cache_clear()
    assert synonym_sets.packaged_synonym_sets() == first and json.loads(cache.read_text())["sets"]
    synonym_sets.packaged_synonym_sets.cache_clear()


def test_words_of_degree_or_whose_are_left_out_as_the_words_form_leaves_them(table):
    generator = ThesaurusGenerator(table, CONCEPTS, "thesaurus", reach_by_key(table, SETS, normalize))
    assert first_ids(generator, ["my heart attack", "very bad heart attacks", "my"]) == [["C2"], ["C2"], []]
    assert generator.reading_evidence("my heart attack", "Myocardial infarction") == {
        "synonym": "thesaurus read 'my heart attack' as a synonym of 'Myocardial infarction'"}



def test_a_users_own_synonyms_join_hpos_or_stand_alone(tmp_path):
    ids = ["K1", "K2", "K3"]
    names = [("Cephalalgia", "K1", KB_ORIGIN), ("Epistaxis", "K2", KB_ORIGIN), ("Myocardial infarction", "K3", KB_ORIGIN)]
    table = NameTable.build(names, {c: i for i, c in enumerate(ids)}, normalize)
    own = f"tsv:{FIXTURES / 'lay' / 'own_synonyms.tsv'}"
    both = ThesaurusGenerator.build(table, ids, normalize=normalize, synonyms=[own])
    alone = ThesaurusGenerator.build(table, ids, normalize=normalize, synonyms=[own], hpo=False)
    mentions = ["sore head", "bloody nose", "heart attack"]
    assert first_ids(both, mentions) == [["K1"], ["K2"], ["K3"]] and first_ids(alone, mentions) == [["K1"], ["K2"], []]
    (tmp_path / "bad.tsv").write_text("id\tname\nL1\n", encoding="utf-8")
    with pytest.raises(MedlinkError, match=r"bad\.tsv:2: expected 2 tab-separated columns"):
        ThesaurusGenerator.build(table, ids, normalize=normalize, synonyms=[f"tsv:{tmp_path / 'bad.tsv'}"])
    with pytest.raises(MedlinkError, match="unknown key 'scopes'"):
        ThesaurusGenerator.build(table, ids, normalize=normalize, scopes=["RELATED"])

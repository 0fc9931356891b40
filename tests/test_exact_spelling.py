"""The exact generator's spelling form: it answers only a mention a spelling correction changes, by the names its
reading spells exactly, and the default-dense preset weighs it as its dense stage (a misspelling the dense stage reads
poorly still finds its name)."""

from __future__ import annotations

from medlink.linking.config import default_dense_config
from medlink.retrieval.exact import ExactGenerator
from medlink.retrieval.names import NameTable
from medlink.text.normalize import normalize

NAMES = [("Pneumonia", "C1"), ("Pyuria", "C2"), ("Diabetes mellitus", "C3"), ("Heart attack", "C4"), ("Fever", "C5"), ("MEN1", "C6"),
         ("Pica", "C7"), ("Meats allergy", "C8")]


def generator(tmp_path=None, names=NAMES, **params) -> ExactGenerator:
    positions = {cid: i for i, cid in enumerate(sorted({c for _, c in names}))}
    table = NameTable.build(((text, cid, 1) for text, cid in names), positions, normalize)
    return ExactGenerator.build(table, sorted(positions), "spelled", **params)


def test_only_what_a_correction_changes_is_answered_by_its_reading(tmp_path):
    spelled = generator(spelling=True)
    mentions = ["pnuemonia", "pneumonia", "diabetes melitus", "zzzzzz", "fevr", "fev", "men2", "ptca", "mets allergy"]
    hits = spelled.search_hits(mentions, k=5)
    found = [[spelled.concept_ids[c] for c in hits.concepts[hits.row(i)]] for i in range(len(mentions))]
    # the name as written is the exact stage's; nothing spells "zzzzzz"; a word of four letters is read too, by a letter
    # it lacks, not one of three, nor a short form ("MEN2" is no misspelt "MEN1", "PTCA" no "Pica", "mets" no "meats")
    assert found == [["C1"], [], ["C3"], [], ["C5"], [], [], [], []]
    assert spelled.reading("pnuemonia") == "pneumonia" and spelled.reading("pneumonia") is None
    spelled.save(tmp_path / "spelled")
    loaded = ExactGenerator.load(tmp_path / "spelled", spelled.table, spelled.concept_ids, "spelled")
    assert loaded.spelling and loaded.name_words.saved is not None and loaded.reading("pnuemonia") == "pneumonia"
    assert generator().reading("pnuemonia") is None  # the plain exact stage reads a mention as written


def test_the_default_dense_preset_weighs_the_spelled_stage_as_its_dense_stage():
    config = default_dense_config(dense_weight=3.0).to_dict()
    assert {"name": "spelled", "type": "exact", "names": "kb+memory", "params": {"spelling": True}} in config["generators"]
    assert config["fusion"]["weights"]["spelled"] == config["fusion"]["weights"]["dense"] == 3.0


def test_the_words_form_reads_a_side_no_name_says_as_the_rest_of_the_mention():
    """"right hip fracture": no name says the side, so the words stage answers for "hip fracture"; a name that says the
    side is matched with it ("Left ventricular hypertrophy" is no plain "Ventricular hypertrophy")."""
    words = generator(names=[("Fracture of hip", "C5"), ("Left ventricular hypertrophy", "C6"), ("Ventricular hypertrophy", "C7")], words=True)
    hits = words.search_hits(["right hip fracture", "left ventricular hypertrophy", "left", "right lung"], k=5)
    found = [[words.concept_ids[c] for c in hits.concepts[hits.row(i)]] for i in range(4)]
    assert found == [["C5"], ["C6"], [], []]


def test_the_words_form_reads_words_of_degree_or_whose_no_name_says_as_the_rest_of_the_mention():
    """People add how bad, how often and whose ("very bad headaches", "my legs are restless"); a name that says the
    degree keeps it ("Severe hearing impairment" is no plain "Hearing impairment")."""
    names = [("Headache", "C1"), ("Restless legs", "C2"), ("Severe hearing impairment", "C3"), ("Hearing impairment", "C4")]
    words = generator(names=names, words=True)
    mentions = ["very bad headaches", "my legs are restless", "severe hearing impairment", "mild hearing impairment", "very bad"]
    hits = words.search_hits(mentions, k=5)
    found = [[words.concept_ids[c] for c in hits.concepts[hits.row(i)]] for i in range(len(mentions))]
    assert found == [["C1"], ["C2"], ["C3"], ["C4"], []]

"""People's words for a symptom ("sore knees", "my hip hurts", "hard to fall asleep") read as the words names use, by the
words stage, only where the mention's own words match no name."""

from __future__ import annotations

from medlink.linking.config import default_config
from medlink.retrieval.exact import ExactGenerator
from medlink.text.lay_words import lay_reading
from medlink.text.normalize import normalize
from tests.test_exact_spelling import generator

NAMES = [("Knee pain", "C1"), ("Pressure sore", "C2"), ("Ankle swelling", "C3"), ("Difficulty falling asleep", "C4"),
         ("Inability to walk", "C5"), ("Can't sleep", "C6"), ("Muscle weakness", "C7")]


def found(stage: ExactGenerator, mentions: list[str]) -> list[list[str]]:
    hits = stage.search_hits([normalize(m) for m in mentions], k=5)  # the linker searches normalised mentions
    return [[stage.concept_ids[c] for c in hits.concepts[hits.row(i)]] for i in range(len(mentions))]


def test_a_lay_reading_replaces_the_longest_lay_phrase_and_says_none_when_nothing_is_lay():
    assert lay_reading("hard to fall asleep".split()) == "difficulty fall asleep"
    assert lay_reading("my hip hurts".split()) == "my hip pain"
    assert lay_reading("can t walk".split()) == "inability to walk"  # "can't" as the normaliser writes it
    assert lay_reading("knee pain".split()) is None


def test_the_words_stage_reads_lay_words_only_where_the_mention_own_words_match_no_name(tmp_path):
    stage = generator(names=NAMES, words=True, lay_words=True)
    mentions = ["sore knees", "very sore knee", "pressure sore", "swollen ankles", "hard to fall asleep", "can't walk",
                "can't sleep", "weak muscles", "sore"]
    # "pressure sore" and "can't sleep" are names and stay theirs; a lay word alone spells no name
    assert found(stage, mentions) == [["C1"], ["C1"], ["C2"], ["C3"], ["C4"], ["C5"], ["C6"], ["C7"], []]
    stage.save(tmp_path / "words")
    loaded = ExactGenerator.load(tmp_path / "words", stage.table, stage.concept_ids, "words")
    assert loaded.lay_words and found(loaded, ["sore knees"]) == [["C1"]]
    plain = generator(names=NAMES, words=True)
    assert not plain.lay_words and found(plain, ["sore knees", "swollen ankles"]) == [[], []]


def test_the_default_config_reads_lay_words():
    words = next(g for g in default_config().to_dict()["generators"] if g["name"] == "words")
    assert words["params"] == {"words": True, "lay_words": True}

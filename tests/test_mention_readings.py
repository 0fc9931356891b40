"""Readings of a mention as names say it: people's words for a symptom ("sore knees", "my hip hurts", "hard to fall
asleep") by the words stage, only where the mention's own words match no name; a note's shortened words ("breast ca",
"L knee pain") by the linker's key, as the dictionary finder reads them in running text."""

from __future__ import annotations

from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.config import default_config
from medlink.linking.linker import Linker
from medlink.linking.output import explanation_lines, result_json
from medlink.retrieval.exact import ExactGenerator
from medlink.text.finders.word_shorthand import shorthand_reading
from medlink.text.lay_words import lay_reading
from medlink.text.normalize import normalize
from tests.test_exact_spelling import generator

NAMES = [("Knee pain", "C1"), ("Pressure sore", "C2"), ("Ankle swelling", "C3"), ("Difficulty falling asleep", "C4"),
         ("Inability to walk", "C5"), ("Can't sleep", "C6"), ("Muscle weakness", "C7")]


def found(stage: ExactGenerator, mentions: list[str]) -> list[list[str]]:
    hits = stage.search_hits([normalize(m) for m in mentions], k=5)  # the linker searches normalised mentions
    return [[stage.concept_ids[c] for c in hits.concepts[hits.row(i)]] for i in range(len(mentions))]


def test_a_lay_reading_replaces_the_longest_lay_phrase_and_says_none_when_nothing_is_lay():
    assert lay_reading("hard to fall asleep".split()) == "difficulty falling asleep"
    assert lay_reading("my hip hurts".split()) == "my hip pain"
    assert lay_reading("can t walk".split()) == "inability to walk"  # "can't" as the normaliser writes it
    assert lay_reading("knee pain".split()) is None
    assert lay_reading("sore feet".split()) == "pain foot"  # a plural no stemmer takes back to "foot"


def test_the_words_stage_reads_lay_words_only_where_the_mention_own_words_match_no_name_and_the_reading_does(tmp_path):
    stage = generator(names=NAMES, words=True, lay_words=True)
    mentions = ["sore knees", "very sore knee", "pressure sore", "swollen ankles", "hard to fall asleep", "can't walk", "can't sleep",
                "weak muscles", "sore", "sore elbows"]
    readings = [stage.lay_reading(normalize(m)) for m in mentions]  # the linker searches normalised mentions
    # "pressure sore" and "can't sleep" are names, "weak muscles" stems as "Muscle weakness" does: they stay theirs; no
    # name says "pain" alone or "elbow pain" here
    assert readings == ["pain knees", "very pain knee", None, "swelling ankles", "difficulty falling asleep", "inability to walk", None, None,
                        None, None]
    assert found(stage, ["pain knees", "sore knees"]) == [["C1"], []]  # the stage searches what it is given
    stage.save(tmp_path / "words")
    loaded = ExactGenerator.load(tmp_path / "words", stage.table, stage.concept_ids, "words")
    assert loaded.lay_words and loaded.lay_reading("sore knees") == "pain knees"
    plain = generator(names=NAMES, words=True)
    assert not plain.lay_words and plain.lay_reading("sore knees") is None


def test_a_leg_or_an_arm_is_read_as_the_limb_icd_10_cm_names_where_the_mention_own_words_match_no_name():
    stage = generator(names=[("Cellulitis of left lower limb", "L03.116"), ("Pain in right leg", "M79.604")], words=True, lay_words=True)
    readings = [stage.lay_reading(normalize(m)) for m in ["cellulitis of the left leg", "right leg pain", "left arm cellulitis"]]
    assert readings == ["cellulitis of the left lower limb", None, None]  # no name here says an upper limb's cellulitis
    assert lay_reading("sore arms".split()) == "pain arms" and lay_reading("sore arms".split(), limbs=True) == "pain upper limb"
    assert lay_reading("cellulitis of the right lower leg".split(), limbs=True) == "cellulitis of the right lower limb"


def test_the_default_config_reads_lay_words():
    words = next(g for g in default_config().to_dict()["generators"] if g["name"] == "words")
    assert words["params"] == {"words": True, "lay_words": True}


def test_a_shorthand_reading_writes_shortened_words_out_where_a_word_is_written_as_names_spell_it():
    readings = {text: shorthand_reading(text, normalize) for text in ["breast ca", "L knee pain", "hip fx", "DM", "Ca 9.2", "HTN", "heart attack"]}
    # a shortened word alone, or beside a number only, is no reading ("DM" may be myotonic dystrophy, "Ca 9.2" calcium)
    assert readings == {"breast ca": "breast cancer", "L knee pain": "left knee pain", "hip fx": "hip fracture", "DM": None, "Ca 9.2": None,
                        "HTN": None, "heart attack": None}
    assert shorthand_reading("latent TB", normalize) == "latent tuberculosis" and shorthand_reading("TB", normalize) is None
    assert shorthand_reading("MRSA pneumonia", normalize) == "methicillin resistant staphylococcus aureus pneumonia"
    assert shorthand_reading("R knee OA", normalize) == "right knee osteoarthritis"
    assert shorthand_reading("DCIS left breast", normalize) == "ductal carcinoma in situ left breast"


def test_link_reads_shortened_words_as_annotate_does_and_lay_words_as_names_say_them(tmp_path):
    source = tmp_path / "terms.tsv"
    source.write_text("id\tname\nC1\tBreast cancer\nC2\tAbrasion of breast\nC3\tPain in left knee\nC4\tKnee pain\nC5\tMuscle pain\n"
                      "C6\tBed sore\n", encoding="utf-8")
    with KB.open(build_kb(tmp_path / "kb.sqlite", [f"tsv:{source}"], progress=False).path) as kb:
        linker = Linker.build(kb, default_config(), dictionary=False)
    firsts = [r.candidates[0].concept_id for r in linker.link(["breast ca", "L knee pain", "knee pain", "sore muscles", "bed sore"], k=3)]
    assert firsts == ["C1", "C3", "C4", "C5", "C6"]  # every stage searches "pain muscles": no "Bed sore" for the lay word
    assert linker.key("sore muscles") == "pain muscles" and linker.key("bed sore") == "bed sore"
    results = linker.link(["breast ca", "knee pain"], k=1)
    assert [r.read_as for r in results] == ["breast cancer", None]  # what the stages searched, where not the mention's words
    assert explanation_lines(results[0])[0].startswith("breast ca (read as 'breast cancer'): ")
    assert result_json(results[0])["read_as"] == "breast cancer" and "read_as" not in result_json(results[1])
    assert shorthand_reading("RUL nodule", normalize) == "right upper lobe pulmonary nodule"  # a lung's lobe, as names say it
    assert linker.key("breast ca") == linker.key("breast cancer")  # one reading: what the annotator's results are kept by

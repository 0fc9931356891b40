"""The dictionary finder: word-boundary matching, case-sensitive short forms, stop names, approximate matches,
overlap policies, exact offsets, and a saved finder that finds what the built one found (or is refused when damaged)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from medlink.core import Annotation, Document
from medlink.errors import DamagedFileError, MedlinkError
from medlink.text.finders import resolve_overlaps
from medlink.text.finders.dictionary import DictionaryFinder, DictionaryOptions
from medlink.text.finders.dictionary_files import is_current
from medlink.text.finders.word_forms import american_spelling, classical_singular, loose_word, slip
from medlink.text.finders.exclusions import read_exclusions
from medlink.text.plain_forms import inverted_form, plain_form
from medlink.text.normalize import normalize
from medlink.text.spelling import SpellingIndex, edits_apart, one_edit_apart
from medlink.text.tokens import tokenize

NAMES = ["Myocardial infarction", "MI", "Chest pain", "Diabetes mellitus", "T2DM", "ALL", "Acute lymphoblastic leukemia",
         "Alzheimer's disease", "Tumor", "Was", "Pain", "Breast cancer", "Breast", "Cancer", "Sjögren syndrome", "ab"]


def spans(finder, text):
    return [(a.text, a.infons.get("match", "exact")) for a in finder.find(Document.from_text(text))]


@pytest.fixture(scope="module")
def finder():
    return DictionaryFinder.build(NAMES, normalize)


def test_tokens_keep_offsets_and_normalise_like_names():
    text = "Sjögren's  syndrome—ﬁbrosis (T2DM)"
    tokens = tokenize(text, normalize)
    assert [t.norm for t in tokens] == ["sjogren", "s", "syndrome", "fibrosis", "t2dm"]
    assert [text[t.start:t.end] for t in tokens] == ["Sjögren", "s", "syndrome", "ﬁbrosis", "T2DM"]
    assert " ".join(t.norm for t in tokens[2:4]) == normalize("syndrome ﬁbrosis")


def test_whole_words_longest_match_and_offsets(finder):
    text = "Hx of myocardial infarction, chest-pain and breast cancer; painful breasts."
    found = finder.find(Document.from_text(text))
    assert [a.text for a in found] == ["myocardial infarction", "chest-pain", "breast cancer", "breasts"]
    assert all(text[a.start:a.end] == a.text and a.source == "dictionary" for a in found)  # "pain" inside "painful": no


def test_touching_passages_end_words_and_names(finder):
    from medlink.core import Passage

    document = Document("e", [Passage(0, "Chest pain"), Passage(10, "MI today"), Passage(18, "breast"), Passage(24, "cancer")])
    assert document.text == "Chest painMI todaybreastcancer"  # no character between them: offsets stay exact
    found = [(a.start, a.end, a.text) for a in finder.find(document)]
    # each passage's words are found, and no name runs from one passage into the next ("breast" + "cancer")
    assert found == [(0, 10, "Chest pain"), (10, 12, "MI"), (18, 24, "breast"), (24, 30, "cancer")]


def test_short_forms_are_case_sensitive(finder):
    assert spans(finder, "an MI and T2DM; ALL relapsed") == [("MI", "exact"), ("T2DM", "exact"), ("ALL", "exact")]
    assert spans(finder, "mi casa, all of them, t2dm") == []
    assert spans(finder, "two MIs; Mis and mis") == [("MIs", "exact")]  # a plural in capitals is the short form


def test_a_short_form_glued_to_a_locant_or_an_isomer_prefix_is_a_chemical_name():
    finder = DictionaryFinder.build(["HT", "RA", "MED", "ALD"], normalize)
    text = "serotonin (5-HT) neurons; 13-cis-RA and D-MED or L-MED; in HT, RA, X-ALD and non-HT groups"
    assert [a.text for a in finder.find(Document.from_text(text))] == ["HT", "RA", "ALD", "HT"]


def test_a_short_form_glued_to_a_number_after_it_is_a_product_or_gene_name():
    finder = DictionaryFinder.build(["MK", "IL"], normalize)
    text = "MK-801 and IL-6 were given; MK 801 too; the MK patients; IL-"
    kept = [text.index("MK 801"), text.index("MK patients"), text.rindex("IL")]
    assert [(a.start, a.text) for a in finder.find(Document.from_text(text))] == list(zip(kept, ["MK", "MK", "IL"]))
    from medlink.linking.consistency import propagated

    found = finder.find(Document.from_text(text))
    assert [(a.start, a.text) for a in propagated(text, found)] == []  # "MK-801" is no other occurrence of the short form


def test_stop_words_and_short_names_are_left_out(finder):
    assert spans(finder, "It was an ab test") == []  # "Was" is a stop word, "ab" under min_length and not capitals
    kept = DictionaryFinder.build(NAMES, normalize, DictionaryOptions(stop_words=False, min_length=2))
    assert [t for t, _ in spans(kept, "It was an ab test")] == ["was", "ab"]
    fewer = DictionaryFinder.build(NAMES, normalize, DictionaryOptions(stop_names=("pain",)))
    assert spans(fewer, "pain") == []


def test_names_are_found_as_text_says_them(tmp_path):
    names = ["Botulism NOS", "Heart disease, unspecified", "CLL, unspecified", "Pain NOS", "Pain", "Other NOS", "Ab NOS",
             "Parkinson's disease", "Graves' disease", "Down's syndrome", "Acute on chronic systolic (congestive) heart failure"]
    finder = DictionaryFinder.build(names, normalize)
    text = ("Botulism and heart disease; CLL, not cll; pain; other; ab. Botulism NOS too. Parkinson's, Graves', Down's. "
            "Acute on chronic systolic heart failure.")
    # the plain form of a capitals-only name stays case-sensitive; one that is a stop word or too short is left out
    assert [t for t, _ in spans(finder, text)] == ["Botulism", "heart disease", "CLL", "pain", "Botulism NOS", "Parkinson's", "Down's",
                                                   "Acute on chronic systolic heart failure"]
    # an eponym's possessive is matched exactly and capitalised only: not "parkinson's", "down" or "Parkinson" (the "s"
    # ignored); "Graves'" is never one (normalised, it is the noun "graves")
    assert [t for t, _ in spans(finder, "visited the graves; parkinson's, calm down; Parkinson and Parkinson disease")] == ["Parkinson disease"]
    assert [plain_form(n) for n in ("Ehlers-Danlos syndrome, type unspecified", "Heart disease", "Parkinson's disease NOS",
                                    "Tuberculosis (TB) NOS", "(Irreversible) Eisenmenger's disease")] == [
        None, None, "Parkinson's", "Tuberculosis", "(Irreversible) Eisenmenger's"]  # "unspecified" qualifies "type" there
    assert [plain_form(n) for n in ("Acute obstructive laryngitis [croup]", "Disorder, unspecified", "Syndromes NOS")] == [
        "Acute obstructive laryngitis", None, None]  # a lone generic head names nothing
    # what ICD-10-CM says is not specified is the plain condition; a clause before another one qualifies that one
    assert [plain_form(n) for n in ("Bronchitis, not specified as acute or chronic", "Keratoconjunctivitis sicca, not specified as "
                                    "Sjögren's, right eye", "Malignant neoplasm of liver, not specified as primary or secondary",
                                    "Incomplete rotator cuff tear or rupture not specified as traumatic")] == [
        "Bronchitis", None, "Malignant neoplasm of liver", "Incomplete rotator cuff tear or rupture"]
    assert [t for t, _ in spans(finder, "Mrs. Parkinson's chart; Dr Parkinson's notes; Down's")] == ["Down's"]  # a person's, after a title
    signed = DictionaryFinder.build(["HR+", "HER2-", "Hormone receptor positive", "Elevated sweat Cl-"], normalize)
    assert [t for t, _ in spans(signed, "HR 88, HER2- and hormone receptor positive; elevated sweat Cl")] == ["HER2-", "hormone receptor positive"]
    # a sign is read as its word in names and text alike: "HER2 negative" is "HER2-"; not a hyphen at a line end or a suspended one
    assert [t for t, _ in spans(signed, "HER2- tumour, HER2 negative, HR+ and elevated sweat Cl-.")] == [
        "HER2-", "HER2 negative", "HR+", "elevated sweat Cl-"]
    assert spans(signed, "HER2-\npositive; HER2- or HER2-like") == [] and spans(signed, "HER2\u2013, HER2\u2212") == [("HER2\u2013", "exact"), ("HER2\u2212", "exact")]
    from medlink.text.normalize import Normalizer

    dropped = Normalizer.from_signature('{"casefold": true, "keep": "", "nfkc": true, "strip_punctuation": true}')  # a KB from before
    assert [t for t, _ in spans(DictionaryFinder.build(["HR+", "Hormone receptor positive"], dropped), "HR 88, HR+")] == []
    finder.excluded = read_exclusions(["# names that are words here", "Botulism NOS"], normalize)  # its plain form goes with it
    assert [t for t, _ in spans(finder, "Botulism NOS, botulism and Parkinson's")] == ["Parkinson's"]
    finder.excluded = frozenset()
    finder.save(tmp_path / "dictionary")
    assert is_current(tmp_path / "dictionary")
    description = json.loads((tmp_path / "dictionary" / "dictionary.json").read_text())
    del description["plain_forms"]
    (tmp_path / "dictionary" / "dictionary.json").write_text(json.dumps(description))
    assert not is_current(tmp_path / "dictionary")  # a default index's finder from before: rebuilt
    assert [t for t, _ in spans(DictionaryFinder.load(tmp_path / "dictionary"), text)] == [t for t, _ in spans(finder, text)]


def test_an_of_phrase_is_also_found_the_way_text_puts_it():
    """ICD-10-CM's "Fracture of hip NOS" is what a note calls a "left hip fracture"; a slot of the classification
    ("Fracture of other part", "Fracture of neck of femur") is not turned round."""
    assert [inverted_form(n) for n in ("Fracture of hip", "Infection of the urinary tract", "Fracture of other part", "Fracture of neck of femur",
                                       "Closed fracture of hip", "Loss of weight", "Fracture of hip NOS")] == [
        "hip fracture", "urinary tract infection", None, None, None, "weight loss", None]
    assert [inverted_form(n) for n in ("Pneumonia due to COVID-19", "Enterocolitis due to Clostridium difficile",
                                       "Pneumonia due to other specified infectious organisms", "Burn due to ferry-boat on fire",
                                       "Malabsorption due to intolerance to protein")] == [
        "COVID-19 pneumonia", "Clostridium difficile enterocolitis", None, None, None]
    covid = DictionaryFinder.build(["Pneumonia due to COVID-19", "COVID-19", "Pneumonia"], normalize)
    assert [t for t, _ in spans(covid, "Admitted with COVID-19 pneumonia.")] == ["COVID-19 pneumonia"]  # one span, not two
    finder = DictionaryFinder.build(["Fracture of hip NOS", "Fracture", "Infection of kidney", "Fracture of other part"], normalize)
    assert [t for t, _ in spans(finder, "s/p fall with left hip fracture; kidney infections; other part fracture")] == [
        "hip fracture", "kidney infections", "fracture"]  # the inverted form has a loose form too (plurals)
    assert [t for t, _ in spans(finder, "Hip: fracture ruled out; kidney, infection screen")] == ["fracture"]  # only spaces part a turned name
    assert finder.is_name("hip fractures") and not finder.is_name("fracture hip")
    finder.excluded = read_exclusions(["Fracture of hip NOS"], normalize)  # every form of an excluded name goes with it
    assert [t for t, _ in spans(finder, "left hip fracture")] == ["fracture"]


def test_a_prefix_the_text_joins_is_read_as_the_name_hyphenates_it():
    """ "Pre-eclampsia" is found in "preeclampsia" (a word no name uses, a prefix and a word they do), never a part of it alone."""
    finder = DictionaryFinder.build(["Pre-eclampsia", "Eclampsia", "Non-small cell lung cancer", "Prednisone allergy"], normalize)
    assert [t for t, _ in spans(finder, "No preeclampsia, pre-eclampsia or eclampsia; nonsmall cell lung cancer; prednisone allergy")] == [
        "preeclampsia", "pre-eclampsia", "eclampsia", "nonsmall cell lung cancer", "prednisone allergy"]
    assert spans(finder, "Postpreeclampsia") == [] and spans(DictionaryFinder.build(["Eclampsia"], normalize), "preeclampsia") == []
    document = Document.from_text("Nonsmall cell lung cancer")
    found = finder.find(document)
    assert found[0].infons["read_as"] == "Non-small cell lung cancer"  # what the linker reads, not small cell's name
    assert document.mention(found[0]).text == "Non-small cell lung cancer" and found[0].text == "Nonsmall cell lung cancer"


def test_approximate_matches_inflections_possessives_and_misspellings(finder):
    found = spans(finder, "Alzheimer disease, tumors, diabetis mellitus")
    assert found == [("Alzheimer disease", "approximate"), ("tumors", "approximate"), ("diabetis mellitus", "approximate")]
    exact_only = DictionaryFinder.build(NAMES, normalize, DictionaryOptions(approximate=False))
    assert spans(exact_only, "Alzheimer disease, tumors, diabetis mellitus") == []


def test_overlap_policy_all_keeps_alternatives():
    both = DictionaryFinder.build(NAMES, normalize, DictionaryOptions(overlap="all"))
    assert [a.text for a in both.find(Document.from_text("breast cancer"))] == ["breast", "breast cancer", "cancer"]
    with pytest.raises(MedlinkError, match="overlap"):
        DictionaryOptions(overlap="widest")


def test_the_merging_policy_overrides_the_finders_own(finder):
    """``medlink annotate --overlap all`` over an index whose finder was built with ``longest``: the annotator's
    policy reaches the finder (``find_all``), else the alternatives are gone before the merge sees them."""
    from medlink.text.finders.base import find_all

    document = Document.from_text("breast cancer")
    assert [a.text for a in find_all([finder], document, "all")] == ["breast", "breast cancer", "cancer"]
    assert [a.text for a in find_all([finder], document, "longest")] == ["breast cancer"] == [a.text for a in finder.find(document)]


def test_resolve_overlaps_prefers_longer_then_earlier_then_first_given():
    a, b, c = Annotation(0, 5, "aaaaa", source="x"), Annotation(3, 9, "bbbbbb"), Annotation(0, 5, "aaaaa", source="y")
    assert resolve_overlaps([a, b, c]) == [b]
    assert resolve_overlaps([a, c], "all") == [a]


def test_spans_across_passages_use_document_offsets(finder):
    document = Document.from_title_abstract("7", "Chest pain.", "Then an MI.")
    found = finder.find(document)
    assert [(a.start, a.end) for a in found] == [(0, 10), (20, 22)]
    assert document.text[20:22] == "MI"


def test_saved_finder_finds_the_same_and_refuses_damage(finder, tmp_path):
    finder.save(tmp_path / "dictionary")
    loaded = DictionaryFinder.load(tmp_path / "dictionary")
    text = "Alzheimer disease in an MI patient with chest pain, diabetis mellitus, all tumors"
    assert spans(loaded, text) == spans(finder, text)
    keys = tmp_path / "dictionary" / "keys.npz"
    saved = keys.read_bytes()
    keys.write_bytes(saved[:-10])
    with pytest.raises(DamagedFileError, match="keys.npz"):
        DictionaryFinder.load(tmp_path / "dictionary")
    with np.load(io.BytesIO(saved)) as arrays:
        keys_array, values = arrays["keys"].copy(), arrays["values"].copy()
    values[0] += 1  # one more word than its bytes hold
    np.savez(keys, keys=keys_array, values=values)
    with pytest.raises(DamagedFileError, match="keys.npz.*disagree"):
        DictionaryFinder.load(tmp_path / "dictionary")
    keys_array[:3] = 255  # a word id past the vocabulary
    values[0] -= 1
    np.savez(keys, keys=keys_array, values=values)
    with pytest.raises(DamagedFileError, match="vocabulary"):
        DictionaryFinder.load(tmp_path / "dictionary")
    with pytest.raises(DamagedFileError, match="dictionary.json"):
        DictionaryFinder.load(tmp_path / "missing")


@pytest.mark.parametrize("deletions", [True, False, None])  # the deletion index, the misspelling's edits, or edits until they cost more
def test_spelling_corrects_one_edit_and_refuses_ties(deletions):
    index = SpellingIndex.from_words(["diabetes", "diabetes", "carcinoma", "melanoma", "melanomb"], deletions=deletions)
    assert index.correct("diabetis") == index.correct("diabtes") == index.correct("idabetes") == "diabetes"
    assert index.correct("carcinmoa") == "carcinoma"
    assert index.correct("melanomc") is None  # one edit from two equally frequent words: no guess
    assert index.correct("diab") is None and index.correct("xylophone") is None
    assert one_edit_apart("abcd", "abdc") and not one_edit_apart("xbcd", "bcdy")


@pytest.mark.parametrize("deletions", [True, None])
def test_a_query_speller_reads_a_long_word_two_edits_away_only_where_none_is_one_edit_away(deletions):
    words = ["diabetes", "diabetes", "diabetic", "carcinoma", "fever"]
    two = SpellingIndex.from_words(words, deletions=deletions, two_edits_from=8)
    assert two.correct("diabeetus") == "diabetes" and two.correct("diabetis") == "diabetes"  # two edits; one edit first
    assert two.correct("carcinnomma") == "carcinoma" and two.correct("fevvrr") is None  # a short word: one edit only
    assert two.correct("xiabeetus") is None  # a first letter changed
    assert SpellingIndex.from_words(words, deletions=deletions).correct("diabeetus") is None  # not asked for: one edit only
    assert edits_apart("diabeetus", "diabetes") == 2 and edits_apart("abcd", "abdc") == 1 and edits_apart("kitten", "sitting") == 3


@pytest.mark.parametrize("deletions", [True, False])
def test_spelling_leaves_common_english_words_and_first_letters_alone(deletions):
    index = SpellingIndex.from_words(["mouth", "hurst", "patch", "swollen", "crash", "sites", "anemia"], deletions=deletions)
    assert [index.correct(w) for w in ("month", "hurts", "catch")] == [None, None, None]  # everyday words, one edit from a name's
    assert [index.correct(w) for w in ("drash", "nites")] == [None, None]  # another first letter: another word
    assert index.correct("swolen") == "swollen" and index.correct("anaemia") == "anemia"  # a slip, a British spelling


def test_the_common_words_are_kept_in_the_cache_directory_and_read_from_it(tmp_path, monkeypatch):
    from medlink.text import english

    monkeypatch.setenv("MEDLINK_HOME", str(tmp_path))
    english._common_words.cache_clear()
    assert english.is_common_english("month") and not english.is_common_english("swolen")
    cache = tmp_path / english.CACHE_NAME
    recipe, *words = cache.read_text(encoding="utf-8").split("\n")
    assert recipe.startswith("pyspellchecker ") and "month" in words and "swolen" not in words
    cache.write_text(f"{recipe}\nswolen", encoding="utf-8")  # what the cache says is what is read
    english._common_words.cache_clear()
    assert english.is_common_english("swolen") and not english.is_common_english("month")
    cache.write_text("another recipe\nswolen", encoding="utf-8")  # another version's list: made again
    english._common_words.cache_clear()
    assert english.is_common_english("month") and not english.is_common_english("swolen")
    english._common_words.cache_clear()


def test_the_adaptive_index_builds_its_deletions_once_corrections_would_have_paid_for_them():
    words = ["diabetes", "carcinoma", "melanoma", "pneumonia"]
    others = [f"filler{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(400)]  # 404 words: 11 corrections pay
    index = SpellingIndex.from_words(words + others, deletions=None)
    assert index.correct("diabetis") == "diabetes" and index._by_deletion is None  # one correction: cheaper than indexing
    for word in ("carcinmoa", "melanom", "pneumnia") * 4:
        assert index.correct(word) in words
    assert index._by_deletion is not None and index.correct("pnuemonia") == "pneumonia"


def test_plural_reduction_touches_plurals_only():
    assert [loose_word(w) for w in ("tumors", "deficiencies", "diseases", "virus", "illness", "mellitus", "ms")] == \
        ["tumor", "deficiency", "disease", "virus", "illness", "mellitus", "ms"]


def test_classical_plurals_meet_the_singular_the_names_spell():
    vocabulary = {"metastasis": 1, "embolus": 1, "vertebra": 1, "varix": 1, "diverticulum": 1, "disease": 1, "ganglia": 1, "ganglion": 1}
    assert [classical_singular(w, vocabulary) for w in ("metastases", "emboli", "vertebrae", "varices", "diverticula")] == \
        ["metastasis", "embolus", "vertebra", "varix", "diverticulum"]
    assert classical_singular("diseases", vocabulary) is None  # no "diseasis": the S-stemmer's plural
    assert classical_singular("ganglia", vocabulary) is None  # a word the names use is read as written

    finder = DictionaryFinder.build(["Brain metastasis", "Pulmonary embolus", "Basal ganglia calcification", "Ganglion", "Otitis media",
                                     "Medium"], normalize)
    found = {a.text: a.infons for a in finder.find(Document.from_text("Brain metastases, pulmonary emboli; basal ganglia normal; "
                                                                      "otitis media."))}
    # the linker meets the names; "ganglia" in "basal ganglia" is not the name "Ganglion", "otitis media" an exact name
    assert found == {"Brain metastases": {"match": "approximate", "read_as": "Brain metastasis"},
                     "pulmonary emboli": {"match": "approximate", "read_as": "pulmonary embolus"}, "otitis media": {}}
    assert finder.is_name("brain metastases") and not finder.is_name("brain metastase")
    # a "-ses" plural some names spell is still read as the "-sis" the rest spell; a name with the plural met as written
    keratoses = DictionaryFinder.build(["Seborrheic keratosis", "Palmoplantar keratoses"], normalize)
    found = {a.text: a.infons for a in keratoses.find(Document.from_text("Seborrheic keratoses; palmoplantar keratoses."))}
    assert found == {"Seborrheic keratoses": {"match": "approximate", "read_as": "Seborrheic keratosis"}, "palmoplantar keratoses": {}}


def test_british_spellings_meet_the_american_names_even_where_the_names_use_the_british_word():
    vocabulary = {"anemia": 1, "edema": 1, "tumor": 1, "diarrhea": 1, "toe": 1}
    assert [american_spelling(w, vocabulary) for w in ("anaemia", "oedema", "tumours", "diarrhoea", "toes", "aerobic")] == \
        ["anemia", "edema", "tumors", "diarrhea", None, None]

    finder = DictionaryFinder.build(["Anemia", "Ischemic heart disease", "Ischaemic stroke", "Brain tumor"], normalize)
    text = "Severe anaemia; ischaemic heart disease; ischaemic stroke; brain tumours."
    found = {a.text: a.infons for a in finder.find(Document.from_text(text))}
    # one letter apart, "anaemia" and "tumours" were met as spelling corrections already; "ischaemic" is a name's word,
    # so only the American reading finds the name "Ischemic heart disease"
    assert set(found) == {"anaemia", "ischaemic heart disease", "ischaemic stroke", "brain tumours"}
    assert found["ischaemic heart disease"] == {"match": "approximate", "read_as": "ischemic heart disease"} and found["ischaemic stroke"] == {}


def test_a_note_s_shortened_words_are_read_written_out_never_alone():
    finder = DictionaryFinder.build(["Breast cancer", "Cancer", "Brain metastasis", "Bipolar disorder", "Pulmonary hypertension", "Hypertension",
                                     "Right lower quadrant pain", "Abdominal pain", "Hip fracture", "Lower extremity edema", "Morning stiffness",
                                     "Diabetes mellitus"], normalize)
    text = ("Mother: breast CA. Brain mets, bipolar d/o, pulmonary HTN. Ca 9.2, 4 METs, R/O ca. RLQ abd pain. Hip fx. LE edema; "
            "le edema. AM stiffness; I am stiffness. Gestational DM; gestational dm.")
    found = {a.text: a.infons for a in finder.find(Document.from_text(text))}
    assert {t: i.get("read_as") for t, i in found.items() if i.get("match") == "shorthand"} == {
        "breast CA": "breast cancer", "Brain mets": "Brain metastasis", "bipolar d/o": "bipolar disorder",
        "pulmonary HTN": "pulmonary hypertension", "abd pain": "abdominal pain", "Hip fx": "Hip fracture",
        "LE edema": "lower extremity edema", "AM stiffness": "morning stiffness"}
    # alone a shortened word is nothing ("Ca" calcium, "METs", "ca" after "R/O"); "le", "am" and "dm" are not the capitals;
    # "RLQ" is "right lower quadrant" whole or not at all ("abd pain" is found, never "right ... pain" from part of it)
    assert set(found) == {"breast CA", "Brain mets", "bipolar d/o", "pulmonary HTN", "abd pain", "Hip fx", "LE edema", "AM stiffness"}
    assert DictionaryFinder.build(["Breast cancer"], normalize, DictionaryOptions(shorthand=False)).find(Document.from_text("breast ca")) == []
    found = [(a.text, a.infons["read_as"]) for a in DictionaryFinder.build(["Seizure", "Cancer"], normalize).find(Document.from_text(
        "2 sz today, no further szs. Ca 9.2."))]
    assert found == [("sz", "seizure"), ("szs", "seizure")]  # the few that stand alone
    finder = DictionaryFinder.build(["Pre-eclampsia with severe features", "Seropositive rheumatoid arthritis"], normalize)
    found = {a.text: a.infons["read_as"] for a in finder.find(Document.from_text("Preeclampsia w/ severe features; seropositive RA; on RA."))}
    assert found == {"Preeclampsia w/ severe features": "Pre-eclampsia with severe features",  # "w/" ends with its slash; the prefix
                     "seropositive RA": "seropositive rheumatoid arthritis"}                    # split's hyphen kept


def test_a_long_word_with_a_letter_dropped_or_swapped_is_corrected_alone():
    assert slip("pnuemonia", "pneumonia") and slip("diarhea", "diarrhea") and slip("hyperlipdemia", "hyperlipidemia")
    assert not slip("structure", "stricture") and not slip("found", "wound") and not slip("ezcema", "eczema")  # a letter for another; short
    assert not slip("include", "included") and not slip("propose", "proptose")  # an English word's ending; no disease's
    assert slip("cellulitus", "cellulitis") and slip("dysurea", "dysuria")  # a vowel for a vowel in the disease's ending
    assert not slip("cellulitas", "cellulitus") and not slip("pnaumonia", "pneumonia")  # no disease's ending; not in it
    assert not slip("keratome", "keratoma")  # a word of its own: the ending's last letter
    finder = DictionaryFinder.build(["Pneumonia", "Diarrhea", "Stricture", "Wound"], normalize)
    found = [(a.text, a.infons.get("match")) for a in finder.find(Document.from_text("No pnuemonia; diarhea. The structure was found."))]
    assert found == [("pnuemonia", "approximate"), ("diarhea", "approximate")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(list("ab MIcer,.-'()éß\u00a0\n") + ["breast ", "cancer ", "MI ", "Tumor", "ﬁ"]), max_size=40).map("".join))
def test_any_text_gives_spans_that_slice_to_their_text(text):
    finder = DictionaryFinder.build(NAMES, normalize)
    for annotation in finder.find(Document.from_text(text)):
        assert text[annotation.start:annotation.end] == annotation.text
        assert annotation.text.strip() == annotation.text and annotation.text


def test_stop_words_are_scikit_learns_read_without_importing_it():
    import subprocess
    import sys

    code = (
        "import sys\nfrom medlink.text.finders.base import english_stop_words\nwords = english_stop_words()\n"
        "print(len(words), 'sklearn' in sys.modules)\n"
        "from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS\nprint(words == frozenset(ENGLISH_STOP_WORDS))\n"
    )
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout.split("\n")
    assert lines[0] == "318 False" and lines[1] == "True"


def test_people_words_in_running_text_are_read_as_names_say_them():
    """ "my hip hurts" is *Hip pain*, "feels dizzy" *Dizziness*; a lay word makes no span alone unless it is a symptom's
    adjective ("it hurts" is no *Pain*), and a name that says the lay word stays itself ("Pressure sore")."""
    names = ["Hip pain", "Dizziness", "Pressure sore", "Pain", "Difficulty breathing", "Inability to walk", "Difficulty falling asleep",
             "Fall"]
    finder = DictionaryFinder.build(names, normalize)
    text = "My hip hurts. Feels dizzy. Pressure sore. It hurts. Trouble breathing. Unable to walk. Hard to fall asleep."
    found = {a.text: (a.infons.get("match"), a.infons.get("read_as")) for a in finder.find(Document.from_text(text))}
    assert found == {"hip hurts": ("lay", "hip pain"), "dizzy": ("lay", "dizziness"), "Pressure sore": (None, None),
                     "Trouble breathing": ("lay", "difficulty breathing"), "Unable to walk": ("lay", "inability to walk"),
                     "Hard to fall asleep": ("lay", "difficulty falling asleep")}  # not "fall", a name of its own
    plain = DictionaryFinder.build(names, normalize, DictionaryOptions(lay_words=False))
    assert {a.text for a in plain.find(Document.from_text(text))} == {"Pressure sore", "fall"}

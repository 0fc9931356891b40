"""Assertion status (ConText): denial, doubt, future and conditional mentions, someone else's, the past; in annotate's output."""

from __future__ import annotations

import pytest

from medlink.core import Annotation, Assertion, Document
from medlink.linking.output import annotation_lines
from medlink.text.assertion import assertions, find_cues, mark_assertions


def statuses(text: str, *targets: str) -> list[tuple[str, str, bool]]:
    """(target, status, historical) for each target, found at its first occurrence after the one before."""
    spans, at = [], 0
    for target in targets:
        at = text.index(target, at)
        spans.append((at, at + len(target)))
        at += len(target)
    return [(target, a.status, a.historical) for target, a in zip(targets, assertions(text, spans))]


@pytest.mark.parametrize("text, targets, expected", [
    ("Pt denies chest pain, fever, chills or night sweats.", ("chest pain", "fever", "chills", "night sweats"), ["absent"] * 4),
    ("No fever but reports a productive cough.", ("fever", "cough"), ["absent", "present"]),  # "but" ends the denial
    ("CT negative for pulmonary embolism; pneumonia in the left lower lobe.", ("pulmonary embolism", "pneumonia"), ["absent", "present"]),
    ("DVT was ruled out. Malignancy: negative.", ("DVT", "Malignancy"), ["absent", "absent"]),  # cues after the mention
    ("No increase in abdominal pain.", ("abdominal pain",), ["present"]),  # a pseudo-negation
    ("Blood cultures grew gram-negative rods concerning for sepsis.", ("rods", "sepsis"), ["present", "possible"]),
    ("Possible pneumonia versus atelectasis; r/o PE.", ("pneumonia", "atelectasis", "PE"), ["possible"] * 3),
    ("Cannot rule out early appendicitis.", ("appendicitis",), ["possible"]),  # not a denial
    ("Return to the ED if you develop chest pain or shortness of breath.", ("chest pain", "shortness of breath"), ["hypothetical"] * 2),
    ("Shortness of breath when climbing stairs.", ("Shortness of breath",), ["conditional"]),
    ("Mother had breast cancer at 50. Patient has diabetes.", ("breast cancer", "diabetes"), ["someone_else", "present"]),
    ("Diabetes in her father.", ("Diabetes",), ["someone_else"]),
    ("No family history of colon cancer.", ("colon cancer",), ["absent"]),  # nobody has it
    ("Pt's wife reports he has been confused.", ("confused",), ["present"]),  # the wife reports, the patient is confused
    ("MI ruled out, CHF suspected.", ("MI", "CHF"), ["absent", "possible"]),  # the nearer cue speaks
    ("RLQ pain, appendicitis vs ovarian cyst.", ("RLQ pain", "appendicitis", "ovarian cyst"), ["present", "possible", "possible"]),
    ("If pain persists beyond 2 weeks or you develop a fever, return.", ("pain", "fever"), ["present", "hypothetical"]),
    ("Pt's husband has noticed loud snoring. Per his mother, the child has had fevers.", ("snoring", "fevers"), ["present", "present"]),
    ("Roommate was treated for active TB.", ("active TB",), ["someone_else"]),
    ("Patient does not have chest pain. She has not had fever.", ("chest pain", "fever"), ["absent", "absent"]),  # "has" is no end here
    ("Unsure whether he has asthma. Should headache worsen or neck stiffness develop, return.", ("asthma", "headache", "neck stiffness"),
     ["possible", "present", "hypothetical"]),
    ("Fever: none. Chills: no. Cough: yes. Rash? No. Ruled out: MI", ("Fever", "Chills", "Cough", "Rash", "MI"),
     ["absent", "absent", "present", "absent", "absent"]),  # a template's answers after the problem
    ("Pt with ? MI. Call 911 for chest pain. No fever—cough present.", ("MI", "chest pain", "fever", "cough"),
     ["possible", "hypothetical", "absent", "present"]),
    ("Allergies: PCN (rash), sulfa (hives).", ("Allergies", "rash", "hives"), ["present", "conditional", "conditional"]),  # a cue found as a mention
    ("Afib not on anticoagulation. PPD placed for TB screening; bleeding risk; sepsis workup.", ("Afib", "TB", "bleeding", "sepsis"),
     ["present", "hypothetical", "hypothetical", "possible"]),  # "not on" a drug denies no condition
    ("Given thrombocytopenia.\n# Possible malignancy", ("thrombocytopenia", "malignancy"), ["present", "possible"]),
    ("Afib (r/o flutter), DM, HTN.", ("Afib", "flutter", "DM", "HTN"), ["present", "possible", "present", "present"]),
    ("Sick contacts at home with flu. Daughter worried about pt's hx of blood clot.", ("flu", "blood clot"), ["someone_else", "present"]),
])
def test_status_follows_the_cues_around_the_mention(text, targets, expected):
    assert [status for _target, status, _historical in statuses(text, *targets)] == expected


def test_historical_is_apart_from_the_status():
    assert statuses("Hx of MI and stroke, now c/o chest pain.", "MI", "stroke", "chest pain") == [
        ("MI", "present", True), ("stroke", "present", True), ("chest pain", "present", False)]  # "c/o" ends the history
    assert statuses("Denies history of stroke. Appendicitis as a child.", "stroke", "Appendicitis") == [
        ("stroke", "absent", True), ("Appendicitis", "present", True)]
    assert statuses("S/p CVA in 2017 without residual deficits. Rash has completely resolved; fever has not resolved.",
                    "CVA", "residual deficits", "Rash", "fever") == [
        ("CVA", "present", True), ("residual deficits", "absent", False), ("Rash", "present", True), ("fever", "present", False)]
    assert statuses("Father had an MI at age 52.", "MI") == [("MI", "someone_else", False)]  # a relative's past is not the patient's
    assert statuses("Afebrile, VSS. Febrile overnight.", "Afebrile", "Febrile") == [("Afebrile", "absent", False), ("Febrile", "present", False)]
    # a procedure's "s/p" reaches its phrase, not the list after a comma; a life stage dates a problem; "ppx" is a plan
    assert statuses("s/p ablation 2022, HTN, OSA. Eczema as a teenager, since outgrown. Mg for seizure ppx.", "HTN", "OSA", "Eczema",
                    "seizure") == [("HTN", "present", False), ("OSA", "present", False), ("Eczema", "present", True),
                                   ("seizure", "hypothetical", False)]


def test_a_cue_that_ends_its_line_reaches_the_list_under_it():
    text = "ROS: Denies:\n- fever\n- weight loss\nNegative for:\n* chills\nCough for 3 days."
    assert [status for _t, status, _h in statuses(text, "fever", "weight loss", "chills", "Cough")] == ["absent", "absent", "absent", "present"]


def test_a_heading_modifies_its_section_and_no_further():
    text = "Family history:\nMother - diabetes, hypertension\nBrother with asthma\n\nROS: negative for headache.\nAssessment: asthma exacerbation."
    assert statuses(text, "diabetes", "hypertension", "asthma", "headache", "asthma exacerbation") == [
        ("diabetes", "someone_else", False), ("hypertension", "someone_else", False), ("asthma", "someone_else", False),
        ("headache", "absent", False), ("asthma exacerbation", "present", False)]
    # a past medical history lists what the patient has now (i2b2: a chronic condition is not historical)
    assert statuses("Family history: father had a stroke. Patient has HTN.", "stroke", "HTN") == [
        ("stroke", "someone_else", False), ("HTN", "present", False)]  # the patient named again: the relatives' section ends
    assert statuses("PMH: HTN, DM2.\nHPI: fever for two days.", "HTN", "DM2", "fever") == [
        ("HTN", "present", False), ("DM2", "present", False), ("fever", "present", False)]


def test_a_cue_inside_a_mention_is_part_of_its_name_and_a_sentence_bounds_a_scope():
    assert statuses("No hamartoma syndrome here.", "No hamartoma syndrome") == [("No hamartoma syndrome", "present", False)]
    assert statuses("No fever. Cough for a week.", "fever", "Cough") == [("fever", "absent", False), ("Cough", "present", False)]
    # a note's line that starts with a capital is a statement of its own; a wrapped line goes on in lower case
    assert statuses("Denies fever\nCough x3 days\nNo rash, no\njoint pain", "fever", "Cough", "rash", "joint pain") == [
        ("fever", "absent", False), ("Cough", "present", False), ("rash", "absent", False), ("joint pain", "absent", False)]


def test_cues_are_found_word_by_word_whatever_the_case_spacing_and_hyphens():
    cues = find_cues("DENIES  chest pain; Gram-negative rods; rule-out MI; ?PE")
    assert [(c.phrase, sorted(c.categories())) for c in cues] == [
        ("denies", ["negated"]), ("gram negative", ["pseudo"]), ("rule out", ["possible"]), ("?", ["possible"])]
    assert find_cues("nothing to see; unknown, notable, anomaly") == []  # words that begin like a cue are not one
    assert [c.phrase for c in find_cues("Should headache worsen")] == ["should", "worsen"]  # not "should he", a word's beginning


def test_marks_replace_earlier_ones_and_show_in_the_plain_output():
    text = "Denies chest pain. Hx of asthma."
    spans = [Annotation(7, 17, "chest pain", assertion=Assertion("present", cue="old")), Annotation(25, 31, "asthma")]
    mark_assertions(text, spans)
    assert spans[0].assertion == Assertion("absent", False, "denies") and spans[1].assertion == Assertion("present", True, None, "hx of")
    assert spans[0].written_infons() == {"assertion": "absent", "assertion_cue": "denies", "historical": "false"}
    assert spans[1].written_infons() == {"assertion": "present", "historical": "true", "historical_cue": "hx of"}
    document = Document.from_text(text)
    document.annotations = spans
    lines = annotation_lines(document)
    assert lines[1].endswith("\t-\t(no candidate)\t[absent: 'denies']") and lines[2].endswith("\t[present; historical: 'hx of']")


@pytest.mark.parametrize("output_format", ["jsonl", "bioc", "bioc-json"])
def test_an_assertion_is_a_typed_field_that_files_carry_and_give_back(output_format, tmp_path):
    """The status is ``Annotation.assertion`` (not a string among the infons); JSONL and BioC files write it as infons and
    reading them gives the same typed field back, the annotation's own infons apart."""
    from medlink.corpora.document_files import read_documents, write_documents

    text = "Denies chest pain. Hx of asthma."
    document = Document.from_text(text)
    document.annotations = [Annotation(7, 17, "chest pain", infons={"note": "x"}), Annotation(25, 31, "asthma")]
    mark_assertions(text, document.annotations)
    path = tmp_path / f"out.{output_format}"
    write_documents([document], path, output_format)
    back = list(read_documents(path, output_format))[0].annotations
    assert [a.assertion for a in back] == [Assertion("absent", False, "denies"), Assertion("present", True, None, "hx of")]
    assert back[0].infons.get("note") == "x" and "assertion" not in back[0].infons

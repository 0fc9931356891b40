"""Assertion defects a new user met (issue 52, item 7): a relative who brings the patient is no experiencer, a drug's start
dates an event rather than conditions it, and "resolved" after a comma makes the problem before it past. Each beside
near variants that must keep their status."""

from __future__ import annotations

import pytest

from medlink.text.assertion import assertions


def statuses(text: str, *targets: str) -> list[tuple[str, bool]]:
    """(status, historical) of each target, found at its first occurrence after the one before."""
    spans, at = [], 0
    for target in targets:
        at = text.index(target, at)
        spans.append((at, at + len(target)))
        at += len(target)
    return [(a.status, a.historical) for a in assertions(text, spans)]


@pytest.mark.parametrize(
    "text, targets, expected",
    [
        ("brought in by mom for fever", ("fever",), ["present"]),
        ("4 yo M brought to the ED by his mother and father for fever and cough.", ("fever", "cough"), ["present", "present"]),
        ("Accompanied by wife; here with daughter for confusion.", ("confusion",), ["present"]),
        ("Mom brought her in for rash. Mom accompanies pt, concerned about wheezing.", ("rash", "wheezing"), ["present", "present"]),
        ("History obtained from the patient's husband: syncope at home.", ("syncope",), ["present"]),
        # a relative who has the problem is still someone else
        ("Mother has breast cancer.", ("breast cancer",), ["someone_else"]),
        ("Brought in by mom. Mom has the flu.", ("flu",), ["someone_else"]),
        ("Here with her mother who has asthma.", ("asthma",), ["someone_else"]),
        ("Sick contacts: daughter with vomiting.", ("vomiting",), ["someone_else"]),
    ],
)
def test_a_relative_who_brings_or_accompanies_the_patient_is_not_the_experiencer(text, targets, expected):
    assert [status for status, _historical in statuses(text, *targets)] == expected


@pytest.mark.parametrize(
    "text, target, expected",
    [
        ("Developed Stevens-Johnson syndrome after starting lamotrigine.", "Stevens-Johnson syndrome", "present"),
        ("Rash since starting amoxicillin; hyponatremia when started on HCTZ.", "Rash", "present"),
        ("Rash since starting amoxicillin; hyponatremia when started on HCTZ.", "hyponatremia", "present"),
        # a repeated trigger stays a condition
        ("Chest tightness when climbing stairs.", "Chest tightness", "conditional"),
        ("Palpitations after drinking coffee.", "Palpitations", "conditional"),
        ("Hives after taking penicillin.", "Hives", "conditional"),
        # what a sentence supposes stays hypothetical
        ("Return if chest pain.", "chest pain", "hypothetical"),
        ("If chest pain returns, call 911.", "chest pain", "hypothetical"),
        ("If pain persists, return.", "pain", "present"),  # an ongoing course: the pain is there now
    ],
)
def test_a_drugs_start_dates_an_event_and_does_not_condition_it(text, target, expected):
    assert statuses(text, target)[0][0] == expected


@pytest.mark.parametrize(
    "text, targets, expected",
    [
        ("AKI, resolved.", ("AKI",), [("present", True)]),
        ("AKI, now resolved.", ("AKI",), [("present", True)]),
        ("AKI, resolved with IV fluids.", ("AKI",), [("present", True)]),
        ("HTN, DM, AKI, resolved.", ("HTN", "DM", "AKI"), [("present", False), ("present", False), ("present", True)]),
        ("Her abdominal pain, which resolved after a day, has not recurred.", ("abdominal pain",), [("present", True)]),
        ("AKI resolved.", ("AKI",), [("present", True)]),
        ("PE, ruled out.", ("PE",), [("absent", False)]),
        # the comma still parts a list from a cue that goes on to other words
        ("Chest pain, negative troponins.", ("Chest pain",), [("present", False)]),
        ("Cough, likely viral.", ("Cough",), [("present", False)]),
        ("Liver lesions, likely metastases.", ("Liver lesions", "metastases"), [("present", False), ("possible", False)]),
        ("Rash which has not resolved.", ("Rash",), [("present", False)]),
        ("Fever that resolved, cough that persists.", ("Fever", "cough"), [("present", True), ("present", False)]),
    ],
)
def test_resolved_after_a_comma_makes_the_problem_before_it_past(text, targets, expected):
    assert statuses(text, *targets) == expected


def test_the_deciding_cues_are_named():
    [kidney] = assertions("AKI, resolved.", [(0, 3)])
    assert kidney.historical_cue == "resolved" and kidney.cue is None
    [fever] = assertions("brought in by mom for fever", [(22, 27)])
    assert fever.cue is None


@pytest.mark.parametrize(
    "text, target, expected",
    [("Pt doesnt have chest pain.", "chest pain", "absent"), ("Cant rule out PE.", "PE", "possible"),
     ("Doesn't have chest pain.", "chest pain", "absent")],
)
def test_a_cues_contraction_without_its_apostrophe_is_the_cue(text, target, expected):
    assert statuses(text, target)[0][0] == expected

"""What the note tells a code: a pregnancy code's trimester from the note's gestational age (ICD-10-CM: first < 14
weeks <= second < 28 weeks <= third), and a condition written "with" another as the combination code."""

from __future__ import annotations

import pytest

from medlink.core import Annotation, Candidate, LinkResult, Mention
from medlink.linking.coding_rules import CodeSet
from medlink.linking.note_codes import combination, trimester_of, with_combinations, with_trimester


@pytest.mark.parametrize(
    "text, trimester",
    [
        ("G2P1 at 34 weeks with gestational hypertension", "third"),
        ("IUP 34w2d", "third"),
        ("GA 12, nausea", "first"),
        ("at 20+3 weeks", "second"),
        ("seen at 13 wks", "first"),
        ("seen at 14 wks", "second"),
        ("bleeding in the 2nd trimester", "second"),
        ("Preterm labor at 31w.", "third"),
        ("Placenta previa, 3rd tri.", "third"),
        ("cough for 3 weeks", None),  # no gestational age: too early to be seen
        ("28 weeks now, 10 weeks at booking", None),  # two trimesters: none read
        ("preeclampsia", None),
    ],
)
def test_the_trimester_a_note_states_or_its_gestational_age_tells(text, trimester):
    assert trimester_of(text) == trimester


def test_an_unspecified_trimester_code_gives_way_to_the_notes_and_says_why():
    codes = CodeSet.build(
        "ICD10CM",
        [("ICD10CM:O13", "Gestational hypertension"), ("ICD10CM:O13.1", "Gestational hypertension, first trimester"),
         ("ICD10CM:O13.3", "Gestational hypertension, third trimester"),
         ("ICD10CM:O13.9", "Gestational hypertension, unspecified trimester"), ("ICD10CM:R51.9", "Headache, unspecified")],
        is_a=[("ICD10CM:O13.1", "ICD10CM:O13"), ("ICD10CM:O13.3", "ICD10CM:O13"), ("ICD10CM:O13.9", "ICD10CM:O13")],
    )
    path = {"coding": {"from": "ICD10CM:O13", "reached": "ICD10CM:O13", "refined": ["ICD10CM:O13 -> ICD10CM:O13.9: nothing more specific said"]}}
    text = "G2P1 at 34 weeks with gestational hypertension and a headache"

    def span(phrase: str, code: str) -> Annotation:
        start = text.index(phrase)
        candidate = Candidate(code, 1.0, phrase, name=codes.names[code], evidence=[dict(path)], probability=0.8)
        return Annotation(start, start + len(phrase), phrase, result=LinkResult(Mention(phrase), [candidate], probability=0.8))

    hypertension, headache = span("gestational hypertension", "ICD10CM:O13.9"), span("headache", "ICD10CM:R51.9")
    shared = hypertension.result.candidates[0]
    with_trimester(text, [hypertension, headache], codes)
    first = hypertension.result.candidates[0]
    assert first.concept_id == "ICD10CM:O13.3" and first.probability == 0.8
    assert first.evidence[-1]["coding"]["refined"][-1].endswith("(the note: third trimester)")
    assert shared.concept_id == "ICD10CM:O13.9"  # a result other documents share is not changed
    assert headache.result.candidates[0].concept_id == "ICD10CM:R51.9"
    unaged = span("gestational hypertension", "ICD10CM:O13.9")
    with_trimester("gestational hypertension", [unaged], codes)  # no gestational age: nothing said
    assert unaged.result.candidates[0].concept_id == "ICD10CM:O13.9"


DIABETES = CodeSet.build(
    "ICD10CM",
    [("ICD10CM:E11", "Type 2 diabetes mellitus"), ("ICD10CM:E11.2", "Type 2 diabetes mellitus with kidney complications"),
     ("ICD10CM:E11.22", "Type 2 diabetes mellitus with diabetic chronic kidney disease"),
     ("ICD10CM:E11.4", "Type 2 diabetes mellitus with neurological complications"),
     ("ICD10CM:E11.40", "Type 2 diabetes mellitus with diabetic neuropathy, unspecified"),
     ("ICD10CM:E11.42", "Type 2 diabetes mellitus with diabetic polyneuropathy"),
     ("ICD10CM:E11.3", "Type 2 diabetes mellitus with ophthalmic complications"),
     ("ICD10CM:E11.311", "Type 2 diabetes mellitus with unspecified diabetic retinopathy with macular edema"),
     ("ICD10CM:E11.319", "Type 2 diabetes mellitus with unspecified diabetic retinopathy without macular edema"),
     ("ICD10CM:E11.9", "Type 2 diabetes mellitus without complications"),
     ("ICD10CM:G62.9", "Polyneuropathy, unspecified"), ("ICD10CM:N18.30", "Chronic kidney disease, stage 3 unspecified")],
    is_a=[("ICD10CM:E11.2", "ICD10CM:E11"), ("ICD10CM:E11.22", "ICD10CM:E11.2"), ("ICD10CM:E11.4", "ICD10CM:E11"),
          ("ICD10CM:E11.40", "ICD10CM:E11.4"), ("ICD10CM:E11.42", "ICD10CM:E11.4"), ("ICD10CM:E11.9", "ICD10CM:E11"),
          ("ICD10CM:E11.3", "ICD10CM:E11"), ("ICD10CM:E11.311", "ICD10CM:E11.3"), ("ICD10CM:E11.319", "ICD10CM:E11.3")],
)


def test_a_condition_written_with_another_is_their_combination_code():
    """ "T2DM w/ peripheral neuropathy": E11.42, not E11.9 *without complications*; the neuropathy keeps its own code.
    The combination must name the other's words ("diabetic" is the category's own); nothing else joined is moved."""
    from medlink.linking.coding_words import said_words

    assert combination(DIABETES, "ICD10CM:E11.9", said_words(["peripheral neuropathy", "Polyneuropathy, unspecified"])) == "ICD10CM:E11.42"
    assert combination(DIABETES, "ICD10CM:E11.9", said_words(["CKD stage 3", "Chronic kidney disease, stage 3 unspecified"])) == "ICD10CM:E11.22"
    assert combination(DIABETES, "ICD10CM:E11.9", said_words(["neuropathy"])) == "ICD10CM:E11.40"
    assert combination(DIABETES, "ICD10CM:E11.9", said_words(["hypertension"])) is None
    # what a name says is absent is no word the other must say: "... retinopathy without macular edema"
    assert combination(DIABETES, "ICD10CM:E11.9", said_words(["diabetic retinopathy"])) == "ICD10CM:E11.319"

    text = "T2DM w/ peripheral neuropathy. T2DM and CKD stage 3. T2DM with diabetic retinopathy."

    def span(phrase: str, code: str, at: int = 0) -> Annotation:
        start = text.index(phrase, at)
        candidate = Candidate(code, 1.0, phrase, name=DIABETES.names[code], evidence=[{"coding": {"from": code}}], probability=0.9)
        return Annotation(start, start + len(phrase), phrase, result=LinkResult(Mention(phrase), [candidate], probability=0.9))

    diabetes, neuropathy = span("T2DM", "ICD10CM:E11.9"), span("peripheral neuropathy", "ICD10CM:G62.9")
    alone, kidney = span("T2DM", "ICD10CM:E11.9", 10), span("CKD stage 3", "ICD10CM:N18.30")
    eyes, retinopathy = span("T2DM", "ICD10CM:E11.9", 50), span("retinopathy", "ICD10CM:E11.9")  # "diabetic" between them
    retinopathy.result = None  # found, not linked
    with_combinations(text, [neuropathy, diabetes, kidney, alone, eyes, retinopathy], DIABETES)
    assert eyes.result.candidates[0].concept_id == "ICD10CM:E11.319"
    first = diabetes.result.candidates[0]
    assert (first.concept_id, first.probability) == ("ICD10CM:E11.42", 0.9)
    assert "a combination code" in first.evidence[-1]["coding"]["refined"][0]
    assert neuropathy.result.candidates[0].concept_id == "ICD10CM:G62.9"
    assert alone.result.candidates[0].concept_id == "ICD10CM:E11.9"  # "and" joins no combination

"""Short forms whose context gives them a sense that is no condition ("98% on RA": room air), dropped by the annotator."""

from __future__ import annotations

import pytest

from medlink.core import Annotation
from medlink.text.finders.other_senses import other_sense, without_other_senses


def sense(text: str, short_form: str, occurrence: int = 0) -> str | None:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(short_form, start + 1)
    return other_sense(text, start, start + len(short_form))


@pytest.mark.parametrize("text, short_form, expected", [
    ("Sats 98% on RA.", "RA", "room air"),
    ("SpO2 97% RA at rest", "RA", "room air"),
    ("Comfortable on RA, sats 95%.", "RA", "room air"),
    ("RA is mildly dilated; RV normal.", "RA", "right atrium"),
    ("Moderately enlarged RA.", "RA", "right atrium"),
    ("Follow up with PCP in 1 week.", "PCP", "primary care provider"),
    ("Pt is on RA, weaned off O2.", "RA", "room air"),
    ("PCP notified of the CVA.", "PCP", "primary care provider"),
    ("Discussed with her PCP.", "PCP", "primary care provider"),
    ("PCP appointment next Tuesday.", "PCP", "primary care provider"),
    ("LFTs elevated, repeat LFT in a week.", "LFT", "liver function tests"),
    ("No CVA tenderness bilaterally.", "CVA", "costovertebral angle"),
    ("PE: lungs clear, abdomen soft.", "PE", "physical examination"),
    ("ECG: 1 mm ST depressions in V4-V6.", "depression", "ST-segment depression"),
    ("ST-segment depression laterally.", "depression", "ST-segment depression"),
    ("On PE, no murmurs.", "PE", "physical examination"),
    ("No dyspnea or CP.", "CP", "chest pain"),
    ("Palpitations, CP at rest", "CP", "chest pain"),
    ("Anti-GAD antibodies negative.", "GAD", "glutamic acid decarboxylase"),
    ("GAD65 ab positive", "GAD", "glutamic acid decarboxylase"),
    ("Right SI joint pain.", "SI", "sacroiliac joint"),
    ("HA titer pending", "HA", "hemagglutinin or hyaluronic acid"),
    ("MDD and GAD, on sertraline.", "GAD", None),
    ("Denies SI/HI.", "SI", None),
    ("Child with CP and epilepsy.", "CP", None),
    ("MR brain without contrast.", "MR", "magnetic resonance"),
    ("On MR, no mass.", "MR", "magnetic resonance"),
    ("AR-V7 positive; AR positive.", "AR", "androgen receptor"),
    ("TR band removed.", "TR", "radial compression band"),
    ("Mild MR, trace TR, no AR.", "MR", None),
    ("Mild MR, trace TR, no AR.", "AR", None),
    # the condition stays where nothing near names the other sense
    ("Hx of CVA in 2019.", "CVA", None),
    ("Hx of depression, on sertraline.", "depression", None),
    ("CTA negative for PE.", "PE", None),
    ("His PE was treated with heparin.", "PE", None),
    ("RA flare with swollen MCPs.", "RA", None),
    ("The effect of methotrexate on RA was modest.", "RA", None),
    ("Patients with PCP had lower CD4 counts.", "PCP", None),
    ("History of RA, on methotrexate.", "RA", None),
])
def test_a_short_form_means_what_its_context_says(text, short_form, expected):
    assert sense(text, short_form) == expected


def test_the_plural_and_only_the_written_short_form():
    text = "LFTs and LFT; Lft"
    assert sense(text, "LFT") == "liver function tests" and other_sense(text, 14, 17) is None  # "Lft" is not the short form


def test_spans_with_another_sense_are_dropped_or_read_as_the_condition_it_is():
    text = "RA flare. Sats 95% on RA."
    spans = [Annotation(0, 2, "RA"), Annotation(22, 24, "RA")]
    assert [s.start for s in without_other_senses(text, spans)] == [0]
    text = "Pt c/o CP radiating to the jaw. Child with spastic CP."
    kept = without_other_senses(text, [Annotation(7, 9, "CP"), Annotation(text.rindex("CP"), text.rindex("CP") + 2, "CP")])
    assert [s.infons.get("read_as") for s in kept] == ["chest pain", None]  # the child's CP stays HPO's cerebral palsy

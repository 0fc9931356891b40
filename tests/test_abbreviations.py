"""Schwartz-Hearst abbreviation definitions (medlink.text.abbreviations) and the later uses of their short forms.

Schwartz & Hearst, "A simple algorithm for identifying abbreviation definitions in biomedical text" (PSB 2003).
The paper's full text is not in ../shared/papers (only papers that cite it are), and the stored copy reachable
offline gives its abstract only, so the examples below are the ones the algorithm is classically shown on: the
paper's kind of biomedical definitions ("heat shock transcription factor (HSF)", "protein kinase C (PKC)", the
one-word "hexokinase (HK)") and sentences of the Medstract gold standard the paper was evaluated on ("Wiskott-Aldrich
syndrome protein (WASP)", "Ribonuclease P (RNase P)"). Each asserts the exact long form that the algorithm as the
paper describes it must give, so a change to the matching fails here.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medlink.text.abbreviations import Abbreviation, abbreviation_occurrences, find_abbreviations


def pairs(text: str) -> list[tuple[str, str]]:
    return [(a.short, a.long) for a in find_abbreviations(text)]


def assert_offsets(text: str, found: list[Abbreviation]) -> None:
    for a in found:
        assert text[a.short_start : a.short_end] == a.short
        assert text[a.long_start : a.long_end] == a.long


# --- the algorithm on classic examples -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "short", "long"),
    [
        ("Heat shock transcription factor (HSF) binds DNA.", "HSF", "Heat shock transcription factor"),
        ("activation of protein kinase C (PKC) in cells", "PKC", "protein kinase C"),
        # one word: the short form's letters come from inside a single word, the first at its start
        ("The enzyme hexokinase (HK) phosphorylates glucose.", "HK", "hexokinase"),
        ("a homolog of mammalian Wiskott-Aldrich syndrome protein (WASP), and", "WASP", "Wiskott-Aldrich syndrome protein"),
        ("and Vrp1p, a homolog of WASP-interacting protein (WIP).", "WIP", "WASP-interacting protein"),
        ("Ribonuclease P (RNase P) is a ubiquitous endoribonuclease", "RNase P", "Ribonuclease P"),  # a two-word short form
        ("The endoplasmic reticulum (ER) in Saccharomyces cerevisiae", "ER", "endoplasmic reticulum"),
        ("levels of 5-hydroxytryptamine (5-HT) rose", "5-HT", "5-hydroxytryptamine"),  # digits match too
        ("serum interferon-gamma (IFN-gamma) levels", "IFN-gamma", "interferon-gamma"),  # hyphens in the short form are skipped
        ("2,3-diphosphoglycerate (2,3-DPG) binds haemoglobin", "2,3-DPG", "2,3-diphosphoglycerate"),  # "," without a space is kept
    ],
)
def test_long_form_then_short_form(text, short, long):
    found = find_abbreviations(text)
    assert [(a.short, a.long) for a in found] == [(short, long)]
    assert_offsets(text, found)


def test_the_shortest_long_form_ending_at_the_parenthesis_wins():
    # right-to-left matching stops as soon as every character is matched: "acute" is not part of it
    assert pairs("Patients with acute myocardial infarction (MI) were enrolled.") == [("MI", "myocardial infarction")]


def test_greek_letter_long_forms():
    assert pairs("serum β2-microglobulin (β2M) was high") == [("β2M", "β2-microglobulin")]
    assert pairs("transforming growth factor-β (TGF-β) signalling") == [("TGF-β", "transforming growth factor-β")]


def test_a_signed_finding_is_not_defined_by_its_opposite():
    """"ER+/PR+, (ER-, PR-)" lists findings: "ER-" is not an abbreviation of "ER+/PR+" (it would link as its opposite)."""
    assert pairs("Biopsy ER+/PR+, (ER-, PR-, HER2-).") == []
    assert pairs("estrogen receptor positive status (ER+) noted") == [("ER+", "estrogen receptor positive status")]


def test_characters_must_appear_in_order():
    # the paper's matching is ordered: "IFN" is not found after "gamma" in "Gamma interferon", so no definition
    assert pairs("Gamma interferon (IFN-gamma) was measured.") == []


def test_capitals_that_are_the_initials_in_another_order():
    """medlink's addition: "Myotonic dystrophy (DM)" abbreviates Dystrophia Myotonica; the in-order match finds nothing."""
    text = "in transgenic mice. Myotonic dystrophy (DM) is associated with a repeat; DM patients"
    assert pairs(text) == [("DM", "Myotonic dystrophy")]
    assert_offsets(text, find_abbreviations(text))
    assert [text[s:e] for s, e, _ in abbreviation_occurrences(text, find_abbreviations(text))] == ["DM"]
    assert pairs("the study cohort (DM) was small") == []  # initials s, c are not D, M
    assert pairs("Myotonic dystrophy (dm) again") == []  # not capitals
    assert pairs("cases of Myotonic dystrophy (DMX) seen") == []  # one word per letter, or nothing


def test_short_form_letters_absent_from_the_long_form_give_nothing():
    assert pairs("The patient had a heart attack (MI) last year.") == []


def test_first_character_must_start_a_word():
    # "m" and "i" occur in order in "chemistry", but "m" does not start a word there
    assert pairs("We studied chemistry (MI) today.") == []
    # a word start after a hyphen counts, and the long form then begins at the whole (whitespace) word
    assert pairs("the anti-Muellerian inhibitor (MI) gene") == [("MI", "anti-Muellerian inhibitor")]


def test_long_form_window_is_min_of_length_plus_five_and_twice_the_length():
    # |"AB"| = 2: at most min(2 + 5, 2 * 2) = 4 words before the parenthesis
    assert pairs("alpha one two beta (AB)") == [("AB", "alpha one two beta")]
    assert pairs("alpha one two three beta (AB)") == []


@pytest.mark.parametrize(
    "text",
    [
        "Patients were enrolled in the study (n = 12).",
        "The difference was significant (p < 0.05).",
        "Expression increased in treated cells (see Fig. 2).",
        "Twelve patients were in the ICU (n = 12).",
        "twelve patients (12) were seen",  # no letter
        "a value (A) was seen",  # one character
        "a value (-AB) was seen",  # first character not a letter or digit
        "the MI (MI) again",  # a long form containing its own short form
        "nothing to see here ()",
    ],
)
def test_parentheses_that_are_not_definitions(text):
    assert find_abbreviations(text) == []


def test_opening_parenthesis_must_follow_whitespace():
    assert pairs("free Ca(2+) and myocardial infarction(MI)") == []


# --- the reverse pattern "SF (long form)" -------------------------------------------------------------------------


def test_reverse_pattern_when_the_parentheses_hold_more_than_two_words():
    text = "Serum TNF (tumor necrosis factor) rose."
    found = find_abbreviations(text)
    assert [(a.short, a.long) for a in found] == [("TNF", "tumor necrosis factor")]
    assert found[0].short_start < found[0].long_start
    assert_offsets(text, found)


def test_reverse_pattern_when_the_parenthesised_text_cannot_be_a_short_form():
    # two words but 21 characters: too long for a short form
    assert pairs("In our cohort, MI (myocardial infarction) was rare.") == [("MI", "myocardial infarction")]


def test_reverse_pattern_at_the_start_of_a_sentence():
    # one word inside, but longer than everything before it in the sentence
    assert pairs("It was measured. HK (hexokinase) activity rose.") == [("HK", "hexokinase")]
    assert pairs("HK (hexokinase) activity rose.") == [("HK", "hexokinase")]


def test_reverse_pattern_needs_a_capital_in_the_short_form():
    # the authors' code asks it, or any lowercase word before a parenthesised phrase would be tried as a short form
    assert pairs("serum tnf (tumor necrosis factor) rose") == []
    assert pairs("serum TNF (tumor necrosis factor) rose") == [("TNF", "tumor necrosis factor")]


# --- text shape ---------------------------------------------------------------------------------------------------


def test_semicolon_or_comma_ends_the_short_form():
    assert pairs("acute myocardial infarction (MI; ref 3) was rare") == [("MI", "myocardial infarction")]
    assert pairs("myocardial infarction (MI, see below) was rare") == [("MI", "myocardial infarction")]


def test_long_form_at_the_start_of_a_sentence_and_of_the_text():
    text = "It was studied. Myocardial infarction (MI) is common."
    found = find_abbreviations(text)
    assert [(a.short, a.long, a.long_start) for a in found] == [("MI", "Myocardial infarction", 16)]
    assert pairs("Myocardial infarction (MI) is common.") == [("MI", "Myocardial infarction")]


def test_long_form_does_not_reach_into_the_previous_sentence_or_parenthesis():
    # without the sentence boundary "myocardial event. In total" would match "MI"
    assert pairs("Patients had a myocardial event. In total (MI) were seen.") == []
    # without the parenthesis boundary "(HSF) binding element" would match "HSE"
    assert pairs("heat shock factor (HSF) binding element (HSE)") == [("HSF", "heat shock factor")]


def test_nested_and_unbalanced_parentheses():
    assert pairs("with heat shock factor (HSF (ref 2)) bound") == [("HSF", "heat shock factor")]
    assert pairs("x ) y ( myocardial infarction (MI) ) ) (") == [("MI", "myocardial infarction")]
    for text in ["heat shock factor (HSF", "a (b (c", "))((", "(", ")", "", " (", "( )", "(MI) at the start", "((((AB))))"]:
        assert_offsets(text, find_abbreviations(text))
    assert pairs("heat shock factor (HSF") == []


def test_definitions_in_text_order_with_exact_offsets():
    # in "SF (long form)" the long form is the shortest match ending at the closing parenthesis: "serum" is left out
    text = "Tumor necrosis factor (TNF) and IL-6 (serum interleukin 6) and protein kinase C (PKC)."
    found = find_abbreviations(text)
    assert found == [
        Abbreviation("TNF", "Tumor necrosis factor", 23, 26, 0, 21),
        Abbreviation("IL-6", "interleukin 6", 32, 36, 44, 57),
        Abbreviation("PKC", "protein kinase C", 81, 84, 63, 79),
    ]
    assert_offsets(text, found)


# --- later occurrences ----------------------------------------------------------------------------------------------


def test_occurrences_are_whole_case_sensitive_tokens_after_the_definition():
    text = "An MI here. Myocardial infarction (MI) is common: an MI. Not MIS or mi, but MI-related and (MI)."
    mi = find_abbreviations(text)
    assert [(a.short, a.long) for a in mi] == [("MI", "Myocardial infarction")]
    got = abbreviation_occurrences(text, mi)
    assert [text[start:end] for start, end, _ in got] == ["MI", "MI", "MI"]
    assert [start for start, _, _ in got] == [text.index("an MI.") + 3, text.index("MI-related"), text.rindex("(MI)") + 1]
    assert all(a is mi[0] for _, _, a in got)
    # neither the use before the definition nor the definition's own short form
    assert text.index("An MI") + 3 not in {start for start, _, _ in got}
    assert mi[0].short_start not in {start for start, _, _ in got}


def test_first_definition_kept_when_a_short_form_is_redefined():
    text = "myocardial infarction (MI) then an MI, later mitral insufficiency (MI) and MI again."
    found = find_abbreviations(text)
    assert [a.long for a in found] == ["myocardial infarction", "mitral insufficiency"]  # both are reported
    got = abbreviation_occurrences(text, found)
    assert [(text[s:e], a.long) for s, e, a in got] == [("MI", "myocardial infarction"), ("MI", "myocardial infarction")]
    assert found[1].short_start not in {s for s, _, _ in got}  # the second definition's own short form is no use


def test_occurrences_prefer_the_longer_short_form_and_never_overlap():
    text = "interleukin (IL) and interleukin-2 (IL-2) differ; IL-2 levels and IL levels; RNase P here."
    found = find_abbreviations(text)
    assert pairs(text) == [("IL", "interleukin"), ("IL-2", "interleukin-2")]
    got = abbreviation_occurrences(text, found)
    assert [(text[s:e], a.short) for s, e, a in got] == [("IL-2", "IL-2"), ("IL", "IL")]  # not "IL" inside "(IL-2)"
    # an "IL-2" written before IL-2 is defined is not a use of "IL" either
    text = "interleukin (IL) and IL-2 before interleukin-2 (IL-2) is defined"
    assert [text[s:e] for s, e, _ in abbreviation_occurrences(text, find_abbreviations(text))] == []
    # a two-word short form is found as a whole
    text = "Ribonuclease P (RNase P) cleaves; RNase P is ubiquitous, RNase Pa is not"
    got = abbreviation_occurrences(text, find_abbreviations(text))
    assert [(s, text[s:e]) for s, e, _ in got] == [(text.index("RNase P is"), "RNase P")]


def test_no_abbreviations_no_occurrences():
    assert abbreviation_occurrences("MI MI MI", []) == []


# --- scale ------------------------------------------------------------------------------------------------------------


def test_a_megabyte_of_text_with_many_parentheses():
    paragraph = (
        "Acute myocardial infarction (MI; ref 3) was seen in twelve patients (n = 12). Tumour necrosis factor (TNF) "
        "rose (p < 0.05) and interferon-gamma (IFN-gamma) too (see Fig. 2). An MI was rarer than TNF ((nested) (x)).\n"
    )
    assert pairs(paragraph) == [("MI", "myocardial infarction"), ("TNF", "Tumour necrosis factor"), ("IFN-gamma", "interferon-gamma")]
    repeats = 1_000_000 // len(paragraph) + 1
    text = paragraph * repeats
    started = time.perf_counter()
    found = find_abbreviations(text)
    uses = abbreviation_occurrences(text, found)
    elapsed = time.perf_counter() - started
    assert len(found) == 3 * repeats
    assert len(uses) == 2 * repeats  # "An MI" and "than TNF" in each paragraph; the definitions' own short forms are not uses
    assert_offsets(text, found[-3:])
    print(f"1 MB: {elapsed:.2f} s")  # informative only: no timing assertion


def test_pathological_parentheses_finish():
    for text in [" (a)" * 100_000, "(" * 300_000, " (" * 100_000 + ")" * 100_000, "x" * 300_000 + " (AB)", "a (" * 50_000 + "b) " * 50_000]:
        assert_offsets(text, find_abbreviations(text))


# --- properties -------------------------------------------------------------------------------------------------------

ALPHABET = st.sampled_from(list("abcdeMIHSFKXY2 -.,;()\n") + ["β", "α", "İ", "ß", "\t", "_", "(MI)", " (", ") ", ". "])
TEXTS = st.lists(ALPHABET, max_size=120).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS | st.text(max_size=200))
def test_any_text_gives_exact_offsets(text):
    found = find_abbreviations(text)
    assert_offsets(text, found)
    assert [a.start for a in found] == sorted(a.start for a in found)
    for a in found:
        assert 2 <= len(a.short) <= 10 and a.short[0].isalnum()
    uses = abbreviation_occurrences(text, found)
    assert [s for s, _, _ in uses] == sorted(s for s, _, _ in uses)
    for (start, end, a), following in zip(uses, uses[1:] + [(len(text) + 1, 0, None)]):
        assert text[start:end] == a.short and start >= a.end and end <= following[0]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.text(max_size=80))
def test_a_definition_is_found_whatever_surrounds_it(before, after):
    text = before + " myocardial infarction (MI)" + after
    at = len(before) + len(" myocardial infarction (")
    found = [a for a in find_abbreviations(text) if a.short_start == at]
    assert [(a.short, a.long) for a in found] == [("MI", "myocardial infarction")]

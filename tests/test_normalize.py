"""The shared normaliser: names and mentions must meet at the same key."""

import random
import re
import unicodedata

from medlink.text.normalize import Normalizer, fold_accents, normalize


def test_defaults_fold_case_width_punctuation_and_spaces():
    assert normalize("  Crohn's   Disease ") == "crohn s disease"
    assert normalize("ＨＥＲ２－positive") == "her2 positive"  # full-width letters and minus: NFKC, then the hyphen becomes a space
    assert normalize("Sjögren\u2013Larsson") == normalize("SJÖGREN-LARSSON") == normalize("Sjogren-Larsson") == "sjogren larsson"
    assert normalize("ﬁbrosis") == "fibrosis"  # the "fi" ligature
    assert normalize("?!") == ""


def test_keep_preserves_chosen_punctuation_only():
    keep_plus = Normalizer(keep="+")
    assert keep_plus("HER2+ (breast)") == "her2+ breast"
    assert keep_plus("HER2-") == "her2 negative"  # a sign not kept is read as its word


def test_switches_turn_steps_off_and_round_trip_through_the_signature():
    raw = Normalizer(nfkc=False, casefold=False, strip_punctuation=False)
    assert raw("ＡIDS, type-2") == "ＡIDS, type-2"
    restored = Normalizer.from_signature(Normalizer(casefold=False, keep="+").signature)
    assert restored == Normalizer(casefold=False, keep="+") and restored("AIDS+") == "AIDS+"


def test_accents_fold_on_latin_letters_only():
    assert normalize("Behçet's") == "behcet s" and normalize("Følling") == "folling" and normalize("Sézary") == "sezary"
    assert normalize("Straße") == "strasse" and normalize("nai\u0308ve") == "naive"  # a decomposed diaeresis too
    assert normalize("Ёжий") == "ёжий" and normalize("が") == "が" and normalize("한국") == "한국"  # marks that make another letter
    assert Normalizer(fold_accents=False)("Sjögren") == "sjögren"


def test_a_signature_written_before_accent_folding_keeps_accents():
    old = '{"casefold": true, "keep": "", "nfkc": true, "strip_punctuation": true}'
    assert Normalizer.from_signature(old)("Sjögren") == "sjögren"


def test_a_capitals_short_forms_plural_is_the_short_form():
    assert normalize("recurrent UTIs") == "recurrent uti" and normalize("two DVTs") == "two dvt" and normalize("MIs") == "mi"
    assert normalize("AIDS") == "aids" and normalize("Is") == "is" and normalize("utis") == "utis" and normalize("LCR22s") == "lcr22s"
    assert Normalizer(singular_short_forms=False)("UTIs") == "utis"
    assert normalize.in_capitals("UTIs") and normalize.in_capitals("MI") and not normalize.in_capitals("Mis")
    assert not Normalizer(singular_short_forms=False).in_capitals("UTIs")
    old = '{"casefold": true, "keep": "", "nfkc": true, "strip_punctuation": true}'
    assert Normalizer.from_signature(old)("UTIs") == "utis"


def test_a_sign_closing_a_word_is_the_word_it_stands_for():
    """"HER2-" and "HER2+" are opposite findings: they must not share the key "her2"; "HER2-" meets "HER2 negative"."""
    assert normalize("HER2-") == normalize("HER2 negative") == "her2 negative" and normalize("(HER2+)") == "her2 positive"
    assert normalize("HR+ with HER2-") == "hr positive with her2 negative" and normalize("ER+/PR+") == "er positive pr positive"
    assert normalize("CD4+ T cells") == "cd4 positive t cells" and normalize("HER2\u2212") == "her2 negative"  # the minus sign too
    # not a sign: a number's ("2+ pitting edema"), a hyphen inside a word, one before a coordinated word
    assert normalize("2+ pitting edema") == "2 pitting edema" and normalize("X-linked") == "x linked"
    assert normalize("pre- and post-operative") == "pre and post operative" and normalize("HER2-positive") == "her2 positive"
    assert normalize("Acute (post-)infective polyneuritis") == "acute post infective polyneuritis" and normalize("(ER-) cancer") == "er negative cancer"
    # a marker's name before the sign (capitals, a digit, an ion): not a hyphen at a line end or before a suspended word
    assert normalize("Non-\nsmall cell") == "non small cell" and normalize("well-\ndifferentiated") == "well differentiated"
    assert normalize("ER- and PR-") == "er negative and pr negative" and normalize("B- or T-cells") == "b or t cells"
    assert normalize("CD4+CD25+") == "cd4 positive cd25 positive" and normalize("HLA-B27+") == "hla b27 positive"
    assert normalize("HER2\u2013") == "her2 negative" and normalize("ER+!") == "er positive"  # an en dash; a sign before "!"
    assert normalize("Rh-") == "rh negative" and normalize("Co-\nexisting") == "co existing"
    assert Normalizer(signs_as_words=False)("HER2-") == "her2"
    old = '{"casefold": true, "keep": "", "nfkc": true, "strip_punctuation": true}'
    assert Normalizer.from_signature(old)("HER2-") == "her2"  # a KB normalised before keeps its keys



def test_punctuation_and_spaces_read_the_same_on_ascii_and_unicode_text():
    """ASCII text takes a faster path (bytes translated, split on whitespace): the same keys as the rule written plainly."""
    letters = "aB c-d+e(f)g,h.i/j'k\"l\t\n\x0b\x0c\r\x1c\x1f_~é–\u00a0\u2003\u2019ß"
    rng = random.Random(7)
    for keep in ("", "+", "-'"):
        normalizer = Normalizer(keep=keep, singular_short_forms=False, signs_as_words=False)
        for _ in range(3_000):
            text = "".join(rng.choice(letters) for _ in range(rng.randrange(0, 16)))
            folded = fold_accents(unicodedata.normalize("NFKC", text))
            assert normalizer(text) == re.sub(r"\s+", " ", folded.casefold().translate(normalizer._table)).strip(), (keep, text)

"""Small defects a new user met (issue 52, item 8): a NIL sentence that read "0.380 is under the NIL threshold 0.380",
``medlink -V`` refused, and "cant sleep" (no apostrophe) not found by ``annotate`` in a KB that names "can't sleep"."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from medlink.cli import command
from medlink.core import Candidate, Document, LinkResult, Mention
from medlink.linking.output import decision_text, explanation_lines, result_lines
from medlink.text.finders.dictionary import DictionaryFinder
from medlink.text.normalize import normalize
from tests.test_cli_kb import medlink


def nil_result(probability: float, threshold: float) -> LinkResult:
    top = Candidate("HP:1", 2.0, matched_name="sugar diabetes", name="Diabetes mellitus", probability=probability)
    return LinkResult(Mention("sugar diabetes"), [top], nil=True, probability=probability, nil_threshold=threshold)


def test_a_nil_sentence_never_shows_a_probability_equal_to_the_threshold_it_is_under():
    result = nil_result(0.37968, 0.38)
    assert decision_text(result).endswith("has probability 0.3797, under the NIL threshold 0.3800")
    assert explanation_lines(result)[0].endswith("0.3797, under the NIL threshold 0.3800")
    assert "probability 0.3797 is under the NIL threshold 0.3800;" in result_lines(result)[0]
    # three decimals where they already tell the two apart
    assert decision_text(nil_result(0.12, 0.29)).endswith("has probability 0.120, under the NIL threshold 0.290")


def test_a_nil_mention_with_braces_prints_as_written():
    result = nil_result(0.2, 0.5)
    result.mention = Mention("H{ a}b{0}")
    assert result_lines(result)[0] == "H{ a}b{0}\tNIL\t(first candidate's probability 0.200 is under the NIL threshold 0.500; candidates follow)"


@given(st.floats(0, 1), st.floats(0, 1))
def test_the_shown_probability_is_below_the_shown_threshold(probability, threshold):
    if not probability < threshold:
        return
    shown = re.search(r"probability (\S+), under the NIL threshold (\S+)$", decision_text(nil_result(probability, threshold)))
    assert shown and float(shown[1]) < float(shown[2])


def test_dash_capital_v_is_the_version():
    runner = CliRunner()
    short, long = runner.invoke(command(), ["-V"]), runner.invoke(command(), ["--version"])
    assert short.exit_code == 0 and short.output == long.output and re.fullmatch(r"medlink \d+\.\d+\.\d+\S*\n", short.output)


def found(finder, text: str) -> list[tuple[str, str | None]]:
    return [(a.text, a.infons.get("read_as")) for a in finder.find(Document.from_text(text))]


def test_a_contraction_without_its_apostrophe_finds_the_name_with_it():
    finder = DictionaryFinder.build(["Can't sleep", "Doesn't eat", "Don't know", "Couldn't breathe", "Headache"], normalize)
    assert found(finder, "I cant sleep and he doesnt eat; couldnt breathe. I can't sleep.") == [
        ("cant sleep", "can't sleep"), ("doesnt eat", "doesn't eat"), ("couldnt breathe", "couldn't breathe"), ("can't sleep", None)]
    assert found(finder, "DONT KNOW") == [("DONT KNOW", "DON'T KNOW")]
    assert found(finder, "cant  sleeps") == [("cant  sleeps", "can't  sleeps")]  # approximate matching reads it too
    # whole words only: no part of "cantor", nor "can" alone, nor a "t" found on its own
    assert found(finder, "The cantor sang. I cant. Wont sleep.") == []


def test_a_contraction_spelt_as_a_word_the_names_use_is_read_as_written():
    finder = DictionaryFinder.build(["Cant sleep", "Can't sleep", "Headache"], normalize)
    assert found(finder, "cant sleep") == [("cant sleep", None)]  # the names' own "cant": no apostrophe supplied
    plain = DictionaryFinder.build(["Insomnia", "Headache"], normalize)  # no contraction among the names: nothing split
    assert found(plain, "cant sleep, headache") == [("headache", None)]


@pytest.mark.slow
def test_annotate_finds_cant_sleep_in_a_custom_kb(tmp_path):
    import medlink as api

    (tmp_path / "mine.tsv").write_text("id\tname\nC1\tInsomnia\nC1\tcan't sleep\nC2\tHeadache\n", encoding="utf-8")
    medlink("kb", "build", tmp_path / "mine.sqlite", f"tsv:{tmp_path / 'mine.tsv'}", "--quiet")
    medlink("index", "build", "--kb", tmp_path / "mine.sqlite", "--out", tmp_path / "mine-index", "--quiet")
    document = api.annotate("I cant sleep at night, and I can't sleep now.", index=str(tmp_path / "mine-index"))
    assert [(a.text, a.ids) for a in document.annotations] == [("cant sleep", ("C1",)), ("can't sleep", ("C1",))]

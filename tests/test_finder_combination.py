"""Merging what several mention finders found (``--combine``), and the span sanity rules every finder shares."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from medlink.core import Annotation, Document
from medlink.linking.annotator import AnnotateOptions
from medlink.errors import MedlinkError
from medlink.text.finders.base import crosses_boundary, find_all, find_all_in, is_plausible_mention, overlap_test, resolve_overlaps
from medlink.text.finders.dictionary import DictionaryFinder
from medlink.text.normalize import normalize

TEXT = "Hereditary breast cancer and MI; of course chest pain."


class FixedFinder:
    """A finder that reports the given (start, end) spans of TEXT."""

    def __init__(self, name: str, spans: list[tuple[int, int]]):
        self.name = name
        self.spans = spans

    def find(self, document: Document) -> list[Annotation]:
        return [Annotation(s, e, document.text[s:e], source=self.name) for s, e in self.spans]


def span_of(text: str) -> tuple[int, int]:
    start = TEXT.index(text)
    return start, start + len(text)


TAGGER = FixedFinder("tagger", [span_of("Hereditary breast cancer"), span_of("course")])
DICTIONARY = FixedFinder("dictionary", [span_of("breast cancer"), span_of("MI"), span_of("chest pain")])


def texts(spans: list[Annotation]) -> list[tuple[str, str]]:
    return [(a.text, a.source) for a in spans]


def test_union_keeps_every_span_and_longest_wins_overlaps():
    found = find_all([TAGGER, DICTIONARY], Document.from_text(TEXT), "longest", "union")
    assert texts(found) == [("Hereditary breast cancer", "tagger"), ("MI", "dictionary"), ("course", "tagger"),
                            ("chest pain", "dictionary")]


def test_confirmed_keeps_the_leading_finders_spans_that_another_overlaps_with_its_boundaries():
    found = find_all([TAGGER, DICTIONARY], Document.from_text(TEXT), "longest", "confirmed")
    assert texts(found) == [("Hereditary breast cancer", "tagger")]  # "course": nothing confirms it


def test_confirmed_and_missed_adds_the_others_spans_where_the_leader_found_nothing():
    found = find_all([TAGGER, DICTIONARY], Document.from_text(TEXT), "longest", "confirmed+missed")
    assert texts(found) == [("Hereditary breast cancer", "tagger"), ("MI", "dictionary"), ("chest pain", "dictionary")]


class ReadingAhead(FixedFinder):
    """The tagger's batch interface: it is told the batch first, and (confirmed) where the others found spans."""

    def read_ahead(self, documents, within=None):
        self.told = (len(documents), within)


@pytest.mark.parametrize("combine", ["union", "confirmed", "confirmed+missed"])
def test_a_batch_is_read_ahead_and_only_confirmed_says_where_spans_can_be_kept(combine):
    lead = ReadingAhead("tagger", TAGGER.spans)
    documents = [Document.from_text(TEXT, "a"), Document.from_text(TEXT, "b")]
    found = find_all_in([lead, DICTIONARY], documents, "longest", combine)
    assert found == [find_all([TAGGER, DICTIONARY], d, "longest", combine) for d in documents]
    expected = [DICTIONARY.spans] * 2 if combine == "confirmed" else None
    assert lead.told == (2, expected)


def test_one_finder_alone_is_the_same_under_every_policy():
    document = Document.from_text(TEXT)
    assert {tuple(texts(find_all([DICTIONARY], document, "longest", policy))) for policy in ("union", "confirmed", "confirmed+missed")} \
        == {tuple(texts(DICTIONARY.find(document)))}


def test_unknown_combine_policy_is_refused_by_name():
    with pytest.raises(MedlinkError, match="combine policy 'majority'"):
        AnnotateOptions(combine="majority")


intervals = st.lists(st.tuples(st.integers(0, 60), st.integers(1, 12)).map(lambda p: (p[0], p[0] + p[1])), max_size=25)


@given(intervals, intervals)
def test_overlap_test_agrees_with_pairwise_comparison(mine, others):
    other_spans = [Annotation(s, e, "x") for s, e in others]
    overlaps = overlap_test(other_spans)
    for s, e in mine:
        assert overlaps(s, e) == any(s < oe and os < e for os, oe in others)


@given(intervals)
def test_longest_policy_keeps_disjoint_spans_and_drops_only_overlapped_ones(spans):
    kept = resolve_overlaps([Annotation(s, e, "x") for s, e in spans], "longest")
    pairs = [(a.start, a.end) for a in kept]
    assert pairs == sorted(pairs) and all(a[1] <= b[0] for a, b in zip(pairs, pairs[1:]))
    for s, e in set(spans) - set(pairs):  # a dropped span overlaps a kept one at least as long
        assert any(s < ke and ks < e and ke - ks >= e - s for ks, ke in pairs)


def test_a_match_never_runs_across_a_sentence_break_or_a_stray_bracket():
    finder = DictionaryFinder.build(["Canavan disease", "disease, Canavan", "HPRT deficiency", "G6PD (glucose) deficiency"], normalize)
    found = [a.text for a in finder.find(Document.from_text("It is a disease. Canavan patients had (HPRT) deficiency "
                                                             "and G6PD (glucose) deficiency."))]
    assert found == ["G6PD (glucose) deficiency"]
    assert crosses_boundary("x disease. Canavan", 2, 18) and not crosses_boundary("x disease, Canavan", 2, 18)
    assert crosses_boundary("(HPRT) deficiency", 1, 17) and not crosses_boundary("(HPRT) deficiency", 0, 17)
    assert not crosses_boundary("vitamin D deficiency.", 0, 21)  # a final full stop ends, it does not cross


@pytest.mark.parametrize("text, plausible", [("of", False), ("D", False), ("2", False), ("C6 or", False), ("the", False),
                                             ("ALL", True), ("MI", True), ("the disease", True), ("tumour", True)])
def test_plausible_mentions_need_a_word_that_is_not_a_stop_word(text, plausible):
    assert is_plausible_mention(text) == plausible

"""A condition's adjective found before another condition is one span of both ("hemorrhagic cystitis"), as annotators
mark it; what parts them, or makes either a short form's, keeps them apart."""

from __future__ import annotations

from medlink.core import Annotation, Candidate, LinkResult, Mention
from medlink.linking.joined import joined_conditions

CONCEPTS = {"hemorrhagic": "D006470", "cystitis": "D003556", "HC": "D003556", "severe": "X1", "hepatitis": "D056486"}


def spans_of(text: str, words: list[str], probability: float = 0.9) -> list[Annotation]:
    out, at = [], 0
    for word in words:
        start = text.index(word, at)
        at = start + len(word)
        result = LinkResult(
            Mention(word),
            [Candidate(CONCEPTS[word.lower()] if word != "HC" else CONCEPTS[word], 1.0, probability=probability)],
            probability=probability,
        )
        out.append(Annotation(start, at, word, "Disease", source="dictionary", result=result))
    return out


def test_an_adjective_and_a_condition_are_one_span_of_both():
    text = "He had hemorrhagic cystitis."
    spans = spans_of(text, ["hemorrhagic", "cystitis"])
    spans[0].result.probability = 0.6
    joined, concepts = joined_conditions(text, spans)
    [span] = joined
    assert (span.start, span.end, span.text) == (7, 27, "hemorrhagic cystitis")
    assert concepts[id(span)] == ("D006470", "D003556")  # in the text's order, as its parts
    assert span.infons["composite"] == "hemorrhagic | cystitis" and span.result.probability == 0.6


def test_what_keeps_two_spans_apart():
    for text, words in (
        ("hemorrhagic, cystitis", ["hemorrhagic", "cystitis"]),  # more than a space between them
        ("severe cystitis", ["severe", "cystitis"]),  # no adjective's ending
        ("hemorrhagic HC", ["hemorrhagic", "HC"]),  # a short form
    ):
        spans = spans_of(text, words)
        assert joined_conditions(text, spans) == (spans, {}), text
    text = "hemorrhagic cystitis (HC)"
    spans = spans_of(text, ["hemorrhagic", "cystitis", "HC"])
    spans[2].short_form_of = (spans[1].start, spans[1].end)  # "cystitis" defines HC: the short form links through it
    assert joined_conditions(text, spans)[0] == spans
    spans = spans_of("hemorrhagic cystitis", ["hemorrhagic", "cystitis"])
    assert joined_conditions("hemorrhagic cystitis", spans, long_forms=[(12, 20)])[0] == spans  # a later window's short form
    spans[1].result = LinkResult(Mention("cystitis"), [Candidate("D003556", 1.0)], nil=True)
    assert joined_conditions("hemorrhagic cystitis", spans)[0] == spans  # a NIL span is no condition found


def test_a_joined_span_joins_no_further():
    text = "hemorrhagic cystitis hepatitis"
    joined, concepts = joined_conditions(text, spans_of(text, ["hemorrhagic", "cystitis", "hepatitis"]))
    assert [span.text for span in joined] == ["hemorrhagic cystitis", "hepatitis"] and len(concepts) == 1

"""medlink.eval.documents on a hand-made fixture whose counts are worked out in the comments."""

from __future__ import annotations

import pytest

from medlink.core import Annotation, Document
from medlink.eval.documents import DocumentError, Score, canonical_ids, document_errors, document_scores, evaluate_documents

TEXT_1 = "Breast and ovarian cancer and SLOS. Then lamellar cataracts."
TEXT_2 = "G6PD deficiency is rare."
TEXT_3 = "Fever and cough."

# MEDIC-like equivalences: 270400 (an OMIM concept) also has the MeSH id D019082; C535342 has the OMIM alias 116800
EQUIVALENT = {"270400": frozenset({"270400", "D019082"}), "C535342": frozenset({"C535342", "116800"}),
              "D001943": frozenset({"D001943"}), "D010051": frozenset({"D010051"})}


def ann(text: str, surface: str, ids: tuple[str, ...], occurrence: int = 0, source: str = "gold") -> Annotation:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(surface, start + 1)
    return Annotation(start, start + len(surface), surface, ids=ids, source=source)


def doc(doc_id: str, text: str, annotations: list[Annotation]) -> Document:
    document = Document.from_text(text, doc_id)
    document.annotations = annotations
    return document


def gold_documents() -> list[Document]:
    return [
        doc("d1", TEXT_1, [
            ann(TEXT_1, "Breast and ovarian cancer", ("D001943", "D010051")),  # composite: two concepts
            ann(TEXT_1, "SLOS", ("D019082",)),  # the MeSH id of concept 270400
            ann(TEXT_1, "lamellar cataracts", ("C535342", "116800")),  # two ids of one concept
        ]),
        doc("d2", TEXT_2, [ann(TEXT_2, "G6PD deficiency", ("D005955",))]),  # no prediction for d2 at all
        doc("d3", TEXT_3, []),
    ]


def predicted_documents() -> list[Document]:
    def p(text, surface, ids):
        return ann(text, surface, ids, source="peer")

    return [
        doc("d1", TEXT_1, [
            p(TEXT_1, "Breast and ovarian cancer", ("D010051",)),  # one part of the composite: a linking tp
            p(TEXT_1, "Breast and ovarian cancer", ("D010051",)),  # exact duplicate: counts once
            p(TEXT_1, "SLOS", ("270400",)),  # right through the equivalence only
            p(TEXT_1, "SLOS", ("D000002",)),  # second prediction at the same span: a linking fp
            p(TEXT_1, "cataracts", ("C535342",)),  # partial span: wrong for mentions and linking
            p(TEXT_1, "Then", ("D000001",)),  # spurious
        ]),
        doc("d3", TEXT_3, [
            p(TEXT_3, "Fever", ("D005334",)),  # spurious (d3 has no gold)
            p(TEXT_3, "cough", ()),  # found, not linked: counts for mention finding only
        ]),
    ]


def test_counts_with_equivalent_ids():
    scores = evaluate_documents(gold_documents(), predicted_documents(), equivalent_ids=EQUIVALENT)
    # mentions: gold spans 3 + 1; predicted spans 4 (d1, the duplicate folded) + 2 (d3); tp = composite, SLOS
    assert scores.mentions == Score(tp=2, fp=4, fn=2)
    # linking: predicted units d1 5 (duplicate folded), d3 1 (cough has no ids); tp = composite part, SLOS via 270400
    assert scores.linking == Score(tp=2, fp=4, fn=2)
    # concepts: d1 gold {D001943, D010051, 270400, C535342} (116800 collapses into C535342, D019082 into 270400),
    # predicted {D010051, 270400, D000002, C535342, D000001}; d2 gold {D005955}; d3 predicted {D005334}
    assert scores.concepts == Score(tp=3, fp=3, fn=2)
    assert (scores.documents, scores.documents_without_predictions) == (3, 1)


def test_counts_without_equivalent_ids():
    scores = evaluate_documents(gold_documents(), predicted_documents())
    assert scores.mentions == Score(tp=2, fp=4, fn=2)  # spans do not depend on ids
    assert scores.linking == Score(tp=1, fp=5, fn=3)  # SLOS 270400 no longer matches D019082
    # d1 gold ids are now 5 distinct concepts (116800 and C535342 count twice, D019082 is not 270400)
    assert scores.concepts == Score(tp=2, fp=4, fn=4)


def test_rates():
    scores = evaluate_documents(gold_documents(), predicted_documents(), equivalent_ids=EQUIVALENT)
    assert scores.mentions.precision == pytest.approx(2 / 6)
    assert scores.mentions.recall == pytest.approx(2 / 4)
    assert scores.mentions.f1 == pytest.approx(0.4)
    assert scores.concepts.f1 == pytest.approx(6 / 11)  # P 3/6, R 3/5
    out = scores.to_dict()
    assert out["linking"] == {"tp": 2, "fp": 4, "fn": 2, "precision": pytest.approx(1 / 3), "recall": pytest.approx(0.5),
                              "f1": pytest.approx(0.4)}
    assert out["documents"] == 3 and set(out) == {"documents", "documents_without_predictions", "mentions", "linking", "concepts", "intervals"}
    for measure in ("mentions", "linking", "concepts"):  # each interval holds its figure (three documents resampled)
        for rate, (low, high) in out["intervals"][measure].items():
            assert low <= out[measure][rate] + 1e-4 and out[measure][rate] - 1e-4 <= high
    per_document, documents, missing = document_scores(gold_documents(), predicted_documents(), equivalent_ids=EQUIVALENT)
    assert (documents, missing) == (3, 1) and sum(per_document["linking"], Score(0, 0, 0)) == scores.linking  # the same counts, by document


def test_zero_denominators_are_zero():
    assert Score(0, 0, 0).precision == Score(0, 0, 0).recall == Score(0, 0, 0).f1 == 0.0
    assert Score(0, 0, 3).precision == 0.0 and Score(0, 3, 0).recall == 0.0
    assert Score(1, 2, 3) + Score(1, 1, 1) == Score(2, 3, 4)


def test_perfect_predictions_and_no_predictions():
    gold = gold_documents()
    perfect = evaluate_documents(gold, gold)
    assert perfect.mentions == Score(4, 0, 0) and perfect.linking == Score(4, 0, 0)
    assert perfect.concepts == Score(6, 0, 0)  # without equivalences the two ids of one concept count as two
    nothing = evaluate_documents(gold, [], equivalent_ids=EQUIVALENT)
    assert nothing.mentions == Score(0, 0, 4) and nothing.linking == Score(0, 0, 4) and nothing.concepts == Score(0, 0, 5)
    assert nothing.documents_without_predictions == 3


def test_errors_agree_with_counts():
    gold, predicted = gold_documents(), predicted_documents()
    for equivalent in (None, EQUIVALENT):
        scores = evaluate_documents(gold, predicted, equivalent_ids=equivalent)
        errors = document_errors(gold, predicted, equivalent_ids=equivalent)
        for measure in ("mentions", "linking", "concepts"):
            score = getattr(scores, measure)
            assert sum(1 for e in errors if e.measure == measure and e.kind == "fp") == score.fp
            assert sum(1 for e in errors if e.measure == measure and e.kind == "fn") == score.fn


def test_error_details():
    errors = document_errors(gold_documents(), predicted_documents(), equivalent_ids=EQUIVALENT)
    slos = TEXT_1.index("SLOS")
    # the second SLOS prediction is a linking fp that shows the gold ids at its span
    assert DocumentError("linking", "fp", "d1", slos, slos + 4, "SLOS", ("D000002",), ("D019082",)) in errors
    # the partial span: a mention fp and the gold span a mention fn (with its text and ids)
    lamellar = TEXT_1.index("lamellar")
    assert DocumentError("mentions", "fn", "d1", lamellar, lamellar + 18, "lamellar cataracts", ("C535342", "116800")) in errors
    assert DocumentError("mentions", "fp", "d1", lamellar + 9, lamellar + 18, "cataracts", ("C535342",)) in errors
    # the missing document: every gold unit is a false negative
    assert [e.measure for e in errors if e.doc_id == "d2"] == ["mentions", "linking", "concepts"]
    assert DocumentError("concepts", "fn", "d1", None, None, None, ("D001943",)) in errors
    only_concepts = document_errors(gold_documents(), predicted_documents(), equivalent_ids=EQUIVALENT, measures=["concepts"])
    assert {e.measure for e in only_concepts} == {"concepts"} and len(only_concepts) == 5
    assert only_concepts[0].to_dict()["ids"] == list(only_concepts[0].ids)
    with pytest.raises(ValueError, match="unknown measure"):
        document_errors(gold_documents(), predicted_documents(), measures=["spans"])


def test_two_predictions_for_one_gold_span_give_one_true_positive():
    """Composite gold D001943|D010051 predicted as two annotations at its span: one tp, one fp (pairs are one to one)."""
    gold = [doc("d", TEXT_1, [ann(TEXT_1, "Breast and ovarian cancer", ("D001943", "D010051"))])]
    predicted = [doc("d", TEXT_1, [ann(TEXT_1, "Breast and ovarian cancer", ("D001943",)),
                                   ann(TEXT_1, "Breast and ovarian cancer", ("D010051",))])]
    scores = evaluate_documents(gold, predicted)
    assert scores.mentions == Score(1, 0, 0)
    assert scores.linking == Score(1, 1, 0)
    assert scores.concepts == Score(2, 0, 0)  # the document-level measure credits both concepts


def test_pairing_finds_the_best_assignment():
    """Two gold annotations at one span: a greedy pairing could waste the prediction that only one of them accepts."""
    text = "X syndrome"
    gold = [doc("d", text, [ann(text, "X syndrome", ("A", "B")), ann(text, "X syndrome", ("A",))])]
    predicted = [doc("d", text, [ann(text, "X syndrome", ("A",)), ann(text, "X syndrome", ("B",))])]
    assert evaluate_documents(gold, predicted).linking == Score(2, 0, 0)


def test_a_prediction_carrying_its_alternative_ids_matches_on_any():
    gold = [doc("d", TEXT_1, [ann(TEXT_1, "SLOS", ("D019082",))])]
    predicted = [doc("d", TEXT_1, [ann(TEXT_1, "SLOS", ("270400", "D019082"))])]
    scores = evaluate_documents(gold, predicted, equivalent_ids=EQUIVALENT)
    assert scores.linking == Score(1, 0, 0)
    assert scores.concepts == Score(1, 0, 0)  # both ids collapse into 270400


def test_canonical_ids():
    mapping = canonical_ids({"114480": {"114480", "D001943"}, "D001943": {"D001943"}, "X": {"X", "shared"}, "Y": {"Y", "shared"},
                             "270400": {"270400", "D019082"}})
    assert mapping["D019082"] == "270400" and mapping["270400"] == "270400"
    assert mapping["D001943"] == "D001943"  # an alias that is itself a concept stays
    assert "shared" not in mapping  # an alias of two concepts stays as written
    assert canonical_ids(None) == {} and canonical_ids({}) == {}


def test_unknown_and_duplicate_documents_are_refused():
    gold = gold_documents()
    with pytest.raises(ValueError, match="not among the gold documents: 'elsewhere'"):
        evaluate_documents(gold, [doc("elsewhere", "text", [])])
    with pytest.raises(ValueError, match="gold documents: doc id 'd1' given twice"):
        evaluate_documents(gold + [doc("d1", TEXT_1, [])], [])
    with pytest.raises(ValueError, match="predicted documents: doc id 'd3' given twice"):
        document_errors(gold, [doc("d3", TEXT_3, []), doc("d3", TEXT_3, [])])


def test_an_alternative_id_matches_its_concept_whichever_side_wrote_it():
    """The gold may write the concept's own id and the prediction its alternative (a MeSH id beside the OMIM one), or
    the other way round: with the KB's equivalences both are one concept, and swapping the sides changes nothing."""
    text = "Lamellar cataracts were seen."
    concept = doc("d1", text, [ann(text, "Lamellar cataracts", ("C535342",))])
    alias = doc("d1", text, [ann(text, "Lamellar cataracts", ("116800",), source="tagger")])
    for gold, predicted in ((concept, alias), (alias, concept)):
        scores = evaluate_documents([gold], [predicted], equivalent_ids=EQUIVALENT)
        assert scores.linking == Score(1, 0, 0) and scores.concepts == Score(1, 0, 0)
        assert evaluate_documents([gold], [predicted]).linking == Score(0, 1, 1)  # without the KB: two ids


def test_a_paired_comparison_with_another_systems_documents():
    from medlink.eval.documents import compare_documents

    gold = gold_documents()
    same = compare_documents(gold, predicted_documents(), predicted_documents(), equivalent_ids=EQUIVALENT)
    assert all(c["f1_difference"] == 0 and c["interval"] == [0.0, 0.0] for c in same.values())
    nothing = [doc(d.doc_id, d.text, []) for d in gold]
    better = compare_documents(gold, predicted_documents(), nothing, equivalent_ids=EQUIVALENT)
    assert better["mentions"]["f1_difference"] == pytest.approx(0.4)  # 0.4 against nothing found
    low, high = better["mentions"]["interval"]
    assert 0 <= low <= 0.4 <= high

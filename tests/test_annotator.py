"""The annotator: finders, abbreviations, linking with context, per-document consistency, on the eval fixture KB."""

from __future__ import annotations

import pytest

from medlink.core import Annotation, Candidate, Document, LinkResult, Mention
from medlink.errors import MedlinkError
from medlink.batch.counts import AnnotationCounts
from medlink.linking.annotator import AnnotateOptions, Annotator, with_short_forms
from medlink.linking.consistency import propagated, vote
from medlink.linking.linker import Linker
from medlink.linking.one_call import annotate as medlink_annotate


@pytest.fixture(scope="module")
def linker(kb):
    return Linker.build(kb)


class FirstOnly:
    """A finder that finds only the first occurrence of one string (what propagation must make up for)."""

    name = "first-only"

    def __init__(self, string):
        self.string = string

    def find(self, document):
        at = document.text.find(self.string)
        return [] if at < 0 else [Annotation(at, at + len(self.string), self.string, source=self.name)]


def annotate(linker, text, **options):
    return Annotator(linker, [linker.dictionary_finder()], AnnotateOptions(**options)).annotate_text(text)


def test_finds_and_links_with_exact_offsets(linker):
    text = "Hereditary breast cancer and ovarian cancer; no hamartoma."
    document = annotate(linker, text)
    assert [(a.text, a.ids) for a in document.annotations] == [
        ("breast cancer", ("D001943",)), ("ovarian cancer", ("D010051",)), ("hamartoma", ("D006222",))]
    for a in document.annotations:
        assert text[a.start:a.end] == a.text and a.result.mention.start == a.start and a.result.mention.doc_id == "1"


def test_abbreviations_link_through_their_long_form(linker):
    text = "Adenomatous polyposis coli (APC) is inherited. APC patients often had APCs removed."
    document = annotate(linker, text)
    found = [(a.text, a.start, a.ids, a.source) for a in document.annotations]
    assert found == [("Adenomatous polyposis coli", 0, ("D011125",), "dictionary"), ("APC", 28, ("D011125",), "abbreviation"),
                     ("APC", 47, ("D011125",), "abbreviation")]  # "APCs" is another token
    assert document.annotations[2].infons["linked_through"] == "0-26"
    assert [a.text for a in annotate(linker, text, abbreviations=False).annotations] == ["Adenomatous polyposis coli"]


def test_overlap_all_keeps_overlapping_dictionary_spans_as_alternatives(linker):
    """``overlap="all"`` (``--overlap all``): "colorectal neoplasms" and the "neoplasms" inside it, each linked; the
    default keeps the longest only."""
    text = "Two colorectal neoplasms."
    assert [(a.text, a.ids) for a in annotate(linker, text).annotations] == [("colorectal neoplasms", ("D015179",))]
    assert [(a.start, a.text, a.ids) for a in annotate(linker, text, overlap="all").annotations] == [
        (4, "colorectal neoplasms", ("D015179",)), (15, "neoplasms", ("D009369",))]
    defined = "Two colorectal neoplasms (CRN)."  # the short form reads its longest long form, not the span inside it
    short = [a for a in annotate(linker, defined, overlap="all").annotations if a.text == "CRN"]
    assert [a.ids for a in short] == [("D015179",)]


def test_bad_options_and_inputs_are_named_before_any_work():
    with pytest.raises(MedlinkError, match="unknown overlap policy 'bogus'"):
        AnnotateOptions(overlap="bogus")
    with pytest.raises(TypeError, match="a text .str., a Document or a list of them, not int"):
        medlink_annotate(7)
    with pytest.raises(TypeError, match="not list"):
        medlink_annotate(["a", 7])


def test_abbreviation_choice_best_keeps_the_higher_scoring_answer(linker):
    """``long``: a short form takes its long form's answer; ``best``: its own when that scored higher, else the long form's."""

    class OwnAnswer:
        def __init__(self, inner, score):
            self.inner, self.score, self.rerankers = inner, score, inner.rerankers

        def link(self, mentions, k, generators=None):
            own = [LinkResult(m, [Candidate("OWN", self.score)]) for m in mentions if m.text == "APC"]
            inner = iter(self.inner.link([m for m in mentions if m.text != "APC"], k, generators))
            return [own.pop(0) if m.text == "APC" else next(inner) for m in mentions]

        def key(self, text):
            return self.inner.key(text)

    text = "Adenomatous polyposis coli (APC) is inherited. APC again."
    long_score = linker.link(["Adenomatous polyposis coli"])[0].best.score

    def ids(score, choice):
        annotator = Annotator(OwnAnswer(linker, score), [linker.dictionary_finder()], AnnotateOptions(abbreviation_choice=choice))
        return [(a.text, a.ids, "linked_through" in a.infons) for a in annotator.annotate_text(text).annotations]

    through = [("Adenomatous polyposis coli", ("D011125",), False), ("APC", ("D011125",), True), ("APC", ("D011125",), True)]
    assert ids(long_score + 1.0, "long") == ids(long_score - 1.0, "best") == through
    assert ids(long_score + 1.0, "best") == [("Adenomatous polyposis coli", ("D011125",), False), ("APC", ("OWN",), False), ("APC", ("OWN",), False)]


def test_pubtator_output_types_a_span_the_tagger_found(linker):
    """The type column: the tagger's entity type for a span it found (kept whichever finder also found it); a span only
    the dictionary found has no type (the KB's names carry none), written as an empty column."""
    from medlink.corpora.pubtator import pubtator_record

    class Tagger:
        name = "tagger"

        def find(self, document):
            at = document.text.index("breast cancer")
            return [Annotation(at, at + 13, "breast cancer", type="SpecificDisease", source=self.name)]

    text = "Breast cancer risk; breast cancer and hamartoma."
    for combine in ("union", "confirmed+missed"):
        annotator = Annotator(linker, [Tagger(), linker.dictionary_finder()], AnnotateOptions(combine=combine, consistency="off"))
        rows = [line.split("\t") for line in pubtator_record(annotator.annotate_text(text)).splitlines()[2:] if line]
        assert [(row[3], row[4], row[5]) for row in rows] == [("Breast cancer", "", "D001943"), ("breast cancer", "SpecificDisease", "D001943"),
                                                              ("hamartoma", "", "D006222")], combine


def test_a_definition_whose_long_form_is_not_a_mention_adds_nothing(linker):
    text = "Heat shock factor (HSF) binds. HSF again; breast cancer."
    assert [a.text for a in with_short_forms(text, [Annotation(42, 55, "breast cancer")])] == ["breast cancer"]


def test_context_reaches_the_linker(linker):
    document = Document.from_text("Two cases of breast cancer were seen.")
    annotator = Annotator(linker, [linker.dictionary_finder()], AnnotateOptions(context=8))
    mention = annotator.annotate_text(document).annotations[0].result.mention
    assert (mention.left, mention.text, mention.right) == ("ases of ", "breast cancer", " were se")


def test_propagation_finds_the_occurrences_a_finder_missed(linker):
    text = "Renal failure. Later, renal cysts; adrenal glands are fine, RENAL too."
    found = Annotator(linker, [FirstOnly("renal")], AnnotateOptions(consistency="both")).annotate_text(text).annotations
    assert [(a.text, a.source, a.ids) for a in found] == [("Renal", "propagated", ("D007674",)), ("renal", "first-only", ("D007674",)),
                                                          ("RENAL", "propagated", ("D007674",))]  # "adrenal": not a whole word
    off = Annotator(linker, [FirstOnly("renal")], AnnotateOptions(consistency="off")).annotate_text(text).annotations
    assert len(off) == 1
    capitals = Annotator(linker, [FirstOnly("RENAL")], AnnotateOptions(consistency="both")).annotate_text(text).annotations
    assert [a.text for a in capitals] == ["RENAL"]  # a string without lower-case letters stays case-sensitive


def test_spans_made_from_a_typed_span_keep_its_type():
    """A PubTator output needs a type: short forms take their long form's, propagated occurrences their string's."""
    text = "Adenomatous polyposis coli (APC) is rare. APC again; adenomatous polyposis coli again."
    spans = with_short_forms(text, [Annotation(0, 26, text[:26], type="SpecificDisease", source="tagger")])
    assert [(a.text, a.type) for a in spans] == [("Adenomatous polyposis coli", "SpecificDisease"), ("APC", "SpecificDisease"), ("APC", "SpecificDisease")]
    assert [(a.text, a.type) for a in propagated(text, spans)] == [("adenomatous polyposis coli", "SpecificDisease")]


def test_a_short_form_the_document_defines_otherwise_is_no_mention():
    text = "We used computer-aided design (CAD). The CAD model fitted; CAD risk was not studied."
    spans = [Annotation(m, m + 3, "CAD", source="dictionary") for m in (31, 42, 59)]
    assert with_short_forms(text, spans) == []
    kept = "Coronary artery disease (CAD) was common. CAD again."
    found = [Annotation(0, 23, kept[:23], source="dictionary"), Annotation(42, 45, "CAD", source="dictionary")]
    assert [(a.text, a.source) for a in with_short_forms(kept, found)] == [("Coronary artery disease", "dictionary"), ("CAD", "abbreviation"),
                                                                          ("CAD", "abbreviation")]


def test_propagation_skips_partial_words_and_taken_spans():
    text = "tumour, tumours, tumour."
    spans = [Annotation(0, 6, "tumour")]
    assert [(a.start, a.end) for a in propagated(text, spans)] == [(17, 23)]
    text = "Father had Parkinson's; seen at Dr. Parkinson's clinic and by Mrs Parkinson's son; Parkinson's again."
    assert [a.start for a in propagated(text, [Annotation(11, 22, "Parkinson's")])] == [text.rindex("Parkinson's")]  # people's, after a title
    text = "HER2 was tested: HER2-, ER+; HER2 amplification absent. ER status."
    assert text[56:58] == "ER"
    assert [(a.start, a.text) for a in propagated(text, [Annotation(0, 4, "HER2"), Annotation(56, 58, "ER")])] == [
        (29, "HER2")]  # a sign closes "HER2-" and "ER+": their statuses, not the receptors


def test_one_word_in_parentheses_after_a_short_form_defines_no_other_meaning():
    text = "r/o PE (pending). CTA shows bilateral PE. Heteroduplex (HD) analysis; HD again."
    spans = [Annotation(4, 6, "PE"), Annotation(text.index("PE."), text.index("PE.") + 2, "PE"), Annotation(text.rindex("HD"), text.rindex("HD") + 2, "HD")]
    assert [s.text for s in with_short_forms(text, spans)] == ["PE", "PE"]  # "heteroduplex (HD)" still says this HD is no disease


def test_vote_gives_one_answer_per_string():
    def result(concept, score):
        return LinkResult(Mention("cancer"), [Candidate(concept, score)])

    spans = [Annotation(0, 6, "cancer", result=result("A", 1.0)), Annotation(10, 16, "cancer", result=result("B", 3.0)),
             Annotation(20, 26, "cancer", result=result("A", 0.5)), Annotation(30, 35, "tumor", result=result("C", 1.0))]
    vote(spans, lambda a: a.text)
    assert [a.result.best.concept_id for a in spans] == ["A", "A", "A", "C"]
    assert spans[1].infons["consistency"] == "voted" and spans[1].result.mention.text == "cancer"


def test_text_without_mentions_and_empty_text_give_empty_results(linker):
    assert annotate(linker, "The weather was fine.").annotations == []
    assert annotate(linker, "").annotations == []


def test_many_documents_keep_their_order_and_counts(linker):
    documents = [Document.from_text(text, str(i)) for i, text in enumerate(["breast cancer", "nothing", "renal tumour"] * 5)]
    annotator = Annotator(linker, [linker.dictionary_finder()], AnnotateOptions(batch_documents=2))
    counts = AnnotationCounts()
    for document in annotator.annotate(documents):
        counts.add(document)
    assert [d.doc_id for d in annotator.annotate(documents)] == [str(i) for i in range(15)]
    assert (counts.documents, counts.mentions, counts.linked) == (15, 10, 10)  # "renal tumour": one span of both conditions


def test_a_long_run_loads_the_compiled_stages_and_a_short_one_does_not(linker, monkeypatch):
    """Past ``LONG_RUN`` documents a run is a long one: its linking calls take the compiled stages once they are loaded
    (numba's start-up is paid once); a call of one document (a request, a spaCy doc) does not load them."""
    import medlink.linking.annotator as annotator_module
    import medlink.retrieval.compiled as compiled

    asked = []
    monkeypatch.setattr(compiled, "load", lambda: asked.append(True))
    short = Annotator(linker, [linker.dictionary_finder()], AnnotateOptions(batch_documents=4))
    short.annotate_text("breast cancer")
    assert asked == []
    documents = [Document.from_text(text, str(i)) for i, text in enumerate(["breast cancer", "renal tumour"] * 5)]
    long_run = Annotator(linker, [linker.dictionary_finder()], AnnotateOptions(batch_documents=4))
    monkeypatch.setattr(annotator_module, "LONG_RUN", 6)
    assert len(list(long_run.annotate(documents))) == 10 and asked == [True]  # once, before the third of three batches


def test_bad_options_are_refused(linker):
    with pytest.raises(MedlinkError, match="consistency"):
        AnnotateOptions(consistency="sometimes")
    with pytest.raises(MedlinkError, match="tagger"):
        Annotator.load("nowhere", finder="tagger")
    with pytest.raises(MedlinkError, match="finder"):
        Annotator(linker, [])


def test_one_call_api_loads_an_index_once(linker, tmp_path):
    import medlink
    from medlink.linking import one_call as module

    linker.save(tmp_path / "index")
    document = medlink.annotate("Renal hamartoma and breast cancer.", tmp_path / "index", k=2)
    assert [(a.text, a.ids) for a in document.annotations] == [("Renal hamartoma", ("D007674", "D006222")), ("breast cancer", ("D001943",))]
    assert all(len(a.result.candidates) <= 2 for a in document.annotations)
    loaded = dict(module._LOADED)
    medlink.annotate("renal", tmp_path / "index")
    assert module._LOADED == loaded


def test_results_are_remembered_across_batches(linker):
    calls = []

    class Counting:
        def __init__(self, inner):
            self.inner, self.rerankers = inner, inner.rerankers

        def link(self, mentions, k, generators=None):
            calls.append([m.text for m in mentions])
            return self.inner.link(mentions, k, generators)

        def key(self, text):
            return self.inner.key(text)

    annotator = Annotator(Counting(linker), [linker.dictionary_finder()], AnnotateOptions(batch_documents=1))
    documents = [Document.from_text(text, str(i)) for i, text in enumerate(["Breast cancer.", "breast-cancer and renal", "renal"])]
    out = list(annotator.annotate(documents))
    assert calls == [["Breast cancer"], ["renal"]]  # "breast-cancer" normalises as "Breast cancer" did: not linked again
    assert [[(a.text, a.ids, a.result.mention.doc_id) for a in d.annotations] for d in out] == [
        [("Breast cancer", ("D001943",), "0")], [("breast-cancer", ("D001943",), "1"), ("renal", ("D007674",), "1")],
        [("renal", ("D007674",), "2")]]


def test_a_batch_links_its_spans_and_their_longer_phrases_in_one_call(linker):
    calls = []

    class Counting:
        def __init__(self, inner):
            self.inner, self.rerankers, self.config, self.codes = inner, inner.rerankers, inner.config, inner.codes

        def link(self, mentions, k, generators=None):
            calls.append(sorted(m.text for m in mentions))
            return self.inner.link(mentions, k, generators)

        def key(self, text):
            return self.inner.key(text)

    documents = [Document.from_text("Ovarian tumour in one sister.", "1"), Document.from_text("Colorectal neoplasms with tumour.", "2")]
    counted = list(Annotator(Counting(linker), [linker.dictionary_finder()], AnnotateOptions(composites=False)).annotate(documents))
    assert calls == [["Colorectal neoplasms", "Ovarian tumour", "tumour"]]  # "Ovarian tumour": the phrase of the head "tumour"
    plain = list(Annotator(linker, [linker.dictionary_finder()], AnnotateOptions(composites=False)).annotate(documents))
    assert [[(a.text, a.ids, a.infons) for a in d.annotations] for d in counted] == [[(a.text, a.ids, a.infons) for a in d.annotations] for d in plain]


def test_a_skipped_subtree_is_linked_but_not_found_in_text(tmp_path):
    """Qualifiers are no findings: the finder leaves out a skipped concept and everything under it, linking does not."""
    from pathlib import Path

    from medlink.kb.build import build_kb
    from medlink.kb.store import KB

    build_kb(tmp_path / "do.sqlite", [f"obo:{Path(__file__).parent / 'fixtures' / 'align' / 'source.obo'}"], progress=False)
    kb = KB.open(tmp_path / "do.sqlite")
    text = "Type 2 diabetes mellitus and asthma."
    everything, skipping = Linker.build(kb), Linker.build(kb, finder_skip=["DOID:9351"])  # diabetes mellitus and its two children
    assert [a.text for a in annotate(everything, text).annotations] == ["Type 2 diabetes mellitus", "asthma"]
    assert [a.text for a in annotate(skipping, text).annotations] == ["asthma"]
    assert skipping.manifest["dictionary"] == {"skip_under": ["DOID:9351"], "concepts_skipped": 3}
    assert skipping.link(["type 2 diabetes mellitus"])[0].best.concept_id == "DOID:9352"
    with pytest.raises(MedlinkError, match="--finder-skip DOID:0: no such concept"):
        Linker.build(kb, finder_skip=["DOID:0"])


def test_a_dictionary_span_ending_a_coordination_takes_every_conjunct(linker):
    """The dictionary finds only "ovarian cancer" in "breast and ovarian cancer"; widened over "breast and" (breast
    cancer is a name too), the composite step gives the span both concepts."""
    document = annotate(linker, "Risk of breast and ovarian cancer. Pain and ovarian cancer.")
    first, second = document.annotations[0], document.annotations[-1]
    assert (first.text, first.ids, first.infons["composite"]) == ("breast and ovarian cancer", ("D001943", "D010051"), "breast cancer | ovarian cancer")
    assert second.text == "ovarian cancer"  # "pain cancer" is no name: no coordination to widen over
    assert annotate(linker, "Risk of breast and ovarian cancer.", composites=False).annotations[0].text == "ovarian cancer"
    plural = annotate(linker, "Risk of breast and ovarian cancers.").annotations[0]  # "breast cancers": a plural of a name
    assert (plural.text, plural.ids) == ("breast and ovarian cancers", ("D001943", "D010051"))


def test_coordination_start_needs_every_conjunct_to_be_a_name():
    from medlink.text.coordination import coordination_start

    names = {"breast cancer", "ovarian cancer", "crouzon syndrome", "pfeiffer syndrome", "saethre-chotzen syndrome", "type 1 diabetes"}
    is_name = lambda text: text.lower() in names  # noqa: E731

    def widened(text, span):
        start = text.index(span)
        begin = coordination_start(text, start, start + len(span), is_name)
        return None if begin is None else text[begin:start + len(span)]

    assert widened("Saethre-Chotzen, Crouzon, and Pfeiffer syndrome", "Pfeiffer syndrome") == "Saethre-Chotzen, Crouzon, and Pfeiffer syndrome"
    assert widened("Seen. Breast and ovarian cancer", "ovarian cancer") == "Breast and ovarian cancer"  # not across the sentence
    assert widened("lung, breast and ovarian cancer", "ovarian cancer") == "breast and ovarian cancer"  # the names among them
    assert widened("pain and ovarian cancer", "ovarian cancer") is None
    assert widened("Patients with type 1 and type 2 diabetes", "type 2 diabetes") == "type 1 and type 2 diabetes"  # a numbered conjunct
    assert widened("Patients with type 3 and type 2 diabetes", "type 2 diabetes") is None


def test_a_composite_is_decided_by_its_parts_not_by_its_whole_string(linker):
    """With NIL decisions, the whole coordination's own ranking is NIL (no concept is named "breast and ovarian
    cancer"); its linked parts decide: not NIL, the lower of their probabilities."""
    from dataclasses import replace

    class WholeStringNil:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def link(self, mentions, *args, **kwargs):
            results = self.inner.link(mentions, *args, **kwargs)
            return [replace(r, nil=True, probability=0.1) if " and " in r.mention.text else replace(r, nil=False, probability=p)
                    for r, p in zip(results, [0.8, 0.6] * len(results))]

    annotator = Annotator(WholeStringNil(linker), [linker.dictionary_finder()], AnnotateOptions(consistency="off"))
    span = annotator.annotate_text("Risk of breast and ovarian cancer.").annotations[0]
    assert span.ids == ("D001943", "D010051") and span.result.nil is False and span.result.probability == pytest.approx(0.6)


def test_a_name_with_a_comma_is_not_taken_for_a_coordination(tmp_path):
    """ICD-10-CM's *Major depressive disorder, single episode, unspecified*: the text's "major depressive disorder,
    single episode" is that name (its words stage scores it 1), not two conjuncts to link apart."""
    from medlink.kb.build import build_kb
    from medlink.kb.store import KB

    (tmp_path / "dictionary.txt").write_text("F32.9||Major depressive disorder, single episode, unspecified|Major depression NOS\n"
                                             "F33.9||Major depressive disorder, recurrent, unspecified\nF32.A||Depression\n"
                                             "F32.8||Single episode\n", encoding="utf-8")
    with KB.open(build_kb(tmp_path / "kb.sqlite", [f"biosyn:{tmp_path / 'dictionary.txt'}"], progress=False).path) as kb:
        document = annotate(Linker.build(kb), "Diagnosed with major depressive disorder, single episode.")
    assert [(a.text, a.ids, "composite" in a.infons) for a in document.annotations] == [
        ("major depressive disorder, single episode", ("F32.9",), False)]

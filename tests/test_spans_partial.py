"""Spans (issue 52 item 3): a head found inside a longer phrase keeps the modifiers that change its concept, or is a
partial match at a lower probability; section headers are not mentions.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from medlink.core import Annotation, Candidate, Document, LinkResult, Mention
from medlink.linking.output import annotation_lines
from medlink.linking.partial import PARTIAL, discounted, phrases, widen_or_discount
from medlink.text.finders.headers import is_section_header

NOTHING_TAKEN = lambda i, j: False  # noqa: E731


def texts(text: str, start: int, end: int, **options) -> list[str]:
    return [text[s:e] for s, e in phrases(text, start, end, options.pop("taken", NOTHING_TAKEN), **options)]


@pytest.mark.parametrize(
    "text, head, phrase",
    [
        ("Juvenile diabetes", "diabetes", "Juvenile diabetes"),
        ("Brother has type 1 diabetes", "diabetes", "type 1 diabetes"),
        ("Mother with breast cancer", "cancer", "breast cancer"),
        ("c/o ear pain", "pain", "ear pain"),
        ("62F with invasive ductal carcinoma of the left breast, ER+", "carcinoma", "invasive ductal carcinoma of the left breast"),
        ("PROBLEM LIST:\nAsthma, mild intermittent, uncomplicated\n", "Asthma", "Asthma, mild intermittent, uncomplicated"),
        ("28 F c/o abd pain RLQ since last noc", "abd pain", "abd pain RLQ"),
        ("Pt c/o Lt. hip pain", "hip pain", "Lt. hip pain"),
        ("Carpal tunnel syndrome R>L.", "Carpal tunnel syndrome", "Carpal tunnel syndrome R>L"),
        ("Pain in the left hip for 2 weeks.", "Pain", "Pain in the left hip"),
        ("Hx melanoma of the R forearm.", "melanoma", "melanoma of the R forearm"),
        ("Also acute conjunctivitis OU.", "acute conjunctivitis", "acute conjunctivitis OU"),
        ("Statin-associated myalgias", "myalgias", "Statin-associated myalgias"),
    ],
)
def test_the_modifiers_that_change_the_concept_make_the_longest_phrase(text, head, phrase):
    start = text.index(head)
    assert texts(text, start, start + len(head))[0] == phrase


@pytest.mark.parametrize(
    "text, head",
    [
        ("Pt denies chest pain", "chest pain"),
        ("hx of MI", "MI"),
        ("Acute kidney injury, resolved.", "Acute kidney injury"),
        ("severe headache", "headache"),
        ("r/o appy vs ovarian torsion", "ovarian torsion"),
        ("Pain in the morning", "Pain"),  # "in" a time, not a site
        ("2.1 cm thyroid nodule", "thyroid nodule"),  # a size's unit
        ("e/o rosacea", "rosacea"),  # "evidence of"
        ("CT shows cystic bronchiectasis", "cystic bronchiectasis"),  # what it was seen by
        ("tired of waiting", "tired"),  # "of" and a verb, no site
    ],
)
def test_cues_sizes_and_courses_are_no_modifiers(text, head):
    start = text.index(head)
    assert texts(text, start, start + len(head)) == []


def test_a_phrase_cut_short_by_a_word_the_kb_never_uses_is_no_phrase():
    """ "Community acquired pneumonia": "acquired pneumonia" is not what the text says (it linked to *Congenital
    pneumonia*); a stop word or a cue before the modifiers ends the phrase where it is."""
    text = "Community acquired pneumonia"
    start = text.index("pneumonia")
    assert texts(text, start, len(text), known=lambda word: word.lower() != "community") == []
    text = "has acquired pneumonia"
    assert texts(text, text.index("pneumonia"), len(text), known=lambda word: word.lower() != "has") == ["acquired pneumonia"]


def test_a_side_in_shorthand_is_a_modifier_though_the_kb_never_says_it():
    never = lambda word: word.lower() in ("hip", "pain")  # noqa: E731
    for text, phrase in (("b/l hip pain", "b/l hip pain"), ("Hip pain, L.", "Hip pain, L")):
        start = text.lower().index("hip pain")
        assert texts(text, start, start + len("hip pain"), known=never)[0] == phrase


def test_a_drug_named_as_the_cause_is_a_modifier_though_the_kb_never_says_it():
    """ "Chemo-induced": ICD-10-CM codes drug-induced conditions apart (G62.0), so the cause stays in the phrase."""
    text = "Chemo-induced peripheral neuropathy"
    start = text.index("peripheral")
    assert texts(text, start, len(text), known=lambda word: "chemo" not in word.lower()) == [text]


def test_a_word_the_kb_never_uses_is_no_modifier_and_another_span_is_never_crossed():
    text = "suggest pyelonephritis"
    start = text.index("pyelonephritis")
    assert texts(text, start, len(text), known=lambda word: word != "suggest") == []
    text = "HIV pneumonia"
    assert texts(text, 4, len(text), taken=lambda i, j: i < 3) == []


def _linked(mention: str, concept: str, probability: float) -> LinkResult:
    candidate = Candidate(concept, 1.0, mention, probability=probability)
    return LinkResult(Mention(mention), [candidate], nil=probability < 0.4, probability=probability, nil_threshold=0.4)


def test_a_phrase_that_links_replaces_its_head():
    text = "Brother has type 1 diabetes"
    head = Annotation(text.index("diabetes"), len(text), "diabetes", source="dictionary")
    head.result = _linked("diabetes", "ICD10CM:E11.9", 0.98)
    out = widen_or_discount(text, [head], lambda mentions: [_linked(m.text, "ICD10CM:E10.9", 0.95) for m in mentions])
    assert out[0].text == "type 1 diabetes" and out[0].infons["widened_from"] == "diabetes"
    assert out[0].result.best.concept_id == "ICD10CM:E10.9"


def test_a_head_whose_phrase_does_not_link_is_a_partial_match_and_less_sure():
    text = "Juvenile diabetes"
    head = Annotation(9, 17, "diabetes", source="dictionary")
    head.result = _linked("diabetes", "ICD10CM:E11.9", 0.98)
    out = widen_or_discount(text, [head], lambda mentions: [_linked(m.text, "HP:0100651", 0.2) for m in mentions])
    assert out[0].text == "diabetes" and out[0].infons["partial_of"] == "Juvenile diabetes"
    assert out[0].result.probability == pytest.approx(0.98 * PARTIAL)
    assert out[0].result.probability < 0.95


def test_a_phrase_nearly_a_kb_name_replaces_a_surer_head_and_a_narrower_name_does_not():
    """ "Juvenile diabetes" is *Juvenile diabetes mellitus* (HP:0100651, p 0.77), not the head's E11 (p 0.98): a head-only
    answer is never surer than the whole phrase's own name; "symptomatic anemia" is not *Cold type (symptomatic)
    autoimmune hemolytic anemia*."""
    for text, name, concept, widened in (
        ("Juvenile diabetes", "Juvenile diabetes mellitus", "HP:0100651", True),
        ("Symptomatic anemia", "Cold type (symptomatic) autoimmune hemolytic anemia", "ICD10CM:D59.12", False),
    ):
        head = Annotation(text.index(" ") + 1, len(text), text.split()[1], source="dictionary")
        head.result = _linked(head.text, "ICD10CM:E11.9", 0.98)
        out = widen_or_discount(text, [head], lambda mentions: [_linked(name, concept, 0.77) for _ in mentions], mode="phrase")
        assert out[0].text == text
        assert (out[0].result.best.concept_id == concept) is widened and ("widened_from" in out[0].infons) is widened
        assert out[0].result.probability == pytest.approx(0.77 if widened else 0.98 * PARTIAL)


def test_in_phrase_mode_the_span_is_the_whole_phrase_linked_as_its_named_part():
    """ "invasive ductal carcinoma of the left breast": a name says "ductal carcinoma", none the whole; a note marks the
    whole phrase, linked as the part a name says, at ``PARTIAL`` x its probability."""
    text = "invasive ductal carcinoma of the left breast"
    head = Annotation(text.index("carcinoma"), text.index("carcinoma") + 9, "carcinoma", source="dictionary")
    head.result = _linked("carcinoma", "HP:0030731", 0.9)

    def link(mentions):
        return [_linked("Ductal carcinoma" if m.text == "ductal carcinoma" else "Carcinoma", "HP:0030075", 0.95) for m in mentions]

    out = widen_or_discount(text, [head], link, mode="phrase")
    assert out[0].text == text and out[0].infons["head"] == "ductal carcinoma"
    assert out[0].result.best.concept_id == "HP:0030075" and out[0].result.probability == pytest.approx(0.95 * PARTIAL)
    widen = widen_or_discount(text, [head], link, mode="widen")
    assert widen[0].text == "ductal carcinoma"  # widen mode keeps the named part alone


def test_in_phrase_mode_the_whole_phrase_links_as_itself_where_that_is_nearly_as_sure_as_its_named_part():
    """ "acute conjunctivitis OU": a name says "acute conjunctivitis"; the whole phrase, whose side chooses the code
    (H10.33, both eyes), links nearly as surely, so the span is linked as itself; a less sure phrase gives way."""
    text = "Also acute conjunctivitis OU."
    head = Annotation(text.index("conjunctivitis"), text.index("conjunctivitis") + 14, "conjunctivitis", source="dictionary")
    head.result = _linked("Conjunctivitis", "ICD10CM:H10.9", 0.95)
    for whole_p, chosen in ((0.83, "ICD10CM:H10.33"), (0.6, "ICD10CM:H10.30")):
        linked = {"acute conjunctivitis": _linked("Acute conjunctivitis", "ICD10CM:H10.30", 0.84),
                  "acute conjunctivitis OU": _linked("Acute conjunctivitis, bilateral", "ICD10CM:H10.33", whole_p),
                  "conjunctivitis OU": _linked("Conjunctivitis", "ICD10CM:H10.9", 0.95)}
        out = widen_or_discount(text, [head], lambda mentions: [linked[m.text] for m in mentions], mode="phrase")
        assert out[0].text == "acute conjunctivitis OU" and out[0].infons["head"] == "acute conjunctivitis"
        assert out[0].result.best.concept_id == chosen


def test_a_note_marks_a_comma_qualifier_only_where_a_name_says_it_or_it_says_a_side():
    def phrase_of(text: str, head: str) -> str:
        span = Annotation(text.index(head), text.index(head) + len(head), head, source="dictionary")
        span.result = _linked(head, "ICD10CM:X", 0.95)
        out = widen_or_discount(text, [span], lambda mentions: [_linked(head, "ICD10CM:X", 0.9) for _ in mentions], mode="phrase")
        return out[0].text

    assert phrase_of("Dx: Acne vulgaris, inflammatory.", "Acne vulgaris") == "Acne vulgaris"  # no name says "inflammatory"
    assert phrase_of("Dx: otitis media, right ear.", "otitis media") == "otitis media, right ear"  # the side its code reads
    assert phrase_of("Dx: juvenile acne, inflammatory.", "acne") == "juvenile acne"  # the modifier before it stays


def test_discounting_takes_the_nil_decision_again():
    result = discounted(_linked("pain", "ICD10CM:R52", 0.45))
    assert result.probability == pytest.approx(0.36) and result.nil


@pytest.mark.parametrize(
    "text, span, header",
    [
        ("ONCOLOGY:\n62F with invasive ductal carcinoma", "ONCOLOGY", True),
        ("Oncology: 62F with carcinoma", "Oncology", True),
        ("ASSESSMENT: pneumonia", "ASSESSMENT", True),
        ("Problem List:\n- Hypertension: controlled on lisinopril", "Hypertension", False),
        ("CHF: stable", "CHF", False),
        ("pt has CHF: stable", "CHF", False),
        ("Oncology\n62F with invasive ductal carcinoma", "Oncology", True),  # a line of a section's name alone
        ("Note\n  Infectious disease \nFever", "Infectious disease", True),
        ("Problem list\n- Hypertension\n- Oncology follow-up", "Hypertension", False),  # a condition alone on its line
        ("Problem list\n- Hypertension\n- Oncology follow-up", "Oncology", False),  # more words on the line
    ],
)
def test_section_headers(text, span, header):
    start = text.index(span)
    assert is_section_header(text, start, start + len(span)) is header


def test_heads_are_phrases_in_coding_mode_and_partial_otherwise_unless_told():
    from medlink.errors import MedlinkError
    from medlink.linking.annotator import AnnotateOptions

    assert AnnotateOptions().modifiers_mode == "partial"  # corpora such as NCBI Disease mark the head alone
    assert AnnotateOptions(target_namespace="ICD10CM").modifiers_mode == "phrase"  # the span's words choose the code
    assert AnnotateOptions(modifiers="off", target_namespace="ICD10CM").modifiers_mode == "off"
    with pytest.raises(MedlinkError, match="unknown modifiers mode"):
        AnnotateOptions(modifiers="always")


def test_an_index_records_the_mode_its_annotator_takes_unless_told(kb, tmp_path):
    """The default indexes are clinical: `annotate` keeps a head's phrase there ("Juvenile diabetes") as coding mode does;
    an index built without a mode keeps corpora's head; an option the caller gives wins."""
    from medlink.errors import MedlinkError
    from medlink.linking.annotator import AnnotateOptions, Annotator
    from medlink.linking.index import CLINICAL_MODIFIERS, build_index

    clinical = build_index(kb, tmp_path / "clinical", modifiers=CLINICAL_MODIFIERS, calibrate="none")
    plain = build_index(kb, tmp_path / "plain", calibrate="none")
    assert Annotator.load(tmp_path / "clinical").options.modifiers_mode == "phrase" == CLINICAL_MODIFIERS
    assert Annotator.load(tmp_path / "plain").options.modifiers_mode == "partial"
    told = Annotator(clinical, [clinical.dictionary_finder()], AnnotateOptions(modifiers="partial"))
    assert told.options.modifiers_mode == "partial" and Annotator(plain, [plain.dictionary_finder()]).options.modifiers is None
    with pytest.raises(MedlinkError, match="unknown modifiers mode"):
        build_index(kb, tmp_path / "bad", modifiers="always")


def test_partial_mode_marks_a_head_only_where_a_name_says_its_modifiers_and_off_leaves_spans_alone():
    text = "Juvenile diabetes"
    head = Annotation(9, 17, "diabetes", source="dictionary")
    head.result = _linked("diabetes", "ICD10CM:E11.9", 0.98)
    juvenile = lambda mentions: [_linked("Juvenile diabetes mellitus", "HP:0100651", 0.84) for _ in mentions]  # noqa: E731
    partial = widen_or_discount(text, [head], juvenile, mode="partial")
    assert partial[0].text == "diabetes" and partial[0].infons["partial_of"] == "Juvenile diabetes"
    assert partial[0].result.probability == pytest.approx(0.98 * PARTIAL)
    document = Document.from_text(text)
    document.annotations = partial
    assert annotation_lines(document)[1].endswith("\t(partial: the head of 'Juvenile diabetes')")  # the plain output says so
    no_such_name = lambda mentions: [_linked("diabetes", "ICD10CM:E11.9", 0.9) for _ in mentions]  # noqa: E731
    assert widen_or_discount(text, [head], no_such_name, mode="partial")[0] is head  # "sporadic tumors": the head is the mention

    def no_linking(mentions):
        raise AssertionError("off links no phrase")

    assert widen_or_discount(text, [head], no_linking, mode="off")[0] is head


def test_a_phrase_is_widened_to_only_when_its_name_says_the_modifiers():
    text = "sporadic tumors"
    head = Annotation(9, 15, "tumors", source="dictionary")
    head.result = _linked("tumors", "D009369", 0.9)
    out = widen_or_discount(text, [head], lambda mentions: [_linked(m.text, "D009369", 0.9) for m in mentions])  # alias: the phrase
    assert out[0].text == "sporadic tumors"
    named_tumors = lambda mentions: [_linked("tumors", "D009369", 0.9) for _ in mentions]  # noqa: E731 (alias "tumors": no "sporadic")
    out = widen_or_discount(text, [head], named_tumors)
    assert out[0].text == "tumors" and out[0].infons["partial_of"] == "sporadic tumors"


def test_phrase_mode_makes_the_span_the_whole_phrase_linked_as_the_phrase_or_the_head():
    """Clinical notes mark "Acute uncomplicated sigmoid diverticulitis" whole; no name says "acute uncomplicated", so it
    is a partial match: linked as the phrase where that is about as sure as the head (its words can choose a code), else
    as the head, at ``PARTIAL`` of the probability either way."""
    text = "Dx: Acute uncomplicated sigmoid diverticulitis."
    head = Annotation(text.index("sigmoid"), text.index("."), "sigmoid diverticulitis", source="dictionary")
    head.result = _linked("sigmoid diverticulitis", "ICD10CM:K57.32", 0.9)

    def as_the_head(mentions):  # linked through the head's name: "Diverticulitis of sigmoid" says neither modifier
        return [
            LinkResult(
                Mention(m.text),
                [Candidate("ICD10CM:K57.32", 1.0, "Diverticulitis of sigmoid", probability=0.85)],
                probability=0.85,
                nil=False,
                nil_threshold=0.4,
            )
            for m in mentions
        ]

    as_sure = widen_or_discount(text, [head], as_the_head, mode="phrase")
    assert as_sure[0].text == "Acute uncomplicated sigmoid diverticulitis" and as_sure[0].infons["head"] == "sigmoid diverticulitis"
    assert as_sure[0].result.mention.text == "Acute uncomplicated sigmoid diverticulitis"
    assert as_sure[0].result.probability == pytest.approx(0.85 * PARTIAL)
    unsure = widen_or_discount(text, [head], lambda mentions: [_linked(m.text, "HP:0002014", 0.3) for m in mentions], mode="phrase")
    assert unsure[0].text == "Acute uncomplicated sigmoid diverticulitis" and unsure[0].result.best.concept_id == "ICD10CM:K57.32"
    assert unsure[0].result.probability == pytest.approx(0.9 * PARTIAL)
    document = Document.from_text(text)
    document.annotations = unsure  # linked as its head, the phrase's own candidates unsure: the plain output says so
    assert annotation_lines(document)[1].endswith("\t(partial: linked as its head 'sigmoid diverticulitis')")
    document.annotations = as_sure  # the phrase linked as itself, its probability discounted: the output says why
    assert annotation_lines(document)[1].endswith("\t(partial: no name says the whole phrase)")
    as_sure[0].result = replace(as_sure[0].result, read_as="sigmoid diverticulitis")  # coding mode: the phrase read as its head
    assert annotation_lines(document)[1].endswith("\t(partial: linked as its head 'sigmoid diverticulitis')")

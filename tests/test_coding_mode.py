"""Coding mode (``--target-namespace``): codes of the namespace first, each with its path; ICD-10-CM's manifestation and
specificity rules; nothing changed without the option; a mention no code is reachable from is NIL for coding.

On tests/fixtures/coding: a tiny KB of a few HPO concepts and ICD-10-CM codes, and a tiny SSSOM mapping between them.
"""

from __future__ import annotations

import json

import pytest

from medlink.core import Candidate, LinkResult, Mention
from medlink.kb.mappings import DEFAULT_MAPPINGS, mapped_objects, read_code_first, read_mappings
from medlink.linking.coding import Coder, build_coder, is_uncoded
from medlink.linking.coding_rules import CodeSet
from medlink.linking.coding_words import said_words
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink

CODING = FIXTURES / "coding"
MAPPINGS = CODING / "tiny_mappings.sssom.tsv"


@pytest.fixture(scope="module")
def tiny_kb(tmp_path_factory):
    from medlink.kb.build import build_kb

    return build_kb(tmp_path_factory.mktemp("coding-kb") / "kb.sqlite", [f"jsonl:{CODING / 'tiny_kb.jsonl'}"], progress=False).path


@pytest.fixture(scope="module")
def codes(tiny_kb) -> CodeSet:
    from medlink.kb.store import KB

    with KB.open(tiny_kb) as kb:
        return CodeSet.build(
            "ICD10CM",
            kb.iter_concepts(),
            ((cid, text) for cid, text, kind in kb.iter_names() if kind != "preferred"),
            ((head, tail) for head, _r, tail in kb.iter_relations(("is_a",))),
            read_code_first(),
        )


@pytest.fixture(scope="module")
def index(tiny_kb, tmp_path_factory):
    from medlink.linking.index import build_index

    out = tmp_path_factory.mktemp("coding-index") / "index"
    build_index(tiny_kb, out, calibrate="none")
    return out


def coded(codes: CodeSet, mappings=(), *candidates: Candidate, mention: str = "x") -> LinkResult:
    by_subject: dict = {}
    for m in mappings:
        by_subject.setdefault(m.subject, []).append(m)
    return Coder(codes, by_subject, []).code([LinkResult(Mention(mention), list(candidates))], 5)[0]


# -- the code set and ICD-10-CM's rules ------------------------------------------------------------------------------------
def test_codes_are_codes_not_chapters_or_blocks(codes):
    assert "ICD10CM:I21.9" in codes and "ICD10CM:I21" in codes
    assert "ICD10CM:I20-I25" not in codes and "ICD10CM:9" not in codes and "HP:0001658" not in codes
    assert codes.children["ICD10CM:I21"] == ["ICD10CM:I21.4", "ICD10CM:I21.9"]


def test_manifestation_codes(codes):
    assert codes.is_manifestation("ICD10CM:N16")  # "... in diseases classified elsewhere", and ICD-10-CM's note
    assert not codes.is_manifestation("ICD10CM:N12") and not codes.is_manifestation("ICD10CM:N10")
    assert codes.code_first_note("ICD10CM:N16").startswith("code first: underlying disease")


def test_unspecified_only_when_nothing_more_is_said(codes):
    # a category goes down to its "unspecified" child when the words say nothing more
    assert codes.refine("ICD10CM:I21", said_words(["heart attack"]))[0] == "ICD10CM:I21.9"
    # a specific code the words do not support gives way to its unspecified sibling, and says why
    code, steps = codes.refine("ICD10CM:I21.4", said_words(["heart attack"]))
    assert code == "ICD10CM:I21.9" and steps == ["ICD10CM:I21.4 -> ICD10CM:I21.9: nothing said of 'non st elevation nstemi'"]
    # one the words support stays
    assert codes.refine("ICD10CM:I21.4", said_words(["NSTEMI"])) == ("ICD10CM:I21.4", [])


def test_laterality_from_the_words(codes):
    assert codes.refine("ICD10CM:H65.9", said_words(["otitis media of the left ear"]))[0] == "ICD10CM:H65.92"
    assert codes.refine("ICD10CM:H65.9", said_words(["right otitis media"]))[0] == "ICD10CM:H65.91"
    assert codes.refine("ICD10CM:H65.9", said_words(["otitis media"]))[0] == "ICD10CM:H65.90"


def test_mappings_file():
    rows = read_mappings(MAPPINGS)
    assert [(m.subject, m.object, m.predicate, m.confidence) for m in rows][2] == ("HP:0001658", "ICD10CM:I21", "skos:closeMatch", 0.92)
    assert all(m.origin == MAPPINGS.name for m in rows)


@pytest.mark.parametrize("path", [MAPPINGS, DEFAULT_MAPPINGS], ids=["tiny", "packaged"])
def test_mapped_objects_are_the_mappings_rows_of_those_predicates(path, tmp_path):
    """What rivals read at a process's first link (``mapped_objects``, no row objects) is what ``read_mappings`` reads;
    a negated row and a NoTermFound row are left out by both."""
    lines = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
    header = next(line for line in lines if not line.startswith("#")).split("\t")
    extra = dict.fromkeys(header, "")
    negated = {**extra, "subject_id": "HP:9999998", "predicate_id": "skos:exactMatch", "object_id": "ICD10CM:Z00"}
    unfound = {**extra, "subject_id": "HP:9999999", "predicate_id": "skos:exactMatch", "object_id": "sssom:NoTermFound"}
    if "predicate_modifier" not in header:
        header.append("predicate_modifier")
        lines = [line if line.startswith("#") else line + "\t" + ("predicate_modifier" if line.startswith("subject_id") else "") for line in lines]
    rows = [{**negated, "predicate_modifier": "Not"}, {**unfound, "predicate_modifier": ""}]
    edited = tmp_path / "mappings.sssom.tsv"
    edited.write_text("\n".join([*lines, *("\t".join(row.get(name, "") for name in header) for row in rows)]) + "\n", encoding="utf-8")
    same = ("skos:exactMatch", "skos:closeMatch", "skos:broadMatch")
    expected: dict[str, list[str]] = {}
    for mapping in read_mappings(edited, same):
        expected.setdefault(mapping.subject, []).append(mapping.object)
    found = mapped_objects(edited, same)
    assert found == {subject: tuple(objects) for subject, objects in expected.items()} and found
    assert "HP:9999998" not in found and "HP:9999999" not in found


# -- coding link results ---------------------------------------------------------------------------------------------------
def test_a_manifestation_code_is_never_first_alone(codes):
    both = coded(codes, (), Candidate("ICD10CM:N16", 3.0, "Pyelonephritis"), Candidate("ICD10CM:N12", 2.0, "Pyelonephritis NOS"))
    assert [c.concept_id for c in both.candidates] == ["ICD10CM:N12", "ICD10CM:N16"]
    assert "listed after ICD10CM:N12" in both.candidates[1].evidence[-1]["coding"]["manifestation"]
    alone = coded(codes, (), Candidate("ICD10CM:N16", 3.0, "Pyelonephritis"))  # first only with its "code first" note
    path = alone.candidates[0].evidence[-1]["coding"]
    assert "no other code reachable" in path["manifestation"] and path["code_first"].startswith("code first: underlying disease")


def test_probability_is_the_exact_codes_and_nil_follows_it(codes):
    """The linked concept's probability, here for a code the rules reached by default (I21 -> I21.9) through its one
    mapping, a close match of confidence 0.92: that share, then ``BY_DEFAULT`` of it (``coding_probability``); the NIL
    decision is taken on the code's."""
    from medlink.linking.coding_probability import BY_DEFAULT

    mapping = read_mappings(MAPPINGS)
    result = LinkResult(
        Mention("heart attack"), [Candidate("HP:0001658", 3.0, "Heart attack", name="Myocardial infarction", probability=0.3)]
    )
    result.nil_threshold, result.nil, result.probability = 0.4, True, 0.3
    out = Coder(codes, {m.subject: [m] for m in mapping}, []).code([result], 5)[0]
    assert (
        out.candidates[0].concept_id == "ICD10CM:I21.9"
        and out.candidates[0].probability == pytest.approx(0.3 * 0.92 * BY_DEFAULT)
        and out.nil
    )


# -- end to end, on a tiny index ----------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_codes_first_with_their_path(index):
    import medlink

    heart, pyelo, deaf = medlink.link(
        ["heart attack", "pyelonephritis", "deafness"], index=index, target_namespace="ICD10CM", mappings=[MAPPINGS]
    )
    assert heart.best.concept_id == "ICD10CM:I21.9" and heart.best.name == "Acute myocardial infarction, unspecified"
    path = heart.best.evidence[-1]["coding"]
    assert (path["from"], path["mapping"], path["mapping_confidence"], path["mapping_source"]) == (
        "HP:0001658",
        "skos:closeMatch",
        0.92,
        "tiny_mappings.sssom.tsv",
    )
    assert path["reached"] == "ICD10CM:I21" and "nothing more specific said" in path["refined"][0]
    assert all(c.concept_id.startswith("ICD10CM:") for r in (heart, pyelo, deaf) for c in r.candidates)
    assert pyelo.best.concept_id == "ICD10CM:N12"  # N16, a manifestation code, both mapped and matched: not first
    assert "ICD10CM:N16" in [c.concept_id for c in pyelo.candidates[1:]]
    assert deaf.best.concept_id == "ICD10CM:H91.9" and deaf.best.evidence[-1]["coding"]["mapping"] == "xref"  # the KB's own xref


@pytest.mark.slow
def test_no_code_reachable_is_nil_for_coding(index):
    import medlink

    (result,) = medlink.link(["autosomal dominant"], index=index, target_namespace="ICD10CM", mappings=[MAPPINGS])
    assert result.nil and result.best is None and is_uncoded(result)
    assert result.error.startswith("no ICD10CM code reachable") and "HP:0000006" in result.error
    assert result.candidates[0].concept_id == "HP:0000006"  # the candidates are still listed


@pytest.mark.slow
def test_nothing_changes_without_the_option(index):
    import medlink
    from medlink.linking.linker import Linker

    mentions = ["heart attack", "pyelonephritis", "autosomal dominant"]
    plain = medlink.link(mentions, index=index)
    assert [r.best.concept_id for r in plain] == ["HP:0001658", "HP:0012330", "HP:0000006"]
    reference = Linker.load(index).link(mentions, k=5)
    assert [[c.concept_id for c in r.candidates] for r in plain] == [[c.concept_id for c in r.candidates] for r in reference]
    assert not any("coding" in e for r in plain for c in r.candidates for e in c.evidence)


@pytest.mark.slow
def test_unknown_namespace_and_mappings_that_fit_nothing(index, tmp_path):
    from medlink.errors import MedlinkError
    from medlink.linking.linker import Linker

    linker = Linker.load(index)
    with pytest.raises(MedlinkError, match="no SNOMED code to answer with; its namespaces: HP, ICD10CM"):
        build_coder(linker, "SNOMED")
    other = tmp_path / "other.tsv"
    other.write_text("HP:9999999\tICD10CM:Z99\n")
    with pytest.raises(MedlinkError, match="none of its 1 mappings"):
        build_coder(linker, "ICD10CM", [other])


@pytest.mark.slow
def test_command_line_link_and_annotate(index):
    out = medlink(
        "link", "--index", index, "--target-namespace", "ICD10CM", "--mappings", MAPPINGS, "--json", "heart attack", "autosomal dominant"
    )
    heart, uncoded = (json.loads(line) for line in out.stdout.splitlines())
    assert heart["candidates"][0]["id"] == "ICD10CM:I21.9" and heart["coding"]["path"]["from"] == "HP:0001658"
    assert uncoded["nil"] and not uncoded["coding"]["coded"] and uncoded["candidates"][0]["id"] == "HP:0000006"
    explained = medlink("link", "--index", index, "--target-namespace", "ICD10CM", "--mappings", MAPPINGS, "--explain", "heart attack")
    assert "from HP:0001658 Myocardial infarction (rank 1) by skos:closeMatch 0.92" in explained.stdout
    only_uncoded = medlink("link", "--index", index, "--target-namespace", "ICD10CM", "--mappings", MAPPINGS, "autosomal dominant")
    assert only_uncoded.returncode == 0 and "NIL\t(no ICD10CM code reachable" in only_uncoded.stdout  # an answer, not a failure
    text = "Admitted with pyelonephritis after a heart attack."
    document = json.loads(
        medlink("annotate", "--index", index, "--target-namespace", "ICD10CM", "--mappings", MAPPINGS, "--json", text).stdout
    )
    assert [a["ids"] for a in document["annotations"]] == [["ICD10CM:N12"], ["ICD10CM:I21.9"]]
    plain = json.loads(medlink("annotate", "--index", index, "--json", text).stdout)
    assert [a["ids"] for a in plain["annotations"]] == [["HP:0012330"], ["HP:0001658"]]
    refused = medlink("link", "--index", index, "--mappings", MAPPINGS, "heart attack", check=False)
    assert refused.returncode == 2 and "--target-namespace" in refused.stderr


def test_a_short_form_says_the_words_its_letters_spell():
    from medlink.linking.coding_words import spelled_out

    assert spelled_out("SOB", ["Dyspnea", "Shortness of breath"]) >= {"shortness", "breath"}
    assert {"lower", "urinary", "tract"} <= spelled_out("BPH with LUTS", ["Benign prostatic hyperplasia with lower urinary tract symptoms"])
    assert spelled_out("chest pain", ["Chest pain, unspecified"]) == frozenset()  # no short form, nothing spelled
    assert spelled_out("MI", ["Migraine"]) == frozenset()  # one word's initial is no two-letter short form


# -- which code a concept leads to: the words said, the mapping's kind ------------------------------------------------------
SMALL_CODES = CodeSet.build(
    "ICD10CM",
    [
        ("ICD10CM:L40.5", "Arthropathic psoriasis"),
        ("ICD10CM:L40.50", "Arthropathic psoriasis, unspecified"),
        ("ICD10CM:L40.52", "Psoriatic arthritis mutilans"),
        ("ICD10CM:I34", "Nonrheumatic mitral valve disorders"),
        ("ICD10CM:I34.0", "Nonrheumatic mitral (valve) insufficiency"),
        ("ICD10CM:I34.9", "Nonrheumatic mitral valve disorder, unspecified"),
        ("ICD10CM:Z82.4", "Family history of ischemic heart disease and other diseases of the circulatory system"),
        ("ICD10CM:Z82.41", "Family history of sudden cardiac death"),
        ("ICD10CM:C61", "Malignant neoplasm of prostate"),
        ("ICD10CM:C80.1", "Malignant (primary) neoplasm, unspecified"),
        ("ICD10CM:T67.1", "Heat syncope"),
        ("ICD10CM:I10", "Essential (primary) hypertension"),
        ("ICD10CM:I1A", "Other hypertension"),
        ("ICD10CM:G43.9", "Migraine, unspecified"),
        ("ICD10CM:G43.90", "Migraine, unspecified, not intractable"),
        ("ICD10CM:G43.909", "Migraine, unspecified, not intractable, without status migrainosus"),
        ("ICD10CM:G43.91", "Migraine, unspecified, intractable"),
        ("ICD10CM:D05", "Carcinoma in situ of breast"),
        ("ICD10CM:D05.9", "Unspecified type of carcinoma in situ of breast"),
        ("ICD10CM:I25", "Chronic ischemic heart disease"),
        ("ICD10CM:I25.2", "Old myocardial infarction"),
        ("ICD10CM:I25.9", "Chronic ischemic heart disease, unspecified"),
        ("ICD10CM:I21.9", "Acute myocardial infarction, unspecified"),
    ],
    [("ICD10CM:I34.0", "Nonrheumatic mitral (valve) regurgitation NOS")],
    [
        ("ICD10CM:L40.50", "ICD10CM:L40.5"),
        ("ICD10CM:L40.52", "ICD10CM:L40.5"),
        ("ICD10CM:I34.0", "ICD10CM:I34"),
        ("ICD10CM:I34.9", "ICD10CM:I34"),
        ("ICD10CM:Z82.41", "ICD10CM:Z82.4"),
        ("ICD10CM:G43.90", "ICD10CM:G43.9"),
        ("ICD10CM:G43.91", "ICD10CM:G43.9"),
        ("ICD10CM:G43.909", "ICD10CM:G43.90"),
        ("ICD10CM:D05.9", "ICD10CM:D05"),
        ("ICD10CM:I25.2", "ICD10CM:I25"),
        ("ICD10CM:I25.9", "ICD10CM:I25"),
    ],
)


def test_a_code_whose_own_words_were_not_all_said_gives_way_to_the_unspecified_one():
    """ "psoriatic arthritis" says two of the three words "Psoriatic arthritis mutilans" adds to its parent; the third
    is that code's whole difference from its siblings. A name of the code whose own words were all said keeps it
    ("Nonrheumatic mitral (valve) regurgitation NOS"), and a "non-" word is the reading when nothing is said."""
    assert SMALL_CODES.refine("ICD10CM:L40.52", said_words(["psoriatic arthritis"])) == (
        "ICD10CM:L40.50",
        ["ICD10CM:L40.52 -> ICD10CM:L40.50: nothing said of 'mutilans'"],
    )
    assert SMALL_CODES.refine("ICD10CM:L40.52", said_words(["psoriatic arthritis mutilans"])) == ("ICD10CM:L40.52", [])
    assert SMALL_CODES.refine("ICD10CM:I34.0", said_words(["mitral regurgitation"])) == ("ICD10CM:I34.0", [])
    assert SMALL_CODES.unsaid("ICD10CM:I34.0", said_words(["mitral regurgitation"])) == 0


def test_an_unspecified_code_gives_way_where_the_words_tell_a_sibling():
    """"left knee osteoarthritis" matches "Osteoarthritis of knee, unspecified" (M17.9) word for word but for "left":
    ICD-10-CM writes "unspecified" only when nothing more is said, and M17.12 says "left" a level down."""
    knee = CodeSet.build(
        "ICD10CM",
        [
            ("ICD10CM:M17", "Osteoarthritis of knee"),
            ("ICD10CM:M17.1", "Unilateral primary osteoarthritis of knee"),
            ("ICD10CM:M17.11", "Unilateral primary osteoarthritis, right knee"),
            ("ICD10CM:M17.12", "Unilateral primary osteoarthritis, left knee"),
            ("ICD10CM:M17.2", "Bilateral post-traumatic osteoarthritis of knee"),
            ("ICD10CM:M17.3", "Unilateral post-traumatic osteoarthritis of knee"),
            ("ICD10CM:M17.31", "Unilateral post-traumatic osteoarthritis, right knee"),
            ("ICD10CM:M17.32", "Unilateral post-traumatic osteoarthritis, left knee"),
            ("ICD10CM:M17.9", "Osteoarthritis of knee, unspecified"),
        ],
        is_a=[("ICD10CM:M17.1", "ICD10CM:M17"), ("ICD10CM:M17.11", "ICD10CM:M17.1"), ("ICD10CM:M17.12", "ICD10CM:M17.1"),
              ("ICD10CM:M17.2", "ICD10CM:M17"), ("ICD10CM:M17.3", "ICD10CM:M17"), ("ICD10CM:M17.31", "ICD10CM:M17.3"),
              ("ICD10CM:M17.32", "ICD10CM:M17.3"), ("ICD10CM:M17.9", "ICD10CM:M17")],
    )
    code, steps = knee.refine("ICD10CM:M17.9", said_words(["left knee osteoarthritis"]))
    assert code == "ICD10CM:M17.12" and steps[0] == "ICD10CM:M17.9 -> ICD10CM:M17.1: the words say more than 'unspecified'"
    assert knee.refine("ICD10CM:M17.9", said_words(["knee osteoarthritis"])) == ("ICD10CM:M17.9", [])  # nothing more said
    # the sibling the side tells, not a tie among those the words half say (bilateral and unilateral post-traumatic)
    assert knee.refine("ICD10CM:M17.9", said_words(["left knee post-traumatic osteoarthritis"]))[0] == "ICD10CM:M17.32"
    failure = CodeSet.build(
        "ICD10CM",
        [("ICD10CM:I50", "Heart failure"), ("ICD10CM:I50.2", "Systolic (congestive) heart failure"), ("ICD10CM:I50.9", "Heart failure, unspecified")],
        is_a=[("ICD10CM:I50.2", "ICD10CM:I50"), ("ICD10CM:I50.9", "ICD10CM:I50")],
    )  # a sibling the words tell only in part is no reason to leave "unspecified": congestive heart failure is I50.9
    assert failure.refine("ICD10CM:I50.9", said_words(["congestive heart failure"])) == ("ICD10CM:I50.9", [])


def test_a_narrower_code_that_says_more_than_the_note_and_a_broader_one_beside_an_equivalent_count_little():
    from medlink.kb.mappings import CodeMapping
    from medlink.linking.coding_probability import BY_DEFAULT, OUTRANKED, UNSAID

    def mapped(concept: str, name: str, mention: str, *routes: tuple[str, str, float]) -> LinkResult:
        maps = [CodeMapping(concept, code, predicate, confidence) for code, predicate, confidence in routes]
        return coded(SMALL_CODES, maps, Candidate(concept, 3.0, name, name=name, probability=0.9), mention=mention)

    family = mapped("HP:0001645", "Sudden cardiac death", "sudden cardiac death", ("ICD10CM:Z82.41", "skos:narrowMatch", 0.6))
    assert family.candidates[0].probability == pytest.approx(0.9 * 0.6 * UNSAID)
    in_situ = mapped("HP:0003002", "Breast carcinoma", "breast cancer", ("ICD10CM:D05", "skos:narrowMatch", 0.75))
    assert in_situ.candidates[0].concept_id == "ICD10CM:D05.9"  # the default child: judged by the code the mapping reached
    assert in_situ.candidates[0].probability == pytest.approx(0.9 * 0.75 * UNSAID * BY_DEFAULT)
    # "Old myocardial infarction" gives way to "Chronic ischemic heart disease, unspecified": judged as I25, which says more
    heart = mapped(
        "HP:0001658",
        "Myocardial infarction",
        "heart attack",
        ("ICD10CM:I21.9", "skos:exactMatch", 1.0),
        ("ICD10CM:I25.2", "skos:narrowMatch", 0.67),
    )
    assert [c.concept_id for c in heart.candidates] == ["ICD10CM:I21.9", "ICD10CM:I25.9"]
    assert heart.candidates[0].probability == pytest.approx(0.9 / (1 + 0.67 * UNSAID))
    said = mapped("HP:0001279", "Syncope", "heat syncope", ("ICD10CM:T67.1", "skos:narrowMatch", 0.6))  # "heat" was said
    assert said.candidates[0].probability == pytest.approx(0.9 * 0.6)
    cancer = mapped(
        "HP:0012125",
        "Prostate cancer",
        "prostate cancer",
        ("ICD10CM:C80.1", "skos:broadMatch", 0.67),
        ("ICD10CM:C61", "skos:exactMatch", 1.0),
    )
    assert [c.concept_id for c in cancer.candidates] == ["ICD10CM:C61", "ICD10CM:C80.1"]
    assert cancer.candidates[0].probability == pytest.approx(0.9 / (1 + 0.67 * OUTRANKED))

    other = mapped(
        "HP:0000822", "Hypertension", "hypertension", ("ICD10CM:I1A", "skos:exactMatch", 1.0), ("ICD10CM:I10", "skos:exactMatch", 1.0)
    )
    assert [c.concept_id for c in other.candidates] == ["ICD10CM:I10", "ICD10CM:I1A"]  # "Other ..." is for a kind the note names
    assert other.candidates[0].probability == pytest.approx(0.9 / (1 + OUTRANKED))


def test_a_way_to_a_code_above_another_counts_for_the_one_below():
    """Migraine's way to G43.9 (which has leaves) and its way to the leaf G43.909 both lead to G43.909."""
    from medlink.kb.mappings import CodeMapping

    maps = [CodeMapping("HP:0002076", code, "skos:exactMatch", 1.0) for code in ("ICD10CM:G43.909", "ICD10CM:G43.9")]
    out = coded(SMALL_CODES, maps, Candidate("HP:0002076", 3.0, "Migraine", name="Migraine", probability=0.9), mention="migraine")
    assert out.candidates[0].concept_id == "ICD10CM:G43.909" and out.candidates[0].probability == pytest.approx(0.9)


def test_a_status_code_the_mention_does_not_say_counts_little():
    """ICD-10-CM's Z codes say a circumstance ("Family history of ...", "Genetic susceptibility to ..."): matched on
    the condition's words alone, the linker's sure match counts ``UNSAID``; said in full, it counts whole."""
    from medlink.linking.coding_probability import UNSAID

    def direct(mention: str) -> LinkResult:
        candidate = Candidate(
            "ICD10CM:Z82.41", 1.5, "Family history of sudden cardiac death", name="Family history of sudden cardiac death", probability=0.95
        )
        return coded(SMALL_CODES, (), candidate, mention=mention)

    assert direct("sudden cardiac death").candidates[0].probability == pytest.approx(0.95 * UNSAID)
    assert direct("family history of sudden cardiac death").candidates[0].probability == pytest.approx(0.95)
    assert SMALL_CODES.is_status("ICD10CM:Z82.41") and not SMALL_CODES.is_status("ICD10CM:C61")


def test_a_code_first_note_reads_without_the_xml_s_leading_comma():
    """ICD-10-CM's XML keeps "Code first, if applicable, ..." as ", if applicable, ...": shown without the comma."""
    codes = CodeSet.build(
        "ICD10CM",
        [("ICD10CM:J18", "Pneumonia, unspecified organism")],
        code_first={"ICD10CM:J18": ("ICD10CM:J18", ", if applicable, associated influenza")},
    )
    assert codes.code_first_note("ICD10CM:J18") == "code first: if applicable, associated influenza"


def test_an_injury_s_7th_character_is_the_initial_encounter_and_a_side_may_be_told_a_level_down():
    codes = CodeSet.build(
        "ICD10CM",
        [
            ("ICD10CM:S72.001", "Fracture of unspecified part of neck of right femur"),
            ("ICD10CM:S72.001A", "Fracture of unspecified part of neck of right femur, initial encounter for closed fracture"),
            ("ICD10CM:S72.001B", "Fracture of unspecified part of neck of right femur, initial encounter for open fracture type I or II"),
            (
                "ICD10CM:S72.001D",
                "Fracture of unspecified part of neck of right femur, subsequent encounter for closed fracture with routine healing",
            ),
            ("ICD10CM:S72.001K", "Fracture of unspecified part of neck of right femur, subsequent encounter for closed fracture with nonunion"),
            ("ICD10CM:S72.001S", "Fracture of unspecified part of neck of right femur, sequela"),
            ("ICD10CM:M17", "Osteoarthritis of knee"),
            ("ICD10CM:M17.1", "Unilateral primary osteoarthritis of knee"),
            ("ICD10CM:M17.11", "Unilateral primary osteoarthritis, right knee"),
            ("ICD10CM:M17.12", "Unilateral primary osteoarthritis, left knee"),
            ("ICD10CM:M17.3", "Unilateral post-traumatic osteoarthritis of knee"),
            ("ICD10CM:M17.32", "Unilateral post-traumatic osteoarthritis, left knee"),
            ("ICD10CM:M17.9", "Osteoarthritis of knee, unspecified"),
            ("ICD10CM:R11", "Nausea and vomiting"),
            ("ICD10CM:R11.1", "Vomiting"),
            ("ICD10CM:R11.11", "Vomiting without nausea"),
            ("ICD10CM:R11.2", "Nausea with vomiting, unspecified"),
        ],
        is_a=[
            *((f"ICD10CM:S72.001{c}", "ICD10CM:S72.001") for c in "ABDKS"),
            *((f"ICD10CM:M17.{c}", "ICD10CM:M17") for c in ("1", "3", "9")),
            ("ICD10CM:M17.11", "ICD10CM:M17.1"),
            ("ICD10CM:M17.12", "ICD10CM:M17.1"),
            ("ICD10CM:M17.32", "ICD10CM:M17.3"),
            ("ICD10CM:R11.1", "ICD10CM:R11"),
            ("ICD10CM:R11.2", "ICD10CM:R11"),
            ("ICD10CM:R11.11", "ICD10CM:R11.1"),
        ],
    )
    assert codes.refine("ICD10CM:S72.001", said_words(["right hip fracture"]))[0] == "ICD10CM:S72.001A"  # closed, first seen
    told = {
        "right hip fracture, subsequent encounter": "ICD10CM:S72.001D",  # routine healing, not nonunion
        "open right hip fracture": "ICD10CM:S72.001B",
        "right hip fracture, sequela": "ICD10CM:S72.001S",
        "right hip fracture with nonunion, subsequent encounter": "ICD10CM:S72.001K",
    }
    for mention, code in told.items():
        assert codes.refine("ICD10CM:S72.001", said_words([mention]))[0] == code, mention
    assert codes.refine("ICD10CM:M17", said_words(["left knee osteoarthritis"]))[0] == "ICD10CM:M17.12"  # primary: fewer words unsaid
    assert codes.refine("ICD10CM:M17", said_words(["knee osteoarthritis"]))[0] == "ICD10CM:M17.9"
    assert codes.refine("ICD10CM:R11", said_words(["nausea and vomiting"]))[0] == "ICD10CM:R11.2"  # "without nausea" is no side
    cataract = CodeSet.build(
        "ICD10CM",
        [("ICD10CM:H26", "Other cataract"), ("ICD10CM:H26.3", "Drug-induced cataract"), ("ICD10CM:H26.33", "Drug-induced cataract, bilateral"),
         ("ICD10CM:H26.9", "Unspecified cataract")],
        is_a=[("ICD10CM:H26.3", "ICD10CM:H26"), ("ICD10CM:H26.33", "ICD10CM:H26.3"), ("ICD10CM:H26.9", "ICD10CM:H26")],
    )  # a side a level down under a child whose own words, two of them, nobody said: no reason to go there
    assert cataract.refine("ICD10CM:H26.9", said_words(["bilateral cataract"]))[0] == "ICD10CM:H26.9"
    breast = CodeSet.build(
        "ICD10CM",
        [("ICD10CM:C50", "Malignant neoplasm of breast"), ("ICD10CM:C50.9", "Malignant neoplasm of breast of unspecified site"),
         ("ICD10CM:C50.91", "Malignant neoplasm of breast of unspecified site, female"),
         ("ICD10CM:C50.912", "Malignant neoplasm of unspecified site of left female breast"),
         ("ICD10CM:C50.A", "Malignant inflammatory neoplasm of breast"), ("ICD10CM:C50.A2", "Malignant inflammatory neoplasm of left breast")],
        is_a=[("ICD10CM:C50.9", "ICD10CM:C50"), ("ICD10CM:C50.91", "ICD10CM:C50.9"), ("ICD10CM:C50.912", "ICD10CM:C50.91"),
              ("ICD10CM:C50.A", "ICD10CM:C50"), ("ICD10CM:C50.A2", "ICD10CM:C50.A")],
    )  # one unsaid word, but no default reading: "inflammatory" is a kind the note would name; a breast is a woman's
    assert breast.refine("ICD10CM:C50", said_words(["carcinoma of the left breast"]))[0] == "ICD10CM:C50.912"


def test_a_mention_no_code_is_reachable_from_has_no_probability():
    """The concept's probability is no code's: a filter on probability must not keep a mention NIL for coding."""
    result = LinkResult(
        Mention("PTSD"), [Candidate("HP:0033676", 3.25, "PTSD", name="Posttraumatic stress symptom", probability=1.0)], probability=1.0
    )
    out = Coder(SMALL_CODES, {}, []).code([result], 5)[0]
    assert is_uncoded(out) and out.nil and out.probability is None and out.candidates[0].probability == 1.0


# -- what a note's words say beyond a code's name: sides in shorthand, "without", a default a level up ---------------------
AORTA_AND_EAR = CodeSet.build(
    "ICD10CM",
    [
        ("ICD10CM:I71", "Aortic aneurysm and dissection"),
        ("ICD10CM:I71.3", "Abdominal aortic aneurysm, ruptured"),
        ("ICD10CM:I71.30", "Abdominal aortic aneurysm, ruptured, unspecified"),
        ("ICD10CM:I71.4", "Abdominal aortic aneurysm, without rupture"),
        ("ICD10CM:I71.40", "Abdominal aortic aneurysm, without rupture, unspecified"),
        ("ICD10CM:I71.8", "Aortic aneurysm of unspecified site, ruptured"),
        ("ICD10CM:I71.9", "Aortic aneurysm of unspecified site, without rupture"),
        ("ICD10CM:H66.0", "Acute suppurative otitis media"),
        ("ICD10CM:H66.00", "Acute suppurative otitis media without spontaneous rupture of ear drum"),
        ("ICD10CM:H66.001", "Acute suppurative otitis media without spontaneous rupture of ear drum, right ear"),
        ("ICD10CM:H66.01", "Acute suppurative otitis media with spontaneous rupture of ear drum"),
        ("ICD10CM:H66.011", "Acute suppurative otitis media with spontaneous rupture of ear drum, right ear"),
        ("ICD10CM:K26", "Duodenal ulcer"),
        ("ICD10CM:K26.3", "Acute duodenal ulcer without hemorrhage or perforation"),
        ("ICD10CM:K26.9", "Duodenal ulcer, unspecified as acute or chronic, without hemorrhage or perforation"),
        ("ICD10CM:G56.0", "Carpal tunnel syndrome"),
        ("ICD10CM:G56.00", "Carpal tunnel syndrome, unspecified upper limb"),
        ("ICD10CM:G56.01", "Carpal tunnel syndrome, right upper limb"),
        ("ICD10CM:G56.02", "Carpal tunnel syndrome, left upper limb"),
        ("ICD10CM:M79.67", "Pain in foot and toes"),
        ("ICD10CM:M79.671", "Pain in right foot"),
        ("ICD10CM:M79.674", "Pain in right toe(s)"),
        ("ICD10CM:M79.675", "Pain in left toe(s)"),
        ("ICD10CM:M79.676", "Pain in unspecified toe(s)"),
        ("ICD10CM:N30.0", "Acute cystitis"),
        ("ICD10CM:N30.00", "Acute cystitis without hematuria"),
        ("ICD10CM:N30.01", "Acute cystitis with hematuria"),
    ],
    is_a=[
        *((f"ICD10CM:I71.{c}", "ICD10CM:I71") for c in ("3", "4", "8", "9")),
        ("ICD10CM:I71.30", "ICD10CM:I71.3"),
        ("ICD10CM:I71.40", "ICD10CM:I71.4"),
        ("ICD10CM:H66.00", "ICD10CM:H66.0"),
        ("ICD10CM:H66.01", "ICD10CM:H66.0"),
        ("ICD10CM:H66.001", "ICD10CM:H66.00"),
        ("ICD10CM:H66.011", "ICD10CM:H66.01"),
        ("ICD10CM:K26.3", "ICD10CM:K26"),
        ("ICD10CM:K26.9", "ICD10CM:K26"),
        *((f"ICD10CM:G56.0{c}", "ICD10CM:G56.0") for c in "012"),
        *((f"ICD10CM:M79.67{c}", "ICD10CM:M79.67") for c in "1456"),
        ("ICD10CM:N30.00", "ICD10CM:N30.0"),
        ("ICD10CM:N30.01", "ICD10CM:N30.0"),
    ],
)


def test_a_side_written_in_shorthand_and_what_a_name_does_not_assert():
    from medlink.linking.coding_words import sides_written, unasserted

    assert sides_written("R great toe pain") == {"right"} and sides_written("L CTS") == {"left"}
    assert sides_written("conjunctivitis OU") == {"bilateral"} and sides_written("b/l knee pain") == {"bilateral"}
    assert sides_written("L5 radiculopathy, Lyme disease, HER2") == frozenset()
    for other in ("hypoxia on 2 L NC", "L-spine pain", "T-L junction fracture", "RT to breast", "Cr at b/l", "R/O MI"):
        assert sides_written(other) == frozenset(), other  # litres, a spine level, radiotherapy, baseline, rule out
    assert sides_written("R>L leg edema") == {"bilateral"} and sides_written("R and L knee pain") == {"bilateral"}
    for written, side in (("LT hip pain", "left"), ("(R) hip pain", "right"), ("hip pain, L", "left"), ("Rt. CTS", "right"),
                          ("R-sided hip pain", "right"), ("Knee OA, bilat", "bilateral")):
        assert sides_written(written) == {side}, written
    assert unasserted("COPD without exacerbation but with hypoxia") == {"exacerbation"}  # "hypoxia" is said
    assert unasserted("Duodenal ulcer, unspecified as acute or chronic, without hemorrhage or perforation") == {
        "acute", "chronic", "hemorrhage", "perforation"}
    assert unasserted("Acute cystitis with hematuria") == frozenset()
    assert unasserted("Malignant neoplasm of kidney, except renal pelvis") == {"renal", "pelvis"}
    assert unasserted("asthma w/o status asthmaticus") == {"status", "asthmaticus"}  # a note's "w/o"


def test_a_code_whose_parent_says_what_the_words_do_not_gives_way_to_the_default_a_level_up():
    """A mapping that reached "..., ruptured, unspecified" for "abdominal aortic aneurysm": "ruptured" is its parent's
    word, unsaid, and ICD-10-CM reads an aneurysm without mention of rupture as one without it. So does a named ear drum
    rupture, and the side is kept on the way down."""
    said = said_words(["abdominal aortic aneurysm"])
    assert AORTA_AND_EAR.refine("ICD10CM:I71.30", said)[0] == "ICD10CM:I71.40"  # not "of unspecified site"
    assert AORTA_AND_EAR.refine("ICD10CM:I71.30", said_words(["ruptured abdominal aortic aneurysm"]))[0] == "ICD10CM:I71.30"
    assert AORTA_AND_EAR.refine("ICD10CM:H66.011", said_words(["acute suppurative otitis media, right ear"]))[0] == "ICD10CM:H66.001"
    # "unspecified as acute or chronic" leaves "acute" open: the duodenal ulcer said nothing more of is K26.9
    assert AORTA_AND_EAR.default_child("ICD10CM:K26") == "ICD10CM:K26.9"
    assert AORTA_AND_EAR.refine("ICD10CM:K26.3", said_words(["duodenal ulcer"]))[0] == "ICD10CM:K26.9"


def test_a_side_is_told_among_siblings_whatever_words_they_all_share():
    """"upper limb" is every G56.0 code's: "left carpal tunnel syndrome" says all that tells G56.02 apart. An unspecified
    toe's pain gives way to the right toe's (which says more than the right foot's), never the other way round."""
    assert AORTA_AND_EAR.refine("ICD10CM:G56.00", said_words(["left carpal tunnel syndrome"]))[0] == "ICD10CM:G56.02"
    said = said_words(["great toe pain"]) | {"right"}
    assert AORTA_AND_EAR.refine("ICD10CM:M79.676", said)[0] == "ICD10CM:M79.674"
    assert AORTA_AND_EAR.refine("ICD10CM:M79.674", said)[0] == "ICD10CM:M79.674"
    assert AORTA_AND_EAR.refine("ICD10CM:G56.01", said_words(["carpal tunnel syndrome"]))[0] == "ICD10CM:G56.00"
    # a mapping that reached the left toe's code, for words that say the right one: the right one, not "unspecified"
    assert AORTA_AND_EAR.refine("ICD10CM:M79.675", said)[0] == "ICD10CM:M79.674"
    assert AORTA_AND_EAR.leaves_side_open("ICD10CM:M79.676") and not AORTA_AND_EAR.leaves_side_open("ICD10CM:M79.674")
    ear = CodeSet.build(
        "ICD10CM",
        [("ICD10CM:H66.9", "Otitis media, unspecified"), ("ICD10CM:H66.90", "Otitis media, unspecified, unspecified ear"),
         ("ICD10CM:H66.91", "Otitis media, unspecified, right ear")],
        is_a=[("ICD10CM:H66.90", "ICD10CM:H66.9"), ("ICD10CM:H66.91", "ICD10CM:H66.9")],
    )
    assert ear.leaves_side_open("ICD10CM:H66.90") and not ear.leaves_side_open("ICD10CM:H66.91")  # the latter says its side


def test_an_exact_mapping_is_kept_though_its_name_spells_the_condition_otherwise():
    said = said_words(["aortic aneurysm", "Aortic aneurysm"])
    assert AORTA_AND_EAR.refine("ICD10CM:I71.40", said, equivalent=True)[0] == "ICD10CM:I71.40"
    assert AORTA_AND_EAR.refine("ICD10CM:I71.40", said)[0] == "ICD10CM:I71.9"


def test_a_mention_in_shorthand_or_denying_a_word_is_coded_by_what_it_says():
    right = coded(AORTA_AND_EAR, (), Candidate("ICD10CM:G56.00", 1.0, "Carpal tunnel syndrome", probability=0.9), mention="R CTS")
    assert right.candidates[0].concept_id == "ICD10CM:G56.01"
    plain = Candidate("ICD10CM:N30.00", 1.0, "Acute cystitis without hematuria", probability=0.9)
    assert coded(AORTA_AND_EAR, (), plain, mention="acute cystitis without hematuria").candidates[0].concept_id == "ICD10CM:N30.00"


def test_a_side_is_read_out_of_the_wording_the_concept_is_found_by():
    """A side is no word of a condition's names: "left knee osteoarthritis" is found as knee osteoarthritis where that
    reading is surer, and the coder still reads "left" in the mention; a mention the side belongs to keeps its reading."""
    from medlink.linking.coding_readings import surer_readings
    from medlink.linking.coding_words import causes_written, without_qualifiers

    assert without_qualifiers("left knee osteoarthritis") == "knee osteoarthritis"
    assert without_qualifiers("R carpal tunnel syndrome") == "carpal tunnel syndrome"
    assert without_qualifiers("fracture of the left femur") == "fracture of the femur"
    assert without_qualifiers("pain on the right") == "pain"
    assert without_qualifiers("knee pain R>L") == "knee pain"
    assert without_qualifiers("2 L NC") is None and without_qualifiers("RT planned") is None and without_qualifiers("L-spine pain") is None
    assert without_qualifiers("Left") is None and without_qualifiers("heart failure") is None
    assert without_qualifiers("Chemo-induced peripheral neuropathy") == "peripheral neuropathy"
    assert without_qualifiers("T2DM without complications") == "T2DM"
    assert without_qualifiers("right hip fracture, subsequent encounter") == "hip fracture"
    assert without_qualifiers("noise-induced hearing loss") is None  # no drug: the cause is the condition's
    assert said_words(["Other and unspecified polyneuropathies"]) >= {"polyneuropathy"}  # a plural in -ies
    assert causes_written("Opioid-induced constipation") == {"drug", "induced"} and not causes_written("alcohol induced pancreatitis")

    surer = {"knee osteoarthritis": 0.9, "left knee osteoarthritis": 0.2, "ventricular hypertrophy": 0.3, "left ventricular hypertrophy": 0.95,
             "great toe pain": 0.9, "acute great toe pain": 0.3, "acute R great toe pain": 0.2, "arthritis": 0.9, "psoriatic arthritis": 0.7}

    class Linker:
        key = staticmethod(str.lower)

        def link(self, mentions, k, generators=None):
            matched = {"acute R great toe pain": "Toe pain"}  # a name that says none of the words added to the head
            return [
                LinkResult(Mention(m), [Candidate(m, 1.0, matched.get(m, m), name=m, probability=surer[m])], probability=surer[m])
                for m in mentions
            ]

    linker = Linker()
    mentions = ["left knee osteoarthritis", "left ventricular hypertrophy", "acute R great toe pain", "psoriatic arthritis"]
    knee, lvh, toe, psoriatic = surer_readings(linker, linker.link(mentions, 10), 10, None, [None, None, "great toe pain", "arthritis"])
    assert knee.mention.text == "left knee osteoarthritis" and knee.best.concept_id == "knee osteoarthritis"
    assert lvh.best.concept_id == "left ventricular hypertrophy"
    assert toe.mention.text == "acute R great toe pain" and toe.best.concept_id == "great toe pain"  # the head an annotator found
    assert psoriatic.best.concept_id == "psoriatic arthritis"  # its own reading's name says "psoriatic": no arthritis alone


def test_a_broader_code_is_kept_though_its_name_says_other_words():
    """A broader mapping says less than the concept by definition: "Cardiomegaly" (I51.7) is Left ventricular
    hypertrophy's code, not given up for "Heart disease, unspecified" because nobody said "cardiomegaly"."""
    from medlink.kb.mappings import CodeMapping

    heart = CodeSet.build(
        "ICD10CM",
        [("ICD10CM:I51", "Complications and ill-defined descriptions of heart disease"), ("ICD10CM:I51.7", "Cardiomegaly"),
         ("ICD10CM:I51.9", "Heart disease, unspecified")],
        is_a=[("ICD10CM:I51.7", "ICD10CM:I51"), ("ICD10CM:I51.9", "ICD10CM:I51")],
    )
    lvh = Candidate("HP:0001712", 3.0, "Left ventricular hypertrophy", name="Left ventricular hypertrophy", probability=0.9)
    broad = coded(heart, [CodeMapping("HP:0001712", "ICD10CM:I51.7", "skos:broadMatch", 0.5)], lvh, mention="LVH")
    assert broad.candidates[0].concept_id == "ICD10CM:I51.7"
    narrow = coded(heart, [CodeMapping("HP:0001712", "ICD10CM:I51.7", "skos:narrowMatch", 0.5)], lvh, mention="LVH")
    assert narrow.candidates[0].concept_id == "ICD10CM:I51.9"  # a narrower code's own words unsaid: its "unspecified" sibling


SIDES_AND_SITES = [("04", "right", "leg"), ("05", "left", "leg"), ("61", "right", "lower leg"), ("62", "left", "lower leg"),
                   ("01", "right", "arm"), ("02", "left", "arm"), ("31", "right", "forearm"), ("32", "left", "forearm")]


def test_a_limb_is_read_as_icd_10_cm_names_it_and_what_a_code_also_covers_need_not_be_said():
    """"melanoma of the right arm" is C43.61, "Malignant melanoma of right upper limb, including shoulder": ICD-10-CM's
    "upper limb" is the arm, and "including shoulder" says what else the code covers, not what a mention must say. "Pain
    in right lower leg" stays apart from "Pain in right leg"."""
    melanoma = CodeSet.build(
        "ICD10CM",
        [
            ("ICD10CM:C43", "Malignant melanoma of skin"),
            ("ICD10CM:C43.6", "Malignant melanoma of upper limb, including shoulder"),
            ("ICD10CM:C43.61", "Malignant melanoma of right upper limb, including shoulder"),
            ("ICD10CM:C43.62", "Malignant melanoma of left upper limb, including shoulder"),
            ("ICD10CM:C43.7", "Malignant melanoma of lower limb, including hip"),
            ("ICD10CM:C43.71", "Malignant melanoma of right lower limb, including hip"),
            ("ICD10CM:C43.9", "Malignant melanoma of skin, unspecified"),
        ],
        is_a=[("ICD10CM:C43.6", "ICD10CM:C43"), ("ICD10CM:C43.61", "ICD10CM:C43.6"), ("ICD10CM:C43.62", "ICD10CM:C43.6"),
              ("ICD10CM:C43.7", "ICD10CM:C43"), ("ICD10CM:C43.71", "ICD10CM:C43.7"), ("ICD10CM:C43.9", "ICD10CM:C43")],
    )
    assert melanoma.refine("ICD10CM:C43.9", said_words(["melanoma of the right arm"]))[0] == "ICD10CM:C43.61"
    assert melanoma.refine("ICD10CM:C43.9", said_words(["melanoma, right lower extremity"]))[0] == "ICD10CM:C43.71"
    assert melanoma.refine("ICD10CM:C43.9", said_words(["melanoma of the skin"])) == ("ICD10CM:C43.9", [])
    # a part of a limb is the limb's where the code the words led to names no limb's part, and the steps say so
    from medlink.linking.coding_words import limbs_to_add

    assert limbs_to_add(said_words(["toe pain"]), [said_words(["Pain in unspecified toe(s)"])]) == frozenset()
    assert limbs_to_add(said_words(["melanoma of the forearm"]), [said_words(["Malignant melanoma of skin"])]) == {"arm"}
    code, steps = melanoma.refine("ICD10CM:C43.9", said_words(["melanoma of the right forearm"]))
    assert code == "ICD10CM:C43.61" and steps[-1] == "arm: the limb that holds the part the words say, where no code says the part"
    pain = CodeSet.build(
        "ICD10CM",
        [("ICD10CM:M79.6", "Pain in limb")]
        + [(f"ICD10CM:M79.6{n}", f"Pain in {side} {site}") for n, side, site in SIDES_AND_SITES],
        is_a=[(f"ICD10CM:M79.6{n}", "ICD10CM:M79.6") for n, _, _ in SIDES_AND_SITES],
    )
    assert pain.refine("ICD10CM:M79.6", said_words(["right leg pain"]))[0] == "ICD10CM:M79.604"
    assert pain.refine("ICD10CM:M79.6", said_words(["pain in the right lower leg"]))[0] == "ICD10CM:M79.661"
    assert pain.refine("ICD10CM:M79.6", said_words(["right forearm pain"]))[0] == "ICD10CM:M79.631"  # a code says the part


def test_a_breast_is_a_woman_s_where_male_is_not_said():
    """ICD-10-CM splits a breast's malignant neoplasms by sex before the side: "left breast cancer" is C50.912, and the
    step says the sex was assumed; "male breast cancer" keeps the male codes; an in situ code has no sex to assume."""
    breast = CodeSet.build(
        "ICD10CM",
        [("ICD10CM:C50.9", "Malignant neoplasm of breast of unspecified site")]
        + [(f"ICD10CM:C50.9{n}", f"Malignant neoplasm of breast of unspecified site, {sex}") for n, sex in (("1", "female"), ("2", "male"))]
        + [(f"ICD10CM:C50.9{n}{s}", f"Malignant neoplasm of unspecified site of {side} {sex} breast")
           for n, sex in (("1", "female"), ("2", "male")) for s, side in (("1", "right"), ("2", "left"), ("9", "unspecified"))]
        + [("ICD10CM:D05.9", "Unspecified type of carcinoma in situ of breast"), ("ICD10CM:D05.92", "Unspecified type of carcinoma in situ of left breast")],
        is_a=[("ICD10CM:C50.91", "ICD10CM:C50.9"), ("ICD10CM:C50.92", "ICD10CM:C50.9"), ("ICD10CM:D05.92", "ICD10CM:D05.9")]
        + [(f"ICD10CM:C50.9{n}{s}", f"ICD10CM:C50.9{n}") for n in "12" for s in "129"],
    )
    code, steps = breast.refine("ICD10CM:C50.9", said_words(["left breast cancer"]))
    assert code == "ICD10CM:C50.912" and "a breast is a woman's where 'male' is not said" in steps[0]
    assert breast.refine("ICD10CM:C50.9", said_words(["breast cancer"]))[0] == "ICD10CM:C50.919"
    assert breast.refine("ICD10CM:C50.9", said_words(["male breast cancer, right"]))[0] == "ICD10CM:C50.921"
    assert breast.refine("ICD10CM:D05.9", said_words(["left breast DCIS"])) == ("ICD10CM:D05.92", ["ICD10CM:D05.9 -> ICD10CM:D05.92: the words say 'left'"])


def test_link_reads_the_condition_name_a_phrase_holds_as_a_partial_match_as_annotate_does(tiny_kb, tmp_path):
    """`link` finds the KB name inside a mention as `annotate` does ("heart attack" in "sudden massive heart attack"):
    its concepts, a partial match at ``PARTIAL`` x their probability, are coded with the whole mention's words."""
    from medlink.kb.store import KB
    from medlink.linking.coding import link_coded
    from medlink.linking.coding_readings import found_heads
    from medlink.linking.index import build_index
    from medlink.linking.partial import PARTIAL

    linker = build_index(KB.open(tiny_kb), tmp_path / "index")  # calibrated: a small KB's fallback
    mentions = ["heart attack", "sudden massive heart attack"]
    assert found_heads(linker, linker.link(mentions, k=5)) == [None, "heart attack"]
    whole, phrase = link_coded(linker, mentions, 3, "ICD10CM", mappings=[MAPPINGS])
    assert phrase.candidates[0].concept_id == whole.candidates[0].concept_id == "ICD10CM:I21.9"
    assert phrase.probability == pytest.approx(whole.probability * PARTIAL, abs=0.01)

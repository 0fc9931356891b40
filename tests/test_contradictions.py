"""A candidate whose name says the opposite of the mention ("in situ" for "invasive", "hypo" for "hyper", the other
side, the other type) is never confident, on either path of the calibration stage."""

from __future__ import annotations

import pytest

from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.contradictions import CONTRADICTED_AT_MOST, capped, contradicts, cues
from medlink.linking.index import build_index
from medlink.text.normalize import normalize

NAMES = ["Ductal carcinoma in situ", "Hypokalemia", "Hyperkalemia", "Type 2 diabetes mellitus", "Pain in right knee",
         "Chronic renal failure", "Benign breast tumor", "Acute bronchitis", "Breast cancer", "Knee pain"]


@pytest.mark.parametrize(
    "mention, name, contradicted",
    [
        ("invasive ductal carcinoma", "Ductal carcinoma in situ", True),
        ("hyperkalemia", "Hypokalemia", True),
        ("hypokalemia", "Hyperkalemia", True),
        ("hyperkalemia", "Hyperkalemia of newborn", False),
        ("type 1 diabetes", "Type 2 diabetes mellitus", True),
        ("type I diabetes", "Type II diabetes mellitus", True),
        ("left knee pain", "Pain in right knee", True),
        ("acute on chronic renal failure", "Chronic renal failure", False),  # the mention says both
        ("acute renal failure", "Acute on chronic renal failure", False),  # the name says both
        ("diabetes", "Type 2 diabetes mellitus", False),  # saying less is no contradiction
        ("malignant melanoma", "Melanoma", False),
        ("hypertension", "Hypotension", True),
        ("hyper", "hypo", False),  # no root
        ("non-invasive ductal carcinoma", "Ductal carcinoma in situ", False),  # "non-invasive" reads "non invasive"
        ("non-invasive bladder carcinoma", "Invasive bladder carcinoma", True),
    ],
)
def test_a_name_contradicts_a_mention_only_by_saying_the_opposite_and_not_also_what_it_says(mention, name, contradicted):
    assert contradicts(cues(normalize(mention)), normalize(name)) is contradicted


def test_a_contradicted_probability_is_capped_and_others_are_left_as_they_are():
    mention_cues = cues("invasive ductal carcinoma")
    assert capped(0.9, mention_cues, "ductal carcinoma in situ") == CONTRADICTED_AT_MOST
    assert capped(0.01, mention_cues, "ductal carcinoma in situ") == 0.01
    assert capped(0.9, mention_cues, "breast cancer", None) == 0.9
    assert cues("knee pain") == ()  # most mentions have nothing to look for


@pytest.fixture(scope="module")
def linker(tmp_path_factory):
    folder = tmp_path_factory.mktemp("opposites")
    (folder / "names.txt").write_text("".join(f"C{i}||{name}\n" for i, name in enumerate(NAMES)))
    build_kb(folder / "kb.sqlite", [f"biosyn:{folder / 'names.txt'}"], progress=False)
    return build_index(KB.open(folder / "kb.sqlite"), folder / "index")


def test_both_paths_cap_a_contradicted_first_candidate_and_call_the_mention_nil(linker):
    mentions = ["invasive ductal carcinoma", "hyperkalaemia", "hypokalemia", "type 1 diabetes mellitus", "left knee pain", "knee pain"]
    for batched in (True, False):
        results = linker.link(mentions, k=3, batched=batched)
        first = {r.mention.text: (r.candidates[0].name, r.candidates[0].probability, r.nil) for r in results}
        assert first["invasive ductal carcinoma"][0] == "Ductal carcinoma in situ" and first["invasive ductal carcinoma"][1] <= CONTRADICTED_AT_MOST
        assert first["type 1 diabetes mellitus"][1] <= CONTRADICTED_AT_MOST and first["type 1 diabetes mellitus"][2]
        assert first["hypokalemia"][0] == "Hypokalemia" and first["hypokalemia"][1] > CONTRADICTED_AT_MOST
        assert first["knee pain"][0] == "Knee pain" and first["knee pain"][1] > CONTRADICTED_AT_MOST
        for r in results:  # no candidate whose name contradicts its mention over the cap
            assert all(c.probability <= CONTRADICTED_AT_MOST for c in r.candidates if contradicts(cues(normalize(r.mention.text)), normalize(c.name)))


def test_a_head_s_candidates_taken_for_a_whole_phrase_are_capped_where_they_contradict_the_phrase():
    """"Invasive ductal carcinoma of the left breast", found by its head "ductal carcinoma": the head's *Ductal carcinoma
    in situ* says the opposite of the phrase, though not of the head."""
    from medlink.core import Candidate, LinkResult, Mention
    from medlink.linking.partial import PARTIAL, discounted

    head = LinkResult(
        Mention("ductal carcinoma"),
        [Candidate("C0", 1.5, "Ductal carcinoma in situ", name="Ductal carcinoma in situ", probability=0.96),
         Candidate("C8", 1.0, "Breast cancer", name="Breast cancer", probability=0.04)],
        nil=False, probability=0.96, nil_threshold=0.41,
    )
    plain = discounted(head)
    assert plain.candidates[0].probability == pytest.approx(0.96 * PARTIAL) and not plain.nil
    whole = discounted(head, phrase="invasive ductal carcinoma of the left breast", key=normalize)
    assert [c.probability for c in whole.candidates] == [CONTRADICTED_AT_MOST, pytest.approx(0.04 * PARTIAL)] and whole.nil


def test_concepts_found_by_another_reading_are_capped_against_the_whole_mention():
    """Coding reads "right ventricular thrombus" without its side too; the concepts that reading finds keep no
    confident candidate whose name says the other side."""
    from medlink.core import Candidate, LinkResult, Mention
    from medlink.linking.contradictions import capped_result

    read = LinkResult(
        Mention("right ventricular thrombus"),
        [Candidate("HP:0040412", 1.5, "Left ventricular thrombus", name="Left ventricular thrombus", probability=0.958)],
        nil=False, probability=0.958, nil_threshold=0.41,
    )
    capped = capped_result(read, "right ventricular thrombus", normalize)
    assert capped.candidates[0].probability == CONTRADICTED_AT_MOST and capped.nil and capped.probability == CONTRADICTED_AT_MOST
    assert capped_result(read, "ventricular thrombus", normalize) is read  # nothing the name could contradict

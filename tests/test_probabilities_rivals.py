"""Probabilities a user can trust (issue 52 item 2): rival candidates share one distribution, so two concepts that share
a name are never both at 1.000; in coding mode a code's probability is that of this exact code.
"""

from __future__ import annotations

import pytest

from medlink.core import Candidate, LinkResult, Mention
from medlink.linking.calibration import CalibrationStage
from medlink.linking.coding import by_default, written_code
from medlink.linking.coding_probability import BY_DEFAULT, code_probabilities, leaf_count, shared_codes
from medlink.linking.coding_rules import CodeSet
from medlink.linking.probability import ProbabilityModel, feature_names
from medlink.linking.rivals import same_meaning, shared


def test_two_rivals_tied_at_one_share_it():
    assert shared(["ICD10CM:N16", "ICD10CM:N12"], [3.25, 3.25], [1.0, 1.0]) == [0.5, 0.5]


def test_a_lone_first_candidate_keeps_its_probability_and_the_rest_get_what_it_left():
    out = shared(["A:1", "A:2", "A:3"], [3.0, 2.0, 1.0], [0.9, 0.8, 0.3])
    assert out[0] == 0.9
    assert out[1] == pytest.approx(0.1)
    assert out[2] == 0.0
    assert sum(out) <= 1.0 + 1e-9


def test_a_list_that_sums_to_at_most_one_is_unchanged():
    assert shared(["A:1", "A:2"], [2.0, 1.0], [0.6, 0.3]) == [0.6, 0.3]


def test_an_hpo_term_and_the_code_it_means_are_no_rivals():
    assert same_meaning("HP:0012330", "ICD10CM:N12")  # Pyelonephritis: exactMatch N12
    assert same_meaning("ICD10CM:R06.02", "HP:0002094")  # Dyspnea -> R06.0, and R06.02 lies under it
    assert not same_meaning("HP:0012330", "ICD10CM:N16")  # a manifestation code of another meaning
    assert not same_meaning("ICD10CM:N12", "ICD10CM:N16")
    ids = ["ICD10CM:N16", "HP:0012330", "ICD10CM:N12"]
    out = shared(ids, [3.25, 3.25, 2.18], [1.0, 1.0, 0.93])
    assert out[:2] == [0.5, 0.5]  # the tie is split between rivals
    assert out[2] == pytest.approx(0.5)  # N12 is HPO's meaning: only N16's half is taken from it
    assert max(out) < 0.95


def test_two_terminologies_without_mappings_between_them_are_no_rivals():
    assert same_meaning("MESH:D009203", "ICD10CM:I21.9")  # medlink cannot tell the same meaning from a rival there
    assert shared(["ICD10CM:I21.9", "MESH:D009203"], [3.0, 3.0], [1.0, 1.0]) == [1.0, 1.0]
    assert not same_meaning("D000001", "D000002")  # ids without a prefix: one terminology


def _stage(rivals: str) -> CalibrationStage:
    names = feature_names([])
    model = ProbabilityModel([], [0.0] * len(names), [1.0] * len(names), [0.0] * len(names), 10.0).to_dict()
    return CalibrationStage({"type": "calibration", "model": model, "nil_threshold": 0.4, "rivals": rivals}, str.lower)


def test_the_calibration_stage_shares_between_rivals_and_can_be_told_not_to():
    candidates = [Candidate("ICD10CM:N16", 3.25, "Pyelonephritis"), Candidate("HP:0012330", 3.25, "Pyelonephritis")]
    result = LinkResult(Mention("pyelonephritis"), candidates)
    shared_result = _stage("share").decide("pyelonephritis", result)
    assert [c.probability for c in shared_result.candidates] == [0.5, 0.5]
    assert shared_result.probability == 0.5 and not shared_result.nil
    apart = _stage("none").decide("pyelonephritis", result)
    assert [c.probability for c in apart.candidates] == pytest.approx([1.0, 1.0], abs=1e-4)


def _codes() -> CodeSet:
    concepts = [
        ("ICD10CM:O72", "Postpartum hemorrhage"),
        ("ICD10CM:O72.0", "Third-stage hemorrhage"),
        ("ICD10CM:O72.1", "Other immediate postpartum hemorrhage"),
        ("ICD10CM:R55", "Syncope and collapse"),
    ]
    return CodeSet.build("ICD10CM", concepts, [], [("ICD10CM:O72.0", "ICD10CM:O72"), ("ICD10CM:O72.1", "ICD10CM:O72")])


def test_a_code_with_children_left_stands_for_any_of_its_leaves():
    codes = _codes()
    assert leaf_count(codes, "ICD10CM:O72") == 2 and leaf_count(codes, "ICD10CM:O72.1") == 1
    assert code_probabilities(1.0, [("ICD10CM:O72", None, False)], codes) == {"ICD10CM:O72": 0.5}


def test_a_concepts_codes_share_its_probability_by_the_weight_of_the_ways_to_them():
    out = code_probabilities(0.9, [("ICD10CM:O72.0", 0.5, False), ("ICD10CM:O72.1", 0.5, False), ("ICD10CM:R55", 1.0, False)], _codes())
    assert out["ICD10CM:R55"] == pytest.approx(0.45) and out["ICD10CM:O72.0"] == pytest.approx(0.225)
    assert code_probabilities(None, [("ICD10CM:R55", None, False)], _codes()) == {"ICD10CM:R55": None}


def test_a_code_reached_only_by_a_narrower_mapping_is_not_sure():
    assert code_probabilities(1.0, [("ICD10CM:R55", 0.5, False)], _codes()) == {"ICD10CM:R55": 0.5}
    assert code_probabilities(1.0, [("ICD10CM:R55", 0.5, False), ("ICD10CM:R55", 0.5, False)], _codes()) == {"ICD10CM:R55": 1.0}


def test_a_code_the_rules_reached_by_default_is_less_sure():
    assert code_probabilities(1.0, [("ICD10CM:R55", None, True)], _codes()) == {"ICD10CM:R55": BY_DEFAULT}
    both = code_probabilities(1.0, [("ICD10CM:R55", None, True), ("ICD10CM:R55", 1.0, False)], _codes())
    assert both == {"ICD10CM:R55": 1.0}  # one way said it outright
    assert by_default(["ICD10CM:R80 -> ICD10CM:R80.9: nothing more specific said"])
    assert by_default(["ICD10CM:I21.4 -> ICD10CM:I21.3: nothing said of 'elevation'"])
    assert not by_default(["ICD10CM:M25.55 -> ICD10CM:M25.552: the words say 'left'"])


def test_a_mentions_codes_are_rivals():
    assert shared_codes(["ICD10CM:T67.1", "ICD10CM:R05.4"], [1.0, 1.0]) == [0.5, 0.5]
    assert shared_codes(["ICD10CM:R55"], [None]) == [None]


def test_a_code_written_in_the_text_is_the_code():
    assert written_code("I21.4", "ICD10CM:I21.4") and written_code(" e11.9 ", "ICD10CM:E11.9")
    assert not written_code("NSTEMI", "ICD10CM:I21.4")


def test_the_default_child_is_the_one_that_says_least_besides():
    concepts = [("ICD10CM:R80", "Proteinuria"), ("ICD10CM:R80.1", "Persistent proteinuria, unspecified"),
                ("ICD10CM:R80.9", "Proteinuria, unspecified")]
    codes = CodeSet.build("ICD10CM", concepts, [], [("ICD10CM:R80.1", "ICD10CM:R80"), ("ICD10CM:R80.9", "ICD10CM:R80")])
    assert codes.default_child("ICD10CM:R80") == "ICD10CM:R80.9"


def test_sharing_by_terminology_gives_what_asking_rival_by_rival_gives():
    from random import Random

    from medlink.linking.rivals import _shared_pairwise

    rng = Random(3)
    for _ in range(3000):
        n = rng.randint(2, 12)
        prefixes = rng.sample(["MESH", "OMIM", "HP", "DOID", ""], rng.randint(1, 3))
        ids = [f"{rng.choice(prefixes)}:{i}".lstrip(":") for i in range(n)]
        scores = sorted((rng.choice([1.0, 0.9, 0.9, rng.random()]) for _ in range(n)), reverse=True)
        probabilities = [rng.choice([0.0, 1.0, 0.999999, rng.random()]) for _ in range(n)]
        want = _shared_pairwise(ids, scores, probabilities) if sum(probabilities) > 1 + 1e-9 else probabilities
        assert shared(ids, scores, probabilities) == want, (ids, scores, probabilities)

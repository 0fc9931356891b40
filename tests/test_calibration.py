"""Calibrated probabilities, NIL and backoff: the model, the stage, fitting on dev and on the KB, the measures, the CLI."""

import json
import re

import numpy as np
import pytest

from medlink.core import Candidate, LinkResult, Mention
from medlink.errors import MedlinkError
from medlink.eval.calibration import expected_calibration_error, reliability, reliability_diagram
from medlink.eval.nil import nil_metrics, nil_outcome
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.calibration import CalibrationStage, calibration_stage
from medlink.linking.memory import MemoryEntries
from medlink.linking.calibration_fit import MIN_PSEUDO_MENTIONS, Labelled, fit_calibration, fit_on_kb, kb_fit_is_current, nil_threshold
from medlink.linking.config import LinkerConfig, default_config
from medlink.linking.index import build_index
from medlink.linking.linker import Linker
from medlink.linking.probability import ProbabilityModel, candidate_features, feature_names
from medlink.linking.pseudo_mentions import draw_pseudo_mentions, without_generic_head
from medlink.text.normalize import Normalizer
from tests.test_cli_kb import medlink

ORGANS = [("liver", "hepatic"), ("kidney", "renal"), ("heart", "cardiac"), ("lung", "pulmonary"), ("brain", "cerebral"),
          ("skin", "cutaneous"), ("bone", "osseous"), ("eye", "ocular"), ("ear", "otic"), ("stomach", "gastric"),
          ("bowel", "intestinal"), ("nerve", "neural"), ("muscle", "muscular"), ("joint", "articular"), ("blood", "haematic"),
          ("breast", "mammary"), ("bladder", "vesical"), ("tooth", "dental"), ("nose", "nasal"), ("spine", "spinal")]
CONDITIONS = ["inflammation", "failure", "tumour", "infection", "haemorrhage", "cyst", "atrophy", "fibrosis", "abscess",
              "necrosis", "ischaemia", "stenosis", "dysplasia", "oedema", "calcification"]
normalize = Normalizer()


@pytest.fixture(scope="module")
def organ_kb(tmp_path_factory):
    """300 concepts, each "X of the ORGAN" with synonyms "ORGAN X" and "ADJECTIVE X": enough synonyms to hold some out."""
    folder = tmp_path_factory.mktemp("organs")
    lines = [f"C{i:04d}||{c} of the {organ}|{organ} {c}|{adjective} {c}"
             for i, ((organ, adjective), c) in enumerate((o, c) for o in ORGANS for c in CONDITIONS)]
    (folder / "organs.txt").write_text("\n".join(lines) + "\n")
    build_kb(folder / "organs.sqlite", [f"biosyn:{folder / 'organs.txt'}"], progress=False)
    return KB.open(folder / "organs.sqlite")


def candidate(cid, score, matched, **stages):
    return Candidate(cid, score, matched_name=matched, name=matched, scores_by_stage=stages)


# -- the model ---------------------------------------------------------------------------------------

def test_features_say_what_a_ranking_knows():
    rows = candidate_features("liver failure", [candidate("A", 2.0, "liver failure", tfidf=1.0), candidate("B", 1.0, "renal failure", tfidf=0.6)],
                              ["tfidf"], normalize)
    named = dict(zip(feature_names(["tfidf"]), rows[0]))
    assert named["exact_alias"] == 1 and named["is_top"] == 1 and named["margin_to_next"] == pytest.approx(1.0)
    assert named["stage:tfidf"] == pytest.approx(1.0) and named["has:tfidf"] == 1
    assert dict(zip(feature_names(["tfidf"]), rows[1]))["alias_similarity"] < 1


def test_a_fitted_model_survives_json_and_refuses_damage():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(200, len(feature_names(["tfidf"]))))
    labels = (features[:, 0] > 0).astype(int)
    model = ProbabilityModel.fit(features, labels, ["tfidf"])
    again = ProbabilityModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert np.allclose(model.predict(features), again.predict(features), atol=1e-6)
    assert model.predict(features)[labels == 1].mean() > 0.8 > 0.2 > model.predict(features)[labels == 0].mean()
    damaged = model.to_dict() | {"coef": [1.0, 2.0]}
    with pytest.raises(MedlinkError, match="do not match its"):
        ProbabilityModel.from_dict(damaged)


@pytest.mark.parametrize("labels, kind", [([1] * 20, "wrong"), ([0] * 20, "right")])
def test_fitting_needs_right_and_wrong_candidates(labels, kind):
    with pytest.raises(MedlinkError, match=f"none of the 20 candidates is {kind}"):
        ProbabilityModel.fit(np.ones((20, len(feature_names([])))), np.array(labels), [])


# -- the stage ---------------------------------------------------------------------------------------

class FixedModel:
    def __init__(self, probabilities):
        self.values = probabilities

    def probabilities(self, key, candidates, normalize):
        return np.array(self.values[: len(candidates)])


def stage_with(probabilities, **settings):
    model = ProbabilityModel.fit(np.eye(2, len(feature_names([]))).repeat(5, 0), np.array([1, 0] * 5), []).to_dict()
    stage = CalibrationStage({"model": model, **settings}, normalize)
    stage.probability_model = FixedModel(probabilities)
    return stage


def test_under_the_threshold_a_mention_is_nil_with_its_candidates_kept():
    result = LinkResult(Mention("liver cyst"), [candidate("A", 2.0, "renal cyst"), candidate("B", 1.0, "bone cyst")])
    decided = stage_with([0.3, 0.1], nil_threshold=0.5).decide("liver cyst", result)
    assert decided.nil is True and decided.best is None and [c.concept_id for c in decided.candidates] == ["A", "B"]
    assert decided.probability == pytest.approx(0.3)
    assert stage_with([0.7, 0.1], nil_threshold=0.5).decide("liver cyst", result).nil is False
    assert stage_with([0.7, 0.1]).decide("liver cyst", result).nil is None  # no threshold: no decision


def test_backoff_puts_the_closest_spelling_first_only_when_unsure():
    result = LinkResult(Mention("liver cyst"), [candidate("A", 2.0, "renal cyst"), candidate("B", 1.0, "liver cyst")])
    unsure = stage_with([0.2, 0.15], backoff_below=0.4).decide("liver cyst", result)
    assert [c.concept_id for c in unsure.candidates] == ["B", "A"] and "backoff" in unsure.candidates[0].evidence[-1]
    sure = stage_with([0.9, 0.15], backoff_below=0.4).decide("liver cyst", result)
    assert [c.concept_id for c in sure.candidates] == ["A", "B"]


def test_nil_after_backoff_is_decided_and_explained_on_the_promoted_candidate():
    """The NIL decision is on the candidate the mention would be linked to; the explanation says backoff put it first
    and quotes the model's first choice by name, so the two probabilities shown do not contradict each other."""
    from medlink.linking.output import decision_text, explanation_lines

    result = LinkResult(Mention("liver cyst"), [candidate("A", 2.0, "renal cyst"), candidate("B", 1.0, "liver cyst")])
    decided = stage_with([0.009, 0.0], backoff_below=0.2, nil_threshold=0.005).decide("liver cyst", result)
    assert [c.concept_id for c in decided.candidates] == ["B", "A"] and decided.nil is True and decided.probability == 0.0
    assert decision_text(decided).startswith("NIL: its first candidate after backoff, B ")
    lines = explanation_lines(decided)
    assert "backoff: the model's first choice, A, had probability 0.009 < 0.2; this alias spells the mention most closely" in lines[2]
    kept = stage_with([0.009, 0.0], backoff_below=0.2, nil_threshold=0.0).decide("liver cyst", result)
    assert kept.nil is False and decision_text(kept).startswith("linked to B ")


def test_ordering_by_probability_is_a_choice():
    result = LinkResult(Mention("cyst"), [candidate("A", 2.0, "a"), candidate("B", 1.0, "b")])
    assert [c.concept_id for c in stage_with([0.2, 0.6], order="probability").decide("cyst", result).candidates] == ["B", "A"]
    assert [c.concept_id for c in stage_with([0.2, 0.6]).decide("cyst", result).candidates] == ["A", "B"]


def test_equal_scores_go_to_the_more_probable_candidate_which_decides_nil():
    # one name, two concepts ("shortness of breath": HPO's Dyspnea, ICD-10-CM's R06.02): the fused scores tie
    result = LinkResult(Mention("sob"), [candidate("HP", 2.25, "sob"), candidate("ICD", 2.25, "sob"), candidate("C", 1.0, "s")])
    decided = stage_with([0.1, 0.6, 0.7], nil_threshold=0.3).decide("sob", result)
    assert [c.concept_id for c in decided.candidates] == ["ICD", "HP", "C"] and decided.nil is False  # C scores lower: it stays last
    assert decided.probability == pytest.approx(0.6)
    assert [c.concept_id for c in stage_with([0.6, 0.1, 0.7]).decide("sob", result).candidates] == ["HP", "ICD", "C"]


# -- choosing thresholds -----------------------------------------------------------------------------

def test_nil_threshold_for_f1_and_for_a_precision():
    probability = np.array([0.9, 0.8, 0.6, 0.4, 0.2])
    right = np.array([True, True, False, True, False])
    in_kb = np.array([True, True, False, True, False])
    threshold, figures = nil_threshold(probability, right, in_kb, "f1")
    assert threshold == pytest.approx(0.21) or figures["f1"] == pytest.approx(0.857, abs=1e-3)
    assert nil_threshold(probability, right, in_kb, "precision=1.0")[0] == pytest.approx(0.61)
    assert nil_threshold(probability, right, in_kb, "nil-f1")[1]["nil_f1"] == pytest.approx(0.8)
    with pytest.raises(MedlinkError, match="--nil-target"):
        nil_threshold(probability, right, in_kb, "recall=2")


def test_fitting_on_labelled_lists_chooses_on_out_of_fold_probabilities():
    items = []
    rng = np.random.default_rng(1)
    for i in range(300):
        exact = i % 3 != 0
        key = f"name {i}"
        first = candidate(f"C{i}", 2.0 if exact else 1.0 + rng.random() * 0.2, key if exact else f"other {i}", exact=1.0 if exact else 0.0)
        second = candidate(f"D{i}", 0.9, f"more {i}")
        items.append(Labelled(key, [first, second], [exact, not exact and i % 2 == 0], True))
    settings, report = fit_calibration(items, normalize, "f" * 16)
    assert settings["fitted_for"] == "f" * 16 and 0 <= settings["nil_threshold"] <= 1
    assert report["dev_out_of_fold"]["acc@1"] >= 2 / 3 - 1e-9 and report["trials"]


# -- the index ----------------------------------------------------------------------------------------

def test_pseudo_mentions_are_held_out_of_the_index(organ_kb):
    mentions, held = draw_pseudo_mentions(organ_kb, held_out=50, present=50, variants=40)
    names = {(cid, normalize(text)) for cid, text, _ in held.iter_names()}
    not_in_index = [m for m in mentions if not m.nil and (m.concept_id, normalize(m.text)) not in names]
    misspelt = [m for m in not_in_index if not any(cid == m.concept_id for cid, _ in held.held_names)]
    assert len(not_in_index) == 50 + len(misspelt) and 30 <= len(misspelt) <= 40  # held-out synonyms, and names asked about misspelt
    assert all(any(text_distance_one(m.text, text) for c, text, _ in held.iter_names() if c == m.concept_id)
                                       for m in misspelt)
    assert all(m.concept_id not in {cid for cid, _ in held.iter_concepts()} for m in mentions if m.nil)


def text_distance_one(a: str, b: str) -> bool:
    """One edit apart: a letter dropped, added (a plural "s", a doubled letter) or two neighbours swapped."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def test_a_mention_of_stop_words_only_is_right_about_nothing():
    stage = stage_with([0.9], nil_threshold=0.3)
    laceration = candidate("C1", 1.2, "Laceration with foreign body")
    found = stage.decide("with", LinkResult(Mention("with"), [laceration]))
    assert found.nil is True and found.probability == 0.0 and found.candidates[0].concept_id == "C1"  # listed, not linked
    assert stage.decide("laceration", LinkResult(Mention("laceration"), [laceration])).probability == 0.9
    # a stop word that the KB writes in capitals is an abbreviation: that candidate keeps its probability, HPO's root "All" does not
    abbreviation, root = candidate("C2", 3.0, "ALL"), candidate("C3", 3.0, "All")
    shared = root.copy(matched_name="ALL")  # the index reports the key's one spelling for every concept under it
    decided = stage_with([0.9, 0.8], nil_threshold=0.3).decide("all", LinkResult(Mention("all"), [abbreviation, root]))
    assert [(c.concept_id, c.probability) for c in decided.candidates] == [("C2", 0.9), ("C3", 0.0)] and decided.nil is False
    assert stage_with([0.8], nil_threshold=0.3).decide("all", LinkResult(Mention("all"), [root])).nil is True
    assert stage_with([0.8], nil_threshold=0.3).decide("all", LinkResult(Mention("all"), [shared])).probability == 0.0


def test_short_names_are_asked_about_without_their_generic_head(tmp_path):
    assert [without_generic_head(t) for t in ("Parkinson's disease", "Celiac disease", "Sick sinus syndrome", "Nail disorders")] == [
        "Parkinson's", "Celiac", "Sick sinus", "Nail"]
    # a classification's residual name, three words before the head, punctuation, a head not last, nothing of four letters
    assert [without_generic_head(t) for t in ("Other retinal disorders", "Chronic kidney failure syndrome",
                                              "Diabetes (type 2) disorder", "Disease of liver", "Ab C disease")] == [None] * 5
    eponyms = ["Crohn", "Graves", "Addison", "Cushing", "Wilson", "Menkes", "Pompe", "Fabry", "Gaucher", "Krabbe"]
    lines = [f"E{i:02d}||{name} disease|{name}-like syndrome type 1" for i, name in enumerate(eponyms)]
    lines += ["H01||Heart disease|Cardiopathy", "H02||Heart|Cor"]  # "Heart" is a name already: asked about as it stands
    (tmp_path / "eponyms.txt").write_text("\n".join(lines) + "\n")
    build_kb(tmp_path / "eponyms.sqlite", [f"biosyn:{tmp_path / 'eponyms.txt'}"], progress=False)
    kb = KB.open(tmp_path / "eponyms.sqlite")
    mentions, held = draw_pseudo_mentions(kb, held_out=0, present=0, nil_share=0, variants=0, shortened=8)
    assert len(mentions) == 8 and all(m.named == f"{m.text} disease" and m.concept_id.startswith("E") for m in mentions)
    assert {(m.concept_id, m.text) for m in mentions} <= {(f"E{i:02d}", name) for i, name in enumerate(eponyms)}
    assert not held.held_names and not held.removed  # their full names stay in the index


@pytest.mark.slow
def test_an_index_built_from_a_kb_gets_probabilities_that_mean_something(organ_kb, tmp_path):
    linker = build_index(organ_kb, tmp_path / "index", default_config())
    stage = calibration_stage(linker)
    assert stage is not None and stage.probability_model.fitted_on["source"] == "pseudo-mentions from the KB"
    assert kb_fit_is_current(linker.config.to_dict())
    older = {**stage.settings, "model": {**stage.settings["model"], "fitted_on": {**stage.probability_model.fitted_on, "draw_version": 1}}}
    assert not kb_fit_is_current({"rerankers": [older]})  # a default index fitted on an older draw is rebuilt
    loaded = Linker.load(tmp_path / "index")
    exact, nonsense = loaded.link(["renal failure", "qqqq zzzz"], k=3)
    assert exact.candidates[0].concept_id == "C0016" and exact.probability > 0.5 and exact.nil is False
    assert nonsense.nil is True  # nothing like it in the KB: NIL, not a guess
    assert nonsense.nil_threshold == exact.nil_threshold is not None  # the threshold it was decided at, for explanations
    assert all(c.probability is not None for c in exact.candidates)


def test_a_kb_of_one_name_per_concept_gets_no_model_from_itself(tmp_path):
    """Nothing to hold out: a model of exact names and absent concepts only would put every other wording near 0."""
    lines = [f"C{i:04d}||{c} of the {organ}" for i, ((organ, _), c) in enumerate((o, c) for o in ORGANS for c in CONDITIONS)]
    (tmp_path / "one.txt").write_text("\n".join(lines) + "\n")
    build_kb(tmp_path / "one.sqlite", [f"biosyn:{tmp_path / 'one.txt'}"], progress=False)
    kb = KB.open(tmp_path / "one.sqlite")
    assert len(lines) >= MIN_PSEUDO_MENTIONS and fit_on_kb(kb, default_config()) is None


def test_a_kb_too_small_for_its_own_fit_says_what_it_gave(kb, caplog):
    """The refusal counts what the KB gave against what is needed, so a user can see why (the docs quote the minimums)."""
    with caplog.at_level("INFO", logger="medlink"):
        assert fit_on_kb(kb, default_config()) is None
    [said] = [r.getMessage() for r in caplog.records if "no probabilities fitted" in r.getMessage()]
    assert re.search(r"the KB gave \d+ pseudo-mentions \(200 needed\) from \d+ synonyms it could hold out \(100 needed", said)


def test_one_dev_mention_is_too_few_to_choose_out_of_fold():
    one = [Labelled("heart attack", [Candidate("A", 1.0), Candidate("B", 0.5)], [True, False], True)]
    with pytest.raises(MedlinkError, match="needs at least 2 dev mentions with candidates; 1 of the 1 given had any"):
        fit_calibration(one, str.lower, "fingerprint")


@pytest.mark.slow
def test_a_model_fitted_on_one_index_refuses_another(organ_kb, tmp_path, fixtures):
    linker = build_index(organ_kb, tmp_path / "index", default_config())
    config = linker.config.to_dict()
    config["fusion"]["weights"]["bm25"] = 2.0  # other scores: the model would misread them
    with pytest.raises(MedlinkError, match="fitted on another index"):
        Linker.build(organ_kb, LinkerConfig.from_dict(config))
    fitted = LinkerConfig.from_dict(linker.config.to_dict())  # unchanged stages, but a mention memory the model never saw
    with pytest.raises(MedlinkError, match="another mention memory"):
        Linker.build(organ_kb, fitted, MemoryEntries(pairs=[("sore kidney", "C0001")]))
    assert Linker.build(organ_kb, fitted).rerankers[-1].type == "calibration"  # the index it was fitted on takes it
    # from the command line: the config file is named, and nothing is built first
    config["fusion"]["weights"]["bm25"] = 1.0
    (tmp_path / "tuned.json").write_text(json.dumps(config))
    other = build_kb(tmp_path / "other.sqlite", [f"biosyn:{fixtures / 'eval' / 'dictionary.txt'}"], progress=False).path
    refused = medlink("index", "build", "--kb", str(other), "--out", str(tmp_path / "other-index"), "--config", str(tmp_path / "tuned.json"), check=False)
    assert refused.returncode == 2 and f"{tmp_path / 'tuned.json'}: the probability model was fitted on another index" in refused.stderr
    assert "name tables" not in refused.stderr and not (tmp_path / "other-index").exists()


@pytest.mark.slow
def test_tune_fits_probabilities_on_dev_and_they_apply_to_the_index(kb, tmp_path, fixtures):
    build_index(kb, tmp_path / "index", default_config(), calibrate="none")
    dev = f"biosyn:{fixtures / 'eval' / 'biosyn_processed'}"
    result = medlink("tune", "--index", str(tmp_path / "index"), "--dev", dev, "--search", "fusion", "--calibrate", "--apply")
    assert "probabilities: fitted on" in result.stdout
    assert "dev mention parts: expect them to be rough" in result.stdout  # a handful of dev mentions: said
    linker = Linker.load(tmp_path / "index")
    assert calibration_stage(linker) is not None
    assert all(r.probability is not None for r in linker.link(["colorectal cancer"], k=2))
    medlink("eval", "--index", str(tmp_path / "index"), "--dataset", dev, "--out", str(tmp_path / "report"))
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert 0 <= report["calibration"]["ece"] <= 1 and report["calibration"]["n"] > 0
    assert (tmp_path / "report" / "reliability.png").read_bytes()[:4] == b"\x89PNG"
    records = [json.loads(line) for line in (tmp_path / "report" / "records.jsonl").read_text().splitlines()]
    nil = report["nil"]  # the index has a NIL threshold now: eval says what it left unlinked
    assert nil["n"] == len(records) and nil["nil"] == sum(r["nil"] for r in records)
    assert nil["linked_recall"] == pytest.approx(sum(r["correct@1"] and not r["nil"] for r in records) / len(records))


@pytest.mark.slow
def test_tune_without_calibrate_keeps_the_index_probabilities(organ_kb, tmp_path):
    """Tuning the fusion changes the scores a model reads: it is re-fitted on the dev mentions, not silently dropped."""
    build_index(organ_kb, tmp_path / "index", default_config())
    concepts = list(organ_kb.iter_concepts())[:40:4]  # mentions misspelt (a letter dropped): some right first, some not
    (tmp_path / "dev.txt").write_text("".join(f"1||0|5||Disease||{name[:-1]}||{cid}\n" for cid, name in concepts))
    result = medlink("tune", "--index", str(tmp_path / "index"), "--dev", f"biosyn:{tmp_path / 'dev.txt'}", "--search", "fusion", "--apply")
    assert "probabilities kept" in result.stdout or "probabilities re-fitted on the dev mentions" in result.stdout
    assert calibration_stage(Linker.load(tmp_path / "index")) is not None


@pytest.mark.slow
def test_mentions_annotated_without_a_concept_teach_nil_and_are_scored_as_nil(organ_kb, tmp_path):
    """Paper 001's CUI-less mentions (id -1): NIL examples for the calibration, and NIL figures over all mentions in eval."""
    build_index(organ_kb, tmp_path / "index", default_config(), calibrate="none")
    concepts = list(organ_kb.iter_concepts())[:200:5]
    unlinked = ["qqq zzz", "xylophone", "bright yellow", "toothbrush", "violin string", "paper clip", "tea cup", "cloud"] * 2
    (tmp_path / "dev.txt").write_text("".join(f"1||0|5||Disease||{name[:-1]}||{cid}\n" for cid, name in concepts)
                                      + "".join(f"2||0|5||Disease||{text}||-1\n" for text in unlinked))
    dev = f"biosyn:{tmp_path / 'dev.txt'}"
    tuned = medlink("tune", "--index", str(tmp_path / "index"), "--dev", dev, "--search", "fusion", "--calibrate", "--nil-target", "nil-f1",
                    "--out", str(tmp_path / "tuned.json"), "--apply")
    fitted = json.loads((tmp_path / "tuned.json").read_text())["tuned"]["calibration"]
    assert fitted["mentions"] > len(concepts) and fitted["in_kb"] == len(concepts)  # (one with no candidate at all is NIL anyway)
    assert fitted["chosen"]["nil_threshold"] > 0 and "dev Acc@1" in tuned.stdout
    assert "expect them to be rough" not in tuned.stdout  # 56 dev mentions: no note
    report = medlink("eval", "--index", str(tmp_path / "index"), "--dataset", dev, "--json").stdout
    payload = json.loads(report)
    assert payload["nil_all"]["gold_nil"] == len(unlinked) and payload["nil_all"]["mentions"] == len(concepts) + len(unlinked)
    assert payload["nil_all"]["nil_recall"] > 0.5 and payload["nil"]["n"] == len(concepts)  # Acc@k over annotated mentions only
    medlink("eval", "--index", str(tmp_path / "index"), "--dataset", dev, "--out", str(tmp_path / "report"))
    records = [json.loads(line) for line in (tmp_path / "report" / "records.jsonl").read_text().splitlines()]
    unlinked_records = [r for r in records if r.get("cuiless")]
    assert len(unlinked_records) == len(unlinked) and all(r["correct@1"] == r["nil"] for r in unlinked_records)
    medlink("tune", "--index", str(tmp_path / "index"), "--dev", dev, "--search", "fusion", "--out", str(tmp_path / "again.json"))
    again = json.loads((tmp_path / "again.json").read_text())["rerankers"][-1]
    assert again["model"]["fitted_on"]["nil_target"] == "nil-f1"  # kept or re-fitted, the probabilities keep how NIL was chosen
    from medlink.eval import load_dataset
    from medlink.tuning import tune

    linker = Linker.load(tmp_path / "index")
    calibration_stage(linker).settings["fitted_for"] = "other stages"  # as after a fusion change: a re-fit, not a keep
    config, report = tune(linker, load_dataset(dev, keep_unlinked=True), ["fusion"], calibration={"nil_target": "f1", "backoff": True})
    assert "re-fitted" in report.calibration_note and config.rerankers[-1]["model"]["fitted_on"]["nil_target"] == "nil-f1"


def test_a_nil_threshold_given_at_link_time_decides(kb, tmp_path):
    linker = build_index(kb, tmp_path / "index", default_config(), calibrate="none")
    linker = linker.with_rerankers([*linker.rerankers, stage_with([0.5, 0.1])])
    decided = [linker.with_decisions(threshold).link(["colorectal cancer"], k=2)[0] for threshold in (0.0, 1.0)]
    sure, unsure = decided
    assert sure.nil is False and unsure.nil is True and unsure.candidates == sure.candidates  # NIL keeps its candidates
    assert unsure.nil_threshold == 1.0


@pytest.mark.slow
def test_link_explains_its_decision_at_the_threshold_given(organ_kb, tmp_path):
    build_index(organ_kb, tmp_path / "index", default_config())
    name = next(iter(organ_kb.iter_concepts()))[1]
    explain = lambda t: medlink("link", "--index", str(tmp_path / "index"), "--explain", "--nil-threshold", t, name[:-1]).stdout  # noqa: E731
    assert "under the NIL threshold 1.000" in explain("1.0") and f"{name[:-1]}: linked to" in explain("0")


@pytest.mark.slow
def test_a_nil_threshold_needs_a_probability_model(kb, tmp_path):
    build_index(kb, tmp_path / "index", default_config(), calibrate="none")
    result = medlink("link", "--index", str(tmp_path / "index"), "--nil-threshold", "0.5", "breast cancer", check=False)
    assert result.returncode == 2 and "no probability model" in result.stderr
    plain = medlink("link", "--index", str(tmp_path / "index"), "breast cancer")  # its scores are no certainty: said once
    assert plain.stderr.count("this index has no probabilities") == 1
    assert "no probabilities" not in medlink("link", "--index", str(tmp_path / "index"), "--json", "breast cancer").stderr
    with pytest.raises(MedlinkError, match="between 0 and 1"):
        linker = Linker.load(tmp_path / "index")
        linker.with_rerankers([*linker.rerankers, stage_with([0.5])]).with_decisions(1.5)
    for bad in ("1.5", "nan"):  # "nan" passes a "<= 1" test and used to be refused as if it were over 1
        result = medlink("link", "--index", str(tmp_path / "index"), "--nil-threshold", bad, "breast cancer", check=False)
        assert result.returncode == 2 and "--nil-threshold" in result.stderr and f"{float(bad)} is not a probability" in result.stderr
    for bad in ("abc", "0,5"):  # not a number at all: the value quoted back, what is wanted said
        result = medlink("link", "--index", str(tmp_path / "index"), "--nil-threshold", bad, "breast cancer", check=False)
        assert result.returncode == 2 and f"'{bad}' is not a number: give a probability from 0 to 1" in result.stderr


# -- measures -----------------------------------------------------------------------------------------

def test_expected_calibration_error_by_hand(tmp_path):
    probabilities = [0.95, 0.95, 0.15, 0.15]
    right = [True, False, False, False]
    # bin 0.9-1.0: mean 0.95, accuracy 0.5 -> 0.45; bin 0.1-0.2: mean 0.15, accuracy 0 -> 0.15; weighted: 0.3
    assert expected_calibration_error(probabilities, right) == pytest.approx(0.3)
    assert sum(b["n"] for b in reliability(probabilities, right)) == 4
    png = reliability_diagram({"model": (probabilities, right)}, tmp_path / "plot.png")
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_eval_reports_what_a_nil_threshold_left_unlinked():
    from medlink.corpora.mentions import LabeledMention
    from medlink.eval.harness import evaluate_rankings

    mentions = [LabeledMention(t, (t,), frozenset({g})) for t, g in (("a", "A"), ("b", "B"), ("c", "C"), ("d", "D"))]
    results = [LinkResult(Mention("a"), [Candidate("A", 1.0)], nil=False), LinkResult(Mention("b"), [Candidate("B", 1.0)], nil=True),
               LinkResult(Mention("c"), [Candidate("X", 1.0)], nil=False), LinkResult(Mention("d"), [Candidate("Y", 1.0)], nil=True)]
    report = evaluate_rankings(results, mentions, subpopulations=False)
    assert report.metrics["acc@1"] == pytest.approx(0.5)  # the ranking: A and B first
    assert report.nil == {"n": 4, "nil": 2, "nil_first_right": 1, "linked_precision": 0.5, "linked_recall": 0.25,
                          "linked_f1": pytest.approx(1 / 3)}
    assert "2 of 4 mentions left unlinked" in report.to_markdown()
    assert evaluate_rankings([r.candidates for r in results], mentions, subpopulations=False).nil is None  # no threshold, no figures


def test_eval_warns_when_gold_ids_are_not_the_kbs(tmp_path):
    from medlink.corpora.mentions import LabeledMention
    from medlink.eval.harness import gold_outside_kb

    (tmp_path / "k.tsv").write_text("id\tname\nC002\tAsthma\nC003\tFever\n")
    build_kb(tmp_path / "k.sqlite", [f"tsv=MYT:{tmp_path / 'k.tsv'}"], progress=False)
    kb = KB.open(tmp_path / "k.sqlite")
    unprefixed = [LabeledMention("asthma", ("asthma",), frozenset({"C002"})), LabeledMention("fever", ("fever",), frozenset({"C003"}))]
    assert "none of the 2 mentions" in gold_outside_kb(unprefixed, kb) and "MYT:C002 is in it" in gold_outside_kb(unprefixed, kb)
    some = [LabeledMention("asthma", ("asthma",), frozenset({"MYT:C002"})), unprefixed[1]]
    assert gold_outside_kb(some, kb).startswith("1 of 2 mentions")
    assert gold_outside_kb(some[:1], kb) is None


def test_nil_scoring_counts_nil_as_a_candidate_at_its_place():
    linked_right = LinkResult(Mention("a"), [Candidate("A", 1, probability=0.9)], nil=False)
    nil_said = LinkResult(Mention("b"), [Candidate("B", 1, probability=0.2), Candidate("C", 1, probability=0.1)], nil=True)
    gold_under_threshold = LinkResult(Mention("c"), [Candidate("X", 1, probability=0.6), Candidate("G", 1, probability=0.3)], nil=False)
    outcomes = [nil_outcome(linked_right, False, [True], 0.5), nil_outcome(nil_said, True, [False, False], 0.5),
                nil_outcome(gold_under_threshold, False, [False, True], 0.5)]
    assert [o.rank_with_nil for o in outcomes] == [1, 1, 3]  # G is under the threshold: NIL's place (2) comes before it
    figures = nil_metrics(outcomes)
    assert figures["nil_precision"] == 1 and figures["nil_recall"] == 1 and figures["accuracy_all"] == pytest.approx(2 / 3)
    assert figures["mrr_all"] == pytest.approx((1 + 1 + 1 / 3) / 3) and figures["in_kb_acc@1"] == pytest.approx(0.5)
    # NIL exactly where the first candidate is wrong: the NIL mention and the mis-ranked in-KB one, so precision 1/2
    assert figures["nil_f1_if_first_wrong"] == pytest.approx(2 * 0.5 / 1.5)
    # NIL exactly where no right candidate is listed: G is listed second, so only the NIL mention: precision 1
    assert [o.listed for o in outcomes] == [True, False, True] and figures["nil_f1_if_not_listed"] == pytest.approx(1.0)
    unlisted = nil_outcome(LinkResult(Mention("d"), [Candidate("Y", 1, probability=0.7)], nil=False), False, [False], 0.5)
    assert nil_metrics([*outcomes, unlisted])["nil_f1_if_not_listed"] == pytest.approx(2 * 0.5 / 1.5)


def test_explain_says_what_decided_and_why():
    from medlink.linking.output import explanation_lines, result_json

    top = Candidate("HP:1", 2.0, matched_name="heart attack", name="Myocardial infarction", scores_by_stage={"exact": 1.0, "tfidf": 0.9},
                    evidence=[{"neighbour": "heart attacks", "similarity": 0.97}], probability=0.91)
    linked = LinkResult(Mention("heart attack"), [top], nil=False, probability=0.91)
    lines = explanation_lines(linked)
    assert lines[0] == "heart attack: linked to HP:1 (Myocardial infarction) with probability 0.910"
    assert "p=0.910" in lines[1] and "matched 'heart attack'" in lines[1] and "exact 1.000" in lines[1] and "'heart attacks' 0.97" in lines[1]
    nil = LinkResult(Mention("can't sleep"), [top.copy(probability=0.12)], nil=True, probability=0.12, nil_threshold=0.29)
    payload = result_json(nil, explain=True)
    assert payload["nil"] is True and payload["candidates"][0]["probability"] == 0.12 and payload["nil_threshold"] == 0.29
    assert payload["why"] == "NIL: its first candidate, HP:1 (Myocardial infarction), has probability 0.120, under the NIL threshold 0.290"


def test_a_model_with_other_features_is_refused_by_name(kb, tmp_path):
    from medlink.linking.calibration import model_is_current
    from medlink.linking.calibration_fit import calibrated, fingerprint_for

    linker = Linker.build(kb, default_config())
    settings = stage_with([0.5]).settings | {"fitted_for": fingerprint_for(linker)}
    linker = calibrated(linker, settings)
    linker.save(tmp_path / "index")
    assert Linker.load(tmp_path / "index").link(["breast cancer"], k=1)[0].probability is not None
    assert model_is_current(linker.config.to_dict())
    older = {**settings, "model": {**settings["model"], "features": settings["model"]["features"][:-1]}}
    assert not model_is_current({"rerankers": [older]})
    with pytest.raises(MedlinkError, match="fitted by a medlink with other features"):
        CalibrationStage(older, normalize)


def test_probabilities_are_left_out_when_a_call_uses_some_generators_only(kb):
    from medlink.linking.calibration_fit import calibrated, fingerprint_for

    linker = Linker.build(kb, default_config())
    linker = calibrated(linker, stage_with([0.5]).settings | {"fitted_for": fingerprint_for(linker)})
    assert linker.link(["breast cancer"], k=1)[0].probability is not None
    assert linker.link(["breast cancer"], k=1, generators=["tfidf"])[0].probability is None


def test_a_bad_nil_target_is_refused_before_any_work(tmp_path):
    refused = medlink("tune", "--index", str(tmp_path / "no-index"), "--dev", "biosyn:none", "--calibrate", "--nil-target", "precision=2",
                      "--out", str(tmp_path / "t.json"), check=False)
    assert refused.returncode == 2 and "--nil-target must be" in refused.stderr  # named before the (missing) index is even read
    ignored = medlink("tune", "--index", str(tmp_path / "no-index"), "--dev", "biosyn:none", "--out", str(tmp_path / "c.json"),
                      "--nil-target", "nil-f1", "--no-backoff", check=False)  # they would shape no fit: refused, not ignored
    assert ignored.returncode == 2 and "--nil-target and --no-backoff choose how probabilities fitted here decide: add --calibrate" in ignored.stderr


def test_a_dev_set_of_cui_less_mentions_only_is_refused_for_what_it_is(kb, tmp_path):
    build_index(kb, tmp_path / "index", default_config(), calibrate="none")
    (tmp_path / "dev.txt").write_text("".join(f"1||0|5||Disease||{text}||-1\n" for text in ("qqq zzz", "toothbrush", "tea cup")))
    refused = medlink("tune", "--index", str(tmp_path / "index"), "--dev", f"biosyn:{tmp_path / 'dev.txt'}", "--calibrate", "--out",
                      str(tmp_path / "t.json"), check=False)
    assert refused.returncode == 2 and "the 3 given are all CUI-less (id -1): they can teach NIL, not choose settings" in refused.stderr


def test_nil_f1_needs_nil_examples():
    with pytest.raises(MedlinkError, match="every dev mention's concept is in the KB"):
        nil_threshold(np.array([0.9, 0.2]), np.array([True, False]), np.array([True, True]), "nil-f1")


# -- cross-fitting on the index's memory ---------------------------------------------------------------

def organ_mentions(organ_kb, step: int, start: int = 0) -> list[tuple[str, str]]:
    """Mentions of every ``step``-th concept: a letter dropped from the name, or the adjective synonym (some link first, some not)."""
    out = []
    for i, (cid, name) in enumerate(list(organ_kb.iter_concepts())[start::step]):
        out.append((name[:-1] if i % 2 else name.replace(" of the ", " in "), cid))
    return out


def write_mentions(path, mentions) -> str:
    path.write_text("".join(f"{i}||0|5||Disease||{text}||{cid}\n" for i, (text, cid) in enumerate(mentions)))
    return f"biosyn:{path}"


def test_a_saved_memory_reads_back_and_a_damaged_one_is_named(tmp_path):
    from medlink.errors import DamagedFileError
    from medlink.linking.cross_fit import memory_mentions
    from medlink.linking.memory import read_memory

    pairs = [("liver  failure", "C1"), ("liver failure", "C1"), ("renal cyst", "C2"), ("renal cyst", "C3"), ("renal cyst", "C2"), ("renal cyst", "C3")]
    MemoryEntries(pairs=pairs).save(tmp_path / "memory.tsv")  # an older index's memory: no documents
    assert read_memory(tmp_path / "memory.tsv").pairs == [(" ".join(text.split()), cid) for text, cid in pairs]
    assert read_memory(tmp_path / "memory.tsv").documents == []
    # one mention per occurrence, twice the same side by side too; a mention of two concepts (its pairs side by side) stays one
    assert [(m.text, m.concepts) for m in memory_mentions(read_memory(tmp_path / "memory.tsv"))] == [
        ("liver failure", {"C1"}), ("liver failure", {"C1"}), ("renal cyst", {"C2", "C3"}), ("renal cyst", {"C2", "C3"})]
    # with documents: a mention does not run across two documents, and each keeps its pairs' numbers
    MemoryEntries(pairs=pairs, documents=["d 1", "d1", "d1", "d1", "d2", "d3"]).save(tmp_path / "memory.tsv")
    read = read_memory(tmp_path / "memory.tsv")
    assert read.documents == ["d 1", "d1", "d1", "d1", "d2", "d3"] and read.subset([4, 0]).documents == ["d2", "d 1"]
    assert [(m.text, m.concepts, m.document, m.pairs) for m in memory_mentions(read)] == [
        ("liver failure", {"C1"}, "d 1", (0,)), ("liver failure", {"C1"}, "d1", (1,)), ("renal cyst", {"C2", "C3"}, "d1", (2, 3)),
        ("renal cyst", {"C2"}, "d2", (4,)), ("renal cyst", {"C3"}, "d3", (5,))]
    (tmp_path / "memory.tsv").write_text("liver failure\tC1\nno tab here\n")
    with pytest.raises(DamagedFileError, match="memory.tsv.*line 2"):
        read_memory(tmp_path / "memory.tsv")


def test_folds_hold_whole_documents_unless_too_few():
    from medlink.linking.calibration_fit import fold_numbers

    groups = [f"doc{i // 3}" for i in range(60)] + [None] * 7  # 20 documents of 3 mentions, 7 mentions of none
    fold = fold_numbers(groups, 5)
    assert all(len(set(fold[i:i + 3])) == 1 for i in range(0, 60, 3)) and set(fold.tolist()) == set(range(5))
    assert np.bincount(fold).min() >= 8  # sizes near 67 / 5
    assert (fold_numbers(groups, 5) == fold).all() and not (fold_numbers(groups, 5, seed=1) == fold).all()
    few = fold_numbers(["doc1"] * 30 + ["doc2"] * 30, 5)  # two documents for five folds: by mention instead
    assert set(few[:30].tolist()) == set(range(5))


def test_cross_fitted_items_come_from_an_index_without_their_fold(organ_kb):
    from medlink.linking.cross_fit import cross_fit_items

    mentions = organ_mentions(organ_kb, 3)
    memory = MemoryEntries(pairs=mentions)
    items = cross_fit_items(organ_kb, default_config(), memory, folds=4)
    assert len(items) == len(mentions) and all(item.in_kb for item in items)
    def through_itself(key, candidates):  # linked through its own text in the memory
        return any(e.get("origin") == "memory" and normalize(e["matched"]) == key for c in candidates for e in c.evidence)

    # a held-out mention is not in the memory its index was built with; with the whole memory, every one would be
    assert not any(through_itself(item.key, item.candidates) for item in items)
    whole = Linker.build(organ_kb, default_config(), memory, dictionary=False)
    assert all(through_itself(item.key, r.candidates) for item, r in zip(items[:20], whole.link([i.key for i in items[:20]], k=10)))
    by_key = {item.key: item for item in items}
    right_first = [by_key[normalize(text)].right[0] for text, _ in mentions if normalize(text) in by_key]
    assert 0 < sum(right_first) < len(right_first)  # some right, some wrong: something to learn from
    # with documents known, a held-out mention's document is wholly out of the index that links it
    documents = [f"doc{i % 40}" for i in range(len(mentions))]
    by_document = cross_fit_items(organ_kb, default_config(), MemoryEntries(pairs=mentions, documents=documents), folds=4)
    assert sorted(item.group for item in by_document) == sorted(documents)
    assert len({normalize(text) for text, _ in mentions}) == len(mentions)  # each text one mention's: its document tells
    document_of = {normalize(text): d for (text, _), d in zip(mentions, documents)}
    matched = [(item.group, document_of.get(normalize(e["matched"]))) for item in by_document for c in item.candidates for e in c.evidence
               if e.get("origin") == "memory"]
    assert matched and not any(own == theirs for own, theirs in matched)
    with pytest.raises(MedlinkError, match="at least 2 folds"):
        cross_fit_items(organ_kb, default_config(), memory, folds=1)
    with pytest.raises(MedlinkError, match="at least 50 of its mentions"):
        cross_fit_items(organ_kb, default_config(), MemoryEntries(pairs=mentions[:10]), folds=2)


def test_extra_lists_join_the_fit_and_choices_but_dev_alone_sets_the_nil_threshold():
    rng = np.random.default_rng(2)

    def items(n, prefix):
        out = []
        for i in range(n):
            exact = rng.random() < 0.6
            key = f"{prefix} {i}"
            first = candidate(f"C{i}", 2.0 if exact else 1.0 + rng.random() * 0.2, key if exact else f"other {i}", exact=1.0 if exact else 0.0)
            out.append(Labelled(key, [first, candidate(f"D{i}", 0.9, f"more {i}")], [exact, not exact], True))
        return out

    dev, extra = items(120, "dev"), items(600, "memory")
    dev += [Labelled(f"absent {i}", [candidate(f"E{i}", 1.0 + rng.random() * 0.1, f"else {i}")], [False], False) for i in range(30)]
    alone, alone_report = fit_calibration(dev, normalize, "f" * 16, nil_target="nil-f1")
    both, report = fit_calibration(dev, normalize, "f" * 16, extra=extra, nil_target="nil-f1")
    assert report["extra_mentions"] == 600 and alone_report["extra_mentions"] == 0 and both["model"] != alone["model"]
    assert report["mentions"] == 150 and report["in_kb"] == 120  # the NIL threshold's figures: dev's mentions only
    assert report["dev_out_of_fold"]["at_threshold"]["nil_f1"] > 0.5


@pytest.mark.slow
def test_tune_cross_fits_on_the_memory_and_says_so(organ_kb, tmp_path):
    memory = write_mentions(tmp_path / "memory.txt", organ_mentions(organ_kb, 2))
    dev = write_mentions(tmp_path / "dev.txt", organ_mentions(organ_kb, 5, start=1))
    medlink("index", "build", "--kb", str(organ_kb.path), "--out", str(tmp_path / "index"), "--memory", memory, "--calibrate", "none")
    result = medlink("tune", "--index", str(tmp_path / "index"), "--dev", dev, "--search", "fusion", "--calibrate", "--cross-fit", "3",
                     "--out", str(tmp_path / "tuned.json"))
    assert "and 150 memory mentions cross-fitted (3 folds)" in result.stdout
    fitted = json.loads((tmp_path / "tuned.json").read_text())["rerankers"][-1]["model"]["fitted_on"]
    crossed = fitted["cross_fit"]
    assert crossed["folds"] == 3 and crossed["mentions"] == 150 and 0 < crossed["right_first"] < 150
    refused = medlink("tune", "--index", str(tmp_path / "index"), "--dev", dev, "--calibrate", "--cross-fit", "1", "--out", str(tmp_path / "x.json"),
                      check=False)
    assert refused.returncode == 2 and "--cross-fit takes a number of folds, at least 2" in refused.stderr
    refused = medlink("tune", "--index", str(tmp_path / "index"), "--dev", dev, "--cross-fit", "3", "--out", str(tmp_path / "x.json"), check=False)
    assert refused.returncode == 2 and "add --calibrate" in refused.stderr
    # no dev set at all: the index fits its probabilities on its memory when it is built
    built = medlink("index", "build", "--kb", str(organ_kb.path), "--out", str(tmp_path / "from-memory"), "--memory", memory, "--calibrate", "memory")
    assert "probabilities: fitted on the index memory's mentions, cross-fitted (150 mentions); NIL threshold" in built.stderr
    assert "has not learnt to refuse text the KB does not name" in built.stderr
    stage = calibration_stage(Linker.load(tmp_path / "from-memory"))
    assert stage.probability_model.fitted_on["source"] == "the index memory's mentions, cross-fitted"
    assert stage.probability_model.fitted_on["cross_fit"]["mentions"] == 150
    refused = medlink("index", "build", "--kb", str(organ_kb.path), "--out", str(tmp_path / "x"), "--calibrate", "memory", check=False)
    assert refused.returncode != 0 and "build the index with more annotated mentions (--memory FORMAT:PATH)" in refused.stderr
    assert not (tmp_path / "x").exists()
    build_index(organ_kb, tmp_path / "no-memory", default_config(), calibrate="none")
    refused = medlink("tune", "--index", str(tmp_path / "no-memory"), "--dev", dev, "--calibrate", "--cross-fit", "3", "--out", str(tmp_path / "x.json"),
                      check=False)
    assert refused.returncode == 2 and "was built without --memory" in refused.stderr
    small = write_mentions(tmp_path / "small.txt", organ_mentions(organ_kb, 20))  # fewer than 50 mentions: refused before retrieval
    medlink("index", "build", "--kb", str(organ_kb.path), "--out", str(tmp_path / "small-index"), "--memory", small, "--calibrate", "none")
    refused = medlink("tune", "--index", str(tmp_path / "small-index"), "--dev", dev, "--calibrate", "--cross-fit", "3", "--out",
                      str(tmp_path / "x.json"), check=False)
    assert refused.returncode == 2 and "needs at least 50 of its mentions" in refused.stderr and "rebuild the index with more" in refused.stderr
    assert "retrieved" not in refused.stderr and not (tmp_path / "x.json").exists()
    # tuned on the very mentions the memory holds: said
    again = medlink("tune", "--index", str(tmp_path / "small-index"), "--dev", small, "--search", "fusion", "--out", str(tmp_path / "y.json"))
    assert "the index's memory holds the --dev mentions" in again.stderr
    assert "the index's memory holds" not in result.stderr


def test_a_name_two_concepts_share_is_right_for_either_in_the_kb_fit(tmp_path):
    """KB pseudo-mentions: 'Heart failure' is ICD-10-CM's I50 and a synonym of HPO's HP:0001635; either is as right as a
    linker can tell, and so is a concept named in the mention's words in another order."""
    from medlink.linking.calibration_fit import concepts_by_wording

    (tmp_path / "kb.txt").write_text("I50||Heart failure|Cardiac failure\nHP1||Congestive heart failure|Heart failure\n"
                                     "HP2||Chest pain\nR07||Pain in chest NOS\nX1||Heart\n")
    build_kb(tmp_path / "kb.sqlite", [f"biosyn:{tmp_path / 'kb.txt'}"], progress=False)
    kb = KB.open(tmp_path / "kb.sqlite")
    found = concepts_by_wording(kb, {"heart failure", "heart failures", "chest pain", "cardiac failure", "lung", "of"})
    assert found["heart failure"] == found["heart failures"] == {"I50", "HP1"}
    assert found["chest pain"] == {"HP2", "R07"} and found["cardiac failure"] == {"I50"}
    assert "lung" not in found and "of" not in found


# -- the core both fits share ------------------------------------------------------------------------

def test_the_calibration_core_folds_fits_out_of_fold_and_chooses():
    """calibration_core: whole groups to a fold; each row predicted by a model that never saw its fold (a fold whose
    other rows are of one kind left at ``fill``); a tie between variants goes to the first; thresholds by target."""
    from medlink.align.metrics import best_threshold
    from medlink.calibration_core import (brier_score, calibration_summary, choose_threshold, choose_variant, out_of_fold,
                                          precision_goal, probability_grid, score_thresholds, shuffled_folds)

    groups = np.repeat(np.arange(30), 3)
    fold = shuffled_folds(groups, 3)
    assert all(len(set(fold[groups == g])) == 1 for g in range(30)) and np.bincount(fold).tolist() == [30, 30, 30]
    features = np.arange(len(groups), dtype=np.float64)[:, None]
    labels = np.ones(len(groups), bool)
    labels[:3] = False  # only group 0 has wrong rows: the fold holding it leaves nothing wrong to fit the others on
    seen = []

    def fit(x, y):
        seen.append(set(x[:, 0].tolist()))
        return lambda rows: np.full(len(rows), float(len(x)))

    predicted = out_of_fold(fit, features, labels, fold, skip_one_class=True, fill=-1.0)
    held_with_group0 = fold == fold[0]
    assert (predicted[held_with_group0] == -1.0).all() and (predicted[~held_with_group0] == 60.0).all() and len(seen) == 2
    assert all(not (s & set(features[fold == f, 0].tolist())) for s, f in zip(seen, sorted(set(fold[~held_with_group0].tolist()))))
    kept, judged = choose_variant(("simple", "fancy"), lambda v: np.zeros(2), lambda p: 0.5)
    assert kept == "simple" and set(judged) == {"simple", "fancy"}
    assert choose_variant((1, 2, 3), lambda v: np.full(1, v), lambda p: float(p[0]) % 2, lower_is_better=True)[0] == 2
    figures = {0.0: {"f1": 0.5, "precision": 0.4}, 0.5: {"f1": 0.5 + 1e-13, "precision": 0.9}, 1.0: {"f1": 0.7, "precision": 1.0}}
    assert choose_threshold(figures, figures.get, "f1")[0] == 1.0
    assert choose_threshold([0.0, 0.5], figures.get, "f1", tolerance=1e-12)[0] == 0.0  # not better by more than the tolerance
    assert choose_threshold(figures, figures.get, "precision=0.8")[0] == 0.5 and choose_threshold([0.0], figures.get, "precision=0.8") is None
    assert precision_goal("f1") is None and precision_goal("precision=0.25") == 0.25
    with pytest.raises(MedlinkError, match="--nil-target must be"):
        precision_goal("recall=1")
    assert probability_grid()[:3] == [0.0, 0.01, 0.02] and len(probability_grid()) == 101
    assert score_thresholds([0.3, 0.1, 0.3]) == [-np.inf, 0.1, 0.3, 0.3]
    assert brier_score([1.0, 0.0, 0.5], [True, False, True]) == pytest.approx(0.25 / 3)
    assert calibration_summary([0.9, 0.1], [True, False]) == {"ece": pytest.approx(0.1), "brier": pytest.approx(0.01)}
    top, gold = {"a": ("x", 0.9), "b": ("y", 0.6), "c": ("z", 0.3)}, {"a": {"x"}, "b": {"q"}, "c": {"z"}}
    assert best_threshold(top, gold) == (-np.inf, pytest.approx({"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3, "kept": 3}))
    assert best_threshold(top, gold, "precision=1.0")[0] == 0.9  # the lowest threshold whose mappings are all right
    with pytest.raises(MedlinkError, match="no confidence threshold reaches"):
        best_threshold({"b": ("y", 0.6)}, gold, "precision=0.5")

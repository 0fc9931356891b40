"""medlink train aligner (paper 003's cross-encoder, binary loss) on the mini fixture: two steps, then align with it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from medlink.align import sssom
from medlink.kb.build import build_kb

FIXTURES = Path(__file__).parent / "fixtures" / "align"


@pytest.fixture
def tiny_training(tmp_path) -> list[str]:
    """The fixture source and target KBs built in ``tmp_path``, and 'medlink train aligner' arguments for two tiny steps
    over them (without --out)."""
    build_kb(tmp_path / "s.sqlite", [f"obo:{FIXTURES / 'source.obo'}"], progress=False)
    build_kb(tmp_path / "t.sqlite", [f"tsv=ICD10CM:{FIXTURES / 'target.tsv'}"], progress=False)
    return ["train", "aligner", "--source", str(tmp_path / "s.sqlite"), "--target", str(tmp_path / "t.sqlite"), "--gold",
            str(FIXTURES / "gold.tsv"), "--max-steps-per-epoch", "2", "--batch-size", "2", "--depth", "4", "--max-length", "32",
            "--precision", "fp32"]


@pytest.mark.slow
@pytest.mark.dense
def test_train_aligner_then_align(tmp_path, tiny_training):
    pytest.importorskip("torch")
    import json

    from medlink.align.scoring import FEATURES, Calibration
    from medlink.cli import command

    out = tmp_path / "aligner"
    trained = CliRunner().invoke(command(), [*tiny_training, "--out", str(out)])
    assert trained.exit_code == 0, trained.output + repr(trained.exception)
    last = trained.output.strip().splitlines()[-1]  # a summary; each epoch's figures are in training.json, not repeated
    assert "2 epoch(s), last loss" in last and str(out / "training.json") in last and '"epoch"' not in last, last
    calibration = Calibration.load(out)  # a cross-encoder's aligner weighs the packaged bi-encoder unless told not to
    assert set(calibration.inputs()) == {*FEATURES, "dense"} and calibration.bi_encoder == "packaged" and calibration.dense_candidates
    assert 0 <= calibration.threshold <= 1 and calibration.depth == 4 and (out / "training.json").is_file()
    from medlink.align.dense import QUALIFIERS

    assert calibration.dense_strip == QUALIFIERS  # its bi-encoder reads target names as it was trained to: without the episode of care
    record = json.loads((out / "training.json").read_text())["config"]
    assert (record["epochs"], record["learning_rate"], record["negatives"]) == (2, 1e-4, 3)  # the recipe measured best
    plain = CliRunner().invoke(command(), [*tiny_training, "--out", str(tmp_path / "plain"), "--bi-encoder", "None"])
    assert plain.exit_code == 0 and set(Calibration.load(tmp_path / "plain").inputs()) == set(FEATURES)
    assert json.loads((tmp_path / "plain" / "training.json").read_text())["config"]["dense_candidates"] is False  # as the aligner says
    mapped = tmp_path / "m.sssom.tsv"
    aligned = CliRunner().invoke(command(), ["align", "--source", str(tmp_path / "s.sqlite"), "--target", str(tmp_path / "t.sqlite"),
                                             "--out", str(mapped), "--aligner", str(out), "--threshold", "0", "-q"])
    assert aligned.exit_code == 0, aligned.output + repr(aligned.exception)
    rows = list(sssom.read_sssom(mapped))
    assert rows and all(r.justification == sssom.SEMANTIC for r in rows)
    assert all(0.0 <= r.confidence <= 1.0 for r in rows if r.confidence is not None)
    wrong = CliRunner().invoke(command(), ["align", "--source", str(tmp_path / "s.sqlite"), "--target", str(tmp_path / "t.sqlite"),
                                           "--out", str(mapped), "--aligner", str(tmp_path), "-q"])
    assert wrong.exit_code != 0 and "not an aligner" in str(wrong.exception)


@pytest.mark.slow
@pytest.mark.dense
def test_train_aligner_listwise_with_target_synonyms(tmp_path, tiny_training):
    pytest.importorskip("torch")
    import json

    from medlink.cli import command

    args = [*tiny_training, "--target-synonyms", "3"]
    trained = CliRunner().invoke(command(), [*args, "--out", str(tmp_path / "a"), "--loss", "listwise"])
    assert trained.exit_code == 0, trained.output + repr(trained.exception)
    record = json.loads((tmp_path / "a" / "training.json").read_text())
    assert record["config"]["loss"] == "listwise" and 1 <= record["examples"]["target_synonyms"] <= 3
    assert "target synonyms trained on (of 3 asked" in trained.output
    unknown = CliRunner().invoke(command(), [*args, "--out", str(tmp_path / "b"), "--loss", "pairwise"])
    assert unknown.exit_code != 0 and "--loss" in str(unknown.exception) and "listwise" in str(unknown.exception)
    lines = (FIXTURES / "target.tsv").read_text().splitlines()
    (tmp_path / "plain.tsv").write_text("\n".join(line for line in lines if "\tinclusion\t" not in line) + "\n")
    build_kb(tmp_path / "plain.sqlite", [f"tsv=ICD10CM:{tmp_path / 'plain.tsv'}"], progress=False)  # a target with no synonyms
    args[args.index("--target") + 1] = str(tmp_path / "plain.sqlite")
    plain = CliRunner().invoke(command(), [*args, "--out", str(tmp_path / "c")])
    assert plain.exit_code == 0, plain.output + repr(plain.exception)
    assert json.loads((tmp_path / "c" / "training.json").read_text())["examples"]["target_synonyms"] == 0
    calibration_only = CliRunner().invoke(command(), [*args, "--out", str(tmp_path / "d"), "--no-cross-encoder", "--hierarchy-negatives"])
    assert calibration_only.exit_code == 0 and "with --no-cross-encoder they do nothing" in calibration_only.output


def test_target_synonyms_become_queries_whose_own_name_is_hidden_from_the_answer(tmp_path):
    from medlink.align.candidates import TargetIndex, generate
    from medlink.align.training import _examples, target_synonym_queries
    from medlink.kb.store import KB

    build_kb(tmp_path / "t.sqlite", [f"tsv=ICD10CM:{FIXTURES / 'target.tsv'}"], progress=False)
    target = KB.open(tmp_path / "t.sqlite")
    index = TargetIndex.build(target)
    queries, gold = target_synonym_queries(target, index, 50, seed=1)
    asked = {name: index.concept_ids[next(iter(gold[i]))] for i, name in enumerate(queries.names)}
    assert asked["Juvenile onset diabetes"] == "ICD10CM:E10" and asked["High blood pressure"] == "ICD10CM:I10"
    assert not set(asked) & set(index.names)  # preferred names are not asked
    assert len(target_synonym_queries(target, index, 2, seed=1)[0].names) == 2
    examples = _examples(generate(index, queries, k=8, ancestors=0), gold, depth=8, synonyms=True)
    juvenile = next(e for e in examples if e.left == "Juvenile onset diabetes")
    assert juvenile.hide == "Juvenile onset diabetes" and index.concept_ids[juvenile.positives[0]] == "ICD10CM:E10"
    assert all(index.concept_ids[c] != "ICD10CM:E10" for c in juvenile.wrong)
    position = index.concept_ids.index("ICD10CM:E10")
    assert "Juvenile" in index.text(position) and "Juvenile" not in index.text(position, hide=juvenile.hide)


def test_a_gold_targets_parent_and_child_are_negatives_only_when_asked(tmp_path):
    """By default a known target's parent or child is not trained as wrong (a split category's child carries the name);
    --hierarchy-negatives makes them negatives like any other candidate."""
    from medlink.align.candidates import SourceQueries, TargetIndex, generate
    from medlink.align.training import _examples
    from medlink.kb.store import KB

    build_kb(tmp_path / "t.sqlite", [f"tsv=ICD10CM:{FIXTURES / 'target.tsv'}"], progress=False)
    target = KB.open(tmp_path / "t.sqlite")
    index = TargetIndex.build(target)
    name = "type 2 diabetes mellitus"
    queries = SourceQueries(["DOID:9352"], [name], [target.normalize(name)], np.zeros(1, np.int64), [[name]])
    gold = {0: {index.concept_ids.index("ICD10CM:E11")}}
    candidates = generate(index, queries, k=8, ancestors=0)
    named = lambda example: {index.concept_ids[c] for c in example.wrong}  # noqa: E731
    [default] = _examples(candidates, gold, depth=8)
    [hierarchy] = _examples(candidates, gold, depth=8, hierarchy=True)
    neighbours = {"ICD10CM:E11.9", "ICD10CM:E11.65", "ICD10CM:E08-E13"}  # E11's children and its block
    assert not named(default) & neighbours and named(hierarchy) & neighbours
    assert named(default) <= named(hierarchy) and "ICD10CM:E11" not in named(hierarchy)


@pytest.mark.slow
@pytest.mark.dense
def test_layers_cut_the_aligners_cross_encoder_and_it_aligns_as_cut(tmp_path, tiny_training):
    pytest.importorskip("torch")
    import json

    from medlink.align.aligner import load_aligner
    from medlink.cli import command

    args = [*tiny_training, "--bi-encoder", "None"]
    trained = CliRunner().invoke(command(), [*args, "--out", str(tmp_path / "cut"), "--layers", "2"])
    assert trained.exit_code == 0, trained.output + repr(trained.exception)
    model, _ = load_aligner(tmp_path / "cut")  # the saved folder loads as the 2-layer model it is
    assert len(model.model.base_model.encoder.layer) == 2 and model.model.config.num_hidden_layers == 2
    assert json.loads((tmp_path / "cut" / "training.json").read_text())["config"]["layers"] == 2
    mapped = tmp_path / "m.sssom.tsv"
    align = ["align", "--source", str(tmp_path / "s.sqlite"), "--target", str(tmp_path / "t.sqlite"), "--out", str(mapped), "-q"]
    aligned = CliRunner().invoke(command(), [*align, "--aligner", str(tmp_path / "cut"), "--threshold", "0"])
    assert aligned.exit_code == 0 and list(sssom.read_sssom(mapped))
    more = CliRunner().invoke(command(), [*args, "--out", str(tmp_path / "more"), "--layers", "7"])
    assert more.exit_code != 0 and "only 6 layers" in str(more.exception) and not (tmp_path / "more").exists()
    shallow = CliRunner().invoke(command(), [*align, "--aligner", str(tmp_path / "cut"), "--depth", "2"])
    assert shallow.exit_code == 0 and "cross-encoder, depth 2" in mapped.read_text() and "depth 2" in shallow.output  # which reading made the file
    deeper = CliRunner().invoke(command(), [*align, "--aligner", str(tmp_path / "cut"), "--depth", "20"])
    assert deeper.exit_code == 0 and "trained and calibrated reading 4 candidates" in deeper.output
    lexical = CliRunner().invoke(command(), [*align, "--depth", "2"])
    assert lexical.exit_code == 0 and "--depth does nothing here" in lexical.output and "no --aligner" in lexical.output


@pytest.mark.slow
@pytest.mark.dense
def test_a_cut_aligner_resumes_only_with_its_own_layers(tmp_path, tiny_training, monkeypatch, interrupt_on_third_call):
    pytest.importorskip("torch")
    from medlink.align.aligner import load_aligner
    from medlink.align.inputs import open_pair
    from medlink.align.training import AlignerTrainConfig, train_aligner
    from medlink.encoders.cross import CrossEncoder
    from medlink.errors import MedlinkError

    source, target = open_pair(str(tmp_path / "s.sqlite"), str(tmp_path / "t.sqlite"))
    gold = sssom.read_gold(FIXTURES / "gold.tsv", source, target)
    config = lambda layers: AlignerTrainConfig(epochs=1, batch_size=2, depth=4, max_length=32, precision="fp32", checkpoint_every=1,  # noqa: E731
                                               max_steps=3, layers=layers, calibration="logistic")
    real = interrupt_on_third_call(CrossEncoder, "forward")
    with pytest.raises(KeyboardInterrupt):
        train_aligner(source, target, gold, tmp_path / "a", config=config(2), progress=False)
    monkeypatch.setattr(CrossEncoder, "forward", real)
    with pytest.raises(MedlinkError, match="cannot resume with other settings"):  # not "the base model has only 2 layers"
        train_aligner(source, target, gold, tmp_path / "a", config=config(3), resume=True, progress=False)
    train_aligner(source, target, gold, tmp_path / "a", config=config(2), resume=True, progress=False)
    assert load_aligner(tmp_path / "a")[0].model.config.num_hidden_layers == 2

"""Word -> phrase substitutions learned from known mappings (align.substitutions): "cancer" reads "malignant neoplasm"."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from medlink.kb.build import build_kb
from medlink.kb.store import KB

ORGANS = ("bladder", "lung", "colon", "breast", "kidney")
TARGET = "id\tname\tkind\ttype\tdefinition\tparent\n" + "".join(
    f"M{i}\tMalignant neoplasm of {organ}\t\tcategory\t\t\nB{i}\tBenign neoplasm of {organ}\t\tcategory\t\t\n"
    f"S{i}\tCalculus of {organ}\t\tcategory\t\t\n" for i, organ in enumerate(ORGANS))
SOURCE = "format-version: 1.2\nontology: mini\n" + "".join(
    f"\n[Term]\nid: DOID:{i}\nname: {organ} cancer\n" + (f'synonym: "{organ} tumor" EXACT []\n' if organ == "bladder" else "")
    for i, organ in enumerate(ORGANS))


@pytest.fixture
def kbs(tmp_path) -> tuple[KB, KB]:
    (tmp_path / "t.tsv").write_text(TARGET)
    (tmp_path / "s.obo").write_text(SOURCE)
    build_kb(tmp_path / "t.sqlite", [f"tsv=ICD:{tmp_path / 't.tsv'}"], progress=False)
    build_kb(tmp_path / "s.sqlite", [f"obo:{tmp_path / 's.obo'}"], progress=False)
    return KB.open(tmp_path / "s.sqlite"), KB.open(tmp_path / "t.sqlite")


def _learned(source: KB, target: KB, organs: int, **options) -> dict[str, str]:
    from medlink.align import substitutions
    from medlink.align.candidates import SourceQueries, TargetIndex
    from medlink.align.training import gold_positions

    queries, index = SourceQueries.from_kb(source, target.normalize), TargetIndex.build(target)
    known = {f"DOID:{i}": {f"ICD:M{i}"} for i in range(organs)}
    return substitutions.learn(queries, index, gold_positions(queries, index, known), target.normalize, **options)


def test_a_substitution_needs_enough_known_mappings_voting_for_it(kbs):
    source, target = kbs
    assert _learned(source, target, 3) == {"cancer": "malignant neoplasm"}  # three organs' mappings agree
    assert _learned(source, target, 2) == {}  # two are not enough (MIN_COUNT)
    assert _learned(source, target, 2, min_count=2) == {"cancer": "malignant neoplasm"}
    # "tumor" -> "malignant neoplasm" is seen once (the bladder's synonym): below the count, whatever the share
    assert "tumor" not in _learned(source, target, 5, min_count=2)


def test_expanded_queries_find_the_target_the_words_alone_miss(kbs):
    from medlink.align import substitutions
    from medlink.align.candidates import SourceQueries, TargetIndex, generate

    source, target = kbs
    queries, index = SourceQueries.from_kb(source, target.normalize), TargetIndex.build(target)
    expanded = substitutions.expand(queries, {"cancer": "malignant neoplasm", "tumor": "neoplasm"})
    kidney = queries.concept_ids.index("DOID:4")
    assert [a for a, o in zip(expanded.aliases, expanded.owner) if o == kidney] == ["kidney cancer", "kidney malignant neoplasm"]
    bladder = queries.concept_ids.index("DOID:0")
    assert [a for a, o in zip(expanded.aliases, expanded.owner) if o == bladder] == [
        "bladder cancer", "bladder tumor", "bladder malignant neoplasm", "bladder neoplasm"]
    assert expanded.alias_sets == queries.alias_sets and list(expanded.owner) == sorted(expanded.owner)
    assert substitutions.expand(queries, {}) is queries

    def first(q) -> str:
        candidates = generate(index, q, k=4, ancestors=0)
        return index.concept_ids[int(candidates.hits.concepts[candidates.hits.row(kidney)][0])]

    assert first(expanded) == "ICD:M4"
    assert first(queries) != "ICD:M4"  # "kidney cancer" alone ties the three kidney names on "kidney"


def test_train_aligner_stores_the_substitutions_and_align_reads_with_them(kbs, tmp_path):
    from medlink.align import sssom
    from medlink.align.scoring import Calibration
    from medlink.cli import command

    (tmp_path / "gold.tsv").write_text("".join(f"DOID:{i}\tICD:M{i}\n" for i in range(3)))
    (tmp_path / "dev.tsv").write_text("DOID:3\tICD:M3\n")
    args = ["train", "aligner", "--source", str(tmp_path / "s.sqlite"), "--target", str(tmp_path / "t.sqlite"), "--gold",
            str(tmp_path / "gold.tsv"), "--dev", str(tmp_path / "dev.tsv"), "--no-cross-encoder"]
    trained = CliRunner().invoke(command(), [*args, "--out", str(tmp_path / "a")])
    assert trained.exit_code == 0, trained.output + repr(trained.exception)
    assert "1 substitution(s) learned from the known mappings: cancer -> malignant neoplasm" in trained.output
    assert Calibration.load(tmp_path / "a").substitutions == {"cancer": "malignant neoplasm"}
    aligned = CliRunner().invoke(command(), ["align", "--source", str(tmp_path / "s.sqlite"), "--target", str(tmp_path / "t.sqlite"),
                                             "--out", str(tmp_path / "m.sssom.tsv"), "--aligner", str(tmp_path / "a"), "--threshold", "0", "-q"])
    assert aligned.exit_code == 0, aligned.output + repr(aligned.exception)
    tops = {m.subject_id: m.object_id for m in sssom.read_sssom(tmp_path / "m.sssom.tsv") if m.predicate_id == sssom.EXACT}
    assert tops["DOID:4"] == "ICD:M4"  # never a known mapping: found through the learned words
    plain = CliRunner().invoke(command(), [*args, "--out", str(tmp_path / "b"), "--no-substitutions"])
    assert plain.exit_code == 0 and "substitution" not in plain.output
    (tmp_path / "two.tsv").write_text("".join(f"DOID:{i}\tICD:M{i}\n" for i in range(2)))  # two votes: below the count
    none = CliRunner().invoke(command(), [*args[:7], str(tmp_path / "two.tsv"), *args[8:], "--out", str(tmp_path / "c")])
    assert none.exit_code == 0 and "no substitution learned" in none.output
    assert Calibration.load(tmp_path / "b").substitutions == {}


def test_hand_edited_substitutions_are_read_through_the_target_normaliser(kbs, caplog):
    import logging

    from medlink.align.candidates import SourceQueries
    from medlink.align.scoring import Calibration
    from medlink.align.substitutions import normalized

    source, target = kbs
    queries = SourceQueries.from_kb(source, target.normalize)
    with caplog.at_level(logging.WARNING, logger="medlink"):
        edited = Calibration({"tfidf": 1.0}, substitutions={"Cancer": "MALIGNANT  Neoplasm", "kid-ney": "renal"}).queries(queries, target.normalize)
    kidney = queries.concept_ids.index("DOID:4")
    assert [a for a, o in zip(edited.aliases, edited.owner) if o == kidney] == ["kidney cancer", "kidney malignant neoplasm"]
    # "kid-ney" normalises to two words, which no single word of a name can match: dropped, and the user told which
    assert normalized({"kid-ney": "renal", "?": "x"}, target.normalize) == {} and "'kid-ney'" in caplog.text


def test_a_twin_does_not_repeat_words_its_alias_already_has():
    import numpy as np

    from medlink.align.candidates import SourceQueries
    from medlink.align.substitutions import expand

    queries = SourceQueries(["C1"], ["malignant cancer"], ["malignant cancer"], np.zeros(1, np.int64), [["malignant cancer"]])
    assert expand(queries, {"cancer": "malignant neoplasm"}).aliases == ["malignant cancer", "malignant neoplasm"]


def test_an_aligner_file_with_damaged_substitutions_is_refused(kbs, tmp_path):
    from medlink.align.scoring import ALIGNER_FILE, Calibration
    from medlink.errors import MedlinkError

    Calibration({"tfidf": 1.0}, substitutions={"cancer": "malignant neoplasm"}).save(tmp_path)
    assert Calibration.load(tmp_path).substitutions == {"cancer": "malignant neoplasm"}
    for bad in ({"two words": "x"}, {"a\tb": "x"}, {"cancer": ""}, {"cancer": " ".join(["malignant"] * 9)}, ["cancer"], {"cancer": 3}):
        data = json.loads((tmp_path / ALIGNER_FILE).read_text())
        data["substitutions"] = bad
        (tmp_path / ALIGNER_FILE).write_text(json.dumps(data))
        with pytest.raises(MedlinkError, match="substitutions"):
            Calibration.load(tmp_path)
    data["substitutions"] = 0
    nested = json.dumps(data).replace('"substitutions": 0', '"substitutions": ' + "[" * 100_000 + "]" * 100_000)
    (tmp_path / ALIGNER_FILE).write_text(nested)
    with pytest.raises(MedlinkError, match="recursion"):  # nested past the parser's depth: refused, not a traceback
        Calibration.load(tmp_path)


def test_one_known_mapping_without_dev_says_it_is_too_few(kbs, tmp_path):
    from medlink.cli import command

    (tmp_path / "gold.tsv").write_text("DOID:0\tICD:M0\n")
    result = CliRunner().invoke(command(), ["train", "aligner", "--source", str(tmp_path / "s.sqlite"), "--target", str(tmp_path / "t.sqlite"),
                                            "--gold", str(tmp_path / "gold.tsv"), "--no-cross-encoder", "--out", str(tmp_path / "a")])
    assert result.exit_code != 0 and "too few to train on and hold 20% out" in str(result.exception)


def test_a_twin_is_one_name_read_two_ways_not_a_second_synonym(kbs):
    """Pooling takes the better of an alias and its twin: a target both match only on the unchanged words ("Calculus of
    kidney" for "kidney cancer" / "kidney malignant neoplasm") scores as without the twin, with no agreement bonus."""
    import numpy as np

    from medlink.align import substitutions
    from medlink.align.candidates import SourceQueries, TargetIndex, generate

    source, target = kbs
    queries, index = SourceQueries.from_kb(source, target.normalize), TargetIndex.build(target)
    expanded = substitutions.expand(queries, {"cancer": "malignant neoplasm"})
    assert expanded.reads is not None and [expanded.aliases[r] for r in expanded.reads] == [
        a if "malignant" not in a else a.replace("malignant neoplasm", "cancer") for a in expanded.aliases]
    kidney = queries.concept_ids.index("DOID:4")
    part = expanded.subset([kidney])
    assert part.aliases == ["kidney cancer", "kidney malignant neoplasm"] and part.reads.tolist() == [0, 0]

    def bm25(q, concept: str) -> float:
        hits = generate(index, q, k=8, ancestors=0).per_stage["bm25"]
        row = hits.row(kidney)
        return float(dict(zip(hits.concepts[row].tolist(), hits.scores[row].tolist()))[index.concept_ids.index(concept)])

    assert np.isclose(bm25(expanded, "ICD:S4"), bm25(queries, "ICD:S4"))
    assert bm25(expanded, "ICD:M4") > bm25(queries, "ICD:M4")

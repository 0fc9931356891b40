"""medlink kb augment: a target's definitions, types / ancestors and synonyms carried into the source through
mappings, each with provenance, and undone exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from medlink.align.augment import augment_kb
from medlink.errors import InputFormatError, MedlinkError
from medlink.kb.build import build_kb
from medlink.kb.edits import unaugment
from medlink.kb.store import KB

FIXTURES = Path(__file__).parent / "fixtures" / "align"
HEADER = "# curie_map:\n#   DOID: http://purl.obolibrary.org/obo/DOID_\nsubject_id\tpredicate_id\tobject_id\tconfidence\n"


@pytest.fixture(scope="module")
def kbs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("augment")
    build_kb(folder / "source.sqlite", [f"obo:{FIXTURES / 'source.obo'}"], progress=False)
    build_kb(folder / "target.sqlite", [f"tsv=ICD10CM:{FIXTURES / 'target.tsv'}"], progress=False)
    return folder / "source.sqlite", folder / "target.sqlite"


def sssom_file(path: Path, rows: list[str]) -> Path:
    path.write_text(HEADER + "".join(row + "\n" for row in rows))
    return path


def test_metadata_carried_with_provenance_and_undone(kbs, tmp_path):
    source, target = kbs
    mappings = sssom_file(tmp_path / "m.sssom.tsv", ["DOID:8893\tskos:exactMatch\tICD10CM:L40\t0.95",
                                                     "DOID:10763\tskos:exactMatch\tICD10CM:I10\t0.90",
                                                     "DOID:2841\tskos:exactMatch\tICD10CM:J45.909\t0.30",
                                                     "DOID:9999999\tskos:exactMatch\tsssom:NoTermFound\t"])
    out = tmp_path / "augmented.sqlite"
    report = augment_kb(source, mappings, target, out, min_confidence=0.5, progress=False)
    assert (report.mappings_used, report.mappings_below_confidence, report.no_term_rows) == (2, 1, 1)
    with KB.open(out) as kb, KB.open(source) as original:
        psoriasis = kb.concept("DOID:8893")
        assert psoriasis.definition == "A chronic inflammatory disease of the skin with scaly plaques."
        assert "category" in psoriasis.types
        hypertension = kb.concept("DOID:10763")
        assert "Essential (primary) hypertension" in [text for text, _ in hypertension.synonyms]
        assert kb.concept("DOID:2841").types == original.concept("DOID:2841").types  # below --min-confidence: nothing carried
        assert kb.checksum != original.checksum
        provenance = kb._db.execute("SELECT concept_id, field, value, object_id, confidence FROM augmentations").fetchall()
        assert ("DOID:8893", "definition", psoriasis.definition, "ICD10CM:L40", 0.95) in provenance
        assert {row[0] for row in provenance} == {"DOID:8893", "DOID:10763"}
        source_checksum = original.checksum
    undone = tmp_path / "undone.sqlite"
    unaugment(out, undone)
    with KB.open(undone) as kb:
        assert kb.concept("DOID:8893").definition is None
        assert "Essential (primary) hypertension" not in [text for text, _ in kb.concept("DOID:10763").synonyms]
        from medlink.kb.writer import content_checksum  # noqa: F401  (the recorded one is the source's)
        assert kb.checksum == source_checksum


def test_ancestors_become_types(kbs, tmp_path):
    source, target = kbs
    mappings = sssom_file(tmp_path / "m.sssom.tsv", ["DOID:2841\tskos:exactMatch\tICD10CM:J45.909\t0.9"])
    augment_kb(source, mappings, target, tmp_path / "a.sqlite", carry=["ancestors"], progress=False)
    with KB.open(tmp_path / "a.sqlite") as kb:
        assert "Asthma" in kb.concept("DOID:2841").types


def test_bad_mappings_and_outputs(kbs, tmp_path):
    source, target = kbs
    unknown = sssom_file(tmp_path / "u.sssom.tsv", ["DOID:8893\tskos:exactMatch\tICD10CM:L40\t0.9", "DOID:8893\tskos:exactMatch\tICD10CM:Z99\t0.9"])
    with pytest.raises(InputFormatError, match=r"u.sssom.tsv:5: object_id 'ICD10CM:Z99' is not in"):
        augment_kb(source, unknown, target, tmp_path / "x.sqlite", progress=False)
    assert not (tmp_path / "x.sqlite").exists()
    malformed = tmp_path / "bad.sssom.tsv"
    malformed.write_text("subject\tobject\nDOID:8893\tICD10CM:L40\n")
    with pytest.raises(InputFormatError, match="lacks subject_id"):
        augment_kb(source, malformed, target, tmp_path / "x.sqlite", progress=False)
    good = sssom_file(tmp_path / "g.sssom.tsv", ["DOID:8893\tskos:exactMatch\tICD10CM:L40\t0.9"])
    with pytest.raises(MedlinkError, match="one of the sources"):
        augment_kb(source, good, target, source, progress=False)
    with pytest.raises(MedlinkError, match="--carry"):
        augment_kb(source, good, target, tmp_path / "x.sqlite", carry=["colours"], progress=False)


def test_synonyms_of_a_shared_target_are_not_carried(kbs, tmp_path):
    """Two source concepts mapped to one target: its names would make them tie, so only its other facts come across."""
    source, target = kbs
    mappings = sssom_file(tmp_path / "m.sssom.tsv", ["DOID:9351\tskos:exactMatch\tICD10CM:I10\t0.9", "DOID:10763\tskos:exactMatch\tICD10CM:I10\t0.9"])
    augment_kb(source, mappings, target, tmp_path / "a.sqlite", carry=["synonyms", "types"], progress=False)
    augment_kb(source, mappings, target, tmp_path / "b.sqlite", carry=["synonyms", "types"], progress=False, shared_synonyms=True)
    with KB.open(tmp_path / "a.sqlite") as kb, KB.open(tmp_path / "b.sqlite") as shared:
        assert "Essential (primary) hypertension" not in [t for t, _ in kb.concept("DOID:9351").synonyms]
        assert "category" in kb.concept("DOID:9351").types
        assert "Essential (primary) hypertension" in [t for t, _ in shared.concept("DOID:9351").synonyms]


def test_a_close_match_carries_types_but_no_synonym_or_definition(kbs, tmp_path):
    source, target = kbs
    exact = sssom_file(tmp_path / "e.sssom.tsv", ["DOID:10763\tskos:exactMatch\tICD10CM:I10\t0.9"])
    close = sssom_file(tmp_path / "c.sssom.tsv", ["DOID:10763\tskos:closeMatch\tICD10CM:I10\t0.9"])
    augment_kb(source, exact, target, tmp_path / "e.sqlite", progress=False)
    augment_kb(source, close, target, tmp_path / "c.sqlite", progress=False)
    with KB.open(tmp_path / "e.sqlite") as by_exact, KB.open(tmp_path / "c.sqlite") as by_close:
        assert "Essential (primary) hypertension" in [t for t, _ in by_exact.concept("DOID:10763").synonyms]
        assert "Essential (primary) hypertension" not in [t for t, _ in by_close.concept("DOID:10763").synonyms]
        assert "category" in by_close.concept("DOID:10763").types  # what kind of thing it is does carry over


def test_negated_and_narrower_rows_carry_nothing(kbs, tmp_path):
    source, target = kbs
    rows = ["DOID:2841\tskos:exactMatch\tICD10CM:I10\t0.9", "DOID:8893\tskos:narrowMatch\tICD10CM:I10\t0.9",
            "DOID:10763\tskos:broadMatch\tICD10CM:I10\t0.9"]
    path = tmp_path / "n.sssom.tsv"
    path.write_text(HEADER.replace("confidence\n", "confidence\tpredicate_modifier\n") + rows[0] + "\tNot\n" + rows[1] + "\t\n" + rows[2] + "\t\n")
    report = augment_kb(source, path, target, tmp_path / "n.sqlite", progress=False)
    assert (report.negated_rows, report.carrying_nothing, report.mappings_used) == (1, 1, 1)
    with KB.open(tmp_path / "n.sqlite") as kb:
        assert "category" not in kb.concept("DOID:2841").types and "category" not in kb.concept("DOID:8893").types
        assert "category" in kb.concept("DOID:10763").types  # a broader match says what kind of thing it is


def test_undoing_two_rounds_gives_back_the_original_checksum(kbs, tmp_path):
    """The second round's 'augmented_from' was the first round's KB: undo once wrote its checksum over the original
    content, and an index built for that middle KB would have been taken for the result."""
    source, target = kbs
    mappings = sssom_file(tmp_path / "m.sssom.tsv", ["DOID:8893\tskos:exactMatch\tICD10CM:L40\t0.95",
                                                     "DOID:10763\tskos:exactMatch\tICD10CM:I10\t0.90"])
    first, second = tmp_path / "r1.sqlite", tmp_path / "r2.sqlite"
    augment_kb(source, mappings, target, first, carry=["types"], progress=False)
    augment_kb(first, mappings, target, second, carry=["synonyms"], progress=False)
    with KB.open(source) as original, KB.open(first) as middle, KB.open(second) as kb:
        checksums = original.checksum, middle.checksum
        assert kb.meta["augmented_from"] == f"{source} (checksum {original.checksum})"  # the KB before the first round
        assert kb.meta["augmented_with"].count(f"{mappings} with {target}") == 2
    for augmented, rounds in ((second, 2), (first, 1)):
        undone = tmp_path / f"undone-{rounds}.sqlite"
        report = unaugment(augmented, undone)
        assert (report.rounds, report.checksum, report.matches_original) == (rounds, checksums[0], True)
        with KB.open(undone) as kb, KB.open(source) as original:
            assert kb.checksum == checksums[0] != checksums[1]
            assert kb.concept("DOID:8893").types == original.concept("DOID:8893").types
            assert kb.concept("DOID:10763").synonyms == original.concept("DOID:10763").synonyms
            assert "augmented_from" not in kb.meta and "augmented_with" not in kb.meta
    with pytest.raises(MedlinkError, match="not an augmented KB"):
        unaugment(source, tmp_path / "nothing.sqlite")


def test_provenance_of_each_carried_fact(kbs, tmp_path):
    source, target = kbs
    mappings = sssom_file(tmp_path / "m.sssom.tsv", ["DOID:10763\tskos:exactMatch\tICD10CM:I10\t0.90"])
    augment_kb(source, mappings, target, tmp_path / "a.sqlite", carry=["synonyms", "types"], progress=False)
    with KB.open(tmp_path / "a.sqlite") as kb, KB.open(source) as original:
        facts = kb.augmentations("DOID:10763")
        assert {(f["field"], f["value"]) for f in facts} >= {("synonym", "Essential (primary) hypertension"), ("type", "category")}
        assert {(f["object_id"], f["predicate_id"], f["confidence"], f["mapping_file"], f["line"]) for f in facts} == \
            {("ICD10CM:I10", "skos:exactMatch", 0.9, str(mappings), 4)}
        assert kb.augmentations("DOID:8893") == [] and original.augmentations("DOID:10763") == []
        summary = kb.augmentation_summary()
        assert summary["concepts"] == 1 and summary["facts"]["synonym"] >= 1 and len(summary["rounds"]) == 1
        assert original.augmentation_summary() is None


def test_augment_errors_name_its_own_arguments(kbs, tmp_path):
    source, target = kbs
    good = sssom_file(tmp_path / "g.sssom.tsv", ["DOID:8893\tskos:exactMatch\tICD10CM:L40\t0.9"])
    with pytest.raises(MedlinkError, match=r"^KB .*nope.sqlite: no such KB file"):
        augment_kb(tmp_path / "nope.sqlite", good, target, tmp_path / "x.sqlite", progress=False)
    with pytest.raises(MedlinkError, match=r"^--with .*nope.sqlite: no such KB file"):
        augment_kb(source, good, tmp_path / "nope.sqlite", tmp_path / "x.sqlite", progress=False)
    with pytest.raises(MedlinkError, match="KB and --with are the same file .*augmenting a KB from itself") as same:
        augment_kb(source, good, source, tmp_path / "x.sqlite", progress=False)
    assert "--source" not in str(same.value) and "align" not in str(same.value)


def test_a_mappings_file_not_in_utf8_is_an_error_naming_it(kbs, tmp_path):
    source, target = kbs
    latin = tmp_path / "m.tsv"
    latin.write_bytes(b"latin\xe9\tx\n")
    with pytest.raises(InputFormatError, match=r"m.tsv:1: not UTF-8 \(byte 0xe9 at byte offset 5\)"):
        augment_kb(source, latin, target, tmp_path / "x.sqlite", progress=False)
    assert not (tmp_path / "x.sqlite").exists()


def test_an_sssom_file_from_before_entity_references_still_augments(kbs, tmp_path):
    """Files medlink wrote earlier name each side by its file (subject_source 'source.sqlite'): still read."""
    source, target = kbs
    path = tmp_path / "old.sssom.tsv"
    path.write_text(HEADER.replace("confidence\n", "confidence\tsubject_source\tobject_source\n")
                    + "DOID:8893\tskos:exactMatch\tICD10CM:L40\t0.9\tsource.sqlite\ttarget.sqlite\n")
    assert augment_kb(source, path, target, tmp_path / "a.sqlite", progress=False).mappings_used == 1

"""The SNOMED CT RF2 reader on a small Snapshot fixture (tests/fixtures/snomed/Snapshot, CRLF, official headers)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from medlink.errors import InputFormatError, MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.snomed import GB_ENGLISH_REFSET, read_snomed
from medlink.kb.records import ConceptRecord, IdAliasRecord, NameRecord, RelationRecord, TypeRecord

SNOMED = Path(__file__).parent / "fixtures" / "snomed"
SNAPSHOT = SNOMED / "Snapshot"
TERMINOLOGY = SNAPSHOT / "Terminology"
DESCRIPTIONS_EN = "sct2_Description_Snapshot-en_INT_20240101.txt"

ACTIVE = {
    "138875005", "404684003", "64572001", "56265001", "414545008", "22298006", "73211009", "44054006",
    "123037004", "80891009", "55641003", "116680003", "363698007", "246456000", "255217005",
}
INACTIVE = "155305000"


def read(path: Path = SNOMED, *, policy: InvalidLinePolicy | None = None, prefix: str = "SCTID", **options):
    return list(read_snomed(path, prefix=prefix, policy=policy or InvalidLinePolicy(), **options))


def of(records, cls):
    return [r for r in records if isinstance(r, cls)]


def s(sctid: str) -> str:
    return f"SCTID:{sctid}"


def names_of(records, sctid: str) -> list[NameRecord]:
    return [r for r in of(records, NameRecord) if r.concept_id == s(sctid)]


def concept_names(records) -> dict[str, str]:
    """Concept id -> the name the reader gives it (the first ConceptRecord carrying a name)."""
    named: dict[str, str] = {}
    for r in of(records, ConceptRecord):
        if r.name is not None:
            named.setdefault(r.id, r.name)
    return named


def relation_triples(records) -> set[tuple[str, str, str]]:
    return {(r.head, r.relation, r.tail) for r in of(records, RelationRecord)}


def copy_snapshot(tmp_path: Path) -> Path:
    target = tmp_path / "Snapshot"
    shutil.copytree(SNAPSHOT, target)
    return target


def replace_line(path: Path, lineno: int, new: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[lineno - 1] = new
    path.write_text("".join(lines), encoding="utf-8", newline="")


# -- concepts, names, types ------------------------------------------------------------------


def test_default_counts():
    records = read()
    concepts = [r for r in of(records, ConceptRecord) if r.source == "SNOMEDCT" and r.name is None]
    assert {r.id for r in concepts} == {s(c) for c in ACTIVE}
    assert len(concepts) == 15
    assert len(of(records, NameRecord)) == 56
    assert len(of(records, TypeRecord)) == 15  # one semantic tag per active concept (English FSN)
    assert len(of(records, RelationRecord)) == 13
    assert len([r for r in of(records, ConceptRecord) if r.definition]) == 2
    assert of(records, IdAliasRecord) == [IdAliasRecord(s(INACTIVE), s("22298006"), "replaced_by")]


def test_accepts_snapshot_dir_or_its_parent():
    assert read(SNAPSHOT) == read(SNOMED)


def test_fsn_gives_semantic_tag_and_two_names():
    records = read()
    assert TypeRecord(s("22298006"), "disorder") in records
    assert TypeRecord(s("80891009"), "body structure") in records
    assert TypeRecord(s("55641003"), "morphologic abnormality") in records
    assert TypeRecord(s("138875005"), "SNOMED RT+CTV3") in records
    mi = names_of(records, "22298006")
    assert NameRecord(s("22298006"), "Myocardial infarction (disorder)", "synonym", "FSN", "en", "SNOMEDCT") in mi
    assert NameRecord(s("22298006"), "Myocardial infarction", "synonym", "FSN-untagged", "en", "SNOMEDCT") in mi


def test_us_english_preferred_terms():
    records = read()
    names = concept_names(records)
    assert names[s("22298006")] == "Myocardial infarction"
    assert names[s("44054006")] == "Type 2 diabetes mellitus"  # not the FSN's "Diabetes mellitus type 2"
    assert names[s("414545008")] == "Ischemic heart disease"
    assert names[s("138875005")] == "SNOMED CT Concept"
    preferred = [n for n in of(records, NameRecord) if n.kind == "preferred"]
    assert len(preferred) == len({n.concept_id for n in preferred}) == 9  # concepts with a US refset PT
    assert NameRecord(s("44054006"), "Type 2 diabetes mellitus", "preferred", "PT", "en", "SNOMEDCT") in preferred
    mi = {n.text: (n.kind, n.scope) for n in names_of(records, "22298006") if n.lang == "en"}
    assert mi == {
        "Myocardial infarction (disorder)": ("synonym", "FSN"),
        "Myocardial infarction": ("preferred", "PT"),  # also emitted as "FSN-untagged" synonym
        "Heart attack": ("synonym", "SY"),
        "Cardiac infarction": ("synonym", "SY"),  # its "preferred" refset row is inactive
        "MI - myocardial infarction": ("synonym", "SY"),
    }


def test_gb_english_refset():
    names = concept_names(read(language_refset=GB_ENGLISH_REFSET))
    assert names[s("414545008")] == "Ischaemic heart disease"
    assert names[s("22298006")] == "Myocardial infarction"


def test_without_language_refset_the_untagged_fsn_is_preferred(tmp_path):
    snapshot = copy_snapshot(tmp_path)
    shutil.rmtree(snapshot / "Refset" / "Language")
    records = read(tmp_path)
    assert records == read(language_refset=None)
    names = concept_names(records)
    assert names[s("44054006")] == "Diabetes mellitus type 2"
    assert names[s("123037004")] == "Body structure"
    assert len(names) == 15
    preferred = [n for n in of(records, NameRecord) if n.kind == "preferred"]
    assert {n.scope for n in preferred} == {"FSN-untagged"}
    assert len(preferred) == 15
    assert not [n for n in of(records, NameRecord) if n.scope == "PT"]


def test_other_languages():
    records = read()
    spanish = [n for n in of(records, NameRecord) if n.lang == "es"]
    assert {n.text for n in spanish} == {"infarto de miocardio (trastorno)", "infarto de miocardio", "ataque cardíaco"}
    assert {n.kind for n in spanish} == {"synonym"}
    assert TypeRecord(s("22298006"), "trastorno") not in records  # tags come from English FSNs only
    english_only = read(languages=("en",))
    assert {n.lang for n in of(english_only, NameRecord)} == {"en"}
    assert len(of(english_only, NameRecord)) == 56 - 4


# -- inactive content ------------------------------------------------------------------------


def test_inactive_concepts_and_descriptions_are_dropped():
    records = read()
    texts = {n.text for n in of(records, NameRecord)}
    assert "Myocardial infarct" not in texts  # inactive description of an active concept
    assert "Cardiac infarction (disorder)" not in texts  # active description of an inactive concept
    ids = {r.id for r in of(records, ConceptRecord)} | {n.concept_id for n in of(records, NameRecord)}
    ids |= {t.concept_id for t in of(records, TypeRecord)}
    ids |= {r.head for r in of(records, RelationRecord)} | {r.tail for r in of(records, RelationRecord)}
    assert s(INACTIVE) not in ids
    # An inactive relationship: 22298006 used to be a direct child of 64572001.
    assert (s("22298006"), "is_a", s("64572001")) not in relation_triples(records)


def test_include_inactive():
    records = read(include_inactive=True)
    assert ConceptRecord(s(INACTIVE), None, "SNOMEDCT") in records
    # No language refset row: no name from the reader, and the first name (which the store then
    # uses) is the FSN without its tag.
    assert s(INACTIVE) not in concept_names(records)
    assert names_of(records, INACTIVE)[0].text == "Cardiac infarction"
    assert (s(INACTIVE), "is_a", s("414545008")) in relation_triples(records)
    assert "Myocardial infarct" not in {n.text for n in of(records, NameRecord)}  # still an inactive description
    assert not of(records, IdAliasRecord)  # the inactive id is a concept of its own


# -- relations, definitions, aliases ---------------------------------------------------------


def test_relationships():
    assert relation_triples(read()) == {
        (s("404684003"), "is_a", s("138875005")),
        (s("123037004"), "is_a", s("138875005")),
        (s("64572001"), "is_a", s("404684003")),
        (s("56265001"), "is_a", s("64572001")),
        (s("414545008"), "is_a", s("56265001")),
        (s("22298006"), "is_a", s("414545008")),  # source is_a destination: the destination is the parent
        (s("73211009"), "is_a", s("64572001")),
        (s("44054006"), "is_a", s("73211009")),
        (s("80891009"), "is_a", s("123037004")),
        (s("55641003"), "is_a", s("123037004")),
        (s("22298006"), "finding_site", s("80891009")),
        (s("22298006"), "associated_morphology", s("55641003")),
        (s("22298006"), "attr:246456000", s("255217005")),  # not in the built-in attribute names
    }
    assert not of(read(relations=False), RelationRecord)


def test_first_active_text_definition_per_concept():
    definitions = {r.id: r.definition for r in of(read(), ConceptRecord) if r.definition}
    assert definitions == {
        s("22298006"): "Necrosis of the myocardium caused by an interruption of its blood supply.",
        s("73211009"): "A metabolic disorder characterized by chronic hyperglycemia due to deficient insulin "
        "secretion or action.",
    }


def test_empty_prefix():
    records = read(prefix="")
    assert ("22298006", "is_a", "414545008") in relation_triples(records)
    assert IdAliasRecord(INACTIVE, "22298006", "replaced_by") in records
    assert ConceptRecord("22298006", "Myocardial infarction", "SNOMEDCT") in records


def test_lf_line_endings(tmp_path):
    snapshot = copy_snapshot(tmp_path)
    for path in snapshot.rglob("*.txt"):
        path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n"))
    assert read(tmp_path) == read()


# -- errors ----------------------------------------------------------------------------------


def test_wrong_header_fails_even_when_skipping(tmp_path):
    snapshot = copy_snapshot(tmp_path)
    path = snapshot / "Terminology" / DESCRIPTIONS_EN
    replace_line(path, 1, "id\teffectiveTime\tactive\tmoduleId\tconceptId\ttypeId\tlanguageCode\tterm\tcaseSignificanceId\r\n")
    for policy in (InvalidLinePolicy(), InvalidLinePolicy(skip_invalid=True)):
        with pytest.raises(InputFormatError) as caught:
            read(tmp_path, policy=policy)
        assert (caught.value.path, caught.value.line) == (str(path), 1)
        assert caught.value.message.startswith(
            "expected the RF2 header 'id\\teffectiveTime\\tactive\\tmoduleId\\tconceptId\\tlanguageCode\\ttypeId"
        )


def test_header_of_a_wrong_file_kind(tmp_path):
    snapshot = copy_snapshot(tmp_path)
    concept = snapshot / "Terminology" / "sct2_Concept_Snapshot_INT_20240101.txt"
    shutil.copy(snapshot / "Terminology" / DESCRIPTIONS_EN, concept)
    with pytest.raises(InputFormatError, match="definitionStatusId"):
        read(tmp_path)


def test_malformed_line_raises_with_file_and_line(tmp_path):
    snapshot = copy_snapshot(tmp_path)
    path = snapshot / "Terminology" / DESCRIPTIONS_EN
    replace_line(path, 15, "37436014\t20020131\t1\t900000000000207008\t22298006\ten\tMyocardial infarction\r\n")
    with pytest.raises(InputFormatError) as caught:
        read(tmp_path)
    assert (caught.value.path, caught.value.line) == (str(path), 15)
    assert caught.value.message == "expected 9 tab-separated fields (description), got 7"


def test_skip_invalid_counts_the_line(tmp_path):
    snapshot = copy_snapshot(tmp_path)
    path = snapshot / "Terminology" / DESCRIPTIONS_EN
    replace_line(path, 15, "37436014\t20020131\t1\t900000000000207008\t22298006\ten\tMyocardial infarction\r\n")
    relationships = snapshot / "Terminology" / "sct2_Relationship_Snapshot_INT_20240101.txt"
    replace_line(relationships, 2, "100000028\t20020131\t1\t900000000000207008\tnot-an-id\t138875005\t0\t116680003\t900000000000011006\t900000000000451002\r\n")
    policy = InvalidLinePolicy(skip_invalid=True)
    records = read(tmp_path, policy=policy)
    assert policy.skipped == {str(path): 1, str(relationships): 1}
    assert len(of(records, NameRecord)) == 55
    # The preferred term of 22298006 (line 15) is gone; the FSN still gives its names.
    assert s("22298006") not in concept_names(records)
    assert len(of(records, RelationRecord)) == 12


def test_missing_directory(tmp_path):
    with pytest.raises(MissingInputError, match="no-such-snomed"):
        read_snomed(tmp_path / "no-such-snomed", prefix="SCTID", policy=InvalidLinePolicy())  # at call time


def test_directory_without_terminology(tmp_path):
    with pytest.raises(MissingInputError, match="Terminology"):
        read(tmp_path)


def test_missing_required_file(tmp_path):
    snapshot = copy_snapshot(tmp_path)
    (snapshot / "Terminology" / "sct2_Concept_Snapshot_INT_20240101.txt").unlink()
    with pytest.raises(MissingInputError, match="sct2_Concept_"):
        read(tmp_path)


def test_optional_files_may_be_absent(tmp_path):
    snapshot = copy_snapshot(tmp_path)
    shutil.rmtree(snapshot / "Refset")
    (snapshot / "Terminology" / "sct2_TextDefinition_Snapshot-en_INT_20240101.txt").unlink()
    records = read(tmp_path)
    assert not of(records, IdAliasRecord)
    assert not [r for r in of(records, ConceptRecord) if r.definition]
    assert len(of(records, NameRecord)) == 56

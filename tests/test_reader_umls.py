"""The UMLS RRF reader on a small META fixture (tests/fixtures/umls/META, official column layout)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from medlink.errors import InputFormatError, MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.umls import read_umls
from medlink.kb.records import (
    ConceptRecord,
    IdAliasRecord,
    NameRecord,
    RelationRecord,
    TypeRecord,
    XrefRecord,
)

UMLS = Path(__file__).parent / "fixtures" / "umls"
META = UMLS / "META"

ENGLISH_CUIS = {"C0011849", "C0011860", "C0012634", "C0018787", "C0018799", "C0027051"}


def read(path: Path = UMLS, *, policy: InvalidLinePolicy | None = None, prefix: str = "UMLS", **options):
    return list(read_umls(path, prefix=prefix, policy=policy or InvalidLinePolicy(), **options))


def of(records, cls):
    return [r for r in records if isinstance(r, cls)]


def u(cui: str) -> str:
    return f"UMLS:{cui}"


def names_of(records, cui: str) -> list[NameRecord]:
    return [r for r in of(records, NameRecord) if r.concept_id == u(cui)]


def concept_names(records) -> dict[str, str | None]:
    """Concept id -> name from the ConceptRecords that carry the source (one per kept CUI)."""
    return {r.id: r.name for r in of(records, ConceptRecord) if r.source == "UMLS"}


def relation_triples(records) -> set[tuple[str, str, str]]:
    return {(r.head, r.relation, r.tail) for r in of(records, RelationRecord)}


def copy_meta(tmp_path: Path) -> Path:
    meta = tmp_path / "META"
    shutil.copytree(META, meta)
    return meta


def replace_line(path: Path, lineno: int, new: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[lineno - 1] = new
    path.write_text("".join(lines), encoding="utf-8")


# -- defaults --------------------------------------------------------------------------------


def test_default_counts():
    records = read()
    assert concept_names(records).keys() == {u(c) for c in ENGLISH_CUIS}
    assert len(of(records, ConceptRecord)) == 6 + 3  # one per kept CUI + three definitions
    assert len(of(records, NameRecord)) == 26
    assert len(of(records, XrefRecord)) == 15
    assert len(of(records, TypeRecord)) == 6
    assert len(of(records, RelationRecord)) == 7
    assert of(records, IdAliasRecord) == [IdAliasRecord(u("C0027052"), u("C0027051"), "replaced_by")]


def test_accepts_meta_dir_or_its_parent():
    assert read(META) == read(UMLS)


def test_preferred_atom_names_the_concept():
    records = read()
    assert concept_names(records) == {
        u("C0011849"): "Diabetes Mellitus",
        u("C0011860"): "Diabetes Mellitus, Type 2",
        u("C0012634"): "Disease",
        u("C0018787"): "Heart",
        u("C0018799"): "Heart Diseases",
        u("C0027051"): "Myocardial Infarction",
    }
    preferred = [n for n in of(records, NameRecord) if n.kind == "preferred"]
    assert sorted(n.concept_id for n in preferred) == sorted(u(c) for c in ENGLISH_CUIS)
    mi = names_of(records, "C0027051")
    assert mi[0] == NameRecord(u("C0027051"), "Myocardial Infarction", "preferred", "MSH/MH", "en", "MSH")
    # P/VC/N (case variant of the preferred term) is a synonym.
    assert NameRecord(u("C0027051"), "Myocardial infarction", "synonym", "SNOMEDCT_US/PT", "en", "SNOMEDCT_US") in mi


def test_name_kinds_scopes_and_sources():
    mi = {n.text: n for n in names_of(read(), "C0027051")}
    assert set(mi) == {
        "Myocardial Infarction",
        "Myocardial infarction",
        "Infarction, Myocardial",
        "Heart attack",
        "Myocardial infarction (disorder)",
        "MI",
        "Myocardial infarct",
    }
    assert (mi["MI"].kind, mi["MI"].scope, mi["MI"].source) == ("abbreviation", "NCI/AB", "NCI")
    assert (mi["Heart attack"].kind, mi["Heart attack"].scope) == ("synonym", "SNOMEDCT_US/SY")
    assert mi["Myocardial infarct"].scope == "MTH/SY"
    assert {n.lang for n in mi.values()} == {"en"}
    dm = {n.text: n.kind for n in names_of(read(), "C0011849")}
    assert dm["DM"] == "abbreviation"


def test_xrefs_are_distinct_source_codes_without_nocode():
    records = read()
    xrefs = [x.xref for x in of(records, XrefRecord) if x.concept_id == u("C0027051")]
    assert xrefs == ["MSH:D009203", "SNOMEDCT_US:22298006", "NCI:C27996"]
    dm = [x.xref for x in of(records, XrefRecord) if x.concept_id == u("C0011849")]
    assert dm == ["MSH:D003920", "SNOMEDCT_US:73211009", "NCI:C2985"]  # MSH/ET repeats D003920
    assert not [x for x in of(records, XrefRecord) if "NOCODE" in x.xref]


def test_semantic_types():
    types = {(t.concept_id, t.type) for t in of(read(), TypeRecord)}
    assert (u("C0027051"), "Disease or Syndrome") in types
    assert (u("C0018787"), "Body Part, Organ, or Organ Component") in types
    # C0155668 (only an obsolete atom) and C3887460 (only Spanish) have no kept name: no type.
    assert {c for c, _ in types} == {u(c) for c in ENGLISH_CUIS}


def test_definitions_first_per_cui_from_kept_sources():
    definitions = {r.id: r.definition for r in of(read(), ConceptRecord) if r.definition}
    assert definitions == {
        # The Portuguese MSHPOR definition comes first but MSHPOR has no kept (English) atom.
        u("C0011849"): "A heterogeneous group of disorders characterized by HYPERGLYCEMIA and GLUCOSE INTOLERANCE.",
        # The MSH definition is suppressed (O): the NCI one is used.
        u("C0012634"): "Any abnormal condition of the body or mind that causes discomfort, dysfunction, "
        "or distress to the person affected or those in contact with the person.",
        u("C0027051"): "NECROSIS of the MYOCARDIUM caused by an obstruction of the blood supply to the heart "
        "(CORONARY CIRCULATION).",
    }


# -- relations -------------------------------------------------------------------------------


def test_par_becomes_is_a_from_child_to_parent():
    triples = relation_triples(read())
    # MRREL "C0027051 PAR C0018799": C0018799 (Heart Diseases) is a parent of C0027051 (MI).
    assert (u("C0027051"), "is_a", u("C0018799")) in triples
    assert (u("C0018799"), "is_a", u("C0027051")) not in triples
    assert (u("C0011860"), "is_a", u("C0011849")) in triples
    # CHD rows (inverse of PAR) add nothing reversed.
    assert (u("C0011849"), "is_a", u("C0011860")) not in triples


def test_relations_exactly():
    records = read()
    assert relation_triples(records) == {
        (u("C0011849"), "is_a", u("C0012634")),
        (u("C0011860"), "is_a", u("C0011849")),  # SNOMEDCT_US and MSH rows: emitted once
        (u("C0011860"), "broader", u("C0011849")),  # RB: C0011849 is broader
        (u("C0018799"), "is_a", u("C0012634")),
        (u("C0027051"), "is_a", u("C0018799")),
        # "C0018787 RO C0027051 has_finding_site" reads "C0027051 has_finding_site C0018787";
        # its inverse row (finding_site_of, DIR=N) is dropped.
        (u("C0027051"), "has_finding_site", u("C0018787")),
        (u("C0018799"), "rq", u("C0027051")),  # no RELA: REL lowercased
    }
    assert len(of(records, RelationRecord)) == 7  # no duplicates
    sources = {(r.head, r.relation, r.tail): r.source for r in of(records, RelationRecord)}
    assert sources[(u("C0011860"), "is_a", u("C0011849"))] == "SNOMEDCT_US"  # the first row's SAB


def test_relations_can_be_turned_off():
    assert not of(read(relations=False), RelationRecord)


# -- filters ---------------------------------------------------------------------------------


def test_language_filter():
    spanish = read(languages=("SPA",))
    assert concept_names(spanish) == {
        u("C0011849"): "Diabetes Mellitus",
        u("C0027051"): "Infarto del Miocardio",
        u("C3887460"): "Infarto cardíaco silente",
    }
    assert {n.lang for n in of(spanish, NameRecord)} == {"es"}
    assert {n.source for n in of(spanish, NameRecord)} == {"MSHSPA", "MDRSPA"}

    both = read(languages=("ENG", "FRE"))
    heart = {n.text: n for n in names_of(both, "C0018787")}
    assert heart["Cœur"].lang == "fr" and heart["Cœur"].kind == "synonym"
    assert concept_names(both)[u("C0018787")] == "Heart"  # preferred from the first language

    everything = read(languages=None)
    assert {n.lang for n in of(everything, NameRecord)} == {"en", "es", "fr", "de"}


def test_sab_filter_and_preferred_fallback():
    records = read(sabs=("SNOMEDCT_US",))
    assert {n.source for n in of(records, NameRecord)} == {"SNOMEDCT_US"}
    assert len(of(records, NameRecord)) == 12
    names = concept_names(records)
    # The P/PF/Y atoms are MSH ones: the best remaining TS=P atom names the concept.
    assert names[u("C0012634")] == "Disease"  # P/PF/N
    assert names[u("C0011849")] == "Diabetes mellitus"  # P/VC/N
    assert names[u("C0027051")] == "Myocardial infarction"
    assert names[u("C0018787")] is None  # only TS=S atoms: the store picks the first name
    assert not [n for n in of(records, NameRecord) if n.kind == "preferred"]
    assert {x.xref.split(":")[0] for x in of(records, XrefRecord)} == {"SNOMEDCT_US"}
    assert {r.source for r in of(records, RelationRecord)} == {"SNOMEDCT_US"}
    assert len(of(records, RelationRecord)) == 5
    assert not [r for r in of(records, ConceptRecord) if r.definition]  # no SNOMEDCT_US definition kept


def test_tty_filter():
    records = read(ttys=("MH",))
    assert [(n.concept_id, n.kind) for n in of(records, NameRecord)] == [(u(c), "preferred") for c in sorted(ENGLISH_CUIS)]


def test_suppressed_atoms_dropped_by_default():
    texts = {n.text for n in of(read(), NameRecord)}
    assert "Cardiac infarction" not in texts  # O
    assert "Infarctions, Myocardial" not in texts  # Y
    assert "Diabetes Mellitus, Adult-Onset" not in texts  # E
    assert "Diabetes mellitus, NOS" not in texts  # O


def test_keep_suppressed():
    records = read(keep_suppressed=True)
    texts = {n.text for n in of(records, NameRecord)}
    assert {"Cardiac infarction", "Infarctions, Myocardial", "Diabetes Mellitus, Adult-Onset"} <= texts
    assert len(of(records, NameRecord)) == 31
    # C0155668 only had an obsolete atom: now it is a concept, with its type, definition and alias.
    assert concept_names(records)[u("C0155668")] == "Old myocardial infarction"
    assert (u("C0155668"), "Disease or Syndrome") in {(t.concept_id, t.type) for t in of(records, TypeRecord)}
    assert IdAliasRecord(u("C0155667"), u("C0155668"), "replaced_by") in of(records, IdAliasRecord)
    triples = relation_triples(records)
    assert (u("C0155668"), "associated_finding_of", u("C0012634")) in triples  # DIR empty: kept
    assert (u("C0027051"), "is_a", u("C0012634")) in triples  # the suppressed MSH PAR row


def test_only_named_concepts_off_keeps_orphan_records():
    records = read(only_named_concepts=False)
    assert len(of(records, TypeRecord)) == 8
    assert (u("C3887460"), "is_a", u("C0027051")) in relation_triples(records)


def test_empty_prefix_keeps_bare_cuis():
    records = read(prefix="")
    assert "C0027051" in {r.id for r in of(records, ConceptRecord)}
    assert ("C0027051", "is_a", "C0018799") in relation_triples(records)
    assert IdAliasRecord("C0027052", "C0027051", "replaced_by") in records


# -- files and errors ------------------------------------------------------------------------


def test_malformed_mrconso_line_raises_with_file_and_line(tmp_path):
    meta = copy_meta(tmp_path)
    mrconso = meta / "MRCONSO.RRF"
    replace_line(mrconso, 5, "C0011849|ENG|S|L0011852|PF|S0030473|Y|A0418884||M0006054|D003920|MSH|ET|D003920|Diabetes|0|N|\n")
    with pytest.raises(InputFormatError) as caught:
        read(tmp_path)
    assert caught.value.path == str(mrconso)
    assert caught.value.line == 5
    assert caught.value.message == "expected 18 '|'-separated fields (MRCONSO), got 17"
    assert f"{mrconso}:5:" in str(caught.value)


def test_skip_invalid_counts_the_line_and_goes_on(tmp_path):
    meta = copy_meta(tmp_path)
    mrconso = meta / "MRCONSO.RRF"
    replace_line(mrconso, 5, "C0011849|ENG|S|too|few|fields|\n")
    policy = InvalidLinePolicy(skip_invalid=True)
    records = read(tmp_path, policy=policy)
    assert policy.skipped == {str(mrconso): 1}
    assert policy.total_skipped == 1
    assert "got 6" in policy.first_reasons[str(mrconso)]
    assert len(of(records, NameRecord)) == 25  # "Diabetes" (line 5) is gone, the rest is read
    assert len(of(records, RelationRecord)) == 7


def test_malformed_line_in_an_optional_file(tmp_path):
    meta = copy_meta(tmp_path)
    replace_line(meta / "MRREL.RRF", 3, "C0011849|A2878223|SCUI|PAR|C0012634|\n")
    with pytest.raises(InputFormatError) as caught:
        read(tmp_path)
    assert (caught.value.path, caught.value.line) == (str(meta / "MRREL.RRF"), 3)
    assert "(MRREL), got 5" in caught.value.message


def test_missing_directory(tmp_path):
    missing = tmp_path / "no-such-umls"
    with pytest.raises(MissingInputError, match="no-such-umls"):
        read_umls(missing, prefix="UMLS", policy=InvalidLinePolicy())  # raised at call time


def test_missing_mrconso(tmp_path):
    (tmp_path / "META").mkdir()
    shutil.copy(META / "MRSTY.RRF", tmp_path / "META")
    with pytest.raises(MissingInputError, match="MRCONSO.RRF"):
        read(tmp_path)


def test_optional_files_may_be_absent(tmp_path):
    (tmp_path / "META").mkdir()
    shutil.copy(META / "MRCONSO.RRF", tmp_path / "META")
    records = read(tmp_path)
    assert len(of(records, NameRecord)) == 26
    assert not of(records, TypeRecord) and not of(records, RelationRecord) and not of(records, IdAliasRecord)


def test_crlf_and_blank_lines(tmp_path):
    (tmp_path / "META").mkdir()
    lines = (META / "MRCONSO.RRF").read_text(encoding="utf-8").splitlines()
    # CRLF line ends, a blank line, and no newline after the last row.
    text = "\r\n".join(lines[:10]) + "\r\n\r\n" + "\r\n".join(lines[10:])
    (tmp_path / "META" / "MRCONSO.RRF").write_text(text, encoding="utf-8", newline="")
    assert of(read(tmp_path), NameRecord) == of(read(), NameRecord)


def test_missing_final_bar_is_reported(tmp_path):
    meta = copy_meta(tmp_path)
    row = (META / "MRCONSO.RRF").read_text(encoding="utf-8").splitlines()[0]
    replace_line(meta / "MRCONSO.RRF", 1, row[:-1] + "\n")
    with pytest.raises(InputFormatError) as caught:
        read(tmp_path)
    assert caught.value.line == 1
    assert caught.value.message == "expected 18 '|'-separated fields (MRCONSO), got 18 without the final '|'"


def test_gzipped_rrf(tmp_path):
    (tmp_path / "META").mkdir()
    with gzip.open(tmp_path / "META" / "MRCONSO.RRF.gz", "wb") as out:
        out.write((META / "MRCONSO.RRF").read_bytes())
    assert of(read(tmp_path), NameRecord) == of(read(), NameRecord)

import pytest

from medlink.errors import InputFormatError
from medlink.kb.readers.icd10cm import cited_codes, read_icd10cm, seventh_character_code
from medlink.kb.records import ConceptRecord, NameRecord, RelationRecord, TypeRecord


@pytest.fixture
def records(fixtures):
    return list(read_icd10cm(fixtures / "icd10cm" / "mini_tabular.xml"))


def by_type(records, kind):
    return [r for r in records if isinstance(r, kind)]


def test_hierarchy_from_chapter_to_code(records):
    parents = {r.head: r.tail for r in by_type(records, RelationRecord) if r.relation == "is_a"}
    assert parents["ICD10CM:E11.321"] == "ICD10CM:E11.32"
    assert parents["ICD10CM:E11"] == "ICD10CM:E08-E13"
    assert parents["ICD10CM:E08-E13"] == "ICD10CM:4"
    assert "ICD10CM:4" not in parents
    types = {(r.concept_id, r.type) for r in by_type(records, TypeRecord)}
    assert {("ICD10CM:4", "chapter"), ("ICD10CM:E08-E13", "block"), ("ICD10CM:E11", "category"), ("ICD10CM:E11.9", "subcategory")} <= types
    assert ("ICD10CM:E11.9", "billable") in types and ("ICD10CM:E11", "billable") not in types


def test_single_category_block_keeps_its_own_id(records):
    ids = {r.id for r in by_type(records, ConceptRecord)}
    assert {"ICD10CM:E89-E89", "ICD10CM:E89"} <= ids


def test_inclusion_terms_and_block_name_without_range(records):
    names = {(r.concept_id, r.text, r.kind) for r in by_type(records, NameRecord)}
    assert ("ICD10CM:E11", "diabetes NOS", "inclusion") in names
    assert ("ICD10CM:E11", "insulin resistant diabetes (mellitus)", "inclusion") in names
    assert ("ICD10CM:E08-E13", "Diabetes mellitus (E08-E13)", "preferred") in names
    assert ("ICD10CM:E08-E13", "Diabetes mellitus", "synonym") in names


def test_excludes_notes_become_typed_relations(records):
    relations = {(r.head, r.relation, r.tail) for r in by_type(records, RelationRecord)}
    assert ("ICD10CM:E10", "excludes1", "ICD10CM:E11") in relations
    assert ("ICD10CM:E11", "excludes1", "ICD10CM:E13") in relations
    assert ("ICD10CM:T15", "excludes2", "ICD10CM:S01.1") in relations
    assert ("ICD10CM:T15", "excludes2", "ICD10CM:E11.9") in relations


def test_seventh_characters_expand_leaves_with_title_concatenation(records):
    concepts = {r.id: r.name for r in by_type(records, ConceptRecord)}
    assert concepts["ICD10CM:T15.01XA"] == "Foreign body in cornea, right eye, initial encounter"
    assert concepts["ICD10CM:E11.3219"] == "Type 2 diabetes mellitus with mild nonproliferative diabetic retinopathy with macular edema, unspecified eye"
    assert "ICD10CM:T15.0XXA" not in concepts  # T15.0 has children: only leaves are extended
    scopes = {r.scope for r in by_type(records, NameRecord) if r.concept_id == "ICD10CM:T15.01XS"}
    assert scopes == {"title concatenation"}
    assert len(concepts) == 2 + 3 + 12 + 3 + 3  # chapters, blocks, tabular codes, two leaves x three 7th characters


def test_official_code_list_removes_codes_that_do_not_exist(fixtures):
    records = list(read_icd10cm(fixtures / "icd10cm" / "with_code_list" / "mini_tabular.xml"))
    extended = {r.id for r in by_type(records, ConceptRecord) if r.id.startswith("ICD10CM:T15.01X")}
    assert extended == {"ICD10CM:T15.01XA"}


def test_helpers():
    assert seventh_character_code("T15.0", "A") == "T15.0XXA"
    assert seventh_character_code("S02", "B") == "S02.XXXB"
    assert cited_codes("listeriosis (A32.-)") == ["A32"]
    assert cited_codes("Escherichia coli infection (A04.0-A04.4)") == ["A04.0"]
    assert cited_codes("perinatal (P35-P39), other (O98.-, Z22.-)") == ["P35-P39", "O98", "Z22"]
    assert cited_codes("certain localized infections - see body system-related chapters") == []


def test_truncated_xml_fails_with_file_and_line(fixtures):
    path = fixtures / "icd10cm" / "truncated.xml"
    with pytest.raises(InputFormatError) as error:
        list(read_icd10cm(path))
    assert error.value.path == str(path) and error.value.line is not None
    assert "XML" in error.value.message


def test_a_codes_includes_notes_name_it_unless_they_describe_its_scope(tmp_path):
    """I10's "Includes: high blood pressure" is a name for I10; a block's notes, "any condition classifiable to ..." and
    "the listed conditions ..." under a code say what a range covers, and a later code repeating a note restates the
    first one's scope (I22, subsequent infarction, repeats I21's "cardiac infarction"): not names."""
    (tmp_path / "tabular.xml").write_text("""<?xml version="1.0" encoding="utf-8"?>
<ICD10CM.tabular><chapter><name>9</name><desc>Diseases of the circulatory system (I00-I99)</desc>
  <section id="I10-I1A"><desc>Hypertensive diseases (I10-I1A)</desc>
    <includes><note>hypertensive heart and kidney disease</note></includes>
    <diag><name>I10</name><desc>Essential (primary) hypertension</desc>
      <includes><note>high blood pressure</note><note>any condition classifiable to I10: more</note>
        <note>hypertension (arterial) (benign) (essential)</note></includes>
    </diag>
    <diag><name>I50.2</name><desc>Systolic (congestive) heart failure</desc>
      <inclusionTerm><note>Heart failure with reduced ejection fraction [HFrEF]</note></inclusionTerm></diag>
    <diag><name>R97.2</name><desc>Elevated prostate specific antigen [PSA]</desc></diag>
    <diag><name>Z17.0</name><desc>Estrogen receptor positive status [ER+]</desc></diag>
    <diag><name>I15</name><desc>Secondary hypertension</desc>
      <includes><note>High blood pressure</note><note>the listed conditions as a reason for care</note></includes>
    </diag>
  </section></chapter></ICD10CM.tabular>""", encoding="utf-8")
    names = {(r.concept_id, r.text, r.kind) for r in read_icd10cm(tmp_path / "tabular.xml") if isinstance(r, NameRecord)}
    assert {n for n in names if n[2] == "inclusion" and n[0] in ("ICD10CM:I10", "ICD10CM:I15")} == {("ICD10CM:I10", "high blood pressure", "inclusion"),
                                                         ("ICD10CM:I10", "hypertension (arterial) (benign) (essential)", "inclusion")}

    abbreviations = {(n[0], n[1]) for n in names if n[2] == "abbreviation"}
    # it abbreviates the whole name ("PSA" only its last words); "ER+" keeps its sign, which the normaliser reads as a word
    assert abbreviations == {("ICD10CM:I50.2", "HFrEF"), ("ICD10CM:Z17.0", "ER+")}


def test_a_manifestation_codes_inclusion_terms_keep_its_context(tmp_path):
    """N16's "Pyelonephritis" is pyelonephritis in a disease classified elsewhere, a code ICD-10-CM never lists first: as
    a bare name it tied with the condition itself. Terms that say their own context, and other codes' terms, stay."""
    (tmp_path / "tabular.xml").write_text("""<?xml version="1.0" encoding="utf-8"?>
<ICD10CM.tabular><chapter><name>14</name><desc>Diseases of the genitourinary system (N00-N99)</desc>
  <section id="N10-N16"><desc>Renal tubulo-interstitial diseases (N10-N16)</desc>
    <diag><name>N12</name><desc>Tubulo-interstitial nephritis, not specified as acute or chronic</desc>
      <inclusionTerm><note>Pyelonephritis NOS</note></inclusionTerm></diag>
    <diag><name>N16</name><desc>Renal tubulo-interstitial disorders in diseases classified elsewhere</desc>
      <inclusionTerm><note>Pyelonephritis</note><note>Tubulo-interstitial nephritis</note>
        <note>Nephritis due to lupus</note><note>Nephropathy in sarcoidosis</note></inclusionTerm></diag>
    <diag><name>B96.20</name><desc>Unspecified Escherichia coli [E. coli] as the cause of diseases classified elsewhere</desc>
      <inclusionTerm><note>Escherichia coli [E. coli] NOS</note></inclusionTerm></diag>
  </section></chapter></ICD10CM.tabular>""", encoding="utf-8")
    inclusions = {(r.concept_id, r.text) for r in read_icd10cm(tmp_path / "tabular.xml") if isinstance(r, NameRecord) and r.kind == "inclusion"}
    assert inclusions == {
        ("ICD10CM:N12", "Pyelonephritis NOS"),
        ("ICD10CM:N16", "Pyelonephritis in diseases classified elsewhere"),
        ("ICD10CM:N16", "Tubulo-interstitial nephritis in diseases classified elsewhere"),
        ("ICD10CM:N16", "Nephritis due to lupus"),
        ("ICD10CM:N16", "Nephropathy in sarcoidosis"),
        ("ICD10CM:B96.20", "Escherichia coli [E. coli] NOS"),  # an organism "as the cause of": the organism's name
    }

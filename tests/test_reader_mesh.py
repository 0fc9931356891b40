"""MeSH descriptor XML reader: records from an abridged desc2024.xml, errors with file and line."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from medlink.errors import InputFormatError, MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers import READERS
from medlink.kb.readers.mesh import read_mesh
from medlink.kb.records import ConceptRecord, NameRecord, RelationRecord, TypeRecord

FIXTURES = Path(__file__).parent / "fixtures" / "mesh"
DESC = FIXTURES / "desc_small.xml"
IDS = ["MESH:D002318", "MESH:D006331", "MESH:D014652", "MESH:D009202", "MESH:D009203", "MESH:D003920", "MESH:D003924", "MESH:D008687"]


@pytest.fixture(scope="module")
def records():
    return list(read_mesh(DESC))


def of(records, cls, concept_id=None):
    key = "head" if cls is RelationRecord else "id" if cls is ConceptRecord else "concept_id"
    return [r for r in records if isinstance(r, cls) and (concept_id is None or getattr(r, key) == concept_id)]


def names(records, concept_id):
    return {r.text: (r.kind, r.scope) for r in of(records, NameRecord, concept_id)}


def test_one_concept_per_descriptor_in_file_order(records):
    concepts = of(records, ConceptRecord)
    assert [c.id for c in concepts] == IDS
    assert all(c.source == "MeSH" for c in concepts)
    mi = concepts[4]
    assert mi.name == "Myocardial Infarction"
    assert mi.definition == (
        "NECROSIS of the MYOCARDIUM caused by an obstruction of the blood supply to the heart (CORONARY CIRCULATION)."
    )


def test_registered_as_the_mesh_format():
    spec = READERS["mesh"]
    assert spec.load() is read_mesh
    assert spec.default_prefix == "MESH"


def test_names_kinds_and_scopes(records):
    assert names(records, "MESH:D009203") == {
        "Myocardial Infarction": ("preferred", "EXACT"),
        "Infarction, Myocardial": ("synonym", "EXACT"),
        "Myocardial Infarct": ("synonym", "EXACT"),  # also a term of "Heart Attack": kept once
        "Infarct, Myocardial": ("synonym", "EXACT"),
        "MI": ("abbreviation", "EXACT"),  # LexicalTag ACR
        "Cardiovascular Stroke": ("synonym", "NARROW"),  # ConceptRelation NRW
        "Stroke, Cardiovascular": ("synonym", "NARROW"),
        "Heart Attack": ("synonym", "RELATED"),  # ConceptRelation REL
        "Heart Attacks": ("synonym", "RELATED"),
    }
    texts = [r.text for r in of(records, NameRecord, "MESH:D009203")]
    assert texts[0] == "Myocardial Infarction" and len(texts) == len(set(texts))
    assert all(r.source == "MeSH" and r.lang == "en" for r in of(records, NameRecord))


def test_abbreviations_from_lexical_tags(records):
    t2dm = names(records, "MESH:D003924")
    assert t2dm["Diabetes Mellitus, Type 2"] == ("preferred", "EXACT")
    assert t2dm["NIDDM"] == ("abbreviation", "EXACT")  # ABB
    assert t2dm["T2DM"] == ("abbreviation", "EXACT")
    assert t2dm["MODY"] == ("abbreviation", "NARROW")  # ACR in a narrower concept
    assert t2dm["Type 2 Diabetes Mellitus"] == ("synonym", "EXACT")
    # a trade name (LexicalTag TRD) is a synonym; a concept without a ConceptRelation has no scope
    assert names(records, "MESH:D008687")["Glucophage"] == ("synonym", None)


def test_name_counts(records):
    counts = Counter(r.concept_id for r in of(records, NameRecord))
    assert counts == {
        "MESH:D002318": 3, "MESH:D006331": 3, "MESH:D014652": 2, "MESH:D009202": 5,
        "MESH:D009203": 9, "MESH:D003920": 1, "MESH:D003924": 7, "MESH:D008687": 3,
    }


def test_parents_from_tree_numbers(records):
    parents = {(r.head, r.tail) for r in records if isinstance(r, RelationRecord) and r.relation == "is_a"}
    assert parents == {
        ("MESH:D006331", "MESH:D002318"),  # C14.280 -> C14
        ("MESH:D014652", "MESH:D002318"),  # C14.907 -> C14
        ("MESH:D009202", "MESH:D006331"),  # C14.280.647 -> C14.280
        ("MESH:D009202", "MESH:D014652"),  # C14.907.585 -> C14.907
        ("MESH:D009203", "MESH:D009202"),  # both C14 tree numbers -> one relation; C23 parents not in the file
        ("MESH:D003924", "MESH:D003920"),  # C18.452.394.750.149 and C19.246.300 -> one relation
    }
    is_a = [(r.head, r.tail) for r in records if isinstance(r, RelationRecord) and r.relation == "is_a"]
    assert len(is_a) == len(set(is_a))


def test_other_relations(records):
    other = [(r.head, r.relation, r.tail) for r in records if isinstance(r, RelationRecord) and r.relation != "is_a"]
    assert other == [
        ("MESH:D009203", "see_related", "MESH:D009202"),
        ("MESH:D003924", "see_related", "MESH:D007333"),
        ("MESH:D008687", "pharmacological_action", "MESH:D007004"),
    ]


def test_types_tree_categories_and_semantic_types(records):
    assert [t.type for t in of(records, TypeRecord, "MESH:D009203")] == ["tree:C", "Disease or Syndrome"]
    assert [t.type for t in of(records, TypeRecord, "MESH:D008687")] == ["tree:D", "Organic Chemical", "Pharmacologic Substance"]
    assert [t.type for t in of(records, TypeRecord, "MESH:D003920")] == ["tree:C"]


def test_prefix_applies_to_ids_and_targets():
    records = list(read_mesh(DESC, prefix=""))
    assert of(records, ConceptRecord)[0].id == "D002318"
    assert RelationRecord("D009203", "is_a", "D009202", "MeSH") in records
    records = list(read_mesh(DESC, prefix="mesh"))
    assert RelationRecord("mesh:D008687", "pharmacological_action", "mesh:D007004", "MeSH") in records


def test_permuted_terms_can_be_left_out():
    records = list(read_mesh(DESC, include_permuted=False))
    assert "Infarct, Myocardial" not in names(records, "MESH:D009203")
    assert "Myocardial Infarct" in names(records, "MESH:D009203")


def test_gzipped_file(tmp_path, records):
    packed = tmp_path / "desc2024.xml.gz"
    packed.write_bytes(gzip.compress(DESC.read_bytes()))
    assert list(read_mesh(packed)) == records


def test_missing_file_names_the_path(tmp_path):
    missing = tmp_path / "desc2024.xml"
    with pytest.raises(MissingInputError, match="desc2024.xml"):
        read_mesh(missing)


def test_truncated_file_reports_file_and_line():
    path = FIXTURES / "desc_truncated.xml"
    with pytest.raises(InputFormatError) as info:
        list(read_mesh(path))
    assert info.value.path == str(path)
    assert info.value.line == 241  # end of the 240-line file
    assert "truncated" in str(info.value)


def test_truncated_file_fails_even_when_skipping_invalid_records():
    # a broken XML stream cannot be resumed: failing beats silently building a partial KB
    with pytest.raises(InputFormatError):
        list(read_mesh(FIXTURES / "desc_truncated.xml", policy=InvalidLinePolicy(skip_invalid=True)))


def test_record_without_descriptor_ui_reports_its_line():
    path = FIXTURES / "desc_missing_ui.xml"
    with pytest.raises(InputFormatError) as info:
        list(read_mesh(path))
    assert (info.value.path, info.value.line) == (str(path), 23)
    assert "DescriptorUI" in info.value.message and "Heart Diseases" in info.value.message


def test_invalid_records_skipped_and_counted():
    path = FIXTURES / "desc_missing_ui.xml"
    policy = InvalidLinePolicy(skip_invalid=True)
    records = list(read_mesh(path, policy=policy))
    assert [c.id for c in of(records, ConceptRecord)] == ["MESH:D002318", "MESH:D009202"]
    assert policy.total_skipped == 2  # no DescriptorUI (line 23), no DescriptorName (line 39)
    assert policy.skipped[str(path)] == 2
    assert policy.first_reasons[str(path)].startswith(f"{path}:23:")
    # the parent of C14.280.647 (C14.280) belonged to the record without UI: no dangling relation
    assert of(records, RelationRecord) == []


def test_record_without_name_reports_its_line(tmp_path):
    broken = tmp_path / "desc.xml"
    broken.write_text(
        '<?xml version="1.0"?>\n'
        "<DescriptorRecordSet>\n"
        "<DescriptorRecord><DescriptorUI>D002318</DescriptorUI>"
        "<DescriptorName><String>Cardiovascular Diseases</String></DescriptorName></DescriptorRecord>\n"
        "\n"
        "<DescriptorRecord DescriptorClass='1'>\n"
        "  <DescriptorUI>D006331</DescriptorUI>\n"
        "</DescriptorRecord>\n"
        "</DescriptorRecordSet>\n"
    )
    with pytest.raises(InputFormatError) as info:
        list(read_mesh(broken))
    assert info.value.line == 5
    assert "DescriptorName" in info.value.message and "D006331" in info.value.message


def test_not_a_descriptor_file(tmp_path):
    qualifiers = tmp_path / "qual2024.xml"
    qualifiers.write_text('<?xml version="1.0"?>\n<QualifierRecordSet LanguageCode="eng">\n</QualifierRecordSet>\n')
    with pytest.raises(InputFormatError, match="DescriptorRecordSet"):
        list(read_mesh(qualifiers))
    ascii_mesh = tmp_path / "d2024.bin"
    ascii_mesh.write_text("*NEWRECORD\nRECTYPE = D\nMH = Calcimycin\n")
    with pytest.raises(InputFormatError) as info:
        list(read_mesh(ascii_mesh))
    assert info.value.line == 1 and "not well-formed" in info.value.message


def test_streams_one_record_at_a_time(tmp_path, monkeypatch):
    """Each DescriptorRecord is cleared once handled: the parsed tree never holds two records."""
    import xml.etree.ElementTree as ET

    from medlink.kb.readers import mesh

    seen_children = []
    original = mesh._descriptor_records

    def spy(record, *args, **kwargs):
        seen_children.append(len(list(record)))
        yield from original(record, *args, **kwargs)

    big = tmp_path / "desc_big.xml"
    body = DESC.read_text().split("<DescriptorRecordSet LanguageCode=\"eng\">")[1].split("</DescriptorRecordSet>")[0]
    big.write_text('<?xml version="1.0"?>\n<DescriptorRecordSet>' + body * 50 + "</DescriptorRecordSet>\n")
    roots = []
    original_iterparse = ET.iterparse

    def iterparse(*args, **kwargs):
        for event, elem in original_iterparse(*args, **kwargs):
            if not roots:
                roots.append(elem)
            yield event, elem
            if event == "end" and elem.tag == "DescriptorRecord":
                assert len(roots[0]) == 0  # cleared from the root before the next record is parsed
                assert len(elem) == 0

    monkeypatch.setattr(mesh.ET, "iterparse", iterparse)
    monkeypatch.setattr(mesh, "_descriptor_records", spy)
    count = sum(1 for r in read_mesh(big) if isinstance(r, ConceptRecord))
    assert count == 8 * 50
    assert all(n > 0 for n in seen_children)

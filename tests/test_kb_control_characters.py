"""Control characters in KB sources: refused in ids (naming file and line, or skipped and counted under --skip-invalid),
replaced by a space in names and counted, never stored; for every reader (the check is ``kb.readers.checked``)."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

import pytest

from medlink.errors import MedlinkError
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from tests.conftest import FIXTURES
from tests.control_characters import JSON_READERS, XML_READERS, put_inside, stored_control_characters
from tests.test_fuzz_readers import READERS

# XML has no NUL at all (a parser refuses it, as a raw byte or as &#0;): the check sees DEL and C1, here DEL
SPELLING = {**{reader: ("\x00", "\\u0000") for reader in JSON_READERS}, **{reader: ("\x7f", "&#x7F;") for reader in XML_READERS}}
# the line an error names, from the damaged value's: an XML record is named by its opening tag, one line above its id
LINE_SHIFT = {"mesh": -1, "icd10cm": -1}


def damaged_copy(reader: str, field: str, work: Path, character: str | None = None) -> tuple[str, Path, int]:
    """The reader's fixture with a control character in its first ``field`` value: (source spec, damaged file, its line)."""
    fixture, inner = READERS[reader]
    original = FIXTURES / fixture
    copy = work / original.name
    (shutil.copytree if original.is_dir() else shutil.copy)(original, copy)
    damaged = copy / inner if inner else copy
    default, mark = SPELLING.get(reader, ("\x00", None))
    data, line = put_inside(reader, damaged.read_bytes(), field, character or default, mark=mark)
    damaged.write_bytes(data)
    return f"{reader}:{copy}", damaged, line


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_control_character_in_an_id_is_refused_naming_file_and_line(reader, tmp_path):
    source, damaged, line = damaged_copy(reader, "id", tmp_path)
    with pytest.raises(MedlinkError) as refused:
        build_kb(tmp_path / "kb.sqlite", [source], progress=False)
    assert f"{damaged}:{line + LINE_SHIFT.get(reader, 0)}: " in str(refused.value), refused.value
    assert not (tmp_path / "kb.sqlite").exists()


@pytest.mark.parametrize("reader", sorted(READERS))
def test_with_skip_invalid_a_bad_id_is_skipped_counted_and_never_stored(reader, tmp_path):
    source, damaged, line = damaged_copy(reader, "id", tmp_path)
    report = build_kb(tmp_path / "kb.sqlite", [source], skip_invalid=True, progress=False)
    assert report.total_skipped >= 1
    assert any(reason.startswith(f"{damaged}:{line + LINE_SHIFT.get(reader, 0)}: ") for reason in report.skip_reasons.values())
    assert stored_control_characters(tmp_path / "kb.sqlite") == []


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_control_character_in_a_name_becomes_a_space_with_a_counted_warning(reader, tmp_path, caplog):
    source, damaged, _ = damaged_copy(reader, "name", tmp_path)
    with caplog.at_level(logging.WARNING, logger="medlink"):
        report = build_kb(tmp_path / "kb.sqlite", [source], progress=False)
    assert report.total_skipped == 0 and stored_control_characters(tmp_path / "kb.sqlite") == []
    warning = next(r.getMessage() for r in caplog.records if "control characters" in r.getMessage())
    assert re.match(rf"{re.escape(str(damaged))}: [12] text value\(s\)", warning) and re.search(r"first: line \d+: name '", warning), warning


def test_the_name_keeps_its_words_and_the_warning_its_line(tmp_path, caplog):
    terms = tmp_path / "terms.tsv"
    terms.write_text("id\tname\tdefinition\nC1\tHeart\x00attack\tA stray\x1b[0m escape\nC2\tFever\t\n")
    with caplog.at_level(logging.WARNING, logger="medlink"):
        build_kb(tmp_path / "kb.sqlite", [f"tsv:{terms}"], progress=False)
    concept = KB.open(tmp_path / "kb.sqlite").concept("C1")
    assert (concept.name, concept.definition) == ("Heart attack", "A stray [0m escape")
    assert f"{terms}: 2 text value(s)" in caplog.text and "first: line 2: name 'Heart\\x00attack', U+0000 (NUL)" in caplog.text


def test_an_obo_error_names_the_tag_line_and_a_skip_drops_the_stanza_once(tmp_path):
    obo = tmp_path / "t.obo"
    obo.write_text("format-version: 1.2\n\n[Term]\nid: X:1\nname: one\nis_a: X:\x002\n\n[Term]\nid: X:2\nname: two\n")
    with pytest.raises(MedlinkError, match=re.escape(f"{obo}:6: relation target 'X:\\x002' holds the control character U+0000 (NUL)")):
        build_kb(tmp_path / "kb.sqlite", [f"obo:{obo}"], progress=False)
    report = build_kb(tmp_path / "kb.sqlite", [f"obo:{obo}"], skip_invalid=True, progress=False)
    assert report.total_skipped == 1 and [c for c, _ in KB.open(tmp_path / "kb.sqlite").iter_concepts()] == ["X:2"]


def test_a_skipped_jsonl_line_loads_nothing_of_its_concept(tmp_path):
    """docs/kb-schema.md: with --skip-invalid a malformed line is skipped whole, a bad alternative id too."""
    terms = tmp_path / "terms.jsonl"
    terms.write_text('{"id": "C1", "name": "one", "alt_ids": ["OLD\\u00001"]}\n{"id": "C2", "name": "two"}\n')
    report = build_kb(tmp_path / "kb.sqlite", [f"jsonl:{terms}"], skip_invalid=True, progress=False)
    kb = KB.open(tmp_path / "kb.sqlite")
    assert report.total_skipped == 1 and [c for c, _ in kb.iter_concepts()] == ["C2"] and list(kb.iter_id_aliases()) == []
    assert f"{terms}:1: alternative id 'OLD\\x001'" in next(iter(report.skip_reasons.values()))


def test_umls_names_the_row_of_a_bad_cui(tmp_path):
    meta = tmp_path / "META"
    shutil.copytree(FIXTURES / "umls" / "META", meta)
    rows = (meta / "MRCONSO.RRF").read_text().splitlines(keepends=True)
    rows[2] = rows[2].replace("C0011849", "C00118\x0149", 1)
    (meta / "MRCONSO.RRF").write_text("".join(rows))
    with pytest.raises(MedlinkError, match=re.escape(f"{meta / 'MRCONSO.RRF'}:3: id 'UMLS:C00118\\x0149'")):
        build_kb(tmp_path / "kb.sqlite", [f"umls:{meta}"], progress=False)


def test_the_fast_path_sees_every_checked_field():
    """``ALL_PRINTABLE`` spells each record's checked fields out for speed: it must name all of them."""
    from dataclasses import fields

    from medlink.kb.readers.checked import ALL_PRINTABLE
    from medlink.kb.records import IDENTIFIER_FIELDS, TEXT_FIELDS

    for kind in IDENTIFIER_FIELDS:
        for name in IDENTIFIER_FIELDS[kind] + TEXT_FIELDS[kind]:
            record = kind(**{f.name: "x" for f in fields(kind) if f.name != name}, **{name: "a\x00b"})
            assert not ALL_PRINTABLE[kind](record), (kind.__name__, name)

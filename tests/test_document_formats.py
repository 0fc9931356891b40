"""Documents in and out: PubTator, BioC XML / JSON, JSONL, text and lines; offsets exact, bad records reported by file,
line and document, the rest read; every writable format reads back what was written."""

from __future__ import annotations

import gzip
import io
import json
import logging
import random
import shutil
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medlink.core import Annotation, Candidate, Document, LinkResult, Mention, Passage
from medlink.corpora.bioc_format import read_bioc, read_bioc_json
from medlink.corpora.document_files import (DOCUMENT_FORMATS, WRITABLE_FORMATS, guess_document_format, read_documents,
                                            write_documents)
from medlink.corpora.json_positions import document_lines
from medlink.corpora.pubtator import load_pubtator_documents, read_pubtator, write_pubtator
from medlink.errors import InputFormatError, MedlinkError, MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from tests.conftest import FIXTURES, shared_data
from tests.fuzzing import MUTATIONS, mutate

DOCS = FIXTURES / "documents"
FIXTURE_FORMATS = {"small.pubtator": "pubtator", "small.bioc.xml": "bioc", "small.bioc.json": "bioc-json"}


def shape(documents, sort_ids: bool = False, text_order: bool = False) -> list:
    """What a round trip must keep: ids, passages (offset, text, kind), spans with their text, type and ids (PubTator sorts
    ids; BioC gives annotations in text order)."""
    def spans(annotations):
        return sorted(annotations, key=lambda a: (a.start, a.end)) if text_order else annotations

    return [(d.doc_id, [(p.offset, p.text, p.kind) for p in d.passages],
             [(a.start, a.end, a.text, a.type, tuple(sorted(a.ids)) if sort_ids else a.ids) for a in spans(d.annotations)]) for d in documents]


def written(documents, fmt: str) -> str:
    out = io.StringIO()
    write_documents(documents, out, fmt)
    return out.getvalue()


def reread(documents, fmt: str, **options) -> list[Document]:
    return list(read_documents(io.StringIO(written(documents, fmt)), fmt, **options))


def assert_sound(documents) -> None:
    """Every annotation a reader gives is a non-empty span of its document's text, with that text."""
    for document in documents:
        text = document.text
        for a in document.annotations:
            assert 0 <= a.start < a.end <= len(text) and text[a.start:a.end] == a.text, (document.doc_id, a)


# --- the fixtures ------------------------------------------------------------------------------------------------------

def test_pubtator_fixture_keeps_character_offsets_composite_and_omim_ids():
    documents = read_pubtator(DOCS / "small.pubtator")
    assert [d.doc_id for d in documents] == ["10001", "10002", "10003"]
    first = documents[0]
    assert [(p.offset, p.kind) for p in first.passages] == [(0, "title"), (63, "abstract")]
    assert first.text[0:16] == "Sjögren syndrome" and first.text[17] == "—"
    by_text = {a.text: a for a in first.annotations}
    assert by_text["breast or ovarian cancer"].ids == ("D001943", "D010051") and by_text["breast or ovarian cancer"].type == "CompositeMention"
    assert by_text["ACTH deficiency"].ids == ("201400", "C535668")  # OMIM: stripped; the file's order
    assert by_text["renal hamartomas"].ids == ("D007674", "D006222")  # '+' splits too
    assert all(a.source == "gold" and a.result is None for a in first.annotations)
    assert documents[2].annotations == [] and documents[2].text == "An editorial without diseases."
    assert read_pubtator(DOCS / "small.pubtator", strip_id_prefixes=())[0].annotations[4].ids == ("OMIM:201400", "C535668")
    assert_sound(documents)


def test_the_evaluation_view_is_derived_from_the_same_parse():
    documents = load_pubtator_documents(DOCS / "small.pubtator")
    assert [len(d.mentions) for d in documents] == [6, 3, 0]
    mention = documents[0].mentions[4]
    assert mention.text == "ACTH deficiency" and mention.gold == {"201400", "C535668"} and mention.parts == ("ACTH deficiency",)
    assert documents[1].title.startswith("Café") and documents[1].abstract.endswith("first sign.") and documents[2].abstract == ""


def test_bioc_xml_and_json_fixtures_read_alike():
    xml, js = list(read_bioc(DOCS / "small.bioc.xml")), list(read_bioc_json(DOCS / "small.bioc.json"))
    assert xml == js
    first = xml[0]
    assert [(p.offset, p.kind) for p in first.passages] == [(0, "title"), (29, "abstract")] and first.infons == {"journal": "Test J"}
    assert [(a.text, a.ids) for a in first.annotations] == [("Sjögren syndrome", ("MESH:D012859",)), ("Primary Sjögren syndrome", ("MESH:D012859",)),
                                                            ("B-cell lymphoma", ("D016393", "D008223"))]  # 'MESH' infon, '|'
    assert xml[1].annotations[0].ids == ("MESH:D001943", "MESH:D010051")  # PubTator Central's ';'
    assert first.text[74:89] == "B-cell lymphoma" and "&" in first.text and "<5%" in first.text
    assert_sound(xml)


def test_bioc_passages_given_as_sentences_and_discontinuous_annotations(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"id": "9", "passages": [{"offset": 0, "infons": {"type": "abstract"}, "sentences": [
        {"offset": 0, "text": "Breast and ovarian cancer.", "annotations": [
            {"id": "a", "infons": {"Identifier": "D001943", "type": "Disease"}, "text": "Breast cancer",
             "locations": [{"offset": 0, "length": 6}, {"offset": 19, "length": 6}]}]},
        {"offset": 27, "text": "Both rare."}]}]}))
    [document] = read_documents(path, "bioc-json")
    assert document.text == "Breast and ovarian cancer. Both rare." and document.passages[0].kind == "abstract"
    [annotation] = document.annotations
    assert (annotation.start, annotation.end, annotation.text, annotation.ids) == (0, 25, "Breast and ovarian cancer", ("D001943",))


@pytest.mark.parametrize("fixture", sorted(FIXTURE_FORMATS))
@pytest.mark.parametrize("fmt", WRITABLE_FORMATS)
def test_every_fixture_round_trips_through_every_format(fixture, fmt):
    documents = list(read_documents(DOCS / fixture, FIXTURE_FORMATS[fixture]))
    again = reread(documents, fmt)
    if fmt == "pubtator":  # PubTator sorts ids; BioC keeps them as written
        assert shape(again, sort_ids=True) == shape(documents, sort_ids=True)
    else:
        assert shape(again) == shape(documents)
        assert [a.source for d in again for a in d.annotations] == [a.source for d in documents for a in d.annotations]
    assert shape(reread(again, fmt)) == shape(again)


# --- writing -----------------------------------------------------------------------------------------------------------

def linked_document() -> Document:
    document = Document("7", [Passage(0, "Heart attack", "title"), Passage(13, "and chest\npain.", "abstract"), Passage(30, "More.", "paragraph")])
    result = LinkResult(Mention("Heart attack"), [Candidate("D009203", 0.91234567, "heart attack", name="Myocardial Infarction")], probability=0.8)
    document.annotations = [Annotation(0, 12, "Heart attack", "Disease", ("D009203",), "dictionary", result),
                            Annotation(17, 27, "chest\npain", None, (), "tagger")]
    return document


def test_pubtator_writes_minus_one_for_no_ids_line_breaks_as_spaces_and_later_passages_on_the_abstract_line():
    text = written([linked_document()], "pubtator")
    lines = text.split("\n")
    assert lines[:2] == ["7|t|Heart attack", "7|a|and chest pain.  More."]
    assert lines[2] == "7\t0\t12\tHeart attack\tDisease\tD009203" and lines[3] == "7\t17\t27\tchest pain\t\t-1" and text.endswith("\n\n")
    again = list(read_documents(io.StringIO(text), "pubtator"))[0]
    assert again.text.replace(" ", "") == linked_document().text.replace("\n", "").replace(" ", "")
    assert [(a.start, a.end, a.ids) for a in again.annotations] == [(0, 12, ("D009203",)), (17, 27, ())]


@pytest.mark.parametrize("doc_id", ["a|b", "a\tb", " a", ""])
def test_pubtator_refuses_an_id_it_cannot_hold(doc_id):
    with pytest.raises(MedlinkError, match="PubTator needs an id"):
        written([Document.from_text("x", doc_id)], "pubtator")


def test_bioc_infons_carry_type_identifier_source_and_the_link_figures():
    text = written([linked_document()], "bioc-json")
    collection = json.loads(text)
    assert text.startswith('{"source": "medlink", "date": ') and set(collection) == {"source", "date", "key", "version", "infons", "documents"}
    passages = collection["documents"][0]["passages"]
    infons = passages[0]["annotations"][0]["infons"]
    assert infons == {"type": "Disease", "identifier": "D009203", "source": "dictionary", "score": "0.912346", "probability": "0.8"}
    assert passages[1]["annotations"][0]["infons"] == {"source": "tagger"} and passages[2]["infons"] == {"type": "paragraph"}
    xml = written([linked_document()], "bioc")
    assert xml.startswith("<?xml") and '<infon key="score">0.912346</infon>' in xml
    assert shape(reread([linked_document()], "bioc")) == shape([linked_document()])


def test_jsonl_carries_candidates_probability_and_nil_and_reads_back_without_them():
    line = json.loads(written([linked_document()], "jsonl"))
    first = line["annotations"][0]
    assert first["candidates"][0]["id"] == "D009203" and first["candidates"][0]["name"] == "Myocardial Infarction"
    assert first["probability"] == 0.8 and first["nil"] is None and "candidates" not in line["annotations"][1]
    assert [p["type"] for p in line["passages"]] == ["title", "abstract", "paragraph"]
    assert json.loads(written([Document.from_text("plain")], "jsonl")) == {"id": "1", "text": "plain", "annotations": []}
    again = reread([linked_document()], "jsonl")
    assert shape(again) == shape([linked_document()]) and again[0].annotations[0].result is None


@pytest.mark.parametrize("fmt", ["text", "lines", "conll"])
def test_text_lines_and_unknown_formats_are_not_written(fmt):
    with pytest.raises(MedlinkError, match="jsonl, pubtator, bioc, bioc-json"):
        written([Document.from_text("x")], fmt)


@pytest.mark.parametrize("fmt", WRITABLE_FORMATS)
def test_a_failed_write_leaves_the_file_as_it_was(fmt, tmp_path):
    path = tmp_path / "out"
    path.write_text("before")
    broken = Document("2", [Passage(0, "abc")], [Annotation(0, 9, "abcdefghi")])
    with pytest.raises(MedlinkError, match="document 2"):
        write_documents([Document.from_text("fine"), broken], path, fmt)
    assert path.read_text() == "before" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    write_pubtator([Document.from_text("fine")], path)
    assert path.read_text() == "1|t|fine\n1|a|\n\n"


def test_xml_cannot_hold_control_characters_and_says_which_document():
    with pytest.raises(MedlinkError, match="document 3: cannot be written as XML"):
        written([Document.from_text("bell\x07", "3")], "bioc")


# --- plain text, lines, stdin, formats ---------------------------------------------------------------------------------

def test_text_is_one_document_with_its_line_endings_and_lines_one_per_non_empty_line(tmp_path):
    path = tmp_path / "note.txt"
    path.write_bytes("\ufeffFever.\r\nSjögren — dry eyes.\n\n  \nLast".encode())
    [document] = read_documents(path, "text")
    assert document.doc_id == "note" and document.text == "Fever.\r\nSjögren — dry eyes.\n\n  \nLast"
    lines = list(read_documents(path, "lines"))
    assert [(d.doc_id, d.text) for d in lines] == [("1", "Fever."), ("2", "Sjögren — dry eyes."), ("5", "Last")]


@pytest.mark.parametrize("fmt", ["text", "lines", "jsonl", "pubtator"])
def test_stdin_works(fmt, monkeypatch):
    data = {"text": "Heart attack.", "lines": "Heart attack.\n", "jsonl": '{"id": "s", "text": "Heart attack."}\n',
            "pubtator": (DOCS / "small.pubtator").read_text(encoding="utf-8")}[fmt]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode()), encoding="utf-8"))
    documents = list(read_documents("-", fmt))
    assert documents and documents[0].doc_id == {"text": "stdin", "lines": "1", "jsonl": "s", "pubtator": "10001"}[fmt]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode()), encoding="utf-8"))
    assert shape(read_documents(sys.stdin, fmt)) == shape(documents)


def test_format_guessing(tmp_path):
    pubtator_txt = tmp_path / "NCBItestset_corpus.txt"
    shutil.copy(DOCS / "small.pubtator", pubtator_txt)
    (tmp_path / "notes.txt").write_text("A note | with bars.\n")
    with gzip.open(tmp_path / "corpus.txt.gz", "wb") as handle:
        handle.write((DOCS / "small.pubtator").read_bytes())
    guesses = {name: guess_document_format(tmp_path / name) for name in ["NCBItestset_corpus.txt", "notes.txt", "corpus.txt.gz", "a.jsonl",
                                                                          "a.xml", "a.json", "a.PubTator", "missing.txt"]}
    assert guesses == {"NCBItestset_corpus.txt": "pubtator", "notes.txt": "text", "corpus.txt.gz": "pubtator", "a.jsonl": "jsonl",
                       "a.xml": "bioc", "a.json": "bioc-json", "a.PubTator": "pubtator", "missing.txt": "text"}
    assert guess_document_format(None) == "text" and set(guesses.values()) <= set(DOCUMENT_FORMATS)
    assert len(list(read_documents(tmp_path / "corpus.txt.gz", "pubtator"))) == 3


def test_unknown_format_and_missing_file_are_refused_at_once(tmp_path):
    with pytest.raises(MedlinkError, match="unknown document format 'conll'"):
        read_documents(DOCS / "small.pubtator", "conll")
    with pytest.raises(MissingInputError, match="nope.xml"):
        read_documents(tmp_path / "nope.xml", "bioc")


# --- bad input ---------------------------------------------------------------------------------------------------------

BAD_PUBTATOR = ("1|t|Flu and cough.\n1|a|Sjögren — x.\n1\t0\t3\tFlu\tDisease\tD1\n1\t0\t99\tFlu\tDisease\tD1\n1\t4\t7\tcat\tDisease\tD2\n"
                "a broken line\n2\t0\t1\tx\tDisease\tD3\n\n2|t|Fine.\n2\t0\t4\tFine\tDisease\tD9\n")
BAD_JSONL = ('{"id": "a", "text": "Flu and cough", "annotations": [{"start": 0, "end": 3, "text": "Flu"}, {"start": 0, "end": 30},'
             ' {"start": "x", "end": 2}, {"start": 4, "end": 7, "text": "xyz"}]}\n{broken\n'
             '{"id": 5, "passages": [{"offset": 0, "text": "ab"}, {"offset": 1, "text": "cd"}]}\n[1, 2]\n'
             '{"id": "b", "passages": [{"offset": 0, "text": "Title"}, {"offset": 6, "text": "Body", "type": "abstract"}], '
             '"annotations": [{"start": 6, "end": 10, "ids": ["X"]}]}\n')
BAD_XML = ('<?xml version="1.0"?>\n<!DOCTYPE collection [<!ENTITY secret SYSTEM "file:///etc/hostname">]>\n<collection><source/><date/><key/>\n'
           '<document><id>1</id><passage><offset>0</offset><text>Flu &secret; x</text></passage></document>\n'
           '<document><id>2</id><passage><offset>0</offset><text>Flu and</text>'
           '<annotation id="1"><location offset="0" length="30"/><text>Flu</text></annotation>'
           '<annotation id="2"><location offset="4" length="3"/><text>xyz</text></annotation>'
           '<annotation id="3"><infon key="identifier">D1;D2</infon><location offset="0" length="3"/><text>Flu</text></annotation>'
           '</passage></document>\n<document><id>3</id><passage><text>no offset</text></passage></document>\n'
           '<document><id>4</id><passage><offset>0</offset><text>ok</text></passage></document>\n<document><id>5</id><passage><offset>0</offset><text>cut')


@pytest.mark.parametrize("fmt, data, first, kept, skipped", [
    ("pubtator", BAD_PUBTATOR, r"bad:4: document 1: .*offsets '0'..'99'", {"1": [(0, 3, ("D1",))], "2": [(0, 4, ("D9",))]}, 4),
    ("jsonl", BAD_JSONL, r"bad:1: document a: annotation #2: span 0..30", {"a": [(0, 3, ())], "b": [(6, 10, ("X",))]}, 6),
    ("bioc", BAD_XML, r"bad:4: document 1: not a BioC document .*secret", {"2": [(0, 3, ("D1", "D2"))], "4": []}, 5),
])
def test_bad_records_name_file_line_and_document_and_the_rest_go_through(fmt, data, first, kept, skipped, tmp_path):
    path = tmp_path / "bad"
    path.write_text(data, encoding="utf-8")
    with pytest.raises(InputFormatError, match=first):
        list(read_documents(path, fmt))
    policy = InvalidLinePolicy(skip_invalid=True)
    documents = list(read_documents(path, fmt, policy=policy))
    assert {d.doc_id: [(a.start, a.end, a.ids) for a in d.annotations] for d in documents} == kept
    assert policy.total_skipped == skipped and all(str(path) in reason for reason in policy.first_reasons.values())


def test_pubtator_reports_mismatched_text_and_stray_annotations(tmp_path):
    path = tmp_path / "bad"
    path.write_text(BAD_PUBTATOR, encoding="utf-8")
    policy = InvalidLinePolicy(skip_invalid=True)
    reasons = []
    policy.invalid = lambda where, line, message: reasons.append(f"{where}:{line}: {message}")  # every report, not just the first
    list(read_documents(path, "pubtator", policy=policy))
    assert any(":5: document 1: mention 'cat' is not the text at 4..7 ('and')" in r for r in reasons)
    assert any(":6: document 1: expected" in r for r in reasons) and any(":7: annotation for document '2' outside that document" in r for r in reasons)


def test_a_damaged_row_is_no_relation_line_and_every_error_names_its_document(tmp_path):
    """BC5CDR's relation lines (PMID, CID, id, id) are skipped unsaid; a row damaged down to four fields (an offset and
    a mention where the ids go) is a malformed record, named with file, line and document, as are a row of five fields
    and a line that is not UTF-8."""
    path = tmp_path / "bad.pubtator"
    path.write_bytes(b"1|t|Fever.\n1|a|\n1\tCID\tD008750\tD003866\n1\tCID\tC012345\tMESH:D007022\n\n"
                     b"2|t|Fever.\n2|a|\n2\tx\t9\tFever\n2\t0\t5\tFever\tDisease\n2\t0\t5\tFev\xe9r\tDisease\tD1\n\n3|t|Fever.\n3|a|\n")
    with pytest.raises(InputFormatError, match=r"bad.pubtator:8: document 2: expected .*found 4 tab-separated field\(s\)"):
        list(read_documents(path, "pubtator"))
    reasons = []
    policy = InvalidLinePolicy(skip_invalid=True)
    policy.invalid = lambda where, line, message: reasons.append(f"{line}: {message}")
    assert [(d.doc_id, d.annotations) for d in read_documents(path, "pubtator", policy=policy)] == [("1", []), ("2", []), ("3", [])]
    assert [r[:len(start)] for r, start in zip(reasons, ["8: document 2: expected", "9: document 2: expected", "10: document 2: not valid UTF-8"])] == [
        "8: document 2: expected", "9: document 2: expected", "10: document 2: not valid UTF-8"]
    assert len(reasons) == 3 and "found 4 tab-separated" in reasons[0] and "found 5 tab-separated" in reasons[1]


def test_named_skips_keep_the_first_few_reasons_and_count_the_rest(tmp_path):
    from medlink.corpora.document_io import NamedSkips

    path = tmp_path / "bad.pubtator"
    path.write_text("".join(f"{n}|t|Fever.\n{n}|a|\n{n}\t0\t99\tFever\tDisease\tD1\n\n" for n in range(1, 8)))
    policy = NamedSkips(skip_invalid=True, kept=3)
    assert len(list(read_documents(path, "pubtator", policy=policy))) == 7 and policy.total_skipped == 7
    report = policy.report()
    assert [line.split(": ")[0:2] for line in report[:3]] == [[f"skipped {path}:{3 + 4 * n}", f"document {n + 1}"] for n in range(3)]
    assert report[3:] == ["skipped 4 more malformed record(s)"]
    with pytest.raises(InputFormatError, match="document 1"):
        list(read_documents(path, "pubtator", policy=NamedSkips()))


def test_bioc_json_reports_documents_by_line(tmp_path):
    collection = tmp_path / "c.json"
    collection.write_text(json.dumps({"source": "x", "documents": [{"id": "1", "passages": [{"offset": 0, "text": "Flu", "annotations": [
        {"id": "a", "infons": {}, "text": "Flu", "locations": [{"offset": 0, "length": 9}]}]}]}, {"id": "2"},
        {"id": 3, "passages": [{"offset": 0, "text": "café"}]}], "documents ": []}, indent=1))
    with pytest.raises(InputFormatError, match=r"c.json:4: document 1: annotation a: span 0..9"):
        list(read_documents(collection, "bioc-json"))
    policy = InvalidLinePolicy(skip_invalid=True)
    assert [d.doc_id for d in read_documents(collection, "bioc-json", policy=policy)] == ["1", "3"] and policy.total_skipped == 2
    reasons = []
    policy.invalid = lambda where, line, message: reasons.append(f"{where}:{line}: {message}")  # every report, not just the first
    list(read_documents(collection, "bioc-json", policy=policy))
    assert [r.split(": document")[0].rsplit(":", 1)[1] for r in reasons] == ["4", "26"]
    for value, lines in (([{"id": "1", "passages": []}, {"id": "2", "passages": []}], [1, 3]), ({"id": "1", "passages": []}, [1])):
        (tmp_path / "v.json").write_text(json.dumps(value).replace("}, {", "},\n\n{"))
        assert len(list(read_documents(tmp_path / "v.json", "bioc-json"))) == len(lines)
        assert document_lines((tmp_path / "v.json").read_text(), value) == lines
    lines = tmp_path / "l.json"  # PubTator Central's export: one document per line
    lines.write_text('{"id": "1", "passages": [{"offset": 0, "text": "Flu"}]}\n{"id": "2", "passages": [{"offset": "0", "text": "x"}]}\n')
    with pytest.raises(InputFormatError, match=r"l.json:2: document 2: passage offset '0'"):
        list(read_documents(lines, "bioc-json"))


@pytest.mark.parametrize("fmt, data, where", [
    ("pubtator", b"1|t|Flu\n1|a|caf\xe9\n", r"bad:2: document 1: not valid UTF-8 at byte 8 of the line"),
    ("jsonl", b'{"text": "ok"}\n{"text": "caf\xe9"}\n', r"bad:2: not valid UTF-8 at byte 14"),
    ("text", b"line one\ncaf\xe9\n", r"bad:2: not valid UTF-8 at byte 13 of the file"),
    ("bioc-json", b'{"id": "1", "passages": [{"offset": 0, "text": "caf\xe9"}]}', r"bad:1: not valid UTF-8 at byte 52 of the file"),
    ("bioc", b'<collection><document><id>1</id><passage><offset>0</offset><text>caf\xe9</text></passage></document></collection>',
     r"bad:1: not well-formed XML \(not in its declared encoding, UTF-8 when it declares none\): .*column 69"),
])
def test_non_utf8_input_names_the_file_line_and_byte(fmt, data, where, tmp_path):
    (tmp_path / "bad").write_bytes(data)
    with pytest.raises(InputFormatError, match=where):
        list(read_documents(tmp_path / "bad", fmt))


def test_a_non_bioc_xml_file_is_refused(tmp_path):
    (tmp_path / "page.xml").write_text("<html><body>Not found</body></html>")
    with pytest.raises(InputFormatError, match="page.xml:1: not a BioC collection: the root element is <html>"):
        list(read_documents(tmp_path / "page.xml", "bioc"))


def test_overlapping_gold_spans_are_kept_and_reported_once(tmp_path, caplog):
    path = tmp_path / "nested.pubtator"
    path.write_text("1|t|Breast cancer type 1.\n1|a|\n1\t0\t13\tBreast cancer\tDisease\tD1\n1\t0\t20\tBreast cancer type 1\tDisease\tD2\n"
                    "1\t7\t13\tcancer\tDisease\tD3\n\n2|t|Colon cancer.\n2\t0\t12\tColon cancer\tDisease\tD4\n2\t6\t12\tcancer\tDisease\tD3\n")
    with caplog.at_level(logging.WARNING, logger="medlink"):
        documents = read_pubtator(path)
    assert [len(d.annotations) for d in documents] == [3, 2]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "3 overlapping or nested annotation span(s) kept (first: document 1, line 4)" in warnings[0]


def test_empty_documents_are_fine():
    documents = [Document.from_text("", "e1"), Document("e2", [Passage(0, "", "title")])]
    for fmt in WRITABLE_FORMATS:
        again = reread(documents, fmt)
        assert [d.doc_id for d in again] == ["e1", "e2"] and all(d.text == "" and not d.annotations for d in again)


# --- properties --------------------------------------------------------------------------------------------------------

TEXT = st.text(st.characters(exclude_categories=("Cs", "Cc", "Cn"), include_characters="\t"), max_size=30)
IDS = st.lists(st.text("ABCDXYZ0123456789:_.", min_size=1, max_size=8).filter(lambda i: i != "-1"), max_size=3, unique=True).map(lambda i: tuple(sorted(i)))
TYPES = st.none() | st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij", min_size=1, max_size=10)


@st.composite
def documents(draw, pubtator_shaped: bool) -> Document:
    """A random document: PubTator's title + abstract, or (with line breaks) passages at random gaps; random valid spans."""
    if pubtator_shaped:
        title, abstract = draw(TEXT), draw(TEXT)
        document = Document.from_title_abstract(draw(st.text("0123456789abcXYZ_-", min_size=1, max_size=8)), title, abstract)
    else:
        passages, at = [], 0
        for text in draw(st.lists(st.text(st.characters(exclude_categories=("Cs", "Cc", "Cn"), include_characters="\t\n\r"), max_size=30),
                                  min_size=1, max_size=4)):
            at += draw(st.integers(0, 3))
            passages.append(Passage(at, text, draw(st.none() | st.sampled_from(["title", "abstract", "paragraph"]))))
            at += len(text)
        document = Document(draw(st.text(st.characters(exclude_categories=("Cs", "Cc", "Cn")), min_size=1, max_size=8)), passages)
    text = document.text
    for _ in range(draw(st.integers(0, 5)) if text else 0):
        start = draw(st.integers(0, len(text) - 1))
        end = draw(st.integers(start + 1, len(text)))
        document.annotations.append(Annotation(start, end, text[start:end], draw(TYPES), draw(IDS), "gold"))
    return document


ROUND_TRIP = settings(max_examples=40, deadline=None)


@pytest.mark.parametrize("fmt", WRITABLE_FORMATS)
@ROUND_TRIP
@given(st.lists(documents(pubtator_shaped=True), max_size=3))
def test_random_pubtator_shaped_documents_round_trip(fmt, docs):
    in_text_order = fmt.startswith("bioc")
    assert shape(reread(docs, fmt), text_order=in_text_order) == shape(docs, text_order=in_text_order)


@pytest.mark.parametrize("fmt", ["jsonl", "bioc", "bioc-json"])
@ROUND_TRIP
@given(st.lists(documents(pubtator_shaped=False), max_size=3))
def test_random_documents_with_passages_round_trip(fmt, docs):
    again, in_text_order = reread(docs, fmt), fmt.startswith("bioc")
    assert shape(again, text_order=in_text_order) == shape(docs, text_order=in_text_order)
    assert [d.infons for d in again] == [d.infons for d in docs]


SEEDS = {"pubtator": (DOCS / "small.pubtator").read_bytes(),
         "jsonl": written(read_pubtator(DOCS / "small.pubtator"), "jsonl").encode(),
         "bioc": (DOCS / "small.bioc.xml").read_bytes(), "bioc-json": (DOCS / "small.bioc.json").read_bytes()}
LINE_DAMAGE = st.sampled_from(["replace", "insert", "delete", "digits"])
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def damaged_lines(data: bytes, how: str, noise: bytes, rng: random.Random) -> bytes:
    """``data`` with one line damaged: bytes replaced, inserted or deleted, or a number changed."""
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    line, at = lines[i], rng.randrange(len(lines[i]) + 1)
    if how == "replace":
        lines[i] = line[:at] + noise + line[at + len(noise):]
    elif how == "insert":
        lines[i] = line[:at] + noise + line[at:]
    elif how == "delete":
        lines[i] = line[:at] + line[at + rng.randint(1, 8):]
    else:
        lines[i] = bytes(rng.choice(b"0123456789-") if chr(b).isdigit() else b for b in line)
    return b"\n".join(lines)


def read_or_refuse(path, fmt) -> None:
    """Reading a damaged file either works (sound annotations) or fails with medlink's error naming the file; skipping reads on."""
    try:
        assert_sound(read_documents(path, fmt))
    except MedlinkError as error:
        assert path.name in str(error), error
    policy = InvalidLinePolicy(skip_invalid=True)
    assert_sound(read_documents(path, fmt, policy=policy))


@pytest.mark.parametrize("fmt", ["pubtator", "jsonl"])
@FUZZ
@given(how=LINE_DAMAGE, noise=st.binary(min_size=1, max_size=6) | st.sampled_from([b"\t", b"|", b"|t|", b'"', b"}", b"\xff"]),
       seed=st.integers(0, 2**16))
def test_damaged_lines_are_read_or_reported_never_a_traceback(fmt, how, noise, seed, tmp_path_factory):
    path = tmp_path_factory.mktemp(fmt) / f"damaged.{fmt}"
    path.write_bytes(damaged_lines(SEEDS[fmt], how, noise, random.Random(seed)))
    read_or_refuse(path, fmt)


@pytest.mark.parametrize("fmt", sorted(SEEDS))
@FUZZ
@given(kind=st.sampled_from(MUTATIONS), seed=st.integers(0, 2**16))
def test_damaged_files_are_read_or_reported_never_a_traceback(fmt, kind, seed, tmp_path_factory):
    path = tmp_path_factory.mktemp(fmt) / f"damaged.{fmt}"
    path.write_bytes(mutate(SEEDS[fmt], kind, random.Random(seed)))
    read_or_refuse(path, fmt)


# --- the real NCBI Disease test file -----------------------------------------------------------------------------------

@pytest.mark.real_data
@pytest.mark.parametrize("fmt", WRITABLE_FORMATS)
def test_ncbi_test_file_round_trips(fmt):
    documents = read_pubtator(shared_data("ncbi-disease-pubtator/NCBItestset_corpus.txt"))
    assert (len(documents), sum(len(d.annotations) for d in documents)) == (100, 960)
    assert_sound(documents)
    assert shape(reread(documents, fmt)) == shape(documents)


def test_a_folder_given_as_an_input_file_is_called_a_folder(tmp_path):
    from medlink.corpora.document_files import read_documents
    from medlink.corpora.mention_files import read_mentions
    from medlink.errors import MissingInputError
    from medlink.kb.readers.files import require_file

    for read in (lambda: read_documents(tmp_path, "text"), lambda: list(read_mentions(tmp_path, "tsv")), lambda: require_file(tmp_path, "TSV file")):
        with pytest.raises(MissingInputError, match=f"{tmp_path} is a folder, not a file"):
            read()
    with pytest.raises(MissingInputError, match="not found: .*nope.txt"):
        read_documents(tmp_path / "nope.txt", "text")

"""Damaged document files through the readers ``medlink annotate --input F --format X`` uses (with and without
--skip-invalid): each loads, or is refused with medlink's own error naming the file and line; never a traceback, a
hang, a harmless change (BOM, CRLF, CR-only) that alters what is read, or a record lost without a count.
(The long run, thousands of cases: benchmarks/robustness/fuzz_documents.py.)"""

from __future__ import annotations

import io
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medlink.core import Annotation
from medlink.corpora.document_files import guess_document_format, read_documents, write_documents
from medlink.errors import MedlinkError
from medlink.kb.errors_policy import InvalidLinePolicy
from tests.conftest import FIXTURES
from tests.fuzzing import MUTATIONS, mutate

DOCS = FIXTURES / "documents"
FIXTURE_OF = {"pubtator": "small.pubtator", "bioc": "small.bioc.xml", "bioc-json": "small.bioc.json", "jsonl": "small.jsonl",
              "text": "small.txt", "lines": "small.txt"}
GUESSED = "pubtator named .txt"  # annotate without --format: the format guessed from the name and the first line
GROUPS = {**{fmt: (fmt, fixture) for fmt, fixture in FIXTURE_OF.items()}, GUESSED: ("pubtator", "small.pubtator")}
DOCUMENT_MUTATIONS = (*MUTATIONS, "huge_line", "split_line", "offset_outside", "overlap_span", "wrong_format")
HARMLESS = ("bom", "crlf", "cr_only")  # an editor's doing: what is read must be exactly what the undamaged file gives
FAILURES = ("silent change", "silent drop", "unnamed refusal")  # the prefixes of a failed check's message
_OFFSET = re.compile(rb'(?:(?<=\t)|(?<=offset=")|(?<=length=")|(?<=<offset>)|(?<="offset": )|(?<="length": )|(?<="start": )'
                     rb'|(?<="end": ))[0-9]+')
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def read(path: Path, fmt: str, policy: InvalidLinePolicy | None = None) -> list:
    """What ``medlink annotate --input PATH --format FMT`` reads (it streams the same generator)."""
    return list(read_documents(path, fmt, policy=policy))


def mutate_document(data: bytes, fmt: str, kind: str, rng: random.Random) -> bytes:
    """``data`` (a fixture in ``fmt``) damaged one way: tests/fuzzing.py's ways, and the ways of document files."""
    if kind in MUTATIONS:
        return mutate(data, kind, rng)
    at = rng.randrange(len(data) + 1)
    if kind == "huge_line":  # a 10 MB line (a document pasted without line breaks)
        return data[:at] + b"lorem ipsum " * 873_814 + data[at:]
    if kind == "split_line":  # a line broken in two
        return data[:at] + rng.choice([b"\n", b"\r\n", b"\r"]) + data[at:]
    if kind == "offset_outside":
        numbers = list(_OFFSET.finditer(data))
        if not numbers:
            return data
        number = rng.choice(numbers)
        value = rng.choice([b"-1", b"0", str(len(data) + rng.randint(0, 9)).encode(), b"9" * rng.choice([12, 40]), str(int(number[0]) + rng.randint(-3, 3)).encode()])
        return data[:number.start()] + value + data[number.end():]
    if kind == "overlap_span":
        return _with_nested_span(data, fmt, rng)
    if kind == "wrong_format":
        return (DOCS / rng.choice(sorted({name for f, name in FIXTURE_OF.items() if name != FIXTURE_OF[fmt]}))).read_bytes()
    raise ValueError(f"unknown mutation {kind!r}")


def _with_nested_span(data: bytes, fmt: str, rng: random.Random) -> bytes:
    """The file rewritten with one more gold span nested in an existing one (legitimate: kept, and reported as a count)."""
    documents = list(read_documents(io.BytesIO(data), fmt))
    spans = [(d, a) for d in documents for a in d.annotations if a.end - a.start > 1]
    if not spans:
        return data
    document, outer = rng.choice(spans)
    start, end = (outer.start + 1, outer.end) if rng.random() < 0.5 else (outer.start, outer.end - 1)
    document.annotations.append(Annotation(start, end, document.text[start:end], outer.type, outer.ids, "gold"))
    out = io.StringIO()
    write_documents(documents, out, fmt)
    return out.getvalue().encode("utf-8")


def visible_records(data: bytes, fmt: str) -> tuple[int, int]:
    """(documents, annotations) a damaged file visibly holds, counted without the reader: fewer read, with nothing
    reported, is a silent drop."""
    lines = _LINE_BREAK.split(data)
    if fmt == "pubtator":
        return (sum(bool(re.match(rb"[^|\t]+\|t\|", line)) for line in lines), sum(line.count(b"\t") in (5, 6) for line in lines))
    if fmt == "bioc":
        return len(re.findall(rb"<document[\s>]", data)), len(re.findall(rb"<annotation[\s>]", data))
    if fmt == "bioc-json":
        return data.count(b'"passages"'), data.count(b'"locations"')
    if fmt == "jsonl":
        return sum(bool(line.strip()) for line in lines), data.count(b'"start"')
    if fmt == "lines":
        return sum(bool(line.decode("utf-8", "replace").strip()) for line in lines), 0
    return 1, 0


def shape(documents: list, fmt: str) -> list:
    """What a harmless change must keep: ids, texts (plain text's own line endings aside), spans with text, type and ids."""
    def text(value: str) -> str:
        return value.replace("\r\n", "\n").replace("\r", "\n") if fmt in ("text", "lines") else value

    return [(d.doc_id, text(d.text), [(a.start, a.end, a.text, a.type, a.ids) for a in d.annotations]) for d in documents]


def read_outcome(group: str, kind: str, seed: int, skip_invalid: bool, work: Path) -> str:
    """'loaded', 'loaded with counted skips' or 'refused'; a failed check (AssertionError) starts with one of ``FAILURES``."""
    fmt, fixture = GROUPS[group]
    data = mutate_document((DOCS / fixture).read_bytes(), fmt, kind, random.Random(seed))
    path = work / ("damaged.txt" if group == GUESSED else fixture)
    path.write_bytes(data)
    policy = InvalidLinePolicy(skip_invalid=skip_invalid)
    try:
        documents = read(path, guess_document_format(path) if group == GUESSED else fmt, policy)
    except MedlinkError as error:
        assert re.search(rf"{re.escape(path.name)}:[0-9]+: ", str(error)), f"unnamed refusal: {str(error)[:300]}"
        return "refused"
    for reason in policy.first_reasons.values():
        assert re.search(rf"{re.escape(path.name)}:[0-9]+: ", reason), f"unnamed refusal: {reason[:300]}"
    for document in documents:
        text = document.text
        for a in document.annotations:
            assert 0 <= a.start < a.end <= len(text) and text[a.start:a.end] == a.text, f"silent change: {document.doc_id} {a}"
        assert document.doc_id == document.doc_id.strip("\ufeff\r\n\x00"), f"silent change: document id {document.doc_id[:40]!r}"
    if kind in HARMLESS:
        clean = read(DOCS / fixture, fmt)
        assert not policy.total_skipped and shape(documents, fmt) == shape(clean, fmt), f"silent change: a {kind} changed what was read"
    if not policy.total_skipped:
        docs, annotations = visible_records(data, fmt)
        found = sum(len(d.annotations) for d in documents)
        assert len(documents) >= docs and found >= annotations, (
            f"silent drop: {len(documents)} of {docs} documents, {found} of {annotations} annotations read, none reported")
    return "loaded with counted skips" if policy.total_skipped else "loaded"


FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("group", sorted(GROUPS))
@FUZZ
@given(kind=st.sampled_from([k for k in DOCUMENT_MUTATIONS if k != "huge_line"]), seed=st.integers(0, 2**16), skip=st.booleans())
def test_a_damaged_document_file_loads_or_is_refused_by_file_and_line(group, kind, seed, skip, tmp_path_factory):
    assert read_outcome(group, kind, seed, skip, tmp_path_factory.mktemp("fuzz")) in ("loaded", "loaded with counted skips", "refused")


@pytest.mark.parametrize("group", sorted(GROUPS))
@pytest.mark.parametrize("kind", HARMLESS)
def test_a_bom_or_other_line_endings_change_nothing(group, kind, tmp_path):
    assert read_outcome(group, kind, 0, False, tmp_path) == "loaded"


# --- defects the long run found, one regression each ---------------------------------------------------------------------

@pytest.mark.parametrize("damage", [b"10002\x00\x00|t|", b"\xef\xbb\xbf10002|t|"])
def test_a_control_character_or_bom_in_a_pubtator_id_is_reported_not_kept(damage, tmp_path):
    path = tmp_path / "ids.pubtator"
    path.write_bytes((DOCS / "small.pubtator").read_bytes().replace(b"10002|t|", damage))
    with pytest.raises(MedlinkError, match=r"ids.pubtator:10: document id .* holds a control character"):
        read(path, "pubtator")
    policy = InvalidLinePolicy(skip_invalid=True)
    documents = read(path, "pubtator", policy)  # the abstract alone is left: its spans, offsets past a title, are refused
    assert [(d.doc_id, len(d.annotations)) for d in documents] == [("10001", 6), ("10002", 0), ("10003", 0)] and policy.total_skipped == 4


@pytest.mark.parametrize("fmt, key, where", [
    ("jsonl", b'"annotations"', r"small.jsonl:1: document 10001: the document has unknown key\(s\) 'annotxxations'"),
    ("jsonl", b'"start"', r"small.jsonl:1: document 10001: annotation #1: the annotation has unknown key\(s\) 'stxxart'"),
    ("jsonl", b'"type"', r"small.jsonl:1: document 10001: a passage has unknown key\(s\) 'tyxxpe'"),
    ("bioc-json", b'"annotations"', r"small.bioc.json:7: document 20001: a passage has unknown key\(s\) 'annotxxations'"),
    ("bioc-json", b'"length"', r"small.bioc.json:7: document 20001: a location has unknown key\(s\) 'lenxxgth'"),
])
def test_a_damaged_key_is_reported_not_read_as_nothing(fmt, key, where, tmp_path):
    path = tmp_path / FIXTURE_OF[fmt]
    path.write_bytes((DOCS / FIXTURE_OF[fmt]).read_bytes().replace(key, key[:len(key) // 2] + b"xx" + key[len(key) // 2:], 1))
    with pytest.raises(MedlinkError, match=where):
        read(path, fmt)


def test_bioc_json_written_by_the_bioc_package_reads_with_its_bioctype_keys(tmp_path):
    import bioc
    from bioc import biocjson

    document = bioc.BioCDocument()
    document.id, passage, annotation = "1", bioc.BioCPassage(), bioc.BioCAnnotation()
    passage.offset, passage.text, annotation.id, annotation.text = 0, "Flu", "a", "Flu"
    annotation.add_location(bioc.BioCLocation(0, 3))
    passage.add_annotation(annotation)
    document.add_passage(passage)
    collection = bioc.BioCCollection()
    collection.add_document(document)
    (tmp_path / "c.json").write_text(biocjson.dumps(collection))
    assert [(a.start, a.end, a.text) for d in read(tmp_path / "c.json", "bioc-json") for a in d.annotations] == [(0, 3, "Flu")]


def test_a_pubtator_file_not_starting_with_its_title_is_still_guessed_pubtator(tmp_path):
    """Read as plain text, it would have been one document and no spans, without a word."""
    path = tmp_path / "shuffled.txt"
    path.write_text("1\t0\t3\tFlu\tDisease\tD1\n\n1|t|Flu.\n1|a|\n")
    assert guess_document_format(path) == "pubtator"
    with pytest.raises(MedlinkError, match=r"shuffled.txt:1: annotation for document '1' outside that document"):
        read(path, "pubtator")
    (tmp_path / "note.txt").write_text("Pt with hx of MI.\nBP 120/80 | HR 72 | t 37.1\n")
    assert guess_document_format(tmp_path / "note.txt") == "text"


@pytest.mark.parametrize("key", ["annotatons", "Passages", "relatoins"])
def test_a_document_key_one_slip_from_bioc_is_reported(key, tmp_path):
    """Document-level keys of one's own are allowed (PubTator3's pmid, journal); a damaged BioC key is not read as nothing."""
    import json

    data = json.loads((DOCS / "small.bioc.json").read_text(encoding="utf-8"))
    document = data["documents"][0]
    document["pmid"] = "20001"  # a key of PubTator3's own: still accepted
    if key == "Passages":
        document[key] = document.pop("passages")
    else:
        document[key] = []
    path = tmp_path / "slip.bioc.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(MedlinkError, match=rf"slip.bioc.json.*document 20001: the document has unknown key '{key}' \(did you mean"):
        read(path, "bioc-json")
    del document[key]
    if key == "Passages":
        document["passages"] = []
    path.write_text(json.dumps(data), encoding="utf-8")
    assert read(path, "bioc-json")[0].doc_id == "20001"


def test_bioc_json_read_as_bioc_xml_names_the_format_to_use(tmp_path):
    path = tmp_path / "small.json"
    path.write_bytes((DOCS / "small.bioc.json").read_bytes())
    with pytest.raises(MedlinkError, match=r"small.json:1: not well-formed XML \(it looks like JSON: BioC JSON is --format bioc-json\)"):
        read(path, "bioc")

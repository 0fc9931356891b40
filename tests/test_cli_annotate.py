"""``medlink annotate`` as a user runs it: text arguments, stdin, files in every format, outputs, bad input, safety."""

import json
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink

pytestmark = pytest.mark.slow
TEXT = "Adenomatous polyposis coli (APC) runs in families. APC carriers get colorectal cancer; no hamartoma."


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    from tests.conftest import FIXTURES

    work = tmp_path_factory.mktemp("cli-annotate")
    medlink("kb", "build", work / "kb.sqlite", f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q")
    medlink("index", "build", "--kb", work / "kb.sqlite", "--out", work / "index")
    return work / "index"


def test_text_arguments_give_spans_linked_with_offsets(index_dir):
    result = medlink("annotate", "--index", index_dir, "--json", TEXT, "The weather was fine.")
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    spans = [(a["start"], a["end"], a["text"], a["ids"], a["source"]) for a in first["annotations"]]
    assert spans == [(0, 26, "Adenomatous polyposis coli", ["D011125"], "dictionary"), (28, 31, "APC", ["D011125"], "abbreviation"),
                     (51, 54, "APC", ["D011125"], "abbreviation"), (68, 85, "colorectal cancer", ["D015179"], "dictionary"),
                     (90, 99, "hamartoma", ["D006222"], "dictionary")]
    assert first["annotations"][0]["candidates"][0]["name"] == "adenomatous polyposis coli"
    assert second["annotations"] == []
    assert "2 document(s), 5 mention(s), 5 linked" in result.stderr
    plain = medlink("annotate", "--index", index_dir, "--no-abbreviations", TEXT).stdout.splitlines()
    assert plain[0] == "# 1\t3 mention(s)" and plain[1].startswith("0-26\tAdenomatous polyposis coli\tD011125\t")


def test_a_file_given_as_text_or_a_second_input_file_is_refused_by_name(index_dir, tmp_path, monkeypatch):
    for name in ("notes.txt", "more.txt"):
        (tmp_path / name).write_text(TEXT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    hurried = medlink("annotate", "--index", index_dir, "--json", "--out", "out.jsonl", "notes.txt", check=False)
    assert hurried.returncode == 2 and "'notes.txt' is a file's name: give --input notes.txt" in hurried.stderr
    assert not (tmp_path / "out.jsonl").exists()  # nothing written for a script to carry on with
    for repeated in (["--input", "notes.txt", "--input", "more.txt"], ["--input", "notes.txt", "more.txt"]):  # the second: a shell glob
        refused = medlink("annotate", "--index", index_dir, *repeated, check=False)
        assert refused.returncode == 2 and "--input takes one file" in refused.stderr and "more.txt" in refused.stderr
        linked = medlink("link", "--index", index_dir, *repeated, check=False)
        assert linked.returncode == 2 and "--input takes one file" in linked.stderr and "nothing was linked" in linked.stderr
    assert medlink("annotate", "--index", index_dir, "x" * 5000).stderr.count("error") == 0  # too long for a path: a text


def test_stdin_and_pubtator_round_trip_keep_offsets(index_dir, tmp_path):
    piped = subprocess.run([sys.executable, "-m", "medlink", "annotate", "--index", str(index_dir), "--json"], input=TEXT,
                           capture_output=True, text=True, check=True)
    assert len(json.loads(piped.stdout)["annotations"]) == 5
    dash = subprocess.run([sys.executable, "-m", "medlink", "annotate", "--index", str(index_dir), "--json", "-"], input=TEXT,
                          capture_output=True, text=True, check=True)  # "-" is stdin, not a text
    assert dash.stdout == piped.stdout
    source = tmp_path / "in.pubtator"
    source.write_text(f"1|t|Renal hamartoma.\n1|a|{TEXT}\n\n2|t|Nothing here.\n2|a|\n")
    out = tmp_path / "out.pubtator"
    medlink("annotate", "--index", index_dir, "--input", source, "--format", "pubtator", "--output-format", "pubtator", "--out", out)
    from medlink.corpora.pubtator import read_pubtator

    documents = read_pubtator(out)
    text = documents[0].text
    assert [d.doc_id for d in documents] == ["1", "2"]
    assert [(text[a.start:a.end], a.ids) for a in documents[0].annotations][:1] == [("Renal hamartoma", ("D007674", "D006222"))]
    assert all(text[a.start:a.end] == a.text for a in documents[0].annotations)
    again = tmp_path / "again.jsonl"  # the output read back and annotated again gives the same spans
    medlink("annotate", "--index", index_dir, "--input", out, "--format", "pubtator", "--output-format", "jsonl", "--out", again)
    spans = [(a["start"], a["end"]) for a in json.loads(again.read_text().splitlines()[0])["annotations"]]
    assert spans == [(a.start, a.end) for a in documents[0].annotations]


def test_finder_given_links_the_inputs_own_spans_as_they_are(index_dir, tmp_path):
    """PubTator spans someone else found (overlapping ones too) come back as given, with types kept and concepts filled
    in, a short form among them linked through its long form; without --finder given, a note says they were replaced."""
    title, abstract = "Adenomatous polyposis coli (APC).", "APC carriers and APC carrier families get colorectal cancer."
    text = f"{title} {abstract}"
    at = lambda s, n=0: [i for i in range(len(text)) if text.startswith(s, i)][n]  # noqa: E731
    given = [(0, 26, "Adenomatous polyposis coli"), (at("APC"), at("APC") + 3, "APC"), (at("APC", 1), at("APC", 1) + 3, "APC"),
             (at("APC", 2), at("APC", 2) + 19, "APC carrier families"[:19]), (at("colorectal"), at("colorectal") + 10, "colorectal")]
    source = tmp_path / "given.pubtator"
    source.write_text(f"7|t|{title}\n7|a|{abstract}\n" + "".join(f"7\t{s}\t{e}\t{t}\tDisease\tD000000\n" for s, e, t in given) + "\n")
    result = medlink("annotate", "--index", index_dir, "--input", source, "--finder", "given", "--json")
    annotations = json.loads(result.stdout)["annotations"]
    assert [(a["start"], a["end"]) for a in annotations] == [(s, e) for s, e, _ in given]  # exactly the given spans, overlaps too
    assert all(a["source"] == "given" and a["type"] == "Disease" for a in annotations)
    assert annotations[0]["ids"] == annotations[1]["ids"] == annotations[2]["ids"] == ["D011125"]  # the short forms through the long form
    assert annotations[1]["infons"].get("linked_through") == "0-26"
    assert "replaced" not in result.stderr
    assert "it carried none" in medlink("annotate", "--index", index_dir, "--finder", "given", "A text without spans.").stderr
    found = medlink("annotate", "--index", index_dir, "--input", source, "--json")
    assert "the input's own 5 annotation(s) were replaced by the spans medlink found" in found.stderr


def test_bioc_out_and_in(index_dir, tmp_path):
    out = tmp_path / "out.xml"
    medlink("annotate", "--index", index_dir, "--output-format", "bioc", "--out", out, TEXT)
    from medlink.corpora.document_files import read_documents

    (document,) = list(read_documents(out, "bioc"))
    assert [(a.text, a.ids) for a in document.annotations][0] == ("Adenomatous polyposis coli", ("D011125",))
    assert out.read_text().endswith("</collection>\n")


def test_bad_input_and_unsafe_outputs_are_refused(index_dir, tmp_path):
    broken = tmp_path / "broken.pubtator"
    broken.write_text("1|t|Renal hamartoma.\n1|a|x\n1\t0\t99\tRenal\tDisease\tD1\n\n2|t|hamartoma\n2|a|\n")
    result = medlink("annotate", "--index", index_dir, "--input", broken, "--format", "pubtator", check=False)
    assert result.returncode == 2 and str(broken) in result.stderr and ":3" in result.stderr
    skipped = medlink("annotate", "--index", index_dir, "--input", broken, "--format", "pubtator", "--skip-invalid")
    assert "2 document(s)" in skipped.stderr and "1 malformed record(s) skipped" in skipped.stderr
    assert f"skipped {broken}:3: document 1: " in skipped.stderr  # which record, not only how many
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("renal na\xefve\n".encode("latin-1"))
    result = medlink("annotate", "--index", index_dir, "--input", latin1, check=False)
    assert result.returncode == 2 and str(latin1) in result.stderr and "UTF-8" in result.stderr
    mine = tmp_path / "notes.txt"
    mine.write_text("my own notes\n")
    result = medlink("annotate", "--index", index_dir, "--out", mine, TEXT, check=False)
    assert result.returncode == 2 and "not an output of 'medlink annotate'" in result.stderr and mine.read_text() == "my own notes\n"
    # a file a user wrote in the output's own format is not medlink's: a Markdown heading, a gold PubTator / JSONL corpus
    for name, fmt, content in (("notes.md", "text", "# My project notes\n\nImportant stuff.\n"),
                               ("gold.pubtator", "pubtator", (FIXTURES / "documents" / "small.pubtator").read_text()),
                               ("gold.jsonl", "jsonl", (FIXTURES / "documents" / "small.jsonl").read_text()),
                               ("gold.xml", "bioc", (FIXTURES / "documents" / "small.bioc.xml").read_text())):
        theirs = tmp_path / name
        theirs.write_text(content)
        result = medlink("annotate", "--index", index_dir, "--output-format", fmt, "--out", theirs, TEXT, check=False)
        assert result.returncode == 2 and "left as it is" in result.stderr and theirs.read_text() == content, name
    # medlink's own outputs are replaced on a rerun (each carries its mark); PubTator has no room for one: only an empty file
    for fmt in ("text", "jsonl", "bioc", "bioc-json"):
        again = tmp_path / f"again.{fmt}"
        medlink("annotate", "--index", index_dir, "--output-format", fmt, "--out", again, TEXT)
        assert "APC" in again.read_text() or fmt == "text"
        first = again.read_text()
        medlink("annotate", "--index", index_dir, "--output-format", fmt, "--out", again, "A second text.")
        assert again.read_text() != first and "APC" not in again.read_text(), fmt
    # an output in one format may be replaced by another (the same kind), and a document's own infons stay
    medlink("annotate", "--index", index_dir, "--output-format", "bioc", "--out", tmp_path / "again.jsonl", TEXT)
    assert "<collection>" in (tmp_path / "again.jsonl").read_text()
    theirs = tmp_path / "curated.jsonl"
    theirs.write_text(json.dumps({"id": "c1", "text": "colorectal cancer " * 60_000, "infons": {"annotated_by": "curator Jane"}}) + "\n")
    big = tmp_path / "big.jsonl"
    for _ in range(2):  # a document over a megabyte: its mark still comes first
        medlink("annotate", "--index", index_dir, "--input", theirs, "--json", "--out", big)
    written = json.loads(big.read_text())
    assert written["infons"]["annotated_by"] == "curator Jane" and written["infons"]["medlink_version"]
    empty = tmp_path / "empty.pubtator"
    empty.write_text("")
    medlink("annotate", "--index", index_dir, "--output-format", "pubtator", "--out", empty, TEXT)
    result = medlink("annotate", "--index", index_dir, "--output-format", "pubtator", "--out", empty, TEXT, check=False)
    assert result.returncode == 2 and "carries no mark" in result.stderr
    result = medlink("annotate", "--index", index_dir, "--input", broken, "--format", "pubtator", "--output-format", "pubtator",
                     "--out", broken, check=False)
    assert result.returncode == 2 and "one of the sources" in result.stderr
    result = medlink("annotate", "--index", index_dir, "--input", tmp_path / "nope.txt", TEXT, check=False)
    assert result.returncode == 2 and "not both" in result.stderr
    result = medlink("annotate", "--index", index_dir, "--json", "--output-format", "pubtator", TEXT, check=False)
    assert result.returncode == 2 and "--json writes JSONL" in result.stderr
    result = medlink("annotate", "--index", index_dir, "--finder", "tagger", TEXT, check=False)
    assert result.returncode == 2 and "--tagger" in result.stderr


def test_skipped_records_are_named_and_a_damaged_row_is_one_of_them(index_dir, tmp_path):
    """With --skip-invalid each skipped record is named (file, line, document), the first few and then a count; a row
    damaged down to four fields is one of them, not a relation line dropped unsaid; real relation lines are ignored."""
    source = tmp_path / "b.pubtator"
    source.write_text("1|t|Renal hamartoma.\n1|a|\n1\tCID\tD007674\tD006222\n\n2|t|Fever.\n2|a|\n2\tx\t9\tFever\n\n"
                      + "".join(f"{n}|t|hamartoma\n{n}|a|\n{n}\t0\t99\thamartoma\tDisease\tD1\n\n" for n in range(3, 10)))
    result = medlink("annotate", "--index", index_dir, "--input", source, "--finder", "given", check=False)
    assert result.returncode == 2 and f"error: {source}:7: document 2: expected" in result.stderr
    skipped = medlink("annotate", "--index", index_dir, "--input", source, "--skip-invalid").stderr
    assert "9 document(s)" in skipped and "8 malformed record(s) skipped" in skipped
    named = [line.strip() for line in skipped.splitlines() if line.strip().startswith("skipped ")]
    assert named[0].startswith(f"skipped {source}:7: document 2: expected") and named[1].startswith(f"skipped {source}:11: document 3: ")
    assert len(named) == 6 and named[-1] == "skipped 3 more malformed record(s)"


def test_overlap_all_keeps_alternatives_and_bad_options_are_clean_errors(index_dir):
    """--overlap all reaches the dictionary finder ("neoplasms" inside "colorectal neoplasms"); an unknown policy is a
    usage error before the index loads; --context without a reranker that reads it says it has no effect."""
    spans = lambda *options: [(a["start"], a["text"]) for a in json.loads(medlink("annotate", "--index", index_dir, "--json", *options,
                                                                                  "Two colorectal neoplasms.").stdout)["annotations"]]  # noqa: E731
    assert spans() == [(4, "colorectal neoplasms")]
    assert spans("--overlap", "all") == [(4, "colorectal neoplasms"), (15, "neoplasms")]
    bogus = medlink("annotate", "--index", index_dir, "--overlap", "bogus", "asthma", check=False)
    assert bogus.returncode == 2 and bogus.stderr.startswith("error: unknown --overlap 'bogus'; known: longest, all") and "Traceback" not in bogus.stderr
    wrong = medlink("annotate", "--index", index_dir, "--modifiers", "always", "asthma", check=False)
    assert wrong.returncode == 2 and wrong.stderr.startswith("error: unknown --modifiers 'always'; known: widen, phrase, partial, off")
    assert spans("--modifiers", "off") == spans("--modifiers", "widen") == [(4, "colorectal neoplasms")]  # the phrase is a name
    noted = medlink("annotate", "--index", index_dir, "--context", "50", "asthma").stderr
    assert noted.count("--context 50 has no effect") == 1
    assert "no effect" not in medlink("annotate", "--index", index_dir, "asthma").stderr

"""Long documents read a window at a time: the same annotations as reading them whole, cuts where no step reads across,
progress in characters, and a size limit that names the document (on the eval fixture KB)."""

from __future__ import annotations

import json

import pytest

from medlink import progress
from medlink.core import Annotation, Document
from medlink.corpora.document_files import document_json, read_documents
from medlink.corpora.document_io import NamedSkips
from medlink.errors import InputFormatError
from medlink.linking import windowed
from medlink.linking.annotator import AnnotateOptions, Annotator
from medlink.linking.linker import Linker
from medlink.text.windows import window_bounds

# paragraphs that exercise every document-wide step: an abbreviation defined early and used late, a short form defined in
# another sense late ("RENAL") whose earlier found occurrence goes, a coordination, a family history section, denials
PARAGRAPHS = [
    "Adenomatous polyposis coli (APC) runs in families. APC carriers get colorectal cancer; no hamartoma was seen.",
    "Family history: mother had breast cancer.\nSister with ovarian cancer and a tumour of the kidney.",
    "The RENAL score was high. Denies renal pain. Breast and ovarian cancer were ruled out in 2019.",
    "A rapid entry new alignment level (RENAL) was used. Ataxia telangiectasia (A-T) is rare.",
    "Later, APC was noted again, and A-T too. Colorectal neoplasms? No. Kidney diseases (renal) were absent.",
]
WHOLE = AnnotateOptions()  # a window far longer than these documents: read whole


@pytest.fixture(scope="module")
def linker(kb):
    return Linker.build(kb)


def annotated(linker, document: Document, finders=None, **options) -> Document:
    annotator = Annotator(linker, finders or [linker.dictionary_finder()], AnnotateOptions(**options))
    return next(annotator.annotate([document]))


def as_json(document: Document) -> str:
    return json.dumps(document_json(document))


@pytest.mark.parametrize("joint", ["\n\n", " "])  # paragraphs (cut at blank lines), or one run of sentences (cut at sentence ends)
def test_windowed_output_equals_the_whole_document(linker, joint):
    paragraphs = PARAGRAPHS if joint == "\n\n" else [p for p in PARAGRAPHS if not p.startswith("Family")]  # a section runs to a blank line
    text = joint.join(paragraphs * 3)
    document = Document.from_text(text, "long")
    whole = annotated(linker, document)
    for window in (90, 150, 400):
        bounds = window_bounds(text, window)
        assert len(bounds) > 2
        assert as_json(annotated(linker, document, window=window)) == as_json(whole)
    found = [(a.text, a.source) for a in whole.annotations]
    assert ("APC", "abbreviation") in found and ("RENAL", "dictionary") not in found  # defined in another sense, later
    assert any(a.infons.get("composite") for a in whole.annotations)


def test_passages_and_consistency_options_read_the_same_windowed(linker):
    """A multi-passage document (a title and an abstract), every overlap and consistency setting: windows change nothing."""
    abstract = "\n\n".join(PARAGRAPHS * 2)
    document = Document.from_title_abstract("9", "Breast cancer and APC.", abstract)
    for options in ({"overlap": "all"}, {"consistency": "vote"}, {"consistency": "propagate", "abbreviation_choice": "best"},
                    {"composites": False, "assertion": False}, {"context": 20}):
        assert as_json(annotated(linker, document, window=120, **options)) == as_json(annotated(linker, document, **options))


class WhereConfirmed:
    """A finder that finds a string only where "confirmed" comes before it: propagation must reach the bare occurrences
    in earlier windows from the one it finds in a later window."""

    name = "confirmed"

    def __init__(self, string):
        self.string = string

    def find(self, document):
        text, marked = document.text, f"confirmed {self.string}"
        starts = [at + len("confirmed ") for at in range(len(text)) if text.startswith(marked, at)]
        return [Annotation(at, at + len(self.string), self.string, source=self.name) for at in starts]


def test_a_string_found_late_is_propagated_to_earlier_windows(linker):
    text = "\n\n".join([f"Paragraph {n}: the hamartoma was small." for n in range(10)] + ["Last: a confirmed hamartoma."])
    document = Document.from_text(text)
    whole = annotated(linker, document, finders=[WhereConfirmed("hamartoma")])
    windowed_ = annotated(linker, document, finders=[WhereConfirmed("hamartoma")], window=100)
    assert [(a.start, a.source) for a in windowed_.annotations] == [(a.start, a.source) for a in whole.annotations]
    assert [a.source for a in whole.annotations] == ["propagated"] * 10 + ["confirmed"]


def test_mentions_at_window_boundaries_are_found_once_with_their_offsets(linker):
    """No blank line, no sentence end: cuts fall at spaces, never inside a name a finder finds across them."""
    text = "breast cancer " * 60 + "and ovarian cancer"
    document = Document.from_text(text)
    bounds = window_bounds(text, 50, lambda at: windowed.can_cut(Annotator(linker, [linker.dictionary_finder()], WHOLE), document, text, at))
    whole = annotated(linker, document).annotations
    assert len(bounds) > 10 and all(text[end - 1] == " " and not any(a.start < end < a.end for a in whole) for _, end in bounds[:-1])
    spans = annotated(linker, document, window=50).annotations
    assert [(a.start, a.end) for a in spans] == [(a.start, a.end) for a in whole]
    assert [a.text for a in spans] == ["breast cancer"] * 60 + ["ovarian cancer"]
    assert all(text[a.start:a.end] == a.text for a in spans) and len({a.start for a in spans}) == len(spans)


def test_cuts_prefer_blank_lines_then_sentence_ends_and_never_open_parentheses():
    text = "One two three. Four five (six. Seven) eight.\n\nNine ten. Eleven twelve. Thirteen (x) fourteen."
    assert window_bounds(text, 60)[0] == (0, text.index("Nine"))  # the blank line, though a sentence end comes later
    assert window_bounds(text, 30)[0] == (0, text.index("Four"))  # a sentence end, though spaces come later
    assert window_bounds(text, 40)[0] == (0, text.index("eight"))  # "Seven" starts a sentence, but inside parentheses
    assert window_bounds(text, 30, lambda at: at != text.index("Four"))[0] == (0, text.index("(six"))  # can_cut refused it: a space
    for size in (7, 13, 50):
        assert "".join(text[start:end] for start, end in window_bounds(text, size)) == text


def test_progress_in_characters_for_a_long_document_and_none_when_silenced(linker, monkeypatch, capsys):
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    monkeypatch.setattr(progress, "FIRST_LINE_AFTER", 0.0)
    monkeypatch.setattr(windowed, "PROGRESS_CHARS", 500)
    document = Document.from_text("\n\n".join(PARAGRAPHS * 3), "long-one")
    annotator = Annotator(linker, [linker.dictionary_finder()], AnnotateOptions(window=200))
    list(annotator.annotate([document], progress=True))
    err = capsys.readouterr().err
    assert "annotate long-one: finding" in err and "annotate long-one: linking" in err and "char" in err and "\r" not in err
    list(annotator.annotate([Document.from_text(PARAGRAPHS[0], "short")], progress=True))  # under the size: no bar
    assert "annotate short" not in capsys.readouterr().err
    before = progress.silence_bars(True)  # what --quiet does
    try:
        list(annotator.annotate([document], progress=True))
    finally:
        progress.silence_bars(before)
    assert "annotate long-one" not in capsys.readouterr().err


@pytest.mark.parametrize("fmt, content, line", [
    ("jsonl", '{"id": "a", "text": "short"}\n{"id": "big", "text": "' + "x" * 300 + '"}\n{"id": "c", "text": "fine"}\n', 2),
    ("lines", "short\n" + "big " * 75 + "\nfine\n", 2),
    ("pubtator", "1|t|short\n1|a|text\n\nbig|t|title\nbig|a|" + "x" * 300 + "\n\n3|t|fine\n3|a|too\n", 4),
    ("bioc", '<?xml version="1.0"?><collection><source/><date/><key/>\n<document><id>a</id><passage><offset>0</offset><text>short</text>'
             '</passage></document>\n<document><id>big</id><passage><offset>0</offset><text>' + "x" * 300 + "</text></passage></document>\n"
             '<document><id>c</id><passage><offset>0</offset><text>fine</text></passage></document></collection>\n', 3),
])
def test_a_document_over_the_size_limit_is_named_and_skipped_when_asked(tmp_path, fmt, content, line):
    path = tmp_path / f"docs.{fmt}"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputFormatError) as refused:
        list(read_documents(path, fmt, max_chars=200))
    message, name = str(refused.value), "2" if fmt == "lines" else "big"  # a line's document is named by its line number
    assert message.startswith(f"{path}:{line}: document {name}: ") and "over the limit of" in message and "(200 characters)" in message
    assert "--max-document-mb" in message
    policy = NamedSkips(skip_invalid=True)
    kept = list(read_documents(path, fmt, policy=policy, max_chars=200))
    assert len(kept) == 2 and name not in {d.doc_id for d in kept} and policy.total_skipped == 1
    assert f"document {name}: " in policy.report()[0]
    assert len(list(read_documents(path, fmt))) == 3  # no limit given: nothing refused


def test_a_whole_text_file_over_the_limit_is_refused_without_reading_it_all(tmp_path):
    path = tmp_path / "note.txt"
    path.write_text("word " * 1000, encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"note.txt: document note: more than 100 characters of text, over the limit"):
        list(read_documents(path, "text", max_chars=100))
    with pytest.raises(InputFormatError, match=r"note.txt: document note: 0.00477 MB of text \(5,000 characters\)"):
        list(read_documents(path, "text", max_chars=4000))
    assert [len(d.text) for d in read_documents(path, "text", max_chars=5000)] == [5000]

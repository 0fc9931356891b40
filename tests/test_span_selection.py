"""The learned span selector: its features, the choice of spans, its file, its fit, and the commands that use it.

The unit tests give the selector a stand-in tagger (fixed word probabilities) and a stand-in dictionary, so each
feature and each decision can be checked by hand; the command-line test trains a real tagger on the fixture
documents, fits a selector on other documents and annotates with it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from medlink.core import Annotation, Document
from medlink.errors import MedlinkError
from medlink.text.finders.selector.model import FEATURES, SpanSelector, candidate_spans, choose
from medlink.text.finders.tagger import TaggedWord
from medlink.text.finders.selector.fitting import fit_span_selector
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink

TEXT = "Women with breast cancer had normal renal function."


def words_of(text: str, mention: dict[str, float]) -> list[TaggedWord]:
    """Every word of ``text`` with P(mention) from ``mention`` (0.02 elsewhere); a mention's first word 'begins'."""
    out, at = [], 0
    for word in text.replace(".", " .").split():
        start = text.index(word, at)
        at = start + len(word)
        p = mention.get(word, 0.02)
        out.append(TaggedWord(start, at, 1.0 - p, p * 0.9 if word in ("breast", "renal") else p * 0.1, p * 0.1 if word in ("breast", "renal") else p * 0.9))
    return out


def span(text: str, piece: str, source: str, **infons) -> Annotation:
    start = text.index(piece)
    return Annotation(start, start + len(piece), piece, source=source, infons=infons)


def feature(row: np.ndarray, name: str) -> float:
    return float(row[FEATURES.index(name)])


def test_candidates_carry_where_each_finder_found_them_and_what_the_tagger_thought():
    words = words_of(TEXT, {"breast": 0.95, "cancer": 0.9, "renal": 0.3, "function": 0.05})
    tagger = [span(TEXT, "breast cancer", "tagger")]
    dictionary = [span(TEXT, "breast cancer", "dictionary"), span(TEXT, "renal", "dictionary"), span(TEXT, "cancer", "dictionary", match="approximate")]
    spans, rows = candidate_spans(TEXT, tagger, dictionary, words)
    assert [(s.text, s.source) for s in spans] == [("breast cancer", "tagger"), ("renal", "dictionary"), ("cancer", "dictionary")]
    both, renal, loose = rows
    assert feature(both, "from_tagger") == feature(both, "from_dictionary") == 1.0 and feature(both, "approximate_match") == 0.0
    assert feature(renal, "from_tagger") == 0.0 and feature(renal, "overlaps_tagger") == 0.0 and feature(renal, "overlaps_dictionary") == 1.0
    assert feature(loose, "approximate_match") == 1.0 and feature(loose, "from_dictionary") == 0.0 and feature(loose, "overlaps_tagger") == 1.0
    assert feature(both, "words") == 2 and feature(both, "characters") == len("breast cancer")
    assert feature(both, "first_word_begins") == pytest.approx(0.95 * 0.9) and feature(both, "least_mention") == pytest.approx(0.9)
    assert feature(both, "mean_mention") == pytest.approx(0.925) and feature(both, "later_words_inside") == pytest.approx(0.9 * 0.9)
    assert feature(renal, "next_word_inside") == pytest.approx(0.05 * 0.9) and feature(renal, "previous_word_mention") == pytest.approx(0.02)
    assert feature(loose, "previous_word_mention") == pytest.approx(0.95) and feature(loose, "first_word_inside") == pytest.approx(0.9 * 0.9)


def test_the_most_probable_spans_are_kept_without_overlaps_from_the_threshold():
    text = "familial breast cancer and renal disease"
    spans = [span(text, "familial breast cancer", "tagger"), span(text, "breast cancer", "dictionary"), span(text, "renal disease", "dictionary"),
             span(text, "renal", "dictionary")]
    assert [spans[i].text for i in choose(spans, np.array([0.6, 0.9, 0.4, 0.7]), 0.5)] == ["breast cancer", "renal"]
    assert [spans[i].text for i in choose(spans, np.array([0.6, 0.9, 0.4, 0.7]), 0.65)] == ["breast cancer", "renal"]
    assert [spans[i].text for i in choose(spans, np.array([0.95, 0.9, 0.8, 0.7]), 0.5)] == ["familial breast cancer", "renal disease"]
    assert [spans[i].text for i in choose(spans, np.array([0.95, 0.9, 0.8, 0.7]), 0.75, "all")] == ["familial breast cancer", "breast cancer", "renal disease"]
    assert choose(spans, np.array([0.1, 0.2, 0.3, 0.4]), 0.5) == []
    with pytest.raises(ValueError, match="overlap"):
        choose(spans, np.zeros(4), 0.5, "widest")


class StandInTagger:
    """A tagger whose word probabilities are given: a word is 'mention' if it is a gold mention word, with some noise."""

    def __init__(self, documents):
        self.gold = {d.doc_id: d for d in documents}

    def tag(self, document):
        gold = self.gold[document.doc_id]
        inside = {i for a in gold.annotations for i in range(a.start, a.end)}
        words, at = [], 0
        for word in document.text.replace(".", " .").split():
            start = document.text.index(word, at)
            at = start + len(word)
            p = 0.8 if start in inside else (0.45 if word == "renal" else 0.05)
            words.append(TaggedWord(start, at, 1 - p, p / 2, p / 2))
        spans = [a for a in gold.annotations if a.text != "tumour"]  # the tagger misses "tumour"; the dictionary has it
        return [Annotation(a.start, a.end, a.text, source="tagger") for a in spans], words


class StandInDictionary:
    names = ("breast cancer", "ovarian cancer", "cystic fibrosis", "renal", "tumour", "diabetes mellitus")

    def find(self, document):
        lowered, found = document.text.lower(), []
        for name in self.names:
            at = lowered.find(name)
            while at >= 0:
                found.append(Annotation(at, at + len(name), document.text[at:at + len(name)], source="dictionary"))
                at = lowered.find(name, at + 1)
        return sorted(found, key=lambda a: a.start)


def dev_documents():
    from medlink.training.tagger_data import read_annotated

    return read_annotated(f"pubtator:{FIXTURES / 'tagger' / 'dev.pubtator'}")[0]


def test_a_fitted_selector_keeps_mentions_and_drops_dictionary_words_that_are_not_mentions(tmp_path):
    documents = dev_documents()
    selector, report = fit_span_selector(StandInTagger(documents), StandInDictionary(), documents, "abc", folds=3, progress=False)
    assert report["documents"] == 6 and report["gold_mentions"] == 18 and 0.05 <= report["threshold"] <= 0.95
    assert report["threshold_for"] == "spans" and "linking" not in report["out_of_fold"]  # no linker given
    assert report["out_of_fold"]["spans"]["f1"] >= report["confirmed"]["spans"]["f1"] and report["union"]["spans"]["precision"] < 1.0
    document = Document.from_text(TEXT, "new")
    document.annotations = [span(TEXT, "breast cancer", "gold")]
    found, words = StandInTagger([document]).tag(document)
    spans, rows = candidate_spans(TEXT, found, StandInDictionary().find(document), words)
    kept = [spans[i].text for i in choose(spans, selector.predict(rows), selector.threshold)]
    assert kept == ["breast cancer"]  # "renal" (a KB name the tagger half believes) is no mention in these documents
    again = SpanSelector.load(selector.save(tmp_path / "selector.json"))
    assert np.allclose(again.predict(rows), selector.predict(rows), atol=1e-6) and again.threshold == selector.threshold
    assert again.tagger == "abc" and again.fitted_on["documents"] == 6


class StandInLinker:
    """Links every text to a concept whose ids are every gold id it is annotated with, except the texts it is told to miss."""

    def __init__(self, documents, misses=()):
        self.ids: dict[str, list[str]] = {}
        for document in documents:
            for annotation in document.annotations:
                self.ids.setdefault(annotation.text, []).extend(annotation.ids)
        self.misses = set(misses)

    def link(self, texts, k):
        from medlink.core import Candidate, LinkResult, Mention

        def best(text):
            ids = self.ids.get(text, ["D0"])
            return Candidate(ids[0], 1.0, text, alt_ids=ids[1:])

        return [LinkResult(Mention(t), [] if t in self.misses else [best(t)]) for t in texts]


def test_with_a_linker_the_threshold_serves_linking():
    """Spans the linker gets wrong are no use to a user who links: the linking F1 counts a span only when its concept is right."""
    from medlink.text.finders.selector.fitting import collect

    documents = dev_documents()
    linker = StandInLinker(documents, misses={"tumour"})
    labelled = collect(StandInTagger(documents), StandInDictionary(), documents, progress=False, linker=linker)
    for d in labelled:
        expected = [int(right and span.text != "tumour") for span, right in zip(d.spans, d.labels)]
        assert d.linked.tolist() == expected
    assert sum(d.linked.sum() for d in labelled) < sum(d.labels.sum() for d in labelled)
    selector, report = fit_span_selector(StandInTagger(documents), StandInDictionary(), documents, "abc", folds=3, progress=False, linker=linker)
    assert report["threshold_for"] == "linking" and set(report["out_of_fold"]) == {"spans", "linking"}
    assert report["out_of_fold"]["linking"]["right"] <= report["out_of_fold"]["spans"]["right"]
    assert report["confirmed"]["linking"] == report["confirmed"]["spans"]  # the tagger never finds "tumour": confirmed keeps none
    assert report["union"]["linking"]["right"] < report["union"]["spans"]["right"]  # the dictionary does, and it is linked wrong


def test_a_selector_needs_right_and_wrong_candidates():
    documents = dev_documents()
    for document in documents:
        document.annotations = []
    with pytest.raises(MedlinkError, match="none of the .* candidate spans .* is a gold mention span"):
        fit_span_selector(StandInTagger(documents), StandInDictionary(), documents, "abc", progress=False)


def test_fitting_documents_refuse_what_the_tagger_or_the_memory_saw_even_copied_or_in_part(tmp_path):
    from medlink.text.finders.selector.fitting import fitting_documents
    from medlink.training.tagger_data import read_annotated

    dev = FIXTURES / "tagger" / "dev.pubtator"
    records = dev.read_text(encoding="utf-8").strip().split("\n\n")
    (tmp_path / "part.pubtator").write_text(records[1] + "\n\n" + records[4] + "\n\n", encoding="utf-8")  # two of its six
    (tmp_path / "copy.pubtator").write_bytes(dev.read_bytes())
    _, dev_record = read_annotated(f"pubtator:{dev}")
    saw_dev = {"data": {"train": [dev_record]}}
    with pytest.raises(MedlinkError, match="the tagger was trained on 2 of its 2 documents"):
        fitting_documents([f"pubtator:{tmp_path / 'part.pubtator'}"], saw_dev, [])
    with pytest.raises(MedlinkError, match="the index holds the mentions of 6 of its 6 documents as memory"):
        fitting_documents([f"pubtator:{tmp_path / 'copy.pubtator'}"], {}, [f"pubtator:{dev}"])
    documents, records_kept, repeated = fitting_documents([f"pubtator:{dev}", f"pubtator:{tmp_path / 'part.pubtator'}"], {}, ["biosyn:elsewhere"])
    assert len(documents) == 6 and repeated == 2 and len(records_kept) == 2 and "document_sha256" not in records_kept[0]
    (tmp_path / "bare.pubtator").write_text("\n\n".join(r.split("\n")[0] + "\n" + r.split("\n")[1] for r in records) + "\n\n", encoding="utf-8")
    with pytest.raises(MedlinkError, match="no annotated mention in its 6 documents"):
        fitting_documents([f"pubtator:{tmp_path / 'bare.pubtator'}"], {}, [])


@pytest.mark.parametrize("edit, message", [
    (lambda d: {**d, "format": "something"}, "not a span selector"),
    (lambda d: {**d, "features": d["features"][:-1]}, "other features"),
    (lambda d: {**d, "coef": d["coef"][:-1]}, "do not fit"),
    (lambda d: {**d, "scale": [0.0] * len(d["scale"])}, "do not fit"),
    (lambda d: {**d, "threshold": 1.5}, "threshold 1.5 is outside"),
    (lambda d: {k: v for k, v in d.items() if k != "intercept"}, "damaged"),
])
def test_an_edited_or_foreign_selector_file_is_refused(tmp_path, edit, message):
    documents = dev_documents()
    selector, _ = fit_span_selector(StandInTagger(documents), StandInDictionary(), documents, "abc", folds=3, progress=False)
    data = selector.to_dict()
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(edit(data)))
    with pytest.raises(MedlinkError, match=message):
        SpanSelector.load(path)
    path.write_text("{not json")
    with pytest.raises(MedlinkError, match="not a span selector"):
        SpanSelector.load(path)
    with pytest.raises(MedlinkError, match="not found"):
        SpanSelector.load(tmp_path / "missing.json")


# -- the commands, with a real tagger ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tagger_and_index(tmp_path_factory):
    """A tagger trained on the tagger fixture (packaged MiniLM, a few seconds) and an index whose KB names the dev fixture's diseases."""
    pytest.importorskip("torch")
    work = tmp_path_factory.mktemp("selector")
    names = ["D1||breast cancer", "D2||ovarian cancer", "D3||cystic fibrosis", "D4||diabetes mellitus", "D5||renal", "D6||tumour",
             "D7||Huntington disease", "D8||Sjögren syndrome", "D9||women"]
    (work / "names.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
    medlink("kb", "build", work / "kb.sqlite", f"biosyn:{work / 'names.txt'}", "-q")
    medlink("index", "build", "--kb", work / "kb.sqlite", "--out", work / "index")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OMP_NUM_THREADS", "1")
        medlink("train", "tagger", "--train", f"pubtator:{FIXTURES / 'tagger' / 'train.pubtator'}", "--out", work / "tagger", "--epochs", "6",
                "--lr", "5e-4", "--max-length", "32", "--seed", "3")
    return work / "tagger", work / "index"


@pytest.mark.slow
@pytest.mark.dense
def test_train_selector_then_annotate_with_it(tagger_and_index, tmp_path):
    tagger, index = tagger_and_index
    dev = f"pubtator:{FIXTURES / 'tagger' / 'dev.pubtator'}"
    fitted = medlink("train", "selector", "--tagger", tagger, "--index", index, "--documents", dev, "--folds", "3")
    assert f"wrote {tagger / 'span_selector.json'}" in fitted.stdout and "confirmed" in fitted.stdout
    assert "(the best strict-span F1 out of fold)" in fitted.stdout  # the fixture's ids are not the KB's: spans decide
    saved = json.loads((tagger / "span_selector.json").read_text())
    assert saved["fitted_on"]["documents"] == 6 and saved["fitted_on"]["documents_files"][0]["documents"] == 6
    text = "Women with breast cancer had normal renal function."
    learned = ("annotate", "--index", index, "--finder", "both", "--combine", "learned")
    annotated = json.loads(medlink(*learned, "--tagger", tagger, "--json", text).stdout)
    found = [a for a in annotated["annotations"] if a["source"] in ("tagger", "dictionary")]
    assert "breast cancer" in [a["text"] for a in found] and all(0 <= float(a["infons"]["span_probability"]) <= 1 for a in found)
    confirmed = json.loads(medlink("annotate", "--index", index, "--finder", "both", "--tagger", tagger, "--json", text).stdout)  # the default
    assert confirmed["annotations"] and not any("span_probability" in a.get("infons", {}) for a in confirmed["annotations"])
    (tmp_path / "exclude.txt").write_text("renal\n")
    warned = medlink(*learned, "--tagger", tagger, "--exclude-names", tmp_path / "exclude.txt", text)
    assert "fitted with another dictionary (names excluded differ)" in warned.stderr
    nothing = json.loads(medlink(*learned, "--tagger", tagger, "--span-threshold", "1", "--json", text).stdout)
    assert nothing["annotations"] == []
    # refused: the tagger's own training documents, another tagger's selector, a threshold without a selector
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": 1}')
    kept = medlink("train", "selector", "--tagger", tagger, "--index", index, "--documents", dev, "--out", notes, check=False)
    assert kept.returncode == 2 and "is not a span selector" in kept.stderr and notes.read_text() == '{"mine": 1}'
    own = medlink("train", "selector", "--tagger", tagger, "--index", index, "--documents", f"pubtator:{FIXTURES / 'tagger' / 'train.pubtator'}", check=False)
    assert own.returncode == 2 and "the tagger was trained on 8 of its 8 documents" in own.stderr
    other = tmp_path / "other-tagger"
    other.mkdir()
    for item in tagger.iterdir():
        (other / item.name).write_bytes(item.read_bytes())
    info = json.loads((other / "medlink_tagger.json").read_text())
    (other / "medlink_tagger.json").write_text(json.dumps({**info, "seconds": info["seconds"] + 1}))
    stale = medlink(*learned, "--tagger", other, text, check=False)
    assert stale.returncode == 2 and "fitted with another tagger" in stale.stderr
    alone = medlink("annotate", "--index", index, "--finder", "tagger", "--tagger", tagger, "--span-threshold", "0.5", text, check=False)
    assert alone.returncode == 2 and "needs --finder both" in alone.stderr
    not_learned = medlink("annotate", "--index", index, "--finder", "both", "--tagger", tagger, "--span-threshold", "0.5", text, check=False)
    assert not_learned.returncode == 2 and "for --combine learned; this run combines by confirmed (the default)" in not_learned.stderr
    (other / "span_selector.json").unlink()
    without = medlink(*learned, "--tagger", other, text, check=False)
    assert without.returncode == 2 and "has none" in without.stderr and "medlink train selector" in without.stderr

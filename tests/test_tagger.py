"""The mention tagger: sentence spans, BIO between spans and sub-tokens, windows, training that learns, folder safety.

The training run learns the fixture's spans with the packaged MiniLM (slow, dense); the windowing and
interruption tests use a one-layer random BERT with 64 positions built in a temporary folder, so a
window longer than the model allows fails loudly and each run takes a second.
"""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medlink.core import Document
from medlink.text.bio import (IGNORE, Span, constrained_labels, decode_labels, encode_labels, follows, labels_for, pack, tokenize_sentences,
                              trim_span, windows)
from medlink.text.sentences import split_sentences
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink

TRAIN = FIXTURES / "tagger" / "train.pubtator"


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Torch on one thread for this module's tiny batches: on a busy shared CPU a second thread mostly waits for the first."""
    try:
        import torch
    except ImportError:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


# -- sentences ------------------------------------------------------------------------------------------------

def test_sentences_split_at_clear_ends_only():
    text = ("Mutations in BRCA1 (e.g. 185delAG) cause breast cancer. The risk was 2.5-fold higher (p < 0.05). "
            "Dr. Smith et al. reported it in Fig. 2. J. Doe agreed! Did they? \"Yes.\" (Confirmed.) Über allem. 10 cases remained.")
    assert sentences(text) == ["Mutations in BRCA1 (e.g. 185delAG) cause breast cancer.", "The risk was 2.5-fold higher (p < 0.05).",
                               "Dr. Smith et al. reported it in Fig. 2.", "J. Doe agreed!", "Did they?", "\"Yes.\"", "(Confirmed.)",
                               "Über allem.", "10 cases remained."]
    # a note ends a sentence with "breast ca." or "gained wt.": an abbreviation only before a number ("ca. 1990")
    assert sentences("Mother w/ breast ca. Hx of GDM. Born ca. 1990 in Ohio.") == ["Mother w/ breast ca.", "Hx of GDM.", "Born ca. 1990 in Ohio."]


def test_sentences_keep_numbers_acronyms_and_lower_case_continuations():
    assert sentences("Glucose-6-phosphate dehydrogenase (G6PD; EC 1. 1. 1. 49) deficiency. It accounted for 7. 8% of cases.") == [
        "Glucose-6-phosphate dehydrogenase (G6PD; EC 1. 1. 1. 49) deficiency.", "It accounted for 7. 8% of cases."]
    assert sentences("Seen in the U.S. and i.e. in Europe. Given 5 mg. daily.") == ["Seen in the U.S. and i.e. in Europe.", "Given 5 mg. daily."]


def test_sentences_of_clinical_notes_break_at_blank_lines_list_items_and_headings():
    note = "HISTORY:\nType 2 diabetes\n- hypertension\n- asthma\n\nno known allergies\nPlan: review in 2 wks"
    assert sentences(note) == ["HISTORY:\nType 2 diabetes", "- hypertension", "- asthma", "no known allergies", "Plan: review in 2 wks"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=list("aZ1 .!?\n\t\"()é"), max_size=80))
def test_sentence_spans_never_lose_a_character(text):
    spans = split_sentences(text)
    at = 0
    for start, end in spans:
        assert at <= start < end and text[at:start].strip() == ""  # only white space between sentences
        assert not text[start].isspace() and not text[end - 1].isspace()
        at = end
    assert text[at:].strip() == ""


def test_sentence_splitting_is_linear():
    sentence = "Patients with cystic fibrosis (CF) were seen, e.g. in Dr. Who's clinic, at 2.5 mg. "
    started = time.perf_counter()
    assert len(split_sentences(sentence * 12_000)) == 12_000  # 1 MB
    assert split_sentences(sentence.lower() * 12_000) == [(0, 12_000 * len(sentence) - 1)]  # no capital after a full stop
    assert time.perf_counter() - started < 10  # about half a second: no scan starts over


# -- windows ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("length", [1, 30, 126, 127, 200, 1000, 5003])
def test_windows_tile_a_sentence_with_context_on_both_sides(length):
    found = windows(length, 126, 31)
    assert found[0][2] == 0 and found[-1][3] == length
    assert all(end - start <= 126 for start, end, _, _ in found)
    assert all(a[3] == b[2] for a, b in zip(found, found[1:]))  # owned ranges tile [0, length)
    assert all(start <= own_start <= own_end <= end for start, end, own_start, own_end in found)
    assert len(found) <= length // (126 - 31) + 2  # linear in the length


def test_pack_keeps_sentences_whole_unless_one_is_longer_than_a_window():
    lengths = [10, 20, 40, 300, 5, 0, 7]
    packed = pack(lengths, 64, 16)
    assert packed[:1] == [(0, 30, 0, 30)] and packed[-1] == (370, 382, 370, 382)
    assert all(end - start <= 64 for start, end, _, _ in packed)
    assert [p[2] for p in packed][1:] == [p[3] for p in packed][:-1] and packed[-1][3] == sum(lengths)


# -- BIO --------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tokenizer():
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from medlink.encoders.transformer import default_model_dir

    return AutoTokenizer.from_pretrained(default_model_dir(), local_files_only=True)


LABELS = labels_for(["Disease"])
IDS = {label: i for i, label in enumerate(LABELS)}
TEXT = "Patients with Sjögren syndrome and BRCA1-associated breast cancer (e.g. HNPCC) were seen."


def spans_of(text: str, *mentions: str) -> list[Span]:
    return [Span(text.index(m), text.index(m) + len(m), "Disease") for m in mentions]


def test_bio_labels_first_sub_token_of_each_word_only(tokenizer):
    [sentence] = tokenize_sentences(tokenizer, TEXT, [(0, len(TEXT))])
    labels = encode_labels(sentence, spans_of(TEXT, "Sjögren syndrome", "breast cancer", "HNPCC"), IDS)
    pieces = [(TEXT[a:b], labels[i]) for i, (a, b) in enumerate(sentence.offsets)]
    assert pieces[2:6] == [("S", IDS["B-Disease"]), ("jö", IGNORE), ("gren", IGNORE), ("syndrome", IDS["I-Disease"])]
    assert [p for p in pieces if p[0] in ("breast", "cancer", "H", "NP", "CC", "(")] == [
        ("breast", IDS["B-Disease"]), ("cancer", IDS["I-Disease"]), ("(", IDS["O"]), ("H", IDS["B-Disease"]), ("NP", IGNORE), ("CC", IGNORE)]


@pytest.mark.parametrize("mentions", [("Sjögren syndrome", "breast cancer", "HNPCC"), ("BRCA1-associated breast cancer",), ("Patients",), ()])
def test_bio_round_trip_gives_the_exact_character_spans(tokenizer, mentions):
    text = "  " + TEXT + "\u00a0Ménière disease."  # offsets into the original string, not a normalised one
    gold = spans_of(text, *mentions) + spans_of(text, "Ménière disease")
    [sentence] = tokenize_sentences(tokenizer, text, [(2, len(text))])
    labels = encode_labels(sentence, gold, IDS)
    decoded = decode_labels(sentence, [max(label, 0) for label in labels], LABELS, text)
    assert decoded == sorted(gold, key=lambda s: s.start)
    assert [text[s.start:s.end] for s in decoded] == [*mentions, "Ménière disease"]


def test_bio_decoding_repairs_and_trims(tokenizer):
    text = "Risk of (HNPCC and colon cancer, or ovarian cancer."
    [sentence] = tokenize_sentences(tokenizer, text, [(0, len(text))])
    firsts = list(sentence.first_tokens())
    assert [text[sentence.offsets[i][0]:sentence.word_end[i]] for i in firsts] == [
        "Risk", "of", "(", "HNPCC", "and", "colon", "cancer", ",", "or", "ovarian", "cancer", "."]
    predicted = [0] * len(sentence.ids)
    for i, tag in zip(firsts, ["O", "O", "I", "I", "O", "B", "I", "I", "O", "O", "O", "O"]):  # starts with I; runs over a comma
        predicted[i] = IDS["O" if tag == "O" else f"{tag}-Disease"]
    assert [text[s.start:s.end] for s in decode_labels(sentence, predicted, LABELS, text)] == ["HNPCC", "colon cancer"]
    assert trim_span("x (T1D) y", Span(2, 7, "D")) == Span(2, 7, "D")  # balanced brackets stay
    assert trim_span("G6PD A- deficiency", Span(0, 7, "D")) == Span(0, 7, "D")  # a trailing hyphen is part of some names
    assert trim_span(" , ", Span(0, 3, "D")) is None


def test_an_i_after_o_or_another_type_starts_a_span(tokenizer):
    text = "colon cancer and breast tumour"
    labels = labels_for(["A", "B"])
    ids = {label: i for i, label in enumerate(labels)}
    [sentence] = tokenize_sentences(tokenizer, text, [(0, len(text))])
    predicted = [ids[tag] for tag in ("I-A", "I-A", "O", "B-A", "I-B")]
    assert decode_labels(sentence, predicted, labels, text) == [Span(0, 12, "A"), Span(17, 23, "A"), Span(24, 30, "B")]


def test_constrained_decoding_reads_the_whole_sentence():
    """A word the argmax calls outside between two inside-leaning words: the best whole sequence keeps one span."""
    import numpy as np

    labels = labels_for(["Disease"])  # O, B-Disease, I-Disease
    rows = np.array([[0.05, 0.90, 0.05], [0.55, 0.00, 0.45], [0.05, 0.05, 0.90]])
    assert rows.argmax(1).tolist() == [1, 0, 2]  # argmax: "colon" alone, then an I after an O starts a second span
    assert constrained_labels(rows, labels).tolist() == [1, 2, 2]  # .9 x .45 x .9 beats .9 x .55 x .05 (B O B)
    # an I never opens a sentence nor follows O: the best legal sequence turns it into B
    assert constrained_labels(np.array([[0.1, 0.3, 0.6], [0.9, 0.05, 0.05]]), labels).tolist() == [1, 0]
    assert constrained_labels(np.zeros((0, 3)), labels).tolist() == []


def test_constrained_decoding_keeps_types_apart():
    import numpy as np

    labels = labels_for(["A", "B"])  # O, B-A, I-A, B-B, I-B
    allowed = follows(labels)
    assert allowed[labels.index("B-A"), labels.index("I-A")] and not allowed[labels.index("B-A"), labels.index("I-B")]
    assert not allowed[0, labels.index("I-A")] and allowed[labels.index("I-B"), labels.index("B-A")]
    rows = np.array([[0.0, 0.9, 0.0, 0.1, 0.0], [0.0, 0.0, 0.4, 0.0, 0.6]])  # I-B after B-A is not a sequence: I-A or B-B
    assert [labels[i] for i in constrained_labels(rows, labels)] == ["B-A", "I-A"]


# -- training, the finder, folder safety --------------------------------------------------------------------------

def gold_documents():
    from medlink.training.tagger_data import read_annotated

    return read_annotated(f"pubtator:{TRAIN}")[0]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tagger trained on the fixture through the command line (packaged MiniLM, 32-token windows: a few seconds)."""
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("tagger") / "tagger"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OMP_NUM_THREADS", "1")  # tiny batches: a second thread only waits for the first on a busy shared CPU
        result = medlink("train", "tagger", "--train", f"pubtator:{TRAIN}", "--dev", f"pubtator:{TRAIN}", "--out", out, "--epochs", "8",
                         "--lr", "5e-4", "--batch-size", "8", "--max-length", "32", "--seed", "3")
    assert "wrote" in result.stdout and "kept epoch" in result.stdout
    return out


@pytest.mark.slow
@pytest.mark.dense
def test_a_trained_tagger_finds_its_training_spans(trained):
    from medlink.text.finders.base import MentionFinder
    from medlink.text.finders.tagger import TaggerFinder
    from medlink.training.tagger import evaluate

    finder = TaggerFinder.load(trained)
    assert isinstance(finder, MentionFinder) and finder.name == "tagger"
    scores = evaluate(finder, gold_documents())
    assert scores["recall"] >= 0.8 and scores["precision"] >= 0.6, scores  # an untrained head finds nothing
    info = json.loads((trained / "medlink_tagger.json").read_text())
    assert info["labels"] == ["O", "B-Disease", "I-Disease"] and info["max_length"] == 32 and info["collapse_types"] is True
    assert info["data"]["train"][0]["sha256"] == info["data"]["dev"][0]["sha256"] and info["data"]["train"][0]["mentions"] == 31
    assert len(info["epochs"]) == 8 and info["best_epoch"] == max(info["epochs"], key=lambda e: e["dev"]["f1"])["epoch"]
    assert info["precision"] == "auto" and info["training_precision"] in ("fp32", "bf16") and info["config"]["seed"] == 3 and info["seconds"] > 0


@pytest.mark.slow
@pytest.mark.dense
def test_found_spans_are_slices_of_the_original_text(trained):
    from medlink.text.finders.tagger import TaggerFinder

    text = "Ünter uns: patients with Sjögren syndrome  and\u00a0cystic fibrosis were seen.\n\nHuntington disease is rare."
    finder = TaggerFinder.load(trained, precision="fp32")
    found = finder.find(Document.from_text(text, "x"))
    assert finder.find(Document.from_text("")) == finder.find(Document.from_text(" \n ")) == []
    assert found and all(a.text == text[a.start:a.end] and a.source == "tagger" and a.type == "Disease" for a in found)
    assert [a.start for a in found] == sorted(a.start for a in found)
    assert "Sjögren syndrome" in [a.text for a in found]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, tokenizer):
    """A one-layer random BERT with 64 positions and the MiniLM tokenizer: fast, and it fails on a window that is too long."""
    pytest.importorskip("torch")
    from transformers import BertConfig, BertForTokenClassification

    folder = tmp_path_factory.mktemp("tiny") / "model"
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=64, num_labels=3)
    BertForTokenClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.dense
def test_a_long_document_goes_through_in_windows(tiny_model, tmp_path):
    from medlink.training.tagger import TaggerConfig, train_tagger
    from medlink.text.finders.tagger import TaggerFinder

    train_tagger(gold_documents()[:2], tmp_path / "t", base_model=tiny_model, config=TaggerConfig(epochs=1, max_length=64), progress=False)
    finder = TaggerFinder.load(tmp_path / "t")
    text = ("cystic fibrosis and breast cancer with no full stop " * 2000) + "Sjögren syndrome. " * 2000  # 140 KB
    calls = []
    probabilities = finder.probabilities
    finder.probabilities = lambda stream, items: calls.append((len(stream), list(items))) or probabilities(stream, items)
    found = finder.find(Document.from_text(text))
    assert all(a.text == text[a.start:a.end] for a in found)
    tokens = sum(n for n, _ in calls)
    windows_read = sum(len(items) for _, items in calls)
    assert tokens > 20_000 and windows_read <= tokens / (62 - 15) + 2 * len(calls)  # linear: no window read twice


@pytest.mark.dense
def test_a_batch_read_ahead_finds_what_one_document_at_a_time_finds_in_fewer_passes(tiny_model, tmp_path):
    """The annotator lets the tagger read a batch's windows together (sorted by length across documents); each
    document's spans and word probabilities are what reading it alone gives, a document not in the batch is read alone."""
    import numpy as np

    from medlink.training.tagger import TaggerConfig, train_tagger
    from medlink.text.finders.tagger import TaggerFinder

    train_tagger(gold_documents()[:2], tmp_path / "t", base_model=tiny_model, config=TaggerConfig(epochs=1, max_length=64), progress=False)
    finder = TaggerFinder.load(tmp_path / "t", precision="fp32")
    documents = gold_documents() + [Document.from_text(""), Document.from_text("Sjögren syndrome. " * 30, "long")]
    passes = []
    forward = finder.model.forward
    finder.model.forward = lambda *a, **k: passes.append(1) or forward(*a, **k)
    alone = [finder.tag(d) for d in documents]
    passes_alone = len(passes)
    passes.clear()
    finder.read_ahead(documents)
    together = [finder.tag(d) for d in documents]
    assert len(passes) < passes_alone and passes_alone >= len(documents) - 1
    for (spans, words), (spans_together, words_together) in zip(alone, together):
        assert [a.span for a in spans] == [a.span for a in spans_together]
        assert [(w.start, w.end) for w in words] == [(w.start, w.end) for w in words_together]
        assert np.allclose([(w.outside, w.begins, w.inside) for w in words], [(w.outside, w.begins, w.inside) for w in words_together], atol=1e-5)
    passes.clear()
    other = Document.from_text("cystic fibrosis")
    assert [a.span for a in finder.find(other)] == [a.span for a in finder.tag(Document.from_text("cystic fibrosis"))[0]] and len(passes) == 2


@pytest.mark.dense
def test_told_where_spans_can_be_kept_the_tagger_reads_only_the_windows_there(tiny_model, tmp_path):
    """Under the confirmed combination the tagger is told where the dictionary found spans: it reads only the windows
    owning those sentences, and its spans there are exactly those of a full reading (nothing reported elsewhere)."""
    from medlink.training.tagger import TaggerConfig, train_tagger
    import numpy as np

    from medlink.text.finders.tagger import TaggerFinder, overlapped

    assert overlapped([(0, 10), (10, 20), (20, 30)], [(5, 12)]) == [True, True, False]
    assert overlapped([(0, 10), (10, 20)], [(10, 10)]) == [False, False] and overlapped([(0, 10)], []) == [False]
    train_tagger(gold_documents()[:2], tmp_path / "t", base_model=tiny_model, config=TaggerConfig(epochs=1, max_length=64), progress=False)
    finder = TaggerFinder.load(tmp_path / "t", precision="fp32")
    sentences = [f"Patient {i} had cystic fibrosis and breast cancer with renal failure and Sjögren syndrome today." for i in range(8)]
    document = Document.from_text(" ".join(sentences))
    third = document.text.index(sentences[3])
    windows = []
    probabilities = finder.probabilities
    finder.probabilities = lambda stream, items: windows.append(len(items)) or probabilities(stream, items)
    everywhere, words_everywhere = finder.tag(document)
    finder.read_ahead([document], [[(third + 8, third + 23)]])
    there, words_there = finder.tag(document)
    assert windows[1] < windows[0] and len(windows) == 2  # the second read (read ahead) served tag
    in_third = [a.span for a in everywhere if third <= a.start < third + len(sentences[3])]
    assert [a.span for a in there] == in_third  # the spans a one-epoch model finds (maybe none), and none elsewhere
    third_words = [w for w in words_everywhere if third <= w.start < third + len(sentences[3])]
    read_words = [w for w in words_there if third <= w.start < third + len(sentences[3])]
    assert third_words and [(w.start, w.end) for w in read_words] == [(w.start, w.end) for w in third_words]
    assert np.allclose([(w.outside, w.begins, w.inside) for w in read_words], [(w.outside, w.begins, w.inside) for w in third_words], atol=1e-5)


@pytest.mark.dense
def test_the_finder_decodes_each_sentence_as_one_sequence(tiny_model, tokenizer):
    """The finder reads its label probabilities through the constrained decoder (the argmax kept for comparison)."""
    import numpy as np
    from transformers import AutoModelForTokenClassification

    from medlink.errors import MedlinkError
    from medlink.text.finders.tagger import TaggerFinder

    finder = TaggerFinder(AutoModelForTokenClassification.from_pretrained(tiny_model), tokenizer, labels_for(["Disease"]), 64)
    text = "alpha beta gamma. delta"
    words = {"alpha": [0.05, 0.9, 0.05], "beta": [0.55, 0.0, 0.45], "gamma": [0.05, 0.05, 0.9], "delta": [0.2, 0.3, 0.5]}
    finder.probabilities = lambda stream, items: np.array([words.get(tokenizer.convert_ids_to_tokens(t), [1.0, 0.0, 0.0]) for t in stream])
    found = lambda: [a.text for a in finder.find(Document.from_text(text))]  # noqa: E731
    assert finder.decoding == "constrained" and found() == ["alpha beta gamma", "delta"]  # "delta" opens its sentence: B, not I
    finder.decoding = "argmax"
    assert found() == ["alpha", "gamma", "delta"]
    with pytest.raises(MedlinkError, match="constrained, argmax"):
        finder.decoding = "viterbi"


@pytest.mark.dense
def test_training_refuses_a_folder_that_is_not_a_tagger(tiny_model, tmp_path):
    from medlink.errors import MedlinkError
    from medlink.training.tagger import TaggerConfig, train_tagger

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me")
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "medlink_tagger.json").write_text('{"labels": []}')
    for folder in ("notes", "fake"):
        with pytest.raises(MedlinkError, match="not a medlink tagger folder"):
            train_tagger(gold_documents(), tmp_path / folder, base_model=tiny_model, config=TaggerConfig(epochs=1), progress=False)
    assert (tmp_path / "notes" / "mine.txt").read_text() == "keep me"
    refused = medlink("train", "tagger", "--train", f"pubtator:{TRAIN}", "--out", tmp_path / "notes", check=False)
    assert refused.returncode == 2 and "not a medlink tagger folder" in refused.stderr
    wrong_format = medlink("train", "tagger", "--train", f"biosyn:{TRAIN}", "--out", tmp_path / "new", check=False)
    assert wrong_format.returncode == 2 and "pubtator" in wrong_format.stderr and not (tmp_path / "new").exists()


@pytest.mark.dense
def test_an_interrupted_run_leaves_the_earlier_tagger_whole(tiny_model, tmp_path, monkeypatch):
    from medlink.training import tagger as training
    from medlink.text.finders.tagger import TaggerFinder

    out = tmp_path / "t"
    training.train_tagger(gold_documents(), out, base_model=tiny_model, config=training.TaggerConfig(epochs=1, max_length=64), progress=False)
    before = {path.name: path.read_bytes() for path in out.iterdir()}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(training, "_train_epoch", interrupted)
    with pytest.raises(KeyboardInterrupt):
        training.train_tagger(gold_documents(), out, base_model=tiny_model, config=training.TaggerConfig(epochs=2, max_length=64), progress=False)
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["t"]  # no staging folder or lock left
    monkeypatch.undo()
    training.train_tagger(gold_documents(), out, base_model=tiny_model, config=training.TaggerConfig(epochs=2, max_length=64), progress=False)
    assert len(json.loads((out / "medlink_tagger.json").read_text())["epochs"]) == 2  # an earlier tagger is replaced
    assert TaggerFinder.load(out).max_length == 64


@pytest.mark.dense
def test_layers_cut_the_base_model_and_the_tagger_loads_as_cut(tokenizer, tmp_path):
    from transformers import BertConfig, BertForTokenClassification

    from medlink.errors import MedlinkError
    from medlink.text.finders.tagger import TaggerFinder
    from medlink.training.tagger import TaggerConfig, train_tagger

    base = tmp_path / "three-layers"
    BertForTokenClassification(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
                                          intermediate_size=64, max_position_embeddings=64, num_labels=3)).save_pretrained(base)
    tokenizer.save_pretrained(base)
    train_tagger(gold_documents(), tmp_path / "cut", base_model=base, config=TaggerConfig(epochs=1, max_length=64, layers=2), progress=False)
    finder = TaggerFinder.load(tmp_path / "cut")
    assert len(finder.model.base_model.encoder.layer) == 2 and finder.model.config.num_hidden_layers == 2
    assert json.loads((tmp_path / "cut" / "medlink_tagger.json").read_text())["config"]["layers"] == 2
    with pytest.raises(MedlinkError, match="only 3 layers"):
        train_tagger(gold_documents(), tmp_path / "more", base_model=base, config=TaggerConfig(epochs=1, max_length=64, layers=4), progress=False)
    assert not (tmp_path / "more").exists()
    with pytest.raises(MedlinkError, match="layers .--layers. must be a whole number, 1 or more"):
        TaggerConfig(layers=0)


def test_cli_help_lists_the_tagger_options():
    out = medlink("train", "tagger", "--help").stdout
    for option in ("--train", "--dev", "--out", "--model", "--epochs", "--batch-size", "--lr", "--max-length", "--precision", "--seed",
                   "--layers", "--collapse-types / --keep-types"):
        assert option in out, option
    assert "tagger" in medlink("train", "--help").stdout

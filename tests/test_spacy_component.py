"""medlink as a spaCy component, as a spaCy user adds it: ``nlp.add_pipe("medlink", config=...)`` on ``spacy.blank("en")``
(no model download), with small indexes built here (never the default one)."""

import subprocess
import sys
from pathlib import Path

import pytest

spacy = pytest.importorskip("spacy", reason="the spaCy component needs the spacy extra: pip install 'medlink[spacy]'")

from medlink.core import Assertion, LinkResult  # noqa: E402
from medlink.linking.index import build_index  # noqa: E402
from tests.test_calibration import organ_kb  # noqa: E402,F401 - the fixture

TEXT = "No kidney cyst was seen. Mother had liver failure. Renal cyst grew."


@pytest.fixture(scope="module")
def organ_index(organ_kb, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("spacy-organs") / "index"
    build_index(organ_kb, out)
    return out


@pytest.fixture(scope="module")
def disease_index(kb, tmp_path_factory) -> Path:
    """A second, different index (the eval fixture's 14 disease names)."""
    out = tmp_path_factory.mktemp("spacy-diseases") / "index"
    build_index(kb, out)
    return out


@pytest.fixture(scope="module")
def nlp(organ_index):
    pipeline = spacy.blank("en")
    pipeline.add_pipe("medlink", config={"index": str(organ_index), "k": 3})
    return pipeline


def spans(doc, key="medlink", prefix="medlink"):
    kb = "kb_ents" if prefix == "medlink" else f"{prefix}_kb_ents"
    return [(s.start_char, s.end_char, s.text, s._.get(kb), s._.get(f"{prefix}_ids"), s._.get(f"{prefix}_assertion"))
            for s in doc.spans[key]]


def test_dictionary_spans_carry_kb_ents_the_link_result_ids_and_assertion(nlp):
    doc = nlp(TEXT)
    found = {text: (kb_ents, ids, said.status) for _, _, text, kb_ents, ids, said in spans(doc)}
    assert set(found) == {"kidney cyst", "liver failure", "Renal cyst"}
    assert found["kidney cyst"][0][0][0] == "C0020" and found["kidney cyst"][1] == ("C0020",) and found["kidney cyst"][2] == "absent"
    assert found["liver failure"][2] == "someone_else" and found["Renal cyst"][2] == "present"
    assert all(len(kb_ents) <= 3 and all(isinstance(score, float) for _, score in kb_ents) for kb_ents, _, _ in found.values())
    first = doc.spans["medlink"][0]
    assert isinstance(first._.medlink, LinkResult) and isinstance(first._.medlink_assertion, Assertion)
    assert [(e.text, e.label_) for e in doc.ents] == [("kidney cyst", "ENTITY"), ("liver failure", "ENTITY"), ("Renal cyst", "ENTITY")]
    assert doc.ents[0]._.kb_ents == first._.kb_ents  # an entity reads its span's results


def test_found_spans_do_not_replace_entities_already_there(organ_index):
    pipeline = spacy.blank("en")
    ruler = pipeline.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "ORGAN", "pattern": [{"LOWER": "kidney"}]}])
    pipeline.add_pipe("medlink", config={"index": str(organ_index)})
    doc = pipeline(TEXT)
    assert [(e.text, e.label_) for e in doc.ents] == [("kidney", "ORGAN"), ("liver failure", "ENTITY"), ("Renal cyst", "ENTITY")]
    assert "kidney cyst" in [s.text for s in doc.spans["medlink"]]  # still found and linked, in the span group


def test_a_span_inside_a_token_splits_it_unless_asked_not_to(nlp, organ_index):
    text = "A renal cyst-1 grew."
    doc = nlp(text)
    assert [(s.start_char, s.end_char) for s in doc.spans["medlink"]] == [(2, 12)]  # as medlink annotate finds it
    assert [t.text for t in doc] == ["A", "renal", "cyst", "-1", "grew", "."] and doc.text == text
    kept = spacy.blank("en")
    kept.add_pipe("medlink", config={"index": str(organ_index), "split_tokens": False})
    doc = kept(text)
    assert [s.text for s in doc.spans["medlink"]] == ["renal cyst-1"] and [t.text for t in doc][2] == "cyst-1"


def test_ents_mode_links_the_entities_of_another_component(organ_index):
    pipeline = spacy.blank("en")
    ruler = pipeline.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "DISEASE", "pattern": "renal cyst"}, {"label": "DISEASE", "pattern": "liver failure"},
                        {"label": "PERSON", "pattern": "Mother"}])
    pipeline.add_pipe("medlink", config={"index": str(organ_index), "finder": "ents", "labels": ["DISEASE"]})
    doc = pipeline("Mother had liver failure. A renal cyst.")
    assert [(e.text, e.label_) for e in doc.ents] == [("Mother", "PERSON"), ("liver failure", "DISEASE"), ("renal cyst", "DISEASE")]
    assert doc.ents[0]._.kb_ents is None  # not a label asked for: not linked
    assert doc.ents[1]._.kb_ents[0][0] == "C0001" and doc.ents[1]._.medlink_assertion.status == "someone_else"
    assert doc.ents[2]._.medlink_ids == ("C0020",)
    assert [s.text for s in doc.spans["medlink"]] == ["liver failure", "renal cyst"]


def test_pipe_batches_across_documents_and_equals_one_at_a_time(nlp):
    texts = [TEXT, "Hepatic failure (HF) then HF again.", "", "Nothing here.", "Lung fibrosis and no cardiac tumour."] * 3
    component = nlp.get_pipe("medlink")
    calls = []
    real = component.annotator.annotate

    def counted(documents, *args, **kwargs):
        documents = list(documents)
        calls.append(len(documents))
        return real(documents, *args, **kwargs)

    component.annotator.annotate = counted
    try:
        piped = [spans(doc) for doc in nlp.pipe(texts, batch_size=8)]
        assert calls == [8, 7]  # one annotator call a batch, not one a document
        alone = [spans(nlp(text)) for text in texts]
    finally:
        del component.annotator.annotate
    assert piped == alone and sum(map(len, piped)) >= 15


def test_to_disk_and_spacy_load_round_trip_without_pickling_medlink(nlp, tmp_path):
    nlp.to_disk(tmp_path / "pipeline")
    saved = sorted(p.name for p in (tmp_path / "pipeline").iterdir())
    assert "medlink" not in saved and "index" in (tmp_path / "pipeline" / "config.cfg").read_text()
    again = spacy.load(tmp_path / "pipeline")
    assert spans(again(TEXT)) == spans(nlp(TEXT))
    fresh = subprocess.run(  # a new process finds the factory through the spacy_factories entry point
        [sys.executable, "-c", "import spacy, sys; d = spacy.load(sys.argv[1])('a renal cyst'); print(d.ents[0]._.kb_ents[0][0])",
         str(tmp_path / "pipeline")], capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    assert fresh.stdout.strip() == "C0020"


def test_linked_docs_survive_docbin_and_pickle(nlp):
    import pickle

    from spacy.tokens import DocBin

    doc = nlp(TEXT)
    stored = DocBin(store_user_data=True)
    stored.add(doc)
    (back,) = DocBin(store_user_data=True).from_bytes(stored.to_bytes()).get_docs(nlp.vocab)
    again = pickle.loads(pickle.dumps(doc))
    for copy in (back, again):
        assert spans(copy) == spans(doc)
        assert [s._.medlink for s in copy.spans["medlink"]] == [s._.medlink for s in doc.spans["medlink"]]


def test_two_components_with_different_indexes_keep_their_own_results(organ_index, disease_index):
    pipeline = spacy.blank("en")
    ruler = pipeline.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "DISEASE", "pattern": "kidney cyst"}, {"label": "DISEASE", "pattern": "breast cancer"}])
    pipeline.add_pipe("medlink", name="organs", config={"index": str(organ_index), "finder": "ents"})
    pipeline.add_pipe("medlink", name="diseases", config={"index": str(disease_index), "finder": "ents"})
    doc = pipeline("A kidney cyst and breast cancer.")
    cyst, cancer = doc.ents
    assert cyst._.organs_kb_ents[0][0] == "C0020" and cancer._.diseases_ids == ("D001943",)
    assert cyst._.organs.candidates[0].concept_id != cyst._.diseases.candidates[0].concept_id  # both kept on one span
    assert not cyst._.diseases_kb_ents or cyst._.diseases_kb_ents[0][0].startswith("D")
    found = spacy.blank("en")
    found.add_pipe("medlink", name="organs", config={"index": str(organ_index)})
    found.add_pipe("medlink", name="diseases", config={"index": str(disease_index)})
    doc = found("Breast cancer and breast tumour.")
    assert [s.text for s in doc.spans["organs"]] == ["breast tumour"]
    assert "Breast cancer" in [s.text for s in doc.spans["diseases"]]


def test_bad_settings_are_named(organ_index):
    with pytest.raises(ValueError, match="unknown medlink finder 'tagger'"):
        spacy.blank("en").add_pipe("medlink", config={"index": str(organ_index), "finder": "tagger"})
    with pytest.raises(ValueError, match="use letters, digits and _"):
        spacy.blank("en").add_pipe("medlink", name="my-linker", config={"index": str(organ_index)})

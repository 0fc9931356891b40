"""The public API as a user's program calls it: ``import medlink`` and nothing else."""

import threading
from pathlib import Path

import pytest

import medlink
from medlink.linking.index import build_index
from tests.test_calibration import organ_kb  # noqa: F401 - the fixture


@pytest.fixture(scope="module")
def index_dir(organ_kb, tmp_path_factory) -> Path:
    """A calibrated index (probabilities fitted on the KB's own held-out synonyms)."""
    out = tmp_path_factory.mktemp("api") / "index"
    build_index(organ_kb, out)
    return out


def test_every_public_name_resolves_and_the_package_is_typed():
    assert all(getattr(medlink, name) is not None for name in medlink.__all__)
    assert {"link", "annotate", "load_index", "Mention", "Candidate", "LinkResult", "Document", "Annotation", "Linker", "KB"} <= set(medlink.__all__)
    assert (Path(medlink.__file__).parent / "py.typed").is_file()
    with pytest.raises(AttributeError):
        medlink.not_a_name  # noqa: B018


def test_link_takes_strings_or_mentions_and_gives_one_result_each_in_order(index_dir):
    results = medlink.link(["kidney cyst", medlink.Mention("renal cyst", left="a"), "   "], index=index_dir, k=2)
    assert [r.mention.text for r in results] == ["kidney cyst", "renal cyst", "   "]
    assert results[0].best is not None and len(results[0].candidates) <= 2 and results[2].error
    one = medlink.link("kidney cyst", index=index_dir)  # a single string is one mention, not its letters
    assert len(one) == 1 and one[0].best.concept_id == results[0].best.concept_id


def test_a_nil_threshold_for_one_call_leaves_the_shared_index_as_it_was(index_dir):
    before = medlink.link(["kidny cysts"], index=index_dir)[0]
    assert before.probability is not None and before.nil  # under the index's own threshold
    assert medlink.link(["kidny cysts"], index=index_dir, nil_threshold=0.0)[0].nil is False
    assert medlink.link(["kidny cysts"], index=index_dir)[0].nil


def test_threads_share_one_loaded_index(index_dir):
    found = []
    threads = [threading.Thread(target=lambda: found.append(medlink.link(["kidney cyst"], index=index_dir)[0].best.concept_id))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(found)) == 1 and len(found) == 4
    assert medlink._shared_index(index_dir) is medlink._shared_index(str(index_dir))


def test_annotate_takes_a_text_or_a_list_and_marks_assertion_as_a_typed_field(index_dir):
    one = medlink.annotate("No kidney cyst seen.", index=index_dir)
    assert isinstance(one, medlink.Document) and [a.text for a in one.annotations] == ["kidney cyst"]
    said = one.annotations[0].assertion
    assert isinstance(said, medlink.Assertion) and said.status == "absent" and said.cue == "no"
    many = medlink.annotate(["kidney cyst", medlink.Document.from_text("renal cyst", "note-2")], index=index_dir)
    assert [d.doc_id for d in many] == ["1", "note-2"] and [[a.text for a in d.annotations] for d in many] == [["kidney cyst"], ["renal cyst"]]
    assert medlink.annotate("kidny cysts", index=index_dir, nil_threshold=0.0).annotations[0].result.nil is False


def test_link_names_what_it_cannot_take(index_dir):
    with pytest.raises(TypeError, match="strings or medlink.Mention objects, not NoneType"):
        medlink.link([None], index=index_dir)
    with pytest.raises(medlink.MedlinkError, match="at least 1, not 0"):
        medlink.link(["kidney cyst"], index=index_dir, k=0)
    assert {"Annotator", "AnnotateOptions"} <= set(medlink.__all__) and medlink.Annotator.load(index_dir).annotate_text("kidney cyst").annotations


def test_a_linker_reads_one_string_as_one_mention_and_names_a_k_it_cannot_take(index_dir):
    linker = medlink.load_index(index_dir)
    [one] = linker.link("kidney cyst", k=2)  # not one mention per character
    assert one.mention.text == "kidney cyst" and one.candidates
    assert [r.mention.text for r in linker.link(medlink.Mention("renal cyst"))] == ["renal cyst"]
    for wrong in (0, -1, True):
        with pytest.raises(medlink.MedlinkError, match="at least 1"):
            linker.link(["kidney cyst"], k=wrong)
    with pytest.raises(TypeError, match="Linker.link takes strings or medlink.Mention objects, not int"):
        linker.link([3])

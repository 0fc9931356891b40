"""The aligner's bi-encoder: it reads target names without their episode-of-care qualifier, and an alignment run again
reads both sides' vectors from the encode cache (tests/fixtures/align: a mini DO and a mini ICD-10-CM-like target)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from medlink.align.candidates import SourceQueries, TargetIndex, generate
from medlink.align.inputs import open_pair
from medlink.align.scoring import Calibration
from medlink.kb.build import build_kb

FIXTURES = Path(__file__).parent / "fixtures" / "align"


def test_an_aligner_whose_qualifier_is_not_a_pattern_is_refused():
    calibration = Calibration({"cross": 1.0}, depth=4, dense_strip="(")
    with pytest.raises(ValueError, match='"dense_strip" .* is not a regular expression'):
        calibration.check()
    assert Calibration({"cross": 1.0}, depth=4).dense_strip is None  # aligners trained before read names whole


def test_the_bi_encoder_reads_a_target_name_without_its_episode_of_care(tmp_path):
    """ICD-10-CM's seventh characters say when the patient is seen ("..., initial encounter"), not what they have: the
    bi-encoder reads the condition once (``align.dense.QUALIFIERS``), as candidates and as similarity alike."""
    pytest.importorskip("torch")
    from medlink.align.dense import QUALIFIERS, KeyVectors, bi_encoder_similarity, with_dense_candidates
    from medlink.retrieval.dense import stripped

    assert stripped(["fracture of femur initial encounter for closed fracture", "fracture of femur sequela", "sequela"], QUALIFIERS) \
        == ["fracture of femur", "fracture of femur", "sequela"]  # a name that is all qualifier keeps its text
    tsv = tmp_path / "t.tsv"
    tsv.write_text("id\tname\nS72.0\tFracture of femur\nS72.0A\tFracture of femur, initial encounter for closed fracture\n"
                   "S72.0S\tFracture of femur, sequela\nJ45\tAsthma\n", encoding="utf-8")
    build_kb(tmp_path / "t.sqlite", [f"tsv=ICD10CM:{tsv}"], progress=False)
    build_kb(tmp_path / "s.sqlite", [f"obo:{FIXTURES / 'source.obo'}"], progress=False)
    _source, target = open_pair(tmp_path / "s.sqlite", tmp_path / "t.sqlite")
    query = SourceQueries(["X:1"], ["broken femur"], [target.normalize("broken femur")], np.zeros(1, np.int64), [["broken femur"]])
    kept = with_dense_candidates(TargetIndex.build(target), "packaged")
    cut = with_dense_candidates(TargetIndex.build(target), "packaged", QUALIFIERS)
    assert cut.generators["dense"].params["strip"] == QUALIFIERS and kept.generators["dense"].params["strip"] is None
    for index in (kept, cut):
        candidates = generate(index, query, k=4, ancestors=0)
        similarity = dict(zip((index.concept_ids[c] for c in candidates.hits.concepts), bi_encoder_similarity(candidates, KeyVectors(index, "packaged"))))
        episodes = [similarity["ICD10CM:S72.0A"], similarity["ICD10CM:S72.0S"]]
        if index is cut:  # the condition and its episodes are one text to the bi-encoder
            assert np.allclose(episodes, similarity["ICD10CM:S72.0"], atol=1e-5)
        else:
            assert not np.allclose(episodes, similarity["ICD10CM:S72.0"], atol=1e-3)
    plain = TargetIndex.build(target)  # without the dense generator, the bi-encoder reads the same texts
    candidates = generate(cut, query, k=4, ancestors=0)
    alone = bi_encoder_similarity(candidates.__class__(candidates.queries, plain, candidates.hits, {}), KeyVectors(plain, "packaged", strip=QUALIFIERS))
    assert np.allclose(alone, bi_encoder_similarity(candidates, KeyVectors(cut, "packaged")), atol=0.02)


def test_an_alignment_again_encodes_neither_the_target_names_nor_the_source_aliases(tmp_path, monkeypatch):
    """The source aliases the bi-encoder searches go through the encode cache, as the target's names do: aligning the
    same pair again (another threshold, another --top-k) encodes nothing, and ranks as the first run did."""
    pytest.importorskip("torch")
    from medlink.align.aligner import AlignOptions, align
    from medlink.encoders.transformer import Encoder

    monkeypatch.setenv("MEDLINK_HOME", str(tmp_path / "home"))
    build_kb(tmp_path / "s.sqlite", [f"obo:{FIXTURES / 'source.obo'}"], progress=False)
    build_kb(tmp_path / "t.sqlite", [f"tsv=ICD10CM:{FIXTURES / 'target.tsv'}"], progress=False)
    source, target = open_pair(tmp_path / "s.sqlite", tmp_path / "t.sqlite")
    first = align(source, target, AlignOptions(bi_encoder="packaged"), progress=False)
    monkeypatch.setattr(Encoder, "encode", lambda *args, **kwargs: pytest.fail("encoded again"))
    again = align(source, target, AlignOptions(bi_encoder="packaged"), progress=False)
    assert again.ranked_ids() == first.ranked_ids() and np.allclose(again.scores, first.scores)

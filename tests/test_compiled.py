"""The compiled TF-IDF, BM25 and fusion paths (a large batch) give the numpy paths' hits: the same concepts, scores, names,
stages and priors."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

import medlink.retrieval.compiled as compiled
from medlink.retrieval.bm25 import BM25Generator
from medlink.retrieval.compiled import COMPILED_FROM, best, wanted
from medlink.retrieval.exact import ExactGenerator
from medlink.retrieval.fusion import Fusion
from medlink.retrieval.names import KB_ORIGIN, MEMORY_ORIGIN, NameTable
from medlink.retrieval.sparse_sums import ArraySums, ScipySums
from medlink.retrieval.tfidf import TfidfGenerator
from medlink.text import normalize

ORGANS = ["heart", "liver", "kidney", "lung", "brain", "skin", "bone", "eye", "ear", "stomach", "colon", "breast"]
CONDITIONS = ["cancer", "cyst", "failure", "infection", "injury", "abscess", "fibrosis", "tumour", "disease", "pain"]


def organ_names() -> list[tuple[str, str, int]]:
    """Each condition of each organ under three names; some names shared by two concepts, some said by memory."""
    names = []
    for i, (organ, condition) in enumerate((o, c) for o in ORGANS for c in CONDITIONS):
        concept = f"C{i:03d}"
        names += [(f"{condition} of the {organ}", concept, KB_ORIGIN), (f"{organ} {condition}", concept, KB_ORIGIN)]
        names.append((f"{organ} {condition} nos", concept, MEMORY_ORIGIN if i % 3 else KB_ORIGIN))
        if i % 7 == 0:
            names.append((f"{condition}", concept, KB_ORIGIN))  # a bare condition names several concepts: ties
    return names


def mentions(names: list[tuple[str, str, int]], n: int) -> list[str]:
    """``n`` names with one letter changed, and mentions of only common or unknown n-grams."""
    rng = random.Random(3)
    out = ["the", "of", "qqq zzz", "e", "heart of the"]
    while len(out) < n:
        text = rng.choice(names)[0]
        at = rng.randrange(len(text))
        out.append(text[:at] + rng.choice("aeiouxyz") + text[at + 1 :])
    return out


@pytest.fixture(scope="module")
def table() -> NameTable:
    names = organ_names()
    return NameTable.build(names, {c: i for i, c in enumerate(sorted({c for _, c, _ in names}))}, normalize)


@pytest.fixture(scope="module")
def generators(table) -> dict:
    concepts = sorted({c for _, c, _ in organ_names()})
    return {
        "tfidf": TfidfGenerator.build(table, concepts, common_df=0.1, shortlist=8),
        "bm25": BM25Generator.build(table, concepts, spelling=True),
    }


@pytest.mark.parametrize("sums", [ArraySums, ScipySums])
@pytest.mark.parametrize("k", [1, 5, 64])
@pytest.mark.parametrize("stage", ["tfidf", "bm25"])
def test_the_compiled_path_gives_the_numpy_paths_hits(generators, monkeypatch, k, stage, sums):
    """The compiled kernels against the numpy path, its sums by scipy's products or by numpy alone (a short call's)."""
    generator = generators[stage]
    queries = [normalize(m) for m in mentions(organ_names(), 3 * COMPILED_FROM)]
    monkeypatch.setattr(compiled, "LOAD_FROM", 0)
    fast = generator.search_hits(queries, k)
    monkeypatch.setattr(compiled, "COMPILED_FROM", 10**9)
    monkeypatch.setattr(sys.modules[type(generator).__module__], "sums_for", lambda mentions: sums())
    reference = generator.search_hits(queries, k)
    for field in ("indptr", "concepts", "scores", "keys", "stages", "priors"):
        assert np.array_equal(getattr(fast, field), getattr(reference, field)), field
    if stage == "tfidf":
        assert np.diff(fast.indptr)[:2].tolist() != [0, 0]  # mentions of common n-grams only were shortlisted too
    assert (np.diff(fast.indptr) >= min(k, 5)).sum() > COMPILED_FROM  # most mentions were answered


def test_a_cut_among_equal_scores_keeps_the_lowest_rows_in_row_order():
    rows = np.array([9, 4, 7, 1, 5], np.int32)
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.2], np.float32)
    kept_rows, kept_scores = best(rows, scores, 3)
    assert kept_rows.tolist() == [1, 4, 7] and kept_scores.tolist() == pytest.approx([0.5, 0.9, 0.5])
    assert best(rows, scores, 10)[0].tolist() == [1, 4, 5, 7, 9]


def test_the_compiled_cut_keeps_what_the_numpy_cut_keeps():
    """The kernels' selection (a quickselect, ties gathered, a packed sort by row) against ``best`` on random distinct rows,
    scores with many ties and none, cuts above, at and below the count."""
    from medlink.retrieval.kernels import best_compiled, best_unordered, kth_largest

    rng = np.random.default_rng(0)
    for trial in range(300):
        size = int(rng.integers(1, 2_000))
        rows = rng.permutation(50_000)[:size].astype(np.int32)
        levels = int(rng.integers(1, 40)) if trial % 2 else 1 << 20
        scores = (rng.integers(0, levels, size) / 7).astype(np.float32)
        n = int(rng.integers(1, size + 3))
        expected = best(rows, scores, n)
        kept = best_compiled(rows, scores, n)
        assert np.array_equal(kept[0], expected[0]) and np.array_equal(kept[1], expected[1]), trial
        unordered = best_unordered(rows, scores, n)
        assert sorted(zip(unordered[0].tolist(), unordered[1].tolist())) == list(zip(*(part.tolist() for part in expected)))
        if n <= size:
            assert kth_largest(scores, n) == np.sort(scores)[size - n]


@pytest.mark.parametrize("fusion", [Fusion(weights={"tfidf": 0.5}), Fusion(method="rrf", weights={"exact": 2.0, "tfidf": 0.5})])
def test_compiled_fusion_gives_the_numpy_fusions_hits(generators, table, monkeypatch, fusion):
    queries = [normalize(m) for m in mentions(organ_names(), 3 * COMPILED_FROM)]
    concepts = sorted({c for _, c, _ in organ_names()})
    per_stage = {name: generator.search_hits(queries, 16, stage=i) for i, (name, generator) in enumerate(generators.items())}
    per_stage["exact"] = ExactGenerator.build(table, concepts).search_hits(queries, 16, stage=2)
    monkeypatch.setattr(compiled, "LOAD_FROM", 0)
    fast = fusion.fuse(per_stage, 10)
    monkeypatch.setattr(compiled, "COMPILED_FROM", 10**9)
    reference = fusion.fuse(per_stage, 10)
    for field in ("indptr", "concepts", "scores", "keys", "stages", "priors"):
        assert np.array_equal(getattr(fast, field), getattr(reference, field)), field
    assert len(set(fast.stages.tolist())) > 1  # the alias kept came from more than one stage


def test_a_process_loads_the_compiled_code_only_for_a_large_call(monkeypatch):
    monkeypatch.setattr(compiled, "_loaded", False)
    assert not wanted(compiled.LOAD_FROM - 1) and wanted(compiled.LOAD_FROM)  # loading is a start-up cost only a large call earns back
    compiled.load()
    assert wanted(COMPILED_FROM) and not wanted(COMPILED_FROM - 1)  # loaded: worth it from a smaller call


def test_a_first_call_says_it_compiles_only_where_numba_has_no_cached_code(tmp_path, monkeypatch):
    from types import SimpleNamespace

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    fresh = SimpleNamespace(__name__="word_hits", signatures=[])
    assert compiled._compiles(fresh)  # nothing cached: the progress line is shown
    (tmp_path / "medlink" / "retrieval").mkdir(parents=True)
    (tmp_path / "medlink" / "retrieval" / "kernels.word_hits-129.py311.nbi").write_bytes(b"")
    assert not compiled._compiles(fresh) and not compiled._compiles(SimpleNamespace(__name__="fused_hits", signatures=["loaded"]))
    assert compiled._compiles(SimpleNamespace(__name__="fused_hits", signatures=[]))

import json

import numpy as np
import pytest

from medlink.errors import DamagedFileError
from medlink.retrieval.bm25 import BM25Generator
from medlink.retrieval.completion import CompletionGenerator, is_current as completion_is_current
from medlink.retrieval.exact import ExactGenerator, word_keys_are_current
from medlink.retrieval.fusion import Fusion
from medlink.retrieval.hits import Hits, ranked, top_k
from medlink.retrieval.names import KB_ORIGIN, MEMORY_ORIGIN, NameTable
from medlink.retrieval.sparse_sums import as_sparse
from medlink.retrieval.tfidf import TfidfGenerator
from medlink.text import normalize

CONCEPTS = ["D001", "D002", "D003", "D004"]
NAMES = [
    ("Myocardial infarction", "D001", KB_ORIGIN),
    ("heart attack", "D001", KB_ORIGIN),
    ("Heart-Attack", "D002", KB_ORIGIN),  # same key as above, another concept
    ("heart failure", "D003", KB_ORIGIN),
    ("cardiac failure", "D003", KB_ORIGIN),
    ("type 2 diabetes mellitus", "D004", KB_ORIGIN),
    ("t2dm", "D004", MEMORY_ORIGIN),
]


@pytest.fixture
def table():
    return NameTable.build(NAMES, {c: i for i, c in enumerate(CONCEPTS)}, normalize)


def ids(candidates):
    return [c.concept_id for c in candidates]


def test_name_table_merges_equal_keys(table):
    assert len(table) == 6
    row = table.keys.index("heart attack")
    assert table.display[row] == "heart attack"
    assert [CONCEPTS[i] for i in table.concepts_of(row)] == ["D001", "D002"]
    assert table.origins[table.keys.index("t2dm")] == MEMORY_ORIGIN


def test_name_table_round_trip(table, tmp_path):
    table.save(tmp_path)
    loaded = NameTable.load(tmp_path)
    assert loaded.keys == table.keys and loaded.display == table.display
    assert np.array_equal(loaded.indptr, table.indptr) and np.array_equal(loaded.origins, table.origins)


def test_exact_generator_returns_every_concept_of_a_shared_name(table):
    result = ExactGenerator.build(table, CONCEPTS).search(["heart attack", "unknown"], k=5)  # D001 first: it has more names
    assert ids(result[0]) == ["D001", "D002"] and [c.score for c in result[0]] == [1.0, 1.0]
    assert result[1] == []


def test_the_word_set_form_forgives_word_order_inflection_and_function_words(tmp_path):
    names = [("Fracture of hip NOS", "D001", KB_ORIGIN), ("Hip contracture", "D002", KB_ORIGIN), ("Heart failure", "D003", KB_ORIGIN),
             ("heart failure", "D004", KB_ORIGIN), ("Of the", "D004", KB_ORIGIN), ("Unspecified kidney failure", "D002", KB_ORIGIN)]
    table = NameTable.build(names, {c: i for i, c in enumerate(CONCEPTS)}, normalize)
    words = ExactGenerator.build(table, CONCEPTS, words=True)
    queries = [normalize(q) for q in ("hip fractures", "fracture of the hip", "failures of heart", "hip", "of", "heart failure with pain",
                                      "kidney failure")]
    found = [ids(result) for result in words.search(queries, k=5)]
    assert found[:2] == [["D001"], ["D001"]] and sorted(found[2]) == ["D003", "D004"]
    assert found[3:6] == [[], [], []]  # a word set must be equal, not contained; one of function words only matches nothing
    assert found[6] == ["D002"]  # ICD's "Unspecified" qualifies nothing, as NOS
    assert ids(ExactGenerator.build(table, CONCEPTS).search([normalize("hip fractures")], k=5)[0]) == []  # the plain form needs the name
    words.save(tmp_path / "words")
    assert len((tmp_path / "words" / "word_keys.txt").read_text().split("\n")) == len(table.keys)  # not stemmed again at load
    again = ExactGenerator.load(tmp_path / "words", table, CONCEPTS, "words")
    assert again.words and [ids(r) for r in again.search(queries, k=5)] == found
    (tmp_path / "words" / "medlink_params.json").write_text('{"words": true}')  # an index built before "unspecified" joined
    (tmp_path / "words" / "word_keys.txt").unlink()
    older = ExactGenerator.load(tmp_path / "words", table, CONCEPTS, "words")
    assert [ids(r) for r in older.search(queries, k=5)] == found[:6] + [[]]  # its keys as they were made: no silent mismatch
    with pytest.raises(Exception, match="words"):
        ExactGenerator.build(table, CONCEPTS, words="yes")


def test_a_few_word_keys_are_scanned_for_and_found_as_the_map_finds_them():
    names = [("Essential (primary) hypertension", "D001", KB_ORIGIN), ("Tuberculosis (TB) NOS", "D002", KB_ORIGIN), ("Tuberculosis", "D003", KB_ORIGIN),
             ("tuberculosis NOS", "D004", KB_ORIGIN), ("Hypertension, essential", "D004", KB_ORIGIN), ("Of the", "D001", KB_ORIGIN)]
    words = ExactGenerator.build(NameTable.build(names, {c: i for i, c in enumerate(CONCEPTS)}, normalize), CONCEPTS, words=True, normalize=normalize)
    keys = sorted({*words.word_keys, *words.plain_keys, "", "nothing"})
    scanned = [words._rows(key) for key in keys]  # before any large call: the names are scanned
    assert words._rows_of is None and words._keys_scanned == len(keys)
    assert scanned == [(lambda f: (f,) if isinstance(f, int) else f)(words.rows_of.get(key, ())) for key in keys]
    assert any(len(rows) > 1 for rows in scanned)  # a key on several rows: all of them, ascending


def test_the_word_set_form_answers_for_a_names_plain_form_where_no_name_says_it(tmp_path):
    names = [("Essential (primary) hypertension", "D001", KB_ORIGIN), ("Tuberculosis (TB) NOS", "D002", KB_ORIGIN),
             ("Tuberculosis", "D003", KB_ORIGIN), ("Acute obstructive laryngitis [croup]", "D004", KB_ORIGIN)]
    table = NameTable.build(names, {c: i for i, c in enumerate(CONCEPTS)}, normalize)
    words = ExactGenerator.build(table, CONCEPTS, words=True, normalize=normalize)
    queries = [normalize(q) for q in ("essential hypertension", "tuberculosis", "acute obstructive laryngitis", "primary hypertension")]
    found = [ids(result) for result in words.search(queries, k=5)]
    assert found == [["D001"], ["D003"], ["D004"], []]  # a name that says "Tuberculosis" itself, not the one whose plain form it is
    assert [ids(r) for r in ExactGenerator.build(table, CONCEPTS, words=True).search(queries, k=5)] == [[], ["D003"], [], []]  # no normaliser
    words.save(tmp_path / "words")
    assert word_keys_are_current(tmp_path / "words")
    assert [ids(r) for r in ExactGenerator.load(tmp_path / "words", table, CONCEPTS, "words").search(queries, k=5)] == found
    (tmp_path / "words" / "plain_word_keys.txt").unlink()
    params = json.loads((tmp_path / "words" / "medlink_params.json").read_text())
    del params["plain_forms"]
    (tmp_path / "words" / "medlink_params.json").write_text(json.dumps(params))  # an index from before plain forms: links as it did
    assert not word_keys_are_current(tmp_path / "words")  # (a default index is rebuilt)
    assert [ids(r) for r in ExactGenerator.load(tmp_path / "words", table, CONCEPTS, "words").search(queries, k=5)] == [[], ["D003"], [], []]


def test_completion_ranks_the_names_holding_the_mention_by_how_expected_their_other_words_are(tmp_path):
    names = [("Diabetes mellitus", "D001", KB_ORIGIN), ("Of the", "D001", KB_ORIGIN), ("Type 2 diabetes mellitus", "D002", KB_ORIGIN),
             ("Type 1 diabetes mellitus", "D003", KB_ORIGIN), ("Latent diabetes", "D004", KB_ORIGIN),
             ("Diabetes mellitus with coma", "D002", KB_ORIGIN), ("Erythema migrans", "D003", KB_ORIGIN), ("Migraine", "D004", KB_ORIGIN),
             ("NOS", "D004", KB_ORIGIN)]  # names of function words only, in the middle and at the end
    table = NameTable.build(names, {c: i for i, c in enumerate(CONCEPTS)}, normalize)
    completion = CompletionGenerator.build(table, CONCEPTS)
    queries = [normalize(q) for q in ("diabetes", "mellitus diabetes", "latent diabetes", "migrane", "diabetes insipidus", "of")]
    found = completion.search(queries, k=5)
    # "diabetes": of the 5 names with it, 4 say "mellitus" (0.8), 1 "latent" (0.2); "type 2 ... mellitus": 0.4 x 0.2 x 0.8
    assert [(c.concept_id, round(c.score, 3)) for c in found[0]] == [("D001", 0.8), ("D004", 0.2), ("D002", 0.064), ("D003", 0.064)]
    # a word set a name has is the words stage's; a word no name spells ("migrane" stems as "migrans" does); a stem no name
    # has; nothing left
    assert found[1:] == [[], [], [], [], []]
    completion.save(tmp_path / "completion")
    again = CompletionGenerator.load(tmp_path / "completion", table, CONCEPTS, "completion")
    assert [[(c.concept_id, c.score) for c in r] for r in again.search(queries, k=5)] == [[(c.concept_id, c.score) for c in r] for r in found]
    assert completion_is_current(tmp_path / "completion")
    saved = tmp_path / "completion"
    for file, damaged in (("words.txt", ""), ("stems.txt", "\n".join(reversed((saved / "stems.txt").read_text().split("\n"))))):
        kept = (saved / file).read_text()
        (saved / file).write_text(damaged)  # emptied or reordered: it would read, and complete nothing or the wrong stems
        with pytest.raises(DamagedFileError, match=file):
            CompletionGenerator.load(saved, table, CONCEPTS, "completion")
        (saved / file).write_text(kept)
    params = json.loads((saved / "medlink_params.json").read_text())
    (saved / "medlink_params.json").write_text(json.dumps({"function_words": params["function_words"]}))  # an older medlink's
    with pytest.raises(DamagedFileError, match="stems.txt.*recorded no digest"):
        CompletionGenerator.load(saved, table, CONCEPTS, "completion")
    assert not completion_is_current(saved)
    (saved / "medlink_params.json").write_text(json.dumps(params))
    celiac = NameTable.build([("Celiac disease", "D001", KB_ORIGIN), ("Injury of celiac artery", "D002", KB_ORIGIN),
                              ("Minor injury of celiac artery", "D003", KB_ORIGIN)], {c: i for i, c in enumerate(CONCEPTS)}, normalize)
    first = CompletionGenerator.build(celiac, CONCEPTS).search(["celiac"], k=5)[0][0]
    assert (first.concept_id, first.score) == ("D001", 1.0)  # a generic head costs nothing, however frequent "artery" is
    (tmp_path / "completion" / "words.txt").unlink()
    assert not completion_is_current(tmp_path / "completion")  # a default index rebuilds itself


def test_equal_scores_rank_the_most_frequent_meaning_first():
    names = NAMES + [("heart attack", "D002", 2), ("heart attack", "D002", 2)]  # memory: twice meant D002
    table = NameTable.build(names, {c: i for i, c in enumerate(CONCEPTS)}, normalize)
    row = table.keys.index("heart attack")
    assert table.counts[table.indptr[row] : table.indptr[row + 1]].tolist() == [2, 6]  # twice each occurrence: a pair only capitals give is one less
    for generator in (ExactGenerator.build(table, CONCEPTS), TfidfGenerator.build(table, CONCEPTS)):
        assert ids(generator.search(["heart attack"], k=2)[0]) == ["D002", "D001"]


def test_a_shared_name_seen_equally_often_goes_to_the_concept_with_more_names():
    names = NAMES + [("acute heart attack", "D002", KB_ORIGIN), ("cardiac infarct", "D002", KB_ORIGIN)]  # D002: 3 names, D001: 2
    table = NameTable.build(names, {c: i for i, c in enumerate(CONCEPTS)}, normalize)
    for generator in (ExactGenerator.build(table, CONCEPTS), TfidfGenerator.build(table, CONCEPTS), BM25Generator.build(table, CONCEPTS)):
        assert ids(generator.search(["heart attack"], k=2)[0]) == ["D002", "D001"]
    same_size = NameTable.build(NAMES + [("acute heart attack", "D002", KB_ORIGIN)], {c: i for i, c in enumerate(CONCEPTS)}, normalize)
    assert ids(ExactGenerator.build(same_size, CONCEPTS).search(["heart attack"], k=2)[0]) == ["D001", "D002"]  # all equal: concept id order
    more_often = NameTable.build(names + [("heart attack", "D001", MEMORY_ORIGIN)], {c: i for i, c in enumerate(CONCEPTS)}, normalize)
    assert ids(ExactGenerator.build(more_often, CONCEPTS).search(["heart attack"], k=2)[0]) == ["D001", "D002"]  # the count comes first


def test_tfidf_ranks_closest_name_and_aggregates_aliases(table, tmp_path):
    generator = TfidfGenerator.build(table, CONCEPTS)
    result = generator.search(["cardiac failures", "myocardial infarct", "diabetes type 2"], k=3)
    assert ids(result[0])[0] == "D003" and result[0][0].matched_name == "cardiac failure"
    assert ids(result[1])[0] == "D001"
    assert ids(result[2])[0] == "D004" and 0 < result[2][0].score <= 1
    assert len(set(ids(result[0]))) == len(result[0])  # one entry per concept (max over aliases)
    generator.save(tmp_path)
    loaded = TfidfGenerator.load(tmp_path, table, CONCEPTS, "tfidf")
    again = loaded.search(["cardiac failures"], k=3)[0]
    assert ids(again) == ids(result[0]) and [round(c.score, 5) for c in again] == [round(c.score, 5) for c in result[0]]


def test_tfidf_two_stage_scores_are_exact_cosines(table):
    """Stage 1 only shortlists (names sharing a selective n-gram); stage 2 scores are the exhaustive cosines."""
    two_stage = TfidfGenerator.build(table, CONCEPTS, common_df=0.0)  # only n-grams of a single name are selective
    exhaustive = TfidfGenerator.build(table, CONCEPTS, common_df=1.0, shortlist=100)
    for mention in ["heart failure", "myocardial", "diabetes", "heart"]:
        a, b = two_stage.search([mention], k=4)[0], exhaustive.search([mention], k=4)[0]
        assert a and ids(a)[0] == ids(b)[0]
        full = {c.concept_id: c.score for c in b}
        assert all(c.score == pytest.approx(full[c.concept_id], abs=1e-5) for c in a)
    assert len(two_stage.search(["myocardial"], k=4)[0]) < len(exhaustive.search(["myocardial"], k=4)[0])


def test_tfidf_rescores_beyond_its_shortlist_a_name_whose_common_words_match(monkeypatch):
    """A name whose words beyond the mention's selective ones are common ("initial encounter") scores low on the
    selective n-grams alone; stage 2 rescores RESCORED x shortlist names exactly, so it is still found first."""
    from medlink.retrieval import tfidf

    names = [("femur fracture initial encounter", "T", KB_ORIGIN), ("femur fracture", "A", KB_ORIGIN), ("fracture femur", "B", KB_ORIGIN)]
    names += [(f"{word} initial encounter", f"F{i}", KB_ORIGIN) for i, word in enumerate(["wrist", "ankle", "elbow", "skull", "pelvis", "thumb", "knee", "hip"])]
    concepts = sorted({concept for _, concept, _ in names})
    table = NameTable.build(names, {c: i for i, c in enumerate(concepts)}, normalize)
    generator = TfidfGenerator.build(table, concepts, common_df=0.3, shortlist=1)  # "initial encounter": in 9 of 10 names, common
    assert ids(generator.search(["femur fracture initial encounter"], k=1)[0]) == ["T"]
    monkeypatch.setattr(tfidf, "RESCORED", 1)  # stage 1's best two by the selective n-grams alone: the shorter names
    assert ids(generator.search(["femur fracture initial encounter"], k=1)[0]) in (["A"], ["B"])


def test_bm25_keeps_single_character_tokens(table, tmp_path):
    generator = BM25Generator.build(table, CONCEPTS)
    result = generator.search(["type 2 diabetes", "zzz"], k=2)
    assert ids(result[0])[0] == "D004"
    assert result[1] == []
    generator.save(tmp_path)
    assert ids(BM25Generator.load(tmp_path, table, CONCEPTS, "bm25").search(["type 2 diabetes"], k=2)[0]) == ids(result[0])


def test_bm25_spelling_reads_an_unknown_word_as_the_most_frequent_name_word_one_edit_away(tmp_path):
    names = [("Migraine", "D001", KB_ORIGIN), ("Migraine with aura", "D001", KB_ORIGIN), ("Chronic migraine", "D001", KB_ORIGIN),
             ("Erythema migrans", "D002", KB_ORIGIN),
             ("Annulus migrans", "D003", KB_ORIGIN), ("Diabetes mellitus", "D004", KB_ORIGIN), ("Ache of head", "D004", KB_ORIGIN),
             ("Reaction to long acting insulin", "D004", KB_ORIGIN)]
    table = NameTable.build(names, {c: i for i, c in enumerate(CONCEPTS)}, normalize)
    plain, spelling = BM25Generator.build(table, CONCEPTS), BM25Generator.build(table, CONCEPTS, spelling=True)
    plain.prepare(), spelling.prepare()  # what a corpus run does at load: the vocabulary only where spelling is on
    assert plain._speller is None and spelling._speller.frequencies["migraine"] == 3
    assert ids(plain.search(["migrane"], k=1)[0]) == ["D002"]  # stemmed, "migrane" and "migrans" are both "migran"
    assert spelling.corrected("migrane attack") == "migraine attack" and spelling.corrected("migrans") == "migrans"
    assert ids(spelling.search(["migrane"], k=1)[0]) == ["D001"]  # "migraine" is in three names, "migrans" in two
    assert spelling.corrected("diabetis xylophone") == "diabetes xylophone"  # a word with no name word one edit away stays
    assert spelling.corrected("aching") == "aching"  # "ache"'s inflection, as likely as a misspelt "acting": stemming reads it
    spelling.save(tmp_path)
    assert ids(BM25Generator.load(tmp_path, table, CONCEPTS, "bm25").search(["migrane"], k=1)[0]) == ["D001"]


@pytest.mark.parametrize("method", ["lucene", "bm25+"])
def test_bm25_scores_a_batch_as_bm25s_scores_each_query(table, method):
    """The batch's sums give each query the scores bm25s gives it alone, repeated words counted twice; a
    variant that scores names without the word (BM25+) is scored by bm25s itself, one query at a time."""
    generator = BM25Generator.build(table, CONCEPTS, method=method)
    words = [[generator.vocabulary[w] for w in generator.tokens(m) if w in generator.vocabulary] for m in ["type 2 diabetes", "heart heart failure", "zzz"]]
    if method == "lucene":
        batch = as_sparse(generator.batch_scores(words)).toarray()
        for row, ids_of in zip(batch, words):
            assert np.allclose(row, generator.retriever.get_scores(ids_of) if ids_of else 0.0, atol=1e-6)
    else:
        assert generator.retriever.nonoccurrence_array is not None
    one_by_one = [generator.search_hits([m], 3) for m in ["type 2 diabetes", "heart heart failure"]]
    together = generator.search_hits(["type 2 diabetes", "heart heart failure"], 3)
    for i, alone in enumerate(one_by_one):
        assert together.concepts[together.row(i)].tolist() == alone.concepts[alone.row(0)].tolist()
        assert np.allclose(together.scores[together.row(i)], alone.scores[alone.row(0)])


def test_ranked_matches_a_brute_force_ranking():
    rng = np.random.default_rng(0)
    n = 400
    query, concept = rng.integers(0, 7, n), rng.integers(0, 30, n)
    score = rng.integers(0, 5, n).astype(np.float32)  # many ties
    hits = ranked(query, concept, score, np.arange(n), np.zeros(n, np.int8), np.zeros(n, np.float32), n_queries=8, k=5)
    for q in range(8):
        best = {}
        for qq, c, s in zip(query, concept, score):
            if qq == q:
                best[c] = max(best.get(c, -1), s)
        expected = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:5]
        got = list(zip(hits.concepts[hits.row(q)].tolist(), hits.scores[hits.row(q)].tolist()))
        assert got == [(int(c), float(s)) for c, s in expected]
    assert top_k(hits, 2).indptr[-1] == sum(min(2, hits.indptr[q + 1] - hits.indptr[q]) for q in range(8))


def _hits(rows: list[list[tuple[int, float]]], stage: int) -> Hits:
    query = np.array([q for q, row in enumerate(rows) for _ in row])
    concept = np.array([c for row in rows for c, _ in row])
    score = np.array([s for row in rows for _, s in row], dtype=np.float32)
    n = len(query)
    return ranked(query, concept, score, np.zeros(n, np.int32), np.full(n, stage, np.int8), np.zeros(n, np.float32), len(rows), 10)


def test_weighted_fusion_normalises_each_stage_by_its_best_score():
    a = _hits([[(0, 0.8), (1, 0.4)]], stage=0)
    b = _hits([[(1, 20.0), (2, 10.0)]], stage=1)  # BM25-like scale
    fused = Fusion("weighted", {"a": 1.0, "b": 0.5}).fuse({"a": a, "b": b}, k=3)
    got = dict(zip(fused.concepts.tolist(), np.round(fused.scores, 4).tolist()))
    assert got == {0: 1.0, 1: 0.5 + 0.5, 2: 0.25}
    assert fused.concepts.tolist() == [0, 1, 2]  # tie between 0 and 1 broken by concept position
    assert fused.stages.tolist() == [0, 0, 1]  # stage that contributed most (a: 0.5 vs b: 0.5 -> first sort wins deterministically)


def test_rrf_fusion_and_zero_weight_drops_a_stage():
    a = _hits([[(3, 0.9), (4, 0.1)]], stage=0)
    b = _hits([[(4, 5.0), (5, 1.0)]], stage=1)
    fused = Fusion("rrf", {"a": 1.0, "b": 1.0}, rrf_k=60).fuse({"a": a, "b": b}, k=5)
    scores = dict(zip(fused.concepts.tolist(), fused.scores.tolist()))
    assert fused.concepts[0] == 4 and scores[4] == pytest.approx(1 / 62 + 1 / 61)
    only_a = Fusion("weighted", {"a": 1.0, "b": 0.0}).fuse({"a": a, "b": b}, k=5)
    assert only_a.concepts.tolist() == [3, 4]
    with pytest.raises(ValueError, match="unknown fusion method"):
        Fusion("borda")


def test_hashed_tfidf_matches_the_exact_vocabulary(table, tmp_path, monkeypatch):
    """The chunked, hashed build (used above a million names) scores like scikit-learn's exact one."""
    import medlink.retrieval.tfidf_hashed as hashed

    monkeypatch.setattr(hashed, "CHUNK", 2)  # several chunks even on this tiny table
    monkeypatch.setattr(hashed, "BY_WORD_FROM", 1)  # counted word by word, as a large table's chunks are
    exact = TfidfGenerator.build(table, CONCEPTS, vocabulary="exact")
    chunked = TfidfGenerator.build(table, CONCEPTS, vocabulary="hashed")
    mentions = ["cardiac failures", "myocardial infarct", "diabetes type 2", "heart"]
    for a, b in zip(exact.search(mentions, k=3), chunked.search(mentions, k=3)):
        assert ids(a) == ids(b)
        assert np.allclose([c.score for c in a], [c.score for c in b], atol=1e-4)
    chunked.save(tmp_path)
    assert not (tmp_path / "vocabulary.json").exists()
    loaded = TfidfGenerator.load(tmp_path, table, CONCEPTS, "tfidf")
    assert ids(loaded.search(["cardiac failures"], k=3)[0]) == ids(chunked.search(["cardiac failures"], k=3)[0])


def test_hashed_counts_word_by_word_equal_scikit_learns_whole_texts():
    import random

    from medlink.params import read_params
    from medlink.retrieval.tfidf import TFIDF_PARAMS
    from medlink.retrieval.tfidf_hashed import HashedTfidf

    params = read_params("tfidf", {"vocabulary": "hashed"}, TFIDF_PARAMS)
    vectorizer = HashedTfidf(params, np.ones(int(params["n_features"]), np.float32))
    rng = random.Random(3)
    letters = "abcde fgh  ij-'éß中𝔘\t\u00a0\u2003"  # repeated words, runs of space, Unicode spaces, letters beyond ASCII
    texts = ["".join(rng.choice(letters) for _ in range(rng.randrange(0, 30))) for _ in range(3_000)] + ["", " ", "a", "ab ab ab"]
    by_word, whole = vectorizer.counts_by_word(texts), vectorizer.hasher.transform(texts).tocsr()
    by_word.sum_duplicates()
    whole.sum_duplicates()
    assert by_word.nnz > 50_000 and by_word.shape == whole.shape
    for mine, theirs in ((by_word.indptr, whole.indptr), (by_word.indices, whole.indices), (by_word.data, whole.data)):
        assert np.array_equal(mine, theirs)
    assert vectorizer.counts_by_word(["", "  "]).nnz == 0


def test_stacked_transpose_equals_scipy():
    import scipy.sparse as sp

    from medlink.retrieval.tfidf_hashed import stacked_transpose

    rng = np.random.default_rng(1)
    parts = [sp.random(n, 50, density=0.2, format="csr", random_state=rng, dtype=np.float32) for n in (7, 1, 12)]
    expected = sp.vstack(parts).T.tocsr()
    got = stacked_transpose(list(parts), 50)
    assert got.shape == expected.shape and np.allclose(got.toarray(), expected.toarray())
    assert np.array_equal(got.indptr, expected.indptr)


def test_tfidf_query_batches_give_the_same_hits(table):
    whole = TfidfGenerator.build(table, CONCEPTS, query_batch=100)
    batched = TfidfGenerator.build(table, CONCEPTS, query_batch=2)
    mentions = ["cardiac failures", "myocardial infarct", "zzz", "diabetes type 2", "heart"]
    assert [ids(r) for r in whole.search(mentions, k=3)] == [ids(r) for r in batched.search(mentions, k=3)]


def test_impact_postings_keep_each_columns_heaviest_names():
    import scipy.sparse as sp

    from medlink.retrieval.tfidf_impact import impact_postings

    matrix = sp.random(500, 20, density=0.3, format="csr", random_state=1, dtype=np.float32)
    postings = impact_postings(matrix, depth=10, full_df=0)
    dense = matrix.toarray()
    for column in range(20):
        kept = postings.indices[postings.indptr[column] : postings.indptr[column + 1]]
        expected = np.argsort(-dense[:, column])[:10]
        assert sorted(kept.tolist()) == sorted(expected.tolist())
        assert np.allclose(postings[column].toarray()[0, kept], dense[kept, column])


def test_tfidf_mention_of_common_ngrams_only_uses_impact_postings(tmp_path):
    words = ["heart", "hearts", "failure", "acute", "chronic", "disease", "heart disease"]
    names = [(f"{a} {b}".strip(), f"C{i:03d}", KB_ORIGIN) for i, (a, b) in enumerate((a, b) for a in words for b in ["", *words])]
    concepts = sorted({c for _, c, _ in names})
    table = NameTable.build(names, {c: i for i, c in enumerate(concepts)}, normalize)
    fast = TfidfGenerator.build(table, concepts, common_df=0.0, impact_depth=3, impact_full_df=0)  # every n-gram of "heart" is common
    exhaustive = TfidfGenerator.build(table, concepts, common_df=1.0, shortlist=1000)
    queries = fast.vectorizer.transform(["heart"])
    assert (queries @ fast.postings).nnz == 0  # no selective n-gram: the impact path is taken
    got, full = fast.search(["heart"], k=3)[0], exhaustive.search(["heart"], k=3)[0]
    assert ids(got)[0] == ids(full)[0] and got[0].matched_name == "heart"
    assert got[0].score == pytest.approx(full[0].score, abs=1e-5)
    fast.save(tmp_path)
    loaded = TfidfGenerator.load(tmp_path, table, concepts, "tfidf")
    assert loaded.impact is not None and ids(loaded.search(["heart"], k=3)[0]) == ids(got)
    loaded.impact = None  # without impact postings: the exhaustive scan, same best name
    assert ids(loaded.search(["heart"], k=1)[0]) == ids(got)[:1]


def test_a_line_file_reads_as_the_list_it_was_written_from(tmp_path):
    """``Lines`` decodes a line where asked and finds one by a byte search; it reads as the list ``write_lines`` wrote."""
    from medlink.retrieval.lines import Lines
    from medlink.retrieval.names import write_lines

    written = ["heart attack", "Behçet disease", "", "heart attack", "mi"]
    write_lines(tmp_path / "names.txt", written)
    lines = Lines.read(tmp_path / "names.txt")
    assert len(lines) == 5 and lines == written and list(lines) == written
    assert lines[1] == "Behçet disease" and lines[-1] == "mi" and lines[1:3] == ["Behçet disease", ""]
    assert lines.index("heart attack") == 0 and lines.index("heart attack", 1) == 3 and lines.index("") == 2
    assert "mi" in lines and "m" not in lines and "heart" not in lines
    with pytest.raises(ValueError):
        lines.index("heart attack", 4)
    with pytest.raises(IndexError):
        lines[5]
    many = [f"name {i} é" for i in range(100)]  # read one at a time past the point where the file is split: the same lines
    write_lines(tmp_path / "many.txt", many)
    lines = Lines.read(tmp_path / "many.txt")
    assert [lines[i] for i in (99, 0, -1)] == [many[99], many[0], many[-1]]
    assert [lines[i] for i in range(100)] == many and lines.index("name 7 é") == 7 and lines[3:5] == many[3:5]
    write_lines(tmp_path / "empty.txt", [])
    assert len(Lines.read(tmp_path / "empty.txt")) == 0 and list(Lines.read(tmp_path / "empty.txt")) == []


def test_a_word_an_acronym_shares_with_a_worded_name_means_the_worded_names_concept_first():
    names = [("COMA", "D001", KB_ORIGIN), ("Cogan oculomotor apraxia", "D001", KB_ORIGIN), ("Apraxia, Cogan type", "D001", KB_ORIGIN),
             ("Coma", "D002", KB_ORIGIN), ("MI", "D003", KB_ORIGIN), ("MI", "D003", MEMORY_ORIGIN), ("Mi", "D004", KB_ORIGIN)]
    table = NameTable.build(names, {c: i for i, c in enumerate(CONCEPTS)}, normalize)
    exact = ExactGenerator.build(table, CONCEPTS)
    assert ids(exact.search([normalize("coma")], k=5)[0]) == ["D002", "D001"]  # D001 has more names, but only an acronym says "coma"
    assert ids(exact.search([normalize("mi")], k=5)[0]) == ["D003", "D004"]  # said twice in capitals outweighs once in a word

"""Query-time TF-IDF without scikit-learn: the same vectors scikit-learn's TfidfVectorizer gives, and linking that
never imports scikit-learn (most of a second of every 'medlink link' call)."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.feature_extraction.text import TfidfVectorizer

from medlink.retrieval.ngrams import VocabularyTfidf

TEXT = st.text(alphabet=st.sampled_from(list("abcde xyz-'1é\t\n")), max_size=40)


@settings(max_examples=60, deadline=None)
@given(fit=st.lists(TEXT, min_size=1, max_size=30).filter(lambda docs: any(d.strip() for d in docs)), queries=st.lists(TEXT, max_size=10),
       analyzer=st.sampled_from(["char_wb", "char"]), low=st.integers(1, 3), width=st.integers(0, 2), sublinear=st.booleans())
def test_the_same_vectors_as_scikit_learn(fit, queries, analyzer, low, width, sublinear):
    vectorizer = TfidfVectorizer(analyzer=analyzer, ngram_range=(low, low + width), sublinear_tf=sublinear, lowercase=False, dtype=np.float32)
    try:
        vectorizer.fit(fit)
    except ValueError:  # an empty vocabulary: nothing to compare
        return
    ours = VocabularyTfidf(vectorizer.vocabulary_, vectorizer.idf_, analyzer, (low, low + width), sublinear)
    if not queries:  # scikit-learn refuses an empty batch; an empty batch is simply no rows
        assert ours.transform([]).shape == (0, len(vectorizer.idf_))
        return
    np.testing.assert_allclose(ours.transform(queries).toarray(), vectorizer.transform(queries).toarray(), atol=1e-6)
    np.testing.assert_allclose(ours.transform(queries[::-1]).toarray(), vectorizer.transform(queries[::-1]).toarray(), atol=1e-6)  # words remembered


def test_the_word_analyzer_is_left_to_scikit_learn():
    with pytest.raises(ValueError, match="char and char_wb"):
        VocabularyTfidf({}, np.ones(0), "word", (1, 1), True)


@pytest.mark.slow
def test_linking_with_a_saved_index_does_not_import_scikit_learn_nor_numba_for_a_few_mentions(tmp_path):
    from medlink.kb.build import build_kb
    from medlink.linking.index import build_index
    from tests.conftest import FIXTURES

    build_kb(tmp_path / "kb.sqlite", [f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"], progress=False)
    build_index(tmp_path / "kb.sqlite", tmp_path / "index")
    code = ("import sys; from medlink.linking.linker import Linker; "
            f"print(Linker.load({str(tmp_path / 'index')!r}).link(['colorectal cancer'], k=1)[0].best.concept_id, "
            "'sklearn' in sys.modules, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["D015179", "False", "False"]  # numba: loaded for a call of many mentions only


@settings(max_examples=60, deadline=None)
@given(fit=st.lists(TEXT, min_size=1, max_size=30), low=st.integers(1, 3), width=st.integers(0, 2), sublinear=st.booleans(),
       min_df=st.integers(1, 3))
def test_fitting_word_by_word_gives_scikit_learns_vocabulary_idf_and_vectors(fit, low, width, sublinear, min_df):
    from medlink.retrieval.ngrams import fit_word_bounded

    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(low, low + width), sublinear_tf=sublinear, lowercase=False,
                                 dtype=np.float32, min_df=min_df)
    try:
        expected = vectorizer.fit_transform(fit)
    except ValueError:  # no n-gram kept: ours says so with None
        assert fit_word_bounded(fit, (low, low + width), sublinear, min_df) is None
        return
    ours, matrix = fit_word_bounded(fit, (low, low + width), sublinear, min_df)
    assert ours.vocabulary_ == vectorizer.vocabulary_
    np.testing.assert_allclose(ours.idf_, vectorizer.idf_, rtol=1e-6)
    np.testing.assert_allclose(matrix.toarray(), expected.toarray(), atol=1e-6)

"""char_wb TF-IDF fitted word by word (``medlink.retrieval.ngrams.fit_word_bounded``) against scikit-learn's
``TfidfVectorizer.fit_transform``: time over the default KB's distinct normalised names (median of 3 each), whether the
vocabulary is the same, the largest difference between the two matrices, and whether a lexical index over NCBI's train
dictionary gives NCBI test's mention parts the same top-10 lists either way. Prints; cited in benchmarks/notes.md.

    python benchmarks/lexical/tfidf_fit.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.kb.default import default_kb_path  # noqa: E402
from medlink.kb.store import KB  # noqa: E402
from medlink.linking.config import default_config  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.retrieval import ngrams, tfidf  # noqa: E402


def timed(fit, repeats: int = 3):
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = fit()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), result


def main() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    kb = KB.open(default_kb_path())
    names = sorted({kb.normalize(text) for _, text, _ in kb.iter_names()})
    ours_s, (ours, matrix) = timed(lambda: ngrams.fit_word_bounded(names, (2, 4), True, 1))
    theirs = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, lowercase=False, dtype=np.float32)
    theirs_s, expected = timed(lambda: theirs.fit_transform(names))
    print(f"default KB, {len(names):,} names: word by word {ours_s:.1f} s, scikit-learn {theirs_s:.1f} s; "
          f"same vocabulary {ours.vocabulary_ == theirs.vocabulary_}; largest difference {abs(matrix - expected).max():.1e}")

    ncbi = ncbi_kb(Path(tempfile.gettempdir()) / "medlink-bench", "train")
    mentions = [part for mention in load_dataset(ncbi_split("test")) for part in mention.parts]
    word_by_word = Linker.build(ncbi, default_config(), None, dictionary=False).link(mentions, k=10)
    tfidf.fit_word_bounded = lambda *args, **kwargs: None  # scikit-learn's fit, as before
    scikit = Linker.build(ncbi, default_config(), None, dictionary=False).link(mentions, k=10)
    same = sum([c.concept_id for c in a.candidates] == [c.concept_id for c in b.candidates] for a, b in zip(word_by_word, scikit))
    print(f"NCBI test, {len(mentions)} mention parts: the same top-10 lists for {same}")


if __name__ == "__main__":
    main()

"""Character n-gram TF-IDF with sparse cosine similarity, batched top-k.

scikit-learn fits the vocabulary and idf; names are L2-normalised rows of a CSR matrix. Exact
cosine against every name is too slow for short strings: character bigrams such as "s " occur
in most names, so the product of a mention batch with all names is nearly dense. Search is
therefore two-stage, like an inverted index with a stop list: (1) a partial score from the
*selective* n-grams only (those in at most ``common_df`` of the names; their postings are short),
keeping the best ``shortlist`` names per mention; (2) the exact cosine of those names with the
full vectors. The common n-grams left out of stage 1 have low idf, so they rarely change which
names make the shortlist; a mention with no selective n-gram is scored against every name.
The vocabulary and idf are saved as plain arrays (not a pickle) so an index survives a
scikit-learn upgrade.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

from medlink.retrieval.base import GeneratorBase
from medlink.retrieval.hits import Hits
from medlink.retrieval.names import NameTable

DEFAULTS = {"analyzer": "char_wb", "ngram_range": [2, 4], "sublinear_tf": True, "min_df": 1, "common_df": 0.02, "shortlist": 256}


def _vectorizer(params: dict) -> TfidfVectorizer:
    return TfidfVectorizer(
        analyzer=params["analyzer"], ngram_range=tuple(params["ngram_range"]), sublinear_tf=params["sublinear_tf"],
        min_df=params["min_df"], lowercase=False, dtype=np.float32,
    )


class TfidfGenerator(GeneratorBase):
    """Cosine similarity between TF-IDF vectors of character n-grams of mentions and names."""

    def __init__(self, table: NameTable, concept_ids: Sequence[str], vectorizer: TfidfVectorizer, matrix: sp.csr_matrix, params: dict, name: str):
        super().__init__(table, concept_ids, name)
        self.vectorizer = vectorizer
        self.matrix = matrix  # names x n-grams, rows L2-normalised
        self.params = params
        document_frequency = np.bincount(matrix.indices, minlength=matrix.shape[1])
        self.selective = document_frequency <= max(1.0, params["common_df"] * matrix.shape[0])
        # n-gram -> names postings of the selective n-grams only (the common ones' rows are left empty)
        self.postings = (matrix @ sp.diags(self.selective.astype(np.float32))).T.tocsr()
        self.postings.eliminate_zeros()

    @classmethod
    def build(cls, table: NameTable, concept_ids: Sequence[str], name: str = "tfidf", **params) -> "TfidfGenerator":
        params = {**DEFAULTS, **params}
        vectorizer = _vectorizer(params)
        matrix = vectorizer.fit_transform(table.keys).tocsr()
        return cls(table, concept_ids, vectorizer, matrix, params, name)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        vocabulary = sorted(self.vectorizer.vocabulary_, key=self.vectorizer.vocabulary_.get)
        (directory / "params.json").write_text(json.dumps(self.params))
        (directory / "vocabulary.json").write_text(json.dumps(vocabulary, ensure_ascii=False))
        np.save(directory / "idf.npy", self.vectorizer.idf_.astype(np.float32))
        sp.save_npz(directory / "matrix.npz", self.matrix, compressed=False)

    @classmethod
    def load(cls, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> "TfidfGenerator":
        params = {**DEFAULTS, **json.loads((directory / "params.json").read_text())}
        vocabulary = json.loads((directory / "vocabulary.json").read_text())
        vectorizer = _vectorizer(params)
        vectorizer.vocabulary_ = {term: i for i, term in enumerate(vocabulary)}
        vectorizer.idf_ = np.load(directory / "idf.npy")
        return cls(table, concept_ids, vectorizer, sp.load_npz(directory / "matrix.npz").tocsr(), params, name)

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        """Exact cosine of each mention with its shortlist of names, aggregated to concepts."""
        queries = self.vectorizer.transform(mentions).tocsr()
        partial = (queries @ self.postings).tocsr()
        shortlist = max(2 * k, self.params["shortlist"])
        query_parts, row_parts = [], []
        exact_parts = []
        for i in range(len(mentions)):
            start, end = partial.indptr[i], partial.indptr[i + 1]
            if start == end:
                if queries.indptr[i] == queries.indptr[i + 1]:
                    continue  # no known n-gram at all
                scores = np.asarray((self.matrix @ queries[i].T).todense()).ravel()  # nothing selective: every name
                rows = np.argpartition(-scores, shortlist - 1)[:shortlist] if len(scores) > shortlist else np.arange(len(scores))
                exact_parts.append((i, rows, scores[rows]))
                continue
            rows, values = partial.indices[start:end], partial.data[start:end]
            if len(rows) > shortlist:
                rows = rows[np.argpartition(-values, shortlist - 1)[:shortlist]]
            query_parts.append(np.full(len(rows), i))
            row_parts.append(rows)
        query = np.concatenate(query_parts) if query_parts else np.zeros(0, np.int64)
        rows = np.concatenate(row_parts) if row_parts else np.zeros(0, np.int64)
        # exact cosine of every (mention, shortlisted name) pair at once: row-wise dot products
        cosine = np.asarray(self.matrix[rows].multiply(queries[query]).sum(axis=1)).ravel() if len(rows) else np.zeros(0)
        for i, extra_rows, extra_scores in exact_parts:
            query = np.concatenate([query, np.full(len(extra_rows), i)])
            rows = np.concatenate([rows, extra_rows])
            cosine = np.concatenate([cosine, extra_scores])
        positive = cosine > 0
        return self._concept_hits(query[positive], rows[positive], cosine[positive].astype(np.float32), stage, len(mentions), k)

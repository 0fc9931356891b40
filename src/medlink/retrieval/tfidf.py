"""Character n-gram TF-IDF with sparse cosine similarity, batched top-k.

scikit-learn fits the vocabulary and idf (char_wb: ``ngrams.fit_word_bounded``, the same numbers, faster); names
are L2-normalised rows of a CSR matrix. Exact cosine against every name is too slow for short strings: character
bigrams such as "s " occur in most names, so the product of a mention batch with all names is nearly dense. Search is
therefore two-stage, like an inverted index with a stop list: (1) a partial score from the
*selective* n-grams only (those in at most ``common_df`` of the names; their postings are short),
keeping the best ``RESCORED`` x ``shortlist`` names per mention; (2) the exact cosine of those names with the
full vectors, the best ``shortlist`` going on. The common n-grams left out of stage 1 have low idf, yet a name whose
words beyond the mention's selective ones are common ones the mention shares ("..., initial encounter for closed
fracture") scores low in stage 1 and high in stage 2: hence the wider stage 1. A mention with no selective n-gram at
all is shortlisted instead from postings of the common n-grams (whole lists for the rarer ones, only the highest-weighted names
for the most common; see ``tfidf_impact``), so it never costs a scan of the whole table.
The vocabulary, idf and matrices are saved as plain arrays (not a pickle; ``csr_files``) so an index survives a
scikit-learn upgrade.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from medlink.errors import DamagedFileError, reading
from medlink.params import TFIDF_PARAMS, defaults, read_params
from medlink.retrieval.base import GeneratorBase
from medlink.retrieval.compiled import best, compiled_shortlists, wanted
from medlink.retrieval.csr_files import CsrArrays, has_csr, load_arrays, save_csr
from medlink.retrieval.hits import Hits, concatenate_hits, merged
from medlink.retrieval.names import NameTable, read_json
from medlink.retrieval.ngrams import ANALYZERS, VocabularyTfidf, fit_word_bounded
from medlink.retrieval.sparse_sums import ArraySums, ScipySums, sums_for

if TYPE_CHECKING:
    import scipy.sparse as sp

DEFAULTS = defaults(TFIDF_PARAMS)
HASHED_ABOVE = 1_000_000  # "auto": exact vocabulary up to this many names, hashed features above (memory)
# names per kept shortlist place whose exact cosine is computed: with 1, a mention of ICD-10-CM's "fracture of neck of
# right femur, initial encounter for closed fracture" misses that code's name, close by cosine, far down by its partial score
RESCORED = 4


def _vectorizer(params: dict):
    """scikit-learn's vectorizer, which fits the vocabulary and idf (imported here only: linking does not need it)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(
        analyzer=params["analyzer"],
        ngram_range=tuple(params["ngram_range"]),
        sublinear_tf=params["sublinear_tf"],
        min_df=params["min_df"],
        lowercase=False,
        dtype=np.float32,
    )


def _fit_exact(keys: Sequence[str], params: dict):
    """The fitted vectorizer and the names' L2-normalised TF-IDF rows: word by word for char_wb (``fit_word_bounded``,
    the same numbers), else scikit-learn."""
    if params["analyzer"] == "char_wb":
        fitted = fit_word_bounded(keys, params["ngram_range"], params["sublinear_tf"], params["min_df"])
        if fitted is not None:
            return fitted
    vectorizer = _vectorizer(params)
    return vectorizer, vectorizer.fit_transform(keys).tocsr()


def _full_width_transpose(columns: sp.csc_matrix, column_ids: np.ndarray, width: int) -> sp.csr_matrix:
    """The transpose of a column subset, as a CSR matrix with one (possibly empty) row per original column."""
    import scipy.sparse as sp

    indptr = np.zeros(width + 1, dtype=np.int64)
    indptr[column_ids + 1] = np.diff(columns.indptr)
    return sp.csr_matrix((columns.data, columns.indices, np.cumsum(indptr)), shape=(width, columns.shape[0]))


class TfidfGenerator(GeneratorBase):
    """Cosine similarity between TF-IDF vectors of character n-grams of mentions and names.

    The name matrix is kept only as its two halves: ``postings`` (selective n-grams, transposed:
    n-gram -> names) and ``common`` (names x common n-grams), plus ``impact`` (common n-gram ->
    its highest-weighted names). Never holding the whole matrix next to its halves keeps a
    UMLS-sized build within memory. A loaded index keeps them as arrays (``CsrArrays``): the searches read the arrays,
    and scipy's matrices are made only for what needs scipy (a mention with no selective n-gram).
    """

    def __init__(
        self,
        table: NameTable,
        concept_ids: Sequence[str],
        vectorizer,
        postings: sp.csr_matrix | CsrArrays,
        common: sp.csr_matrix | CsrArrays,
        common_columns: np.ndarray,
        params: dict,
        name: str,
        impact: sp.csr_matrix | CsrArrays | None = None,
    ):
        super().__init__(table, concept_ids, name)
        self.vectorizer = vectorizer
        self.arrays = {"postings": postings, "common": common, "impact": impact}  # impact None: the exhaustive reference
        self._sparse: dict[str, sp.csr_matrix] = {}
        self.common_columns = common_columns
        self.params = params

    def _matrix(self, name: str) -> sp.csr_matrix | None:
        """scipy's matrix of ``arrays[name]``, made on first use."""
        stored = self.arrays[name]
        if not isinstance(stored, CsrArrays):
            return stored
        if name not in self._sparse:
            self._sparse[name] = stored.sparse()
        return self._sparse[name]

    def _matrices(self, sums: ArraySums | ScipySums, *names: str) -> list:
        """The named matrices in the form ``sums`` reads: scipy's, or the arrays as stored."""
        return [self._matrix(name) if sums.sparse else self.arrays[name] for name in names]

    postings = property(lambda self: self._matrix("postings"), doc="selective n-gram -> names (scipy's CSR)")
    common = property(lambda self: self._matrix("common"), doc="names x common n-grams (scipy's CSR)")

    @property
    def impact(self) -> sp.csr_matrix | None:
        """common n-gram -> its highest-weighted names (scipy's CSR); None: every name is scanned (the reference)."""
        return self._matrix("impact")

    @impact.setter
    def impact(self, matrix: sp.csr_matrix | None) -> None:
        self.arrays["impact"] = matrix
        self._sparse.pop("impact", None)

    @classmethod
    def build(cls, table: NameTable, concept_ids: Sequence[str], name: str = "tfidf", **params) -> TfidfGenerator:
        params = read_params(f"tfidf generator {name!r}", params, TFIDF_PARAMS)
        if params["vocabulary"] == "auto":
            params["vocabulary"] = "hashed" if len(table.keys) > HASHED_ABOVE else "exact"
        from medlink.retrieval.tfidf_hashed import fit_halves, selective_threshold  # build time only: they import scipy
        from medlink.retrieval.tfidf_impact import impact_postings

        if params["vocabulary"] == "hashed":
            vectorizer, postings, common_columns, common = fit_halves(table.keys, params)
            return cls(
                table,
                concept_ids,
                vectorizer,
                postings,
                common,
                common_columns,
                params,
                name,
                impact_postings(common, int(params["impact_depth"]), int(params["impact_full_df"])),
            )
        vectorizer, matrix = _fit_exact(table.keys, params)
        document_frequency = np.bincount(matrix.indices, minlength=matrix.shape[1])
        selective = document_frequency <= selective_threshold(params, matrix.shape[0])
        common_columns = np.flatnonzero(~selective)
        common = matrix[:, common_columns].tocsr()
        selective_part = matrix[:, np.flatnonzero(selective)]
        del matrix
        postings = _full_width_transpose(selective_part.tocsc(), np.flatnonzero(selective), len(selective))
        return cls(
            table,
            concept_ids,
            vectorizer,
            postings,
            common,
            common_columns,
            params,
            name,
            impact_postings(common, int(params["impact_depth"]), int(params["impact_full_df"])),
        )

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "params.json").write_text(json.dumps(self.params))
        if self.params.get("vocabulary", "exact") == "exact":
            vocabulary = sorted(self.vectorizer.vocabulary_, key=self.vectorizer.vocabulary_.get)
            (directory / "vocabulary.json").write_text(json.dumps(vocabulary, ensure_ascii=False))
        np.save(directory / "idf.npy", self.vectorizer.idf_.astype(np.float32))
        np.save(directory / "common_columns.npy", self.common_columns)
        for name, matrix in self.arrays.items():
            if matrix is not None:
                save_csr(directory, name, matrix)

    @classmethod
    def load(cls, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> TfidfGenerator:
        params = {**DEFAULTS, "vocabulary": "exact", **read_json(directory / "params.json")}
        with reading(directory / "idf.npy"):
            idf = np.load(directory / "idf.npy")
        if params["vocabulary"] == "hashed":
            from medlink.retrieval.tfidf_hashed import HashedTfidf

            vectorizer = HashedTfidf(params, idf)
        else:
            vocabulary = {term: i for i, term in enumerate(read_json(directory / "vocabulary.json"))}
            if params["analyzer"] in ANALYZERS:  # the usual case: no scikit-learn import at query time
                vectorizer = VocabularyTfidf(vocabulary, idf, params["analyzer"], params["ngram_range"], params["sublinear_tf"])
            else:
                vectorizer = _vectorizer(params)
                vectorizer.vocabulary_, vectorizer.idf_ = vocabulary, idf

        impact = load_arrays(directory, "impact") if has_csr(directory, "impact") or (directory / "impact.npz").is_file() else None
        postings, common = load_arrays(directory, "postings"), load_arrays(directory, "common")
        with reading(directory / "common_columns.npy"):
            common_columns = np.load(directory / "common_columns.npy")
        width = len(idf)
        if postings.shape != (width, len(table)) or common.shape != (len(table), len(common_columns)) or (common_columns >= width).any():
            raise DamagedFileError(directory, ValueError(f"its matrices do not fit {len(table)} names and {width} n-grams"))
        return cls(table, concept_ids, vectorizer, postings, common, common_columns, params, name, impact)

    @cached_property
    def common_position(self) -> np.ndarray:
        """Each n-gram's column in ``common`` (-1: a selective n-gram), for the compiled path."""
        position = np.full(len(self.vectorizer.idf_), -1, np.int32)
        position[self.common_columns] = np.arange(len(self.common_columns), dtype=np.int32)
        return position

    def forget_words(self) -> None:
        """Forget the words analysed so far (``VocabularyTfidf.forget_words``), where the vectorizer remembers them."""
        getattr(self.vectorizer, "forget_words", lambda: None)()

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        """Exact cosine of each mention with its shortlist of names: compiled for a large batch
        (``compiled``), else with numpy in batches that bound memory.

        A batch's partial-score matrix has one row per mention and up to a few hundred thousand
        entries per row on a UMLS-sized table, so mentions go through ``query_batch`` at a time.
        """
        if wanted(len(mentions)):
            return self._search_compiled(mentions, k, stage)
        size = int(self.params.get("query_batch", 256))
        if len(mentions) <= size:
            return self._search_batch(mentions, k, stage)
        return concatenate_hits([self._search_batch(mentions[i : i + size], k, stage) for i in range(0, len(mentions), size)])

    def _queries(self, mentions: Sequence[str]) -> CsrArrays | sp.csr_matrix:
        """The mentions' TF-IDF rows: arrays where the vectorizer makes them without scipy (``VocabularyTfidf``)."""
        if hasattr(self.vectorizer, "transform_arrays"):
            return self.vectorizer.transform_arrays(mentions)
        return self.vectorizer.transform(mentions).tocsr()

    def _search_compiled(self, mentions: Sequence[str], k: int, stage: int) -> Hits:
        """``_search_batch``'s hits, the shortlists compiled; mentions without a selective n-gram as there."""
        queries = self._queries(mentions)
        shortlist = max(2 * k, self.params["shortlist"])
        hits, unselective = compiled_shortlists(
            queries,
            self.arrays["postings"],
            self.arrays["common"],
            self.common_position,
            self.table,
            len(self.concept_ids),
            RESCORED * shortlist,
            shortlist,
            k,
            stage,
        )
        if not unselective.any():
            return hits
        query, rows, cosine = self._unselective(queries, np.flatnonzero(unselective), shortlist)
        positive = cosine > 0
        return merged(hits, self._concept_hits(query[positive], rows[positive], cosine[positive], stage, len(mentions), k))

    def _unselective(
        self, queries: CsrArrays | sp.csr_matrix, mentions: np.ndarray, shortlist: int, sums: ArraySums | ScipySums | None = None
    ) -> tuple[np.ndarray, ...]:
        """(query, row, cosine) shortlists of ``mentions``, which have known n-grams but no selective one: the
        ``RESCORED`` x ``shortlist`` best names by their partial scores over the impact postings, then the best by
        their common part, which is their whole cosine (without impact postings: every name, the exhaustive reference);
        ``sums``: the calling search's, else chosen here."""
        sums = sums or sums_for(len(mentions))
        common, impact = self._matrices(sums, "common", "impact")
        parts = [self._common_weights(queries, i) for i in mentions.tolist()]  # (columns in common, weights) each
        lengths = [len(columns) for columns, _ in parts]
        common_queries = CsrArrays(
            np.concatenate([weights for _, weights in parts]),
            np.concatenate([columns for columns, _ in parts]),
            np.concatenate(([0], np.cumsum(lengths))),
            (len(parts), len(self.common_columns)),
        )
        partial = sums.partials(common_queries, impact) if impact is not None else None
        vector = np.zeros(len(self.common_columns), np.float32)
        found = []
        for j, i in enumerate(mentions.tolist()):
            columns, weights = parts[j]
            vector[columns] = weights
            if partial is not None:
                start, end = partial.indptr[j], partial.indptr[j + 1]
                rows = best(partial.indices[start:end], partial.data[start:end], RESCORED * shortlist)[0]
                rows, cosine = best(rows, sums.products(common, rows, vector), shortlist)
            else:
                rows, cosine = best(np.arange(common.shape[0]), self.common @ vector, shortlist)
            vector[columns] = 0
            found.append((np.full(len(rows), i), rows, cosine))
        return tuple(np.concatenate([part[n] for part in found]) for n in range(3))

    def _common_weights(self, queries: CsrArrays | sp.csr_matrix, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Query ``i``'s common n-grams, as columns of ``common``, and their weights."""
        columns = queries.indices[queries.indptr[i] : queries.indptr[i + 1]]
        place = self.common_position[columns]
        return place[place >= 0], queries.data[queries.indptr[i] : queries.indptr[i + 1]][place >= 0]

    def _search_batch(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        """Exact cosine of each mention with its shortlist of names, aggregated to concepts (``sparse_sums``: scipy's
        products, or numpy alone for a short call).

        cosine = selective part (from the batch's product with the postings) + common part (the shortlisted names'
        common entries times the mention's common-n-gram weights).
        """
        queries = self._queries(mentions)
        sums = sums_for(len(mentions))
        postings, common = self._matrices(sums, "postings", "common")
        partial = sums.partials(queries, postings)
        shortlist = max(2 * k, self.params["shortlist"])
        vector = np.zeros(len(self.common_columns), np.float32)
        query_parts, row_parts, cosine_parts = [], [], []
        for i in range(len(mentions)):
            start, end = partial.indptr[i], partial.indptr[i + 1]
            if start < end:
                rows, values = best(partial.indices[start:end], partial.data[start:end], RESCORED * shortlist)
                columns, weights = self._common_weights(queries, i)
                vector[columns] = weights
                rows, cosine = best(rows, values + sums.products(common, rows, vector), shortlist)
                vector[columns] = 0
                query_parts.append(np.full(len(rows), i))
                row_parts.append(rows)
                cosine_parts.append(cosine)
        unselective = np.flatnonzero((np.diff(partial.indptr) == 0) & (np.diff(queries.indptr) > 0))
        if len(unselective):
            for part, extra in zip((query_parts, row_parts, cosine_parts), self._unselective(queries, unselective, shortlist, sums)):
                part.append(extra)
        if not query_parts:
            return Hits.empty(len(mentions))
        query, rows, cosine = np.concatenate(query_parts), np.concatenate(row_parts), np.concatenate(cosine_parts)
        positive = cosine > 0
        return self._concept_hits(query[positive], rows[positive], cosine[positive].astype(np.float32), stage, len(mentions), k)

"""scispaCy 0.6.2's candidate generator, run inside its own virtual environment (``benchmarks/install/get_scispacy.py``).

    DIR/bin/python benchmarks/peers/scispacy_driver.py NAMES.jsonl MENTIONS.txt INDEX_DIR K REPEATS

It builds the index as scispaCy's ``create_tfidf_ann_index`` does (char_wb 3-grams, min_df 10, HNSW M 100,
efConstruction 2000; that function itself refuses scipy >= 1.11, which Python 3.11 needs), over the aliases of
NAMES.jsonl (scispaCy's KB JSONL: concept_id, canonical_name, aliases), or loads it from INDEX_DIR when built before;
then links MENTIONS.txt (one per line, distinct) through ``CandidateGenerator`` at ef_search 200, as its users load
it. Prints one JSON object: build and load seconds, linking seconds per repeat, each mention's first concept, peak RSS.
Imports nothing from medlink: it runs where medlink is not installed.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def build(names: Path, folder: Path, threads: int = 2):
    started = time.perf_counter()
    import joblib
    import nmslib
    import numpy
    import scipy.sparse
    from scispacy.linking_utils import KnowledgeBase
    from sklearn.feature_extraction.text import TfidfVectorizer

    kb = KnowledgeBase(str(names))
    aliases = list(kb.alias_to_cuis.keys())
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 3), min_df=10, dtype=numpy.float32)
    vectors = vectorizer.fit_transform(aliases)
    kept = numpy.asarray(vectors.sum(axis=1) != 0).reshape(-1)
    aliases = [a for a, keep in zip(aliases, kept) if keep]
    vectors = vectors[kept]
    index = nmslib.init(method="hnsw", space="cosinesimil_sparse", data_type=nmslib.DataType.SPARSE_VECTOR)
    index.addDataPointBatch(vectors)
    index.createIndex({"M": 100, "indexThreadQty": threads, "efConstruction": 2000, "post": 0}, print_progress=False)
    folder.mkdir(parents=True, exist_ok=True)
    index.saveIndex(str(folder / "nmslib_index.bin"))
    joblib.dump(vectorizer, folder / "tfidf_vectorizer.joblib")
    (folder / "concept_aliases.json").write_text(json.dumps(aliases))
    scipy.sparse.save_npz(folder / "tfidf_vectors_sparse.npz", vectors)
    (folder / ".complete").write_text(json.dumps({"build_seconds": time.perf_counter() - started, "threads": threads}) + "\n")


def load(names: Path, folder: Path):
    import joblib
    import nmslib
    import scipy.sparse
    from scispacy.candidate_generation import CandidateGenerator
    from scispacy.linking_utils import KnowledgeBase

    index = nmslib.init(method="hnsw", space="cosinesimil_sparse", data_type=nmslib.DataType.SPARSE_VECTOR)
    index.addDataPointBatch(scipy.sparse.load_npz(folder / "tfidf_vectors_sparse.npz"))  # a sparse space keeps no data in its file
    index.loadIndex(str(folder / "nmslib_index.bin"))
    index.setQueryTimeParams({"efSearch": 200})
    vectorizer = joblib.load(folder / "tfidf_vectorizer.joblib")
    aliases = json.loads((folder / "concept_aliases.json").read_text())
    return CandidateGenerator(index, vectorizer, aliases, KnowledgeBase(str(names)), ef_search=200)


def main() -> None:
    names, mentions_file, folder, k, repeats = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    mentions = [line.rstrip("\n") for line in mentions_file.open(encoding="utf-8") if line.strip()]
    if not (folder / ".complete").exists():
        build(names, folder)
    built = json.loads((folder / ".complete").read_text()).get("build_seconds")  # the build's own record: it is made once
    started = time.perf_counter()
    generator = load(names, folder)
    loaded = time.perf_counter() - started
    generator(mentions[:20], k)  # warm
    seconds, found = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        found = generator(mentions, k)
        seconds.append(time.perf_counter() - started)
    firsts = []
    for candidates in found:  # best first: scispaCy's linker orders by the best similarity of each concept's aliases
        ranked = sorted(candidates, key=lambda c: -max(c.similarities))
        firsts.append(ranked[0].concept_id if ranked else None)
    print(json.dumps({"build_seconds": built, "load_seconds": loaded, "seconds": seconds, "firsts": firsts,
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))


if __name__ == "__main__":
    main()

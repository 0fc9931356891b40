"""A PyPI ontology-matching peer on the same split: text2term's TF-IDF mapper (its default), fed the same KBs.

text2term loads targets through owlready2 (OWL files); ICD-10-CM and MEDIC are not OWL, so its ``TFIDFMapper`` is
given the target's concepts as its own ``OntologyTerm`` objects (labels, synonyms) from the medlink KB: the matcher
is text2term's, only the loading is ours. It maps one string per source term (the preferred name, as text2term's
users do), top 64 kept with min_score 0, so recall@k and the dev threshold are measured as for medlink.
OntoAligner was tried too: its install pulls bitsandbytes, datasets, openai, pykeen, sentence-transformers and a
huggingface_hub major upgrade (pip --dry-run), which would change the pinned environment; it is left out.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys

from benchmarks.align.evaluation import evaluate_lists


@contextlib.contextmanager
def _silenced_stdout():
    """File descriptor 1 to /dev/null for the block (what redirect_stdout cannot catch)."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
        try:
            yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)


def text2term_ranking(source, target, sources: list[str], k: int = 64) -> dict[str, list[tuple[str, float]]]:
    """Source id -> [(target id, text2term score)] best first."""
    from text2term.term import OntologyTerm
    from text2term.tfidf_mapper import TFIDFMapper

    logging.getLogger("text2term").setLevel(logging.WARNING)
    labels: dict[str, list[str]] = {}
    preferred: dict[str, str] = dict(target.iter_concepts())
    for concept_id, text, kind in target.iter_names():
        if kind != "preferred":
            labels.setdefault(concept_id, []).append(text)
    terms = {cid: OntologyTerm(cid, [name], synonyms=labels.get(cid, [])) for cid, name in preferred.items()}
    mapper = TFIDFMapper(terms)
    names = [source.name_of(s) for s in sources]
    with _silenced_stdout():  # text2term prints an "Error obtaining CURIE" line per target id (through its own handle)
        frame = mapper.map(names, sources, max_mappings=k, min_score=0.0)
    out: dict[str, list[tuple[str, float]]] = {s: [] for s in sources}
    for source_id, target_id, score in zip(frame["Source Term ID"], frame["Mapped Term IRI"], frame["Mapping Score"]):
        if target_id not in {t for t, _ in out[source_id]}:
            out[source_id].append((target_id, float(score)))
    return {s: sorted(v, key=lambda x: -x[1]) for s, v in out.items()}


def evaluate_ranking(ranked: dict[str, list[tuple[str, float]]], gold: dict, splits: dict) -> dict:
    """The same measures as medlink's rows (evaluation.evaluate_lists), from (target, score) lists."""
    return evaluate_lists({s: [t for t, _ in r] for s, r in ranked.items()}, {s: r[0] for s, r in ranked.items() if r}, gold, splits)

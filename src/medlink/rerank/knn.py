"""kNN-BioEL's retrieval-enhanced prediction (paper 004): interpolate the linker's distribution
over candidates with the distribution of the nearest training mentions' concepts.

    p(c | x) = lambda * p_kNN(c | x) + (1 - lambda) * p_model(c | x)
    p_model(c | x) ∝ exp(s(x, c) / beta1)             over the linker's candidates
    p_kNN(c | x)   ∝ max over neighbours i labelled c of exp(cos(x, m_i) / beta2)

The datastore holds the embeddings of annotated training mentions (the dense generator's
encoder) with their concept ids; concepts among the neighbours but not among the candidates
join the list with p_model = 0. lambda, beta1, beta2 and k are tuned on dev data only. Each
reranked candidate's evidence lists the neighbours that voted for it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from medlink.core import Candidate
from medlink.params import KNN_PARAMS, check_params
from medlink.retrieval.names import read_lines, write_lines

STAGE = "knn"


@dataclass
class KnnParams:
    k: int = 8
    lambda_: float = 0.1
    beta1: float = 0.05
    beta2: float = 1.0

    def __post_init__(self) -> None:  # also when given in code (dev tuning), not only through a config
        check_params("kNN reranker", asdict(self), KNN_PARAMS)


class KnnReranker:
    """A datastore of (training-mention vector, concept id) and the interpolation above."""

    def __init__(self, vectors: np.ndarray, concept_ids: list[str], texts: list[str], params: KnnParams):
        import faiss

        self.vectors = vectors.astype(np.float32)
        self.concept_ids = concept_ids
        self.texts = texts
        self.params = params
        self.index = faiss.IndexFlatIP(vectors.shape[1])
        self.index.add(self.vectors)

    @classmethod
    def build(cls, encoder, mentions: Sequence[tuple[str, str]], params: KnnParams | None = None) -> "KnnReranker":
        """Embed (mention text, concept id) pairs with ``encoder`` (an ``Encoder``)."""
        texts = [text for text, _ in mentions]
        return cls(encoder.encode(texts), [concept for _, concept in mentions], texts, params or KnnParams())

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / "vectors.npy", self.vectors)
        write_lines(directory / "concepts.txt", self.concept_ids)
        write_lines(directory / "texts.txt", self.texts)
        (directory / "params.json").write_text(json.dumps(asdict(self.params)))

    @classmethod
    def load(cls, directory: Path) -> "KnnReranker":
        params = KnnParams(**json.loads((directory / "params.json").read_text()))
        return cls(np.load(directory / "vectors.npy"), read_lines(directory / "concepts.txt"), read_lines(directory / "texts.txt"), params)

    def neighbours(self, query_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(query_vectors.astype(np.float32), min(k, len(self.concept_ids)))

    def rerank(self, query_vectors: np.ndarray, candidates: list[list[Candidate]], k: int | None = None,
               params: KnnParams | None = None, name_of: Callable[[str], str | None] | None = None) -> list[list[Candidate]]:
        """Rerank each mention's candidates; ``params`` overrides the stored ones (dev tuning)."""
        params = params or self.params
        similarities, rows = self.neighbours(query_vectors, params.k)
        out = []
        for candidate_list, sims, neighbour_rows in zip(candidates, similarities, rows):
            reranked = self._rerank_one(candidate_list, sims, neighbour_rows, params, name_of)
            out.append(reranked[:k] if k else reranked)
        return out

    def _rerank_one(self, candidates: list[Candidate], sims: np.ndarray, rows: np.ndarray, params: KnnParams,
                    name_of: Callable[[str], str | None] | None) -> list[Candidate]:
        votes: dict[str, float] = {}
        voters: dict[str, list[dict]] = {}
        for similarity, row in zip(sims.tolist(), rows.tolist()):
            if row < 0:
                continue
            concept = self.concept_ids[row]
            votes[concept] = max(votes.get(concept, -np.inf), similarity / params.beta2)
            voters.setdefault(concept, []).append({"neighbour": self.texts[row], "concept": concept, "similarity": round(similarity, 4)})
        p_knn = _softmax(votes)
        p_model = _softmax({c.concept_id: c.score / params.beta1 for c in candidates})
        merged = {c.concept_id: c for c in candidates}
        for concept in votes:
            if concept not in merged:
                merged[concept] = Candidate(concept, 0.0, voters[concept][0]["neighbour"], {}, [], name_of(concept) if name_of else None)
        reranked = []
        for concept, candidate in merged.items():
            probability = params.lambda_ * p_knn.get(concept, 0.0) + (1 - params.lambda_) * p_model.get(concept, 0.0)
            scores = {**candidate.scores_by_stage, STAGE: p_knn.get(concept, 0.0)}
            evidence = list(candidate.evidence) + voters.get(concept, [])
            reranked.append(Candidate(concept, probability, candidate.matched_name, scores, evidence, candidate.name))
        # stable: a tie keeps the linker's order (its tie-break by how often a name means each concept), then nearest neighbour first
        reranked.sort(key=lambda c: -c.score)
        return reranked


def _softmax(logits: dict[str, float]) -> dict[str, float]:
    if not logits:
        return {}
    top = max(logits.values())
    weights = {key: float(np.exp(value - top)) for key, value in logits.items()}
    total = sum(weights.values())
    return {key: value / total for key, value in weights.items()}

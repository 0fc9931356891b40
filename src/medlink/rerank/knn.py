"""kNN-BioEL's retrieval-enhanced prediction (Lin et al. 2023): interpolate the linker's distribution
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

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from medlink.core import Candidate, LinkResult, Mention
from medlink.errors import DamagedFileError, MedlinkError, reading
from medlink.params import Param
from medlink.rerank.base import LinkerParts, own_settings, replaced_candidates
from medlink.retrieval.names import read_json, read_lines, write_lines
from medlink.retrieval.vector_index import flat_index

STAGE = "knn"
PARAMS = {
    "generator": Param(str, default="dense"),  # the dense generator whose encoder embeds mentions and memory alike
    "k": Param(int, minimum=1, default=8),  # neighbours
    "lambda_": Param(float, minimum=0.0, maximum=1.0, default=0.1),  # weight of the neighbours' distribution
    "beta1": Param(float, above=0.0, default=0.05),  # temperature of the linker's scores
    "beta2": Param(float, above=0.0, default=1.0),  # temperature of the neighbours' similarities
}


class KnnReranker:
    """A datastore of (training-mention vector, concept id) and the interpolation above."""

    type = "knn"
    PARAMS = PARAMS
    TUNING_GRID = {"k": (4, 16, 64), "lambda_": (0.0, 0.1, 0.3, 0.5, 0.7, 0.9), "beta1": (0.01, 0.05, 0.1), "beta2": (0.05, 0.1, 0.5, 1.0)}

    def __init__(
        self, vectors: np.ndarray, concept_ids: list[str], texts: list[str], settings: dict | None = None, parts: LinkerParts | None = None
    ):
        self.vectors = vectors.astype(np.float32)
        self.concept_ids = concept_ids
        self.texts = texts
        self.settings = own_settings(self.type, PARAMS, settings or {})
        self.parts = parts
        self.index = flat_index(self.vectors)

    @staticmethod
    def check_generators(settings: dict, generator_types: dict[str, str], where: str) -> None:
        """A config's kNN entry must name one of its dense generators (checked when the config is read)."""
        if generator_types.get(settings["generator"]) != "dense":
            raise MedlinkError(f"{where}: 'generator' must name a dense generator of this config (got {settings['generator']!r})")

    @property
    def requires_generator(self) -> str:
        return self.settings["generator"]

    @classmethod
    def build(cls, settings: dict, parts: LinkerParts) -> KnnReranker:
        """Embed the memory's (normalised mention, concept id) pairs with the named dense generator's encoder."""
        if not parts.memory:
            summary = parts.memory_summary
            why = (
                (
                    f"the memory given has no usable entry ({summary['skipped_composite']} composite, {summary['skipped_unknown_concept']} "
                    "with no concept in this KB)"
                )
                if summary
                else "no mention memory was given"
            )
            raise MedlinkError(
                f"the kNN reranker votes with training mentions, but {why}: give a mention memory whose concepts are in "
                "the KB (medlink index build --memory FORMAT:PATH) or remove the reranker from the config"
            )
        encoder = _encoder(settings, parts)
        texts = [text for text, _ in parts.memory]
        return cls(encoder.encode(texts), [concept for _, concept in parts.memory], texts, settings, parts)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / "vectors.npy", self.vectors)
        write_lines(directory / "concepts.txt", self.concept_ids)
        write_lines(directory / "texts.txt", self.texts)
        (directory / "params.json").write_text(json.dumps(self.settings))

    @classmethod
    def load(cls, directory: Path, settings: dict | None = None, parts: LinkerParts | None = None) -> KnnReranker:
        """``settings``: the index config's (the saved params.json otherwise)."""
        settings = settings or read_json(directory / "params.json")
        with reading(directory / "vectors.npy"):
            vectors = np.load(directory / "vectors.npy")
        concepts, texts = read_lines(directory / "concepts.txt"), read_lines(directory / "texts.txt")
        if vectors.ndim != 2 or not len(vectors) == len(concepts) == len(texts):
            raise DamagedFileError(directory, ValueError("vectors.npy, concepts.txt and texts.txt do not describe the same mentions"))
        return cls(vectors, concepts, texts, settings, parts)

    def with_settings(self, **changes: Any) -> KnnReranker:
        """The same datastore with other k / lambda_ / beta1 / beta2 (dev tuning), checked like a config's."""
        other = copy.copy(self)
        other.settings = own_settings(self.type, PARAMS, {**self.settings, **changes})
        return other

    def neighbours(self, query_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(query_vectors.astype(np.float32), min(k, len(self.concept_ids)))

    def rerank(self, mentions: Sequence[Mention], results: list[LinkResult]) -> list[LinkResult]:
        """Each mention embedded by the dense generator (its last batch is reused), then ``rerank_vectors``."""
        if self.parts is None:
            raise MedlinkError("this kNN reranker was made without its linker's generators; build or load it through a Linker")
        vectors = self.parts.generators[self.requires_generator].encode_mentions([m.text for m in mentions])
        return replaced_candidates(results, self.rerank_vectors(vectors, [r.candidates for r in results]))

    def rerank_vectors(self, query_vectors: np.ndarray, candidates: list[list[Candidate]]) -> list[list[Candidate]]:
        """Each mention's candidates reranked, given the mentions' vectors."""
        similarities, rows = self.neighbours(query_vectors, self.settings["k"])
        return [
            self._rerank_one(candidate_list, sims, neighbour_rows)
            for candidate_list, sims, neighbour_rows in zip(candidates, similarities, rows)
        ]

    def _rerank_one(self, candidates: list[Candidate], sims: np.ndarray, rows: np.ndarray) -> list[Candidate]:
        settings = self.settings
        votes: dict[str, float] = {}
        voters: dict[str, list[dict]] = {}
        for similarity, row in zip(sims.tolist(), rows.tolist()):
            if row < 0:
                continue
            concept = self.concept_ids[row]
            votes[concept] = max(votes.get(concept, -np.inf), similarity / settings["beta2"])
            voters.setdefault(concept, []).append({"neighbour": self.texts[row], "concept": concept, "similarity": round(similarity, 4)})
        p_knn = _softmax(votes)
        p_model = _softmax({c.concept_id: c.score / settings["beta1"] for c in candidates})
        merged = {c.concept_id: c for c in candidates}
        for concept in votes:
            if concept not in merged:
                blank = self.parts.candidate_for(concept) if self.parts else Candidate(concept, 0.0)
                merged[concept] = blank.copy(matched_name=voters[concept][0]["neighbour"])
        reranked = []
        for concept, candidate in merged.items():
            probability = settings["lambda_"] * p_knn.get(concept, 0.0) + (1 - settings["lambda_"]) * p_model.get(concept, 0.0)
            reranked.append(
                candidate.copy(
                    score=probability,
                    scores_by_stage={**candidate.scores_by_stage, STAGE: p_knn.get(concept, 0.0)},
                    evidence=list(candidate.evidence) + voters.get(concept, []),
                )
            )
        # stable: a tie keeps the linker's order (its tie-break by how often a name means each concept), then nearest neighbour first
        reranked.sort(key=lambda c: -c.score)
        return reranked


def _encoder(settings: dict, parts: LinkerParts):
    """The encoder of the dense generator the settings name."""
    generator = parts.generators.get(settings["generator"])
    if generator is None or not hasattr(generator, "encode_mentions"):
        raise MedlinkError(f"kNN reranker: 'generator' must name a dense generator of this index, not {settings['generator']!r}")
    return generator.encoder


def _softmax(logits: dict[str, float]) -> dict[str, float]:
    if not logits:
        return {}
    top = max(logits.values())
    weights = {key: float(np.exp(value - top)) for key, value in logits.items()}
    total = sum(weights.values())
    return {key: value / total for key, value in weights.items()}

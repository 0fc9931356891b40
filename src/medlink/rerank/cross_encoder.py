"""Cross-encoder reranking (papers 002 and 003): rescore a linker's top candidates with a cross-encoder.

The cross-encoder reads the mention and each of the ``top`` candidates' preferred names (or, with
``text: "matched"``, the alias or training mention that matched) together;
its score is added, times ``weight``, to the linker's own (fused) score:

    score'(c) = score(c) + weight * cross(mention, name(c))        for the top candidates

Alone, a cross-encoder trained on a few thousand mentions ranks worse than the retriever (it
never sees the mention memory's exact matches); added with a small weight it can settle close
calls the retriever gets wrong. Whether it does depends on the data, so ``weight`` (0 turns it
off) and ``top`` are chosen on dev data (BENCHMARKS.md rerank_aap, rerank_ncbi). Candidates below
``top`` keep their order after the rescored ones. Each rescored candidate keeps the cross-encoder's
score under ``scores["cross-encoder"]``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from medlink.core import Candidate
from medlink.encoders.cross import MAX_LENGTH, CrossEncoder, CrossEncoderSpec
from medlink.encoders.precision import from_legacy
from medlink.errors import MedlinkError
from medlink.params import CROSS_PARAMS, check_params, check_reranker

STAGE = "cross-encoder"
PARAMS_FILE = "params.json"


@dataclass
class CrossParams:
    top: int = 8
    weight: float = 0.02
    text: str = "name"  # what the mention is read against: the preferred name, or the alias / memory mention that matched

    def __post_init__(self) -> None:
        check_params("cross-encoder reranker", asdict(self), CROSS_PARAMS)


class CrossEncoderReranker:
    """A cross-encoder and how its scores join the linker's."""

    def __init__(self, model: CrossEncoder, params: CrossParams):
        self.model = model
        self.params = params

    @classmethod
    def build(cls, settings: dict) -> "CrossEncoderReranker":
        """From a config's reranker entry: ``model`` (a trained cross-encoder folder), ``top``, ``weight``, ``max_length``, ``precision``."""
        settings = from_legacy(settings)
        check_reranker("cross-encoder reranker", {"type": "cross-encoder", **settings})
        model = CrossEncoder(settings["model"], int(settings.get("max_length", MAX_LENGTH)), settings.get("precision", "auto"), trained=True)
        return cls(model, CrossParams(**{key: settings[key] for key in ("top", "weight", "text") if key in settings}))

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        payload = {"params": asdict(self.params), "model": self.model.spec.to_dict()}
        (directory / PARAMS_FILE).write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, directory: Path) -> "CrossEncoderReranker":
        saved = json.loads((directory / PARAMS_FILE).read_text())
        try:
            model = CrossEncoder.from_spec(CrossEncoderSpec.from_dict(saved["model"]))
        except MedlinkError as error:
            raise MedlinkError(f"{directory}: cannot use its cross-encoder: {error}. Restore that model folder or rebuild the index") from error
        return cls(model, CrossParams(**saved["params"]))

    def scores(self, mentions: Sequence[str], candidates: list[list[Candidate]], top: int | None = None,
               text: str | None = None) -> list[np.ndarray]:
        """The cross-encoder's score of each mention's first ``top`` candidates (one array per mention)."""
        top = top or self.params.top
        if (text or self.params.text) == "matched":
            text_of = lambda c: c.matched_name or c.name or c.concept_id  # noqa: E731
        else:
            text_of = lambda c: c.name or c.matched_name or c.concept_id  # noqa: E731
        return self.model.score_groups(mentions, [[text_of(c) for c in row[:top]] for row in candidates])

    def rerank(self, mentions: Sequence[str], candidates: list[list[Candidate]], k: int | None = None,
               params: CrossParams | None = None) -> list[list[Candidate]]:
        params = params or self.params
        return combine(candidates, self.scores(mentions, candidates, params.top, params.text), params.weight, k)


def combine(candidates: list[list[Candidate]], cross_scores: list[np.ndarray], weight: float, k: int | None = None) -> list[list[Candidate]]:
    """Add ``weight`` x cross-encoder score to each scored candidate and re-sort those; the rest follow unchanged.

    Kept apart from scoring so that dev tuning scores once and tries many weights.
    """
    out = []
    for candidate_list, scores in zip(candidates, cross_scores):
        scored = []
        for candidate, cross in zip(candidate_list, scores.tolist()):
            scored.append(Candidate(candidate.concept_id, candidate.score + weight * cross, candidate.matched_name,
                                    {**candidate.scores_by_stage, STAGE: round(cross, 4)}, list(candidate.evidence), candidate.name))
        scored.sort(key=lambda c: -c.score)  # stable: ties keep the linker's order (its tie-breaks)
        reranked = scored + list(candidate_list[len(scores):])
        out.append(reranked[:k] if k else reranked)
    return out

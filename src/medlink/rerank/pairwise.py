"""Schumacher et al. (2020)'s pairwise neural ranker as a reranker: rescore a linker's top candidates with a trained ``PairwiseModel``.

    score'(c) = score(c) + weight * ranker(m, c)        for the top candidates (weight 0: off)

The ranker reads the fused score and rank itself, so a large weight (its order alone, in effect) is a fair choice; one
formula keeps every list's scores in descending order.

The cheap counterpart of the cross-encoder: no transformer layer runs, only word-piece embeddings, pooling and a small
feed-forward net, so it costs far less per mention (BENCHMARKS.md, Dense linking and reranking). ``top`` and
``weight`` are chosen on dev data (``TUNING_GRID``). Candidates below ``top`` keep their order after the rescored ones;
each rescored candidate keeps the ranker's score under ``scores_by_stage["pairwise"]``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from medlink.core import Candidate, LinkResult, Mention
from medlink.encoders import precision as precisions
from medlink.encoders.transformer import model_fingerprint
from medlink.errors import MedlinkError
from medlink.params import PRECISIONS, Param
from medlink.rerank.base import LinkerParts, own_settings, replaced_candidates
from medlink.rerank.pairwise_model import PairwiseModel
from medlink.retrieval.names import read_json

STAGE = "pairwise"
PARAMS_FILE = "params.json"
PARAMS = {
    "model": Param(str, note="a trained ranker folder ('medlink train ranker --out DIR')"),
    "top": Param(int, minimum=1, default=16),
    "weight": Param(float, minimum=0.0, default=1.0),
    # float32 by default, not auto: for this small net bf16 autocast measured no consistent gain on an AVX512-BF16 CPU
    # (benchmarks/results/pairwise_ranker.json, ms_per_mention_bf16 beside ms_per_mention), and float32 scores are exact
    "precision": Param(str, choices=PRECISIONS, default="fp32"),
}


class PairwiseRanker:
    """A trained pairwise ranker and how its scores join the linker's."""

    type = "pairwise"
    PARAMS = PARAMS
    TUNING_GRID = {"top": (4, 8, 16, 32), "weight": (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 10.0)}  # 0: off; 10: the ranker's order
    requires_generator = None

    def __init__(self, model: PairwiseModel, settings: dict):
        self.model = model
        self.settings = own_settings(self.type, PARAMS, settings)
        self.model.precision = precisions.resolve(self.settings["precision"])

    @classmethod
    def build(cls, settings: dict, parts: LinkerParts | None = None) -> PairwiseRanker:
        """From a config's reranker entry: ``model`` (a folder 'medlink train ranker' wrote), ``top``, ``weight``."""
        settings = own_settings(cls.type, PARAMS, settings)
        return cls(PairwiseModel.load(settings["model"]), settings)

    def save(self, directory: Path) -> None:
        """The settings and the model folder's path and fingerprint (the folder itself is not copied, as for the cross-encoder)."""
        directory.mkdir(parents=True, exist_ok=True)
        folder = Path(self.settings["model"]).resolve()
        payload = {"params": {**self.settings, "model": str(folder)}, "fingerprint": model_fingerprint(folder)}
        (directory / PARAMS_FILE).write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, directory: Path, settings: dict | None = None, parts: LinkerParts | None = None) -> PairwiseRanker:
        """The ranker the index recorded, refused if its folder's weights changed since; ``settings``: the index config's."""
        saved = read_json(directory / PARAMS_FILE)
        params = {**saved["params"], **(settings or {}), "model": saved["params"]["model"]}
        folder = Path(params["model"])
        try:
            model = PairwiseModel.load(folder)
        except MedlinkError as error:
            raise MedlinkError(f"{directory}: cannot use its pairwise ranker: {error}. Restore that folder or rebuild the index") from error
        if saved.get("fingerprint") and model_fingerprint(folder) != saved["fingerprint"]:
            raise MedlinkError(
                f"{directory}: the ranker folder {folder} changed since the index was built (weights differ); rebuild the index with it"
            )
        return cls(model, params)

    def with_settings(self, **changes: Any) -> PairwiseRanker:
        """The same model with another top / weight (dev tuning)."""
        other = copy.copy(self)
        other.settings = own_settings(self.type, PARAMS, {**self.settings, **changes})
        return other

    def scores(self, mentions: Sequence[str | Mention], candidates: list[list[Candidate]]) -> list[np.ndarray]:
        """The ranker's score of each mention's first ``top`` candidates (one array per mention)."""
        texts = [Mention.of(m).text for m in mentions]
        return self.model.score_groups(texts, candidates, self.settings["top"])

    def rerank(self, mentions: Sequence[Mention], results: list[LinkResult]) -> list[LinkResult]:
        candidates = [r.candidates for r in results]
        return replaced_candidates(results, combine(candidates, self.scores(mentions, candidates), self.settings["weight"]))


def combine(candidates: list[list[Candidate]], ranker_scores: list[np.ndarray], weight: float) -> list[list[Candidate]]:
    """Add ``weight`` x ranker score to each scored candidate and re-sort those; the rest follow unchanged. Kept apart
    from scoring so that dev tuning scores once and tries every weight."""
    out = []
    for row, scores in zip(candidates, ranker_scores):
        scored = [
            c.copy(score=c.score + weight * s, scores_by_stage={**c.scores_by_stage, STAGE: round(s, 4)})
            for c, s in zip(row, scores.tolist())
        ]
        scored.sort(key=lambda c: -c.score)  # stable: ties keep the linker's order
        out.append(scored + list(row[len(scores) :]))
    return out

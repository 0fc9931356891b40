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

A model trained with context (``medlink train cross-encoder --context N``) reads each mention with the text
either side that the annotator gives it (``context`` of at least N); the linker then reranks each occurrence of
a string on its own (``reads_context``) instead of once per distinct string.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from medlink.core import Candidate, LinkResult, Mention
from medlink.encoders.cross import CrossEncoder, CrossEncoderSpec, mention_side
from medlink.encoders.precision import from_legacy
from medlink.errors import DamagedFileError, MedlinkError
from medlink.params import PRECISIONS, Param
from medlink.rerank.base import LinkerParts, own_settings, replaced_candidates
from medlink.retrieval.names import read_json, read_lines, write_lines

STAGE = "cross-encoder"
PARAMS_FILE = "params.json"
MEMO_PAIRS = 500_000  # scored (mention, text) pairs kept for reuse
# what the mention is read against: the preferred name, the alias / memory mention that matched, or Varma et al. (2021)'s entity
# text ("name [SEP] types [SEP] definition", from the KB when the index is built: a model trained with --concept-text entity)
TEXTS = ("name", "matched", "entity")
ENTITY_TEXTS = "entity_texts.tsv"  # beside the reranker's params: concept id <TAB> entity text (text "entity" only)
PARAMS = {
    "model": Param(str, note="a trained cross-encoder folder ('medlink train cross-encoder --out DIR')"),
    "top": Param(int, minimum=1, default=8),
    "weight": Param(float, minimum=0.0, default=0.02),
    "text": Param(str, choices=TEXTS, default="name"),
    # null: what the model folder was trained with (MAX_LENGTH for a folder that does not say)
    "max_length": Param(int, minimum=2, maximum=512, nullable=True, default=None),
    "precision": Param(str, choices=PRECISIONS, default="auto"),  # auto: bf16 only where this CPU runs it faster
}


class CrossEncoderReranker:
    """A cross-encoder and how its scores join the linker's."""

    type = "cross-encoder"
    PARAMS = PARAMS
    TUNING_GRID = {"top": (4, 8, 16), "weight": (0.0, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1)}  # weight 0: off
    requires_generator = None

    def __init__(self, model: CrossEncoder, settings: dict, entity_texts: dict[str, str] | None = None):
        self.model = model
        self.settings = own_settings(self.type, PARAMS, settings)
        self.entity_texts = entity_texts or {}  # concept id -> entity text (text "entity"; the name where the KB says nothing more)
        self._memo: dict[tuple[str, str], float] = {}  # (mention, text) -> score, shared with with_settings copies: tuning scores once

    @property
    def reads_context(self) -> bool:
        """True for a model trained with context: mentions of one string in different places may score differently."""
        return getattr(self.model, "context", 0) > 0

    @classmethod
    def build(cls, settings: dict, parts: LinkerParts | None = None) -> CrossEncoderReranker:
        """From a config's reranker entry: ``model`` (a trained cross-encoder folder), ``top``, ``weight``, ``text``, ``max_length``, ``precision``."""
        settings = own_settings(cls.type, PARAMS, from_legacy(settings))
        if settings["text"] == "entity" and (parts is None or parts.describe is None):
            raise MedlinkError(
                "a cross-encoder reading entity texts (text 'entity') is built with its index, from the KB's types and definitions"
            )
        texts = parts.describe() if settings["text"] == "entity" else None
        return cls(CrossEncoder(settings["model"], settings["max_length"], settings["precision"], trained=True), settings, texts)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        payload = {"params": self.settings, "model": self.model.spec.to_dict()}
        (directory / PARAMS_FILE).write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
        if self.entity_texts:
            write_lines(directory / ENTITY_TEXTS, [f"{cid}\t{' '.join(text.split())}" for cid, text in self.entity_texts.items()])

    @classmethod
    def load(cls, directory: Path, settings: dict | None = None, parts: LinkerParts | None = None) -> CrossEncoderReranker:
        """The model the index recorded (its weights' fingerprint checked); ``settings``: the index config's."""
        saved = read_json(directory / PARAMS_FILE)
        try:
            model = CrossEncoder.from_spec(CrossEncoderSpec.from_dict(saved["model"]))
        except MedlinkError as error:
            raise MedlinkError(
                f"{directory}: cannot use its cross-encoder: {error}. Restore that model folder or rebuild the index"
            ) from error
        return cls(model, from_legacy({**saved["params"], **(settings or {})}), _read_entity_texts(directory / ENTITY_TEXTS))

    def with_settings(self, **changes: Any) -> CrossEncoderReranker:
        """The same model with another top / weight / text (dev tuning)."""
        other = copy.copy(self)
        other.settings = own_settings(self.type, PARAMS, {**self.settings, **changes})
        return other

    def scores(self, mentions: Sequence[str | Mention], candidates: list[list[Candidate]]) -> list[np.ndarray]:
        """The cross-encoder's score of each mention's first ``top`` candidates (one array per mention); a ``Mention``'s
        context is read when the model was trained with context."""
        if self.settings["text"] == "matched":
            text_of = lambda c: c.matched_name or c.name or c.concept_id  # noqa: E731
        elif self.settings["text"] == "entity":
            text_of = lambda c: self.entity_texts.get(c.concept_id) or c.name or c.concept_id  # noqa: E731
        else:
            text_of = lambda c: c.name or c.matched_name or c.concept_id  # noqa: E731
        groups = [[text_of(c) for c in row[: self.settings["top"]]] for row in candidates]
        mentions = [mention_side(m, getattr(self.model, "context", 0)) for m in mentions]
        missing = list(dict.fromkeys((m, t) for m, group in zip(mentions, groups) for t in group if (m, t) not in self._memo))
        if missing:
            if len(self._memo) + len(missing) > MEMO_PAIRS:  # a long-running service must not grow without end
                self._memo.clear()
            self._memo.update(zip(missing, self.model.score([m for m, _ in missing], [t for _, t in missing]).tolist()))
        return [np.array([self._memo[(m, t)] for t in group], dtype=np.float32) for m, group in zip(mentions, groups)]

    def rerank(self, mentions: Sequence[Mention], results: list[LinkResult]) -> list[LinkResult]:
        candidates = [r.candidates for r in results]
        return replaced_candidates(results, combine(candidates, self.scores(mentions, candidates), self.settings["weight"]))


def _read_entity_texts(path: Path) -> dict[str, str] | None:
    """The entity texts an index saved beside its reranker (None: it reads names); a line without its tab is damage."""
    if not path.is_file():
        return None
    rows = [line.split("\t", 1) for line in read_lines(path)]
    if any(len(row) != 2 for row in rows):
        raise DamagedFileError(path, ValueError("a line without 'concept id<TAB>entity text': rebuild the index"))
    return dict(rows)


def combine(candidates: list[list[Candidate]], cross_scores: list[np.ndarray], weight: float) -> list[list[Candidate]]:
    """Add ``weight`` x cross-encoder score to each scored candidate and re-sort those; the rest follow unchanged.

    Kept apart from scoring so that dev tuning scores once and tries many weights.
    """
    out = []
    for candidate_list, scores in zip(candidates, cross_scores):
        scored = [
            candidate.copy(score=candidate.score + weight * cross, scores_by_stage={**candidate.scores_by_stage, STAGE: round(cross, 4)})
            for candidate, cross in zip(candidate_list, scores.tolist())
        ]
        scored.sort(key=lambda c: -c.score)  # stable: ties keep the linker's order (its tie-breaks)
        out.append(scored + list(candidate_list[len(scores) :]))
    return out

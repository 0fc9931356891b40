"""The decision stage after the rerankers: a probability for every candidate, then backoff, then NIL.

It sits in an index config's ``rerankers`` list, last, as ``{"type": "calibration", "model": {...}, "nil_threshold": t,
"backoff_below": b, "order": "score"}``; the fitted model is plain JSON inside the config, so ``medlink tune --calibrate
--apply`` changes the manifest only. For each mention:

1. every candidate gets ``probability`` (``linking.probability``); with ``order: "probability"`` they are re-sorted by it;
   then, in that order, rivals share one distribution (``rivals: "share"``, ``linking.rivals``: two concepts that share a
   name are no longer both at 1.000; the order and a first candidate without a tied rival keep theirs);
2. **backoff** (Varma et al. 2021): when the first candidate's probability is under ``backoff_below``, the candidate among the
   first ``backoff_top`` whose alias spells the mention most closely goes first (a low-confidence model defers to the
   string);
3. **NIL**: when the first candidate's probability, after any backoff (the candidate the mention would be linked to),
   is under ``nil_threshold``, the result is NIL: linked to nothing, its candidates still listed. So every linked
   answer carries at least the threshold's probability, even where backoff passed over a likelier candidate.

A model is fitted for one index: ``fitted_for`` is a fingerprint of the KB and every stage before this one, and an
index whose stages differ refuses the model (its scores would mean something else).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medlink.core import LinkResult, Mention
from medlink.errors import MedlinkError
from medlink.linking.contradictions import capped_probabilities, cues
from medlink.linking.probability import TIE, ProbabilityModel, RememberedNormalize, similarity
from medlink.linking.rivals import shared
from medlink.params import Param
from medlink.rerank.base import LinkerParts, own_settings
from medlink.text.finders.base import is_plausible_mention

TYPE = "calibration"
ORDERS = ("score", "probability")
RIVALS = ("share", "none")
PARAMS = {
    "model": Param(dict, items=object, note="a probability model fitted by 'medlink tune --calibrate'"),
    "nil_threshold": Param(float, minimum=0.0, maximum=1.0, nullable=True, default=None),  # null: never NIL
    "backoff_below": Param(float, minimum=0.0, maximum=1.0, nullable=True, default=None),  # null: no backoff
    "backoff_top": Param(int, minimum=2, default=10),
    "order": Param(str, choices=ORDERS, default="score"),
    # share: rival candidates' probabilities are one distribution (``linking.rivals``); none: each candidate's own
    "rivals": Param(str, choices=RIVALS, default="share"),
    "fitted_for": Param(str, default=""),
    # the mention memory the model saw ("none": none); absent in stages fitted before it was recorded (not checked)
    "fitted_memory": Param(str, nullable=True, default=None),
}
NO_MEMORY = "none"


def index_fingerprint(kb_checksum: str, config_dict: dict, position: int) -> str:
    """What a probability model depends on: the KB and every stage before position ``position`` of the rerankers."""
    stages = {
        "kb": kb_checksum,
        "generators": config_dict["generators"],
        "fusion": config_dict["fusion"],
        "k_per_generator": config_dict["k_per_generator"],
        "rerankers": config_dict["rerankers"][:position],
    }
    return hashlib.sha256(json.dumps(stages, sort_keys=True).encode()).hexdigest()[:16]


def memory_tag(memory_summary: dict | None) -> str:
    """The ``fitted_memory`` of a model fitted over an index with this memory (its manifest's summary, or None)."""
    return (memory_summary or {}).get("digest") or NO_MEMORY


def check_calibration(config_dict: dict, kb_checksum: str, where: str, memory_summary: dict | None = None) -> None:
    """Refuse a calibration stage that is not last, or whose model was fitted on another index (its KB, stages or mention
    memory)."""
    rerankers = config_dict["rerankers"]
    for position, settings in enumerate(rerankers):
        if settings["type"] != TYPE:
            continue
        if position != len(rerankers) - 1:
            raise MedlinkError(f"{where}: rerankers[{position}] ({TYPE}) must be the last stage: it decides on the final ranking")
        expected = index_fingerprint(kb_checksum, config_dict, position)
        if settings["fitted_for"] != expected:
            raise MedlinkError(
                f"{where}: the probability model was fitted on another index (fingerprint {settings['fitted_for'] or 'none'}, "
                f"this index's stages give {expected}): its scores would mean something else. Re-fit it on this index: "
                "medlink tune --index DIR --dev FORMAT:PATH --calibrate --apply"
            )
        fitted_memory = settings.get("fitted_memory")
        if fitted_memory is not None and fitted_memory != memory_tag(memory_summary):
            raise MedlinkError(
                f"{where}: the probability model was fitted over another mention memory ({fitted_memory}; this index's: "
                f"{memory_tag(memory_summary)}): its candidate lists would differ. Re-fit it on this index: "
                "medlink tune --index DIR --dev FORMAT:PATH --calibrate --apply"
            )


class CalibrationStage:
    """Probabilities, backoff and NIL over each mention's final candidate list."""

    type = TYPE
    PARAMS = PARAMS
    requires_generator = None
    in_config = True  # its model is JSON in the index config: no folder of its own, so 'medlink tune --apply' can add it

    def __init__(self, settings: dict, normalize):
        self.settings = own_settings(self.type, PARAMS, settings)
        self.probability_model = ProbabilityModel.from_dict(self.settings["model"], f"{TYPE} stage")
        self.normalize = RememberedNormalize(normalize)  # candidates' names, normalised for their features

    @classmethod
    def build(cls, settings: dict, parts: LinkerParts) -> CalibrationStage:
        return cls(settings, parts.normalize)

    @classmethod
    def load(cls, directory: Path | None, settings: dict, parts: LinkerParts) -> CalibrationStage:
        return cls(settings, parts.normalize)

    def save(self, directory: Path) -> None:
        """Nothing to write: the model is in the config."""

    def with_settings(self, **changes: Any) -> CalibrationStage:
        other = copy.copy(self)
        other.settings = own_settings(self.type, PARAMS, {**self.settings, **changes})
        if "model" in changes:
            other.probability_model = ProbabilityModel.from_dict(other.settings["model"], f"{TYPE} stage")
        return other

    def rerank(self, mentions: Sequence[Mention], results: list[LinkResult]) -> list[LinkResult]:
        return [self.decide(mention.text, result) for mention, result in zip(mentions, results)]

    def decide(self, key: str, result: LinkResult, probabilities: Sequence[float] | None = None) -> LinkResult:
        """``result`` with probabilities, the backoff choice and the NIL decision (``key``: the normalised mention;
        ``probabilities``: given instead of predicted, as when dev choices are made on out-of-fold ones)."""
        if probabilities is None:
            probabilities = self.probability_model.probabilities(key, result.candidates, self.normalize)
            if not is_plausible_mention(key):  # stop words only: right about nothing, unless the alias is them as an abbreviation
                probabilities = [p if spelt_in_capitals(key, c, self.normalize) else 0.0 for p, c in zip(probabilities, result.candidates)]
            if mention_cues := cues(key):  # a name that says the opposite of the mention ("in situ" for "invasive")
                probabilities = capped_probabilities(mention_cues, probabilities, result.candidates, self.normalize)
        candidates = [c.with_probability(round(float(p), 6)) for c, p in zip(result.candidates, probabilities)]
        if self.settings["order"] == "probability":
            candidates.sort(key=lambda c: -c.probability)  # stable: ties keep the ranking's order
        else:
            candidates = ties_by_probability(candidates)
        if self.settings["rivals"] == "share":  # in the order decided: sharing never reorders, it only tells ties apart
            ps = shared([c.concept_id for c in candidates], [c.score for c in candidates], [c.probability for c in candidates])
            candidates = [c if p == c.probability else c.with_probability(round(p, 6)) for c, p in zip(candidates, ps)]
        below = self.settings["backoff_below"]
        if candidates and below is not None and candidates[0].probability < below:
            window = candidates[: self.settings["backoff_top"]]
            closest = max(range(len(window)), key=lambda i: similarity(key, window[i].matched_name, self.normalize))
            if closest:
                chosen, first = candidates.pop(closest), candidates[0]
                chosen.evidence = [
                    *chosen.evidence,
                    {
                        "backoff": f"backoff: the model's first choice, {first.concept_id}, had probability "
                        f"{first.probability:.3f} < {below}; this alias spells the mention most closely"
                    },
                ]
                candidates.insert(0, chosen)
        probability = candidates[0].probability if candidates else None
        threshold = self.settings["nil_threshold"]
        nil = None if threshold is None else (probability is None or probability < threshold)
        return LinkResult(result.mention, candidates, result.error, nil, probability, threshold)


def spelt_in_capitals(key: str, candidate, normalize) -> bool:
    """Is ``candidate``'s alias the stop-word mention ``key`` written in capitals (an abbreviation: "ALL" for "all")? Only
    such a candidate can be right for a mention of stop words only ("with", "of the"): the probability model never saw
    such mentions and once gave "with" 0.78. A concept whose preferred name is the word itself, not in capitals (HPO's root,
    "All"), is not the abbreviation, even when the index reports the alias it shares a key with ("ALL") as its match."""
    if not (candidate.matched_name and candidate.matched_name.isupper() and normalize(candidate.matched_name) == key):
        return False
    return not (candidate.name and not candidate.name.isupper() and normalize(candidate.name) == key)


def ties_by_probability(candidates: list) -> list:
    """``candidates`` (best score first) with each run of equal scores ordered by probability: one name shared by two
    concepts ("shortness of breath": HPO's Dyspnea and ICD-10-CM's R06.02) scores the same for both, and the more
    probable one should lead (and decide NIL), not whichever the index listed first."""
    out, start = [], 0
    for end in range(1, len(candidates) + 1):
        if end == len(candidates) or abs(candidates[end].score - candidates[start].score) > TIE:
            out += sorted(candidates[start:end], key=lambda c: -c.probability)  # stable: equal probabilities keep their order
            start = end
    return out


def model_is_current(config_dict: dict) -> bool:
    """Can this medlink read the config's probability model (none counts as current)? False for one fitted with other features."""
    for settings in config_dict.get("rerankers", []):
        if settings.get("type") == TYPE:
            try:
                ProbabilityModel.from_dict(settings.get("model") or {})
            except MedlinkError:
                return False
    return True


def calibration_stage(linker) -> CalibrationStage | None:
    """The linker's calibration stage, when it has one (always last)."""
    return next((r for r in linker.rerankers if r.type == TYPE), None)


NO_PROBABILITIES = (
    "this index has no probabilities: a score only ranks one mention's candidates (its scale is the index's stages' "
    "weights summed), so the first candidate is no sure match; fit them on dev data with "
    "'medlink tune --index DIR --dev FORMAT:PATH --calibrate --apply'"
)


def say_if_uncalibrated(linker) -> None:
    """One line (a phase line: -q hides it) where plain scores would read as certainty: the linker has no probabilities."""
    if calibration_stage(linker) is None:
        logging.getLogger("medlink").info(NO_PROBABILITIES)


def decided_rerankers(linker, nil_threshold: float | None = None, backoff_below: float | None = None) -> list:
    """The linker's rerankers with its calibration stage deciding NIL / backoff at these thresholds instead of the
    index's own: refused without a probability model, or for a value that is no probability."""
    if nil_threshold is None and backoff_below is None:
        return list(linker.rerankers)
    stage = calibration_stage(linker)
    if stage is None:
        raise MedlinkError(
            "this index has no probability model, so it has no NIL threshold to set: fit one with "
            "'medlink tune --index DIR --dev FORMAT:PATH --calibrate --apply'"
        )
    for name, value in (("--nil-threshold", nil_threshold), ("--backoff-below", backoff_below)):
        if value is not None and not 0.0 <= value <= 1.0:
            raise MedlinkError(f"{name} must be a probability between 0 and 1, not {value}")
    changes = {k: v for k, v in (("nil_threshold", nil_threshold), ("backoff_below", backoff_below)) if v is not None}
    return [stage.with_settings(**changes) if r is stage else r for r in linker.rerankers]

"""P(correct) for each candidate: the features a ranked candidate list carries, and a logistic model over them.

Why: a fused score cannot be thresholded. Weighted fusion divides each generator's scores by that mention's own best,
so every top candidate scores about the sum of the weights however poor the match, and RRF keeps ranks only. What
does say how sure a ranking is lies around the score: the margin to the next candidate, how many candidates tie,
each stage's own score, how closely the alias that matched spells the mention. A logistic regression
(scikit-learn) over those, fitted on labelled candidate lists, gives a probability a user can threshold.

The fitted model is plain numbers (feature names, scaler, coefficients, optional isotonic steps) kept as JSON in the
index config: no pickle, and predicting needs numpy only (no scikit-learn import when linking).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz.fuzz import ratio

from medlink.core import Candidate
from medlink.errors import MedlinkError
from medlink.logistic import fit_logistic, logistic, rounded

# features every index has; a stage's score ("stage:NAME") and whether the stage found the candidate ("has:NAME") follow
BASE_FEATURES = (
    "score",
    "relative_score",
    "gap_to_top",
    "margin_to_next",
    "log_rank",
    "is_top",
    "log_ties",
    "exact_alias",
    "alias_similarity",
    "name_similarity",
    "log_mention_words",
    "mention_words_covered",
    "alias_words_covered",
    "from_memory",
)
TIE = 1e-6
MODEL_FORMAT = 1


class RememberedNormalize:
    """``normalize`` with its answers remembered (at most ``size``, then forgotten at once): a candidate list holds the
    same KB names mention after mention, and normalising each of them again would be a large share of a calibrated
    link's time."""

    def __init__(self, normalize: Callable[[str], str], size: int = 200_000):
        self.normalize, self.size, self.seen = normalize, size, {}

    def __call__(self, text: str) -> str:
        found = self.seen.get(text)
        if found is None:
            if len(self.seen) >= self.size:
                self.seen.clear()
            found = self.seen[text] = self.normalize(text)
        return found


def similarity(key: str, text: str | None, normalize: Callable[[str], str]) -> float:
    """How closely ``text`` (normalised) spells the normalised mention ``key``: 1 for the same string, 0 for nothing shared."""
    return ratio(key, normalize(text)) / 100.0 if text else 0.0


def candidate_features(key: str, candidates: Sequence[Candidate], stages: Sequence[str], normalize: Callable[[str], str]) -> np.ndarray:
    """One row of features per candidate (``feature_names(stages)`` in order) for the normalised mention ``key``."""
    n = len(candidates)
    width = len(BASE_FEATURES) + 2 * len(stages)
    if n == 0:
        return np.zeros((0, width), np.float32)
    scores = np.array([c.score for c in candidates], np.float64)
    top = scores[0]
    rows = np.zeros((n, width), np.float64)
    rows[:, 0] = scores
    rows[:, 1] = scores / top if top > 0 else 0.0
    rows[:, 2] = top - scores
    rows[:, 3] = scores - np.append(scores[1:], 0.0)
    rows[:, 4] = np.log1p(np.arange(n))
    rows[0, 5] = 1.0
    rows[:, 6] = np.log(np.count_nonzero(np.abs(scores[:, None] - scores[None, :]) <= TIE, axis=1))
    aliases = [normalize(c.matched_name) if c.matched_name else "" for c in candidates]
    rows[:, 7] = [float(alias == key) for alias in aliases]
    rows[:, 8] = [ratio(key, alias) / 100.0 if alias else 0.0 for alias in aliases]
    rows[:, 9] = [similarity(key, c.name, normalize) for c in candidates]
    rows[:, 10] = math.log(1 + len(key.split()))
    # word coverage either way: an alias with words the mention lacks ("lipoma of the conjunctiva" for "lipoma") is
    # a narrower concept, the usual nearest miss when the mention's own concept is not in the KB
    words = set(key.split())
    for i, alias in enumerate(aliases):
        alias_words = set(alias.split())
        shared = len(words & alias_words)
        rows[i, 11] = shared / len(words) if words else 0.0
        rows[i, 12] = shared / len(alias_words) if alias_words else 0.0
        evidence = candidates[i].evidence
        rows[i, 13] = float(bool(evidence) and any(e.get("origin") == "memory" for e in evidence))
    for j, stage in enumerate(stages):
        column = len(BASE_FEATURES) + 2 * j
        for i, candidate in enumerate(candidates):
            value = candidate.scores_by_stage.get(stage)
            if value is not None:
                rows[i, column] = value
                rows[i, column + 1] = 1.0
    return rows.astype(np.float32)


def feature_names(stages: Sequence[str]) -> list[str]:
    return [*BASE_FEATURES, *(f"{kind}:{stage}" for stage in stages for kind in ("stage", "has"))]


def stages_of(candidate_lists: Sequence[Sequence[Candidate]]) -> list[str]:
    """The stage names the candidates carry scores of, in first-seen order (the model's per-stage features)."""
    seen: dict[str, None] = {}
    for candidates in candidate_lists:
        for candidate in candidates:
            seen.update(dict.fromkeys(candidate.scores_by_stage))
    return list(seen)


@dataclass
class ProbabilityModel:
    """Standardised features -> logistic regression -> (optionally) isotonic steps: P(candidate is right)."""

    stages: list[str]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    isotonic: tuple[np.ndarray, np.ndarray] | None = None  # (x, y) steps over the logistic output
    fitted_on: dict | None = None  # what the model was fitted on (dev set, counts), for reports

    def predict(self, features: np.ndarray) -> np.ndarray:
        """P(correct) of each row of ``candidate_features``."""
        p = logistic(features, self.mean, self.scale, self.coef, self.intercept)
        if self.isotonic is not None and len(p):
            p = np.interp(p, *self.isotonic)
        return p

    def probabilities(self, key: str, candidates: Sequence[Candidate], normalize: Callable[[str], str]) -> np.ndarray:
        return self.predict(candidate_features(key, candidates, self.stages, normalize))

    # -- fitting -------------------------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        features: np.ndarray,
        labels: np.ndarray,
        stages: Sequence[str],
        isotonic: bool = False,
        fitted_on: dict | None = None,
        logistic: tuple | None = None,
    ) -> ProbabilityModel:
        """Fit on candidate rows labelled right (1) / wrong (0); both kinds are needed. ``logistic``: the regression
        ``fit_logistic`` gave for these very rows, not fitted again."""
        from sklearn.isotonic import IsotonicRegression

        labels = np.asarray(labels, dtype=np.int8)
        positives = int(labels.sum())
        if positives == 0 or positives == len(labels):
            kind = "right" if positives == 0 else "wrong"
            raise MedlinkError(
                f"cannot fit probabilities: none of the {len(labels):,} candidates is {kind}; the dev data needs mentions "
                "the index links correctly and candidates it ranks that are wrong (check the dev file's ids match the KB's)"
            )
        model = cls(list(stages), *(logistic or fit_logistic(features, labels)), None, fitted_on)
        if isotonic:
            raw = model.predict(features)
            steps = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(raw, labels)
            model.isotonic = (np.asarray(steps.X_thresholds_, np.float64), np.asarray(steps.y_thresholds_, np.float64))
        return model

    # -- JSON ------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        payload = {
            "format": MODEL_FORMAT,
            "features": feature_names(self.stages),
            "stages": self.stages,
            "mean": rounded(self.mean),
            "scale": rounded(self.scale),
            "coef": rounded(self.coef),
            "intercept": round(self.intercept, 8),
        }
        if self.isotonic is not None:
            payload["isotonic"] = {"x": rounded(self.isotonic[0]), "y": rounded(self.isotonic[1])}
        if self.fitted_on:
            payload["fitted_on"] = self.fitted_on
        return payload

    @classmethod
    def from_dict(cls, data: dict, where: str = "probability model") -> ProbabilityModel:
        """Read a saved model, refusing one whose numbers do not fit its feature list (edited or damaged)."""
        try:
            stages = [str(s) for s in data["stages"]]
            width = len(feature_names(stages))
            arrays = [np.asarray(data[key], np.float64) for key in ("mean", "scale", "coef")]
            isotonic = data.get("isotonic")
            steps = (np.asarray(isotonic["x"], np.float64), np.asarray(isotonic["y"], np.float64)) if isotonic else None
            intercept = float(data["intercept"])
        except (KeyError, TypeError, ValueError) as error:
            raise MedlinkError(f"{where}: not a probability model written by 'medlink tune --calibrate' ({error!r})") from error
        if data.get("features") != feature_names(stages):
            raise MedlinkError(
                f"{where}: the probability model was fitted by a medlink with other features; re-fit it "
                "('medlink tune --calibrate') or rebuild the index"
            )
        if data.get("format") != MODEL_FORMAT or any(a.shape != (width,) for a in arrays) or (steps and steps[0].shape != steps[1].shape):
            raise MedlinkError(
                f"{where}: the probability model's numbers do not match its {width} features (edited or damaged); "
                "re-fit it with 'medlink tune --calibrate'"
            )
        if not np.all(arrays[1] > 0):
            raise MedlinkError(f"{where}: the probability model's scales must be positive")
        return cls(stages, *arrays, intercept, steps, data.get("fitted_on"))

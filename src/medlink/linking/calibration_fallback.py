"""A fallback probability model for a KB too small to fit one on: so NIL can still happen.

Why: an index fits its probabilities on pseudo-mentions drawn from its KB's synonyms, and a custom KB of a few dozen
names gives too few (``calibration_fit.MIN_PSEUDO_MENTIONS``). Without a model every mention linked to something,
however far its best name was from it. The fallback is a fixed logistic model over how the matched name spells the
mention and how many words the two share, no stage score (their scales differ from KB to KB): a name spelt as the
mention gets about 0.95, a one-letter slip about 0.7, a name sharing half the words about 0.2, an unrelated one
under 0.01, and the NIL threshold is 0.5. A name a thesaurus stage reached (a synonym of the mention spells it, as
HPO's "Heart attack" spells *Myocardial infarction*) gets about 0.8-0.9, for its spelling cannot say so; that stage's
score is 1 or nothing on every KB. Rivals then share (``linking.rivals``). ``fitted_on["source"]`` says it
was not fitted, so a user knows to fit one on dev data (``medlink tune --calibrate``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medlink.linking.calibration import TYPE, memory_tag
from medlink.linking.probability import ProbabilityModel, feature_names

FALLBACK_SOURCE = "fallback: a fixed model over the alias's spelling (the KB had too few names to fit one)"
FALLBACK_NIL_THRESHOLD = 0.5
# log-odds per feature (features as they are: mean 0, scale 1); the rest weigh nothing
WEIGHTS = {"alias_similarity": 6.0, "mention_words_covered": 2.0, "alias_words_covered": 2.0, "is_top": 1.0}
INTERCEPT = -8.0
THESAURUS_WEIGHT = 7.0  # log-odds of "a thesaurus stage found it" (its "has:" feature)


def fallback_model(thesaurus_stages: Sequence[str] = ()) -> ProbabilityModel:
    """The fixed model: base features, and whether one of ``thesaurus_stages`` (the index's thesaurus stages' names)
    found the candidate; no other stage's score."""
    names = feature_names(list(thesaurus_stages))
    weights = {**WEIGHTS, **{f"has:{stage}": THESAURUS_WEIGHT for stage in thesaurus_stages}}
    coef = np.array([weights.get(name, 0.0) for name in names], np.float64)
    return ProbabilityModel(
        list(thesaurus_stages), np.zeros(len(names)), np.ones(len(names)), coef, INTERCEPT, None, {"source": FALLBACK_SOURCE}
    )


def fallback_settings(fingerprint: str, memory_summary: dict | None = None, thesaurus_stages: Sequence[str] = ()) -> tuple[dict, None]:
    """A calibration stage's settings with the fallback model, for an index whose stages give ``fingerprint`` (and no
    fit's report: nothing was fitted)."""
    settings = {
        "type": TYPE,
        "model": fallback_model(thesaurus_stages).to_dict(),
        "fitted_for": fingerprint,
        "fitted_memory": memory_tag(memory_summary),
        "nil_threshold": FALLBACK_NIL_THRESHOLD,
        "backoff_below": None,
        "order": "score",
    }
    return settings, None


def is_fallback(settings: dict) -> bool:
    """Is this calibration stage's model the fallback (not fitted)?"""
    return ((settings.get("model") or {}).get("fitted_on") or {}).get("source") == FALLBACK_SOURCE

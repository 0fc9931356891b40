"""A standardised logistic regression kept as plain numbers: fitted with scikit-learn, applied with numpy alone.

Why its own module: the link probabilities (``medlink.linking.probability``) and the span selector
(``medlink.text.finders.selector.model``) both keep such a model as JSON in a file medlink writes (no pickle: loading a
model never runs code) and predict without importing scikit-learn.
"""

from __future__ import annotations

import numpy as np


def fit_logistic(features: np.ndarray, labels: np.ndarray, c: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(mean, scale, coef, intercept) of a logistic regression over standardised ``features`` (a constant feature gets
    scale 1); ``labels`` must hold both classes (the callers say which data lacked one)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(features)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    regression = LogisticRegression(C=c, max_iter=5000).fit((features - scaler.mean_) / scale, labels)
    return (
        scaler.mean_.astype(np.float64),
        scale.astype(np.float64),
        regression.coef_[0].astype(np.float64),
        float(regression.intercept_[0]),
    )


ROWS_AT_ONCE = 4096  # rows standardised and scored together (a whole batch's float64 copies would be paged in anew)


def logistic(features: np.ndarray, mean: np.ndarray, scale: np.ndarray, coef: np.ndarray, intercept: float) -> np.ndarray:
    """P(class 1) of each row of ``features`` under a model from ``fit_logistic``."""
    z = np.empty(features.shape[0], np.float64)
    for start in range(0, features.shape[0], ROWS_AT_ONCE):  # a block's temporaries stay in cache, not a batch's
        block = features[start : start + ROWS_AT_ONCE]
        z[start : start + len(block)] = ((block - mean) / scale) @ coef + intercept
    return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))


def rounded(values: np.ndarray) -> list[float]:
    """Numbers for JSON, to 8 decimals."""
    return [round(float(v), 8) for v in values]

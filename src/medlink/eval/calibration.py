"""How far probabilities are from frequencies: expected calibration error and the reliability diagram.

ECE (Guo et al. 2017, the measure calibration papers report): bin the predictions by probability (10 equal-width
bins), and average |mean probability - share right| over the bins, weighted by how many predictions each holds.
Measured on each mention's first candidate, the one a threshold decides on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

BINS = 10


def reliability(probabilities: Sequence[float], right: Sequence[bool], bins: int = BINS) -> list[dict]:
    """Per bin: its range, how many predictions, their mean probability and the share right."""
    p = np.asarray(probabilities, np.float64)
    y = np.asarray(right, np.float64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(p, edges[1:-1], right=True), 0, bins - 1)
    rows = []
    for b in range(bins):
        inside = which == b
        n = int(inside.sum())
        rows.append(
            {
                "low": float(edges[b]),
                "high": float(edges[b + 1]),
                "n": n,
                "probability": float(p[inside].mean()) if n else None,
                "accuracy": float(y[inside].mean()) if n else None,
            }
        )
    return rows


def expected_calibration_error(probabilities: Sequence[float], right: Sequence[bool], bins: int = BINS) -> float:
    rows = reliability(probabilities, right, bins)
    total = sum(r["n"] for r in rows)
    return sum(r["n"] * abs(r["probability"] - r["accuracy"]) for r in rows if r["n"]) / total if total else 0.0


def reliability_diagram(curves: dict[str, tuple[Sequence[float], Sequence[bool]]], path: Path, title: str = "") -> Path:
    """A PNG with one reliability curve per label (share right against mean probability, per bin) and the diagonal."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(4.5, 4.5), dpi=110)
    axis.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="perfectly calibrated")
    for label, (probabilities, right) in curves.items():
        rows = [r for r in reliability(probabilities, right) if r["n"]]
        ece = expected_calibration_error(probabilities, right)
        axis.plot([r["probability"] for r in rows], [r["accuracy"] for r in rows], marker="o", label=f"{label} (ECE {ece:.3f})")
    axis.set_xlabel("predicted probability of the first candidate")
    axis.set_ylabel("share right")
    axis.set_xlim(0, 1)
    axis.set_ylim(0, 1)
    axis.set_title(title, fontsize=9)
    axis.legend(fontsize=7, loc="upper left")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp.png")
    figure.savefig(temporary)
    plt.close(figure)
    temporary.replace(path)
    return path

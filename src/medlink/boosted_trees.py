"""Gradient-boosted trees fitted by scikit-learn, kept as plain JSON numbers, predicted with numpy.

Why: a logistic model over an aligner's evidence cannot say "a weak string match is right when the bi-encoder agrees
and the candidate sits at the target's category level" (the evidence interacts); boosted trees can, and on the DO ->
ICD-10-CM dev split they rank better (BENCHMARKS.md). Like every medlink model that lives inside a JSON artefact,
no pickle: the fitted trees' public arrays (``tree_``: children, split feature, threshold, leaf value) are written
out, and prediction walks them level by level over all rows at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medlink.errors import MedlinkError

KIND = "boosted trees"
SETTINGS = {"n_estimators": 300, "max_leaf_nodes": 8, "learning_rate": 0.05}  # dev-chosen on DO -> ICD-10-CM (BENCHMARKS.md)


@dataclass
class BoostedTrees:
    """log-odds = sum over trees of learning_rate x the leaf value the row reaches (``init="zero"``: no prior term)."""

    learning_rate: float
    trees: list[dict[str, list]]  # per tree: left, right (-1 at a leaf), feature, threshold, value
    inputs: int  # the columns it was fitted on

    @classmethod
    def fit(cls, matrix: np.ndarray, labels: np.ndarray, seed: int = 0, **settings) -> BoostedTrees:
        """Fit scikit-learn's GradientBoostingClassifier (log-loss, no prior term) and keep its trees as numbers."""
        from sklearn.ensemble import GradientBoostingClassifier

        options = {**SETTINGS, **settings}
        model = GradientBoostingClassifier(init="zero", max_depth=None, random_state=seed, **options).fit(matrix, labels)
        trees = []
        for estimator in model.estimators_[:, 0]:
            tree = estimator.tree_
            trees.append(
                {
                    "left": tree.children_left.tolist(),
                    "right": tree.children_right.tolist(),
                    "feature": tree.feature.tolist(),
                    "threshold": tree.threshold.tolist(),
                    "value": tree.value[:, 0, 0].tolist(),
                }
            )
        return cls(float(options["learning_rate"]), trees, int(matrix.shape[1]))

    def log_odds(self, matrix: np.ndarray) -> np.ndarray:
        """The model's raw score per row (what ``GradientBoostingClassifier.decision_function`` gives)."""
        matrix = np.asarray(matrix, dtype=np.float64)
        total = np.zeros(len(matrix))
        rows = np.arange(len(matrix))
        for tree in self._arrays():
            left, right, feature, threshold, value = tree
            node = np.zeros(len(matrix), dtype=np.int64)
            inner = left[node] >= 0
            while inner.any():
                at = node[inner]
                goes_left = matrix[rows[inner], feature[at]] <= threshold[at]
                node[inner] = np.where(goes_left, left[at], right[at])
                inner = left[node] >= 0
            total += value[node]
        return self.learning_rate * total

    def _arrays(self) -> list[tuple[np.ndarray, ...]]:
        if getattr(self, "_cache", None) is None:
            self._cache = [
                (
                    np.asarray(t["left"], np.int64),
                    np.asarray(t["right"], np.int64),
                    np.asarray(t["feature"], np.int64),
                    np.asarray(t["threshold"], np.float64),
                    np.asarray(t["value"], np.float64),
                )
                for t in self.trees
            ]
        return self._cache

    def to_dict(self) -> dict:
        return {"kind": KIND, "learning_rate": self.learning_rate, "inputs": self.inputs, "trees": self.trees}

    @classmethod
    def from_dict(cls, data: dict, features: int, where: str) -> BoostedTrees:
        """Read and check the JSON form (``features``: how many columns the trees may split on)."""
        try:
            if data.get("kind") != KIND:
                raise ValueError(f"kind {data.get('kind')!r} is not {KIND!r}")
            model = cls(
                float(data["learning_rate"]), list(data["trees"]), int(data.get("inputs", features))
            )  # a file without "inputs": its split check below
            if model.inputs != features:
                raise ValueError(f"fitted on {model.inputs} inputs, {features} named")
            if not model.trees or not 0 < model.learning_rate <= 1:
                raise ValueError("no tree, or a learning rate outside (0, 1]")
            for number, (left, right, feature, _, value) in enumerate(model._arrays()):
                n = len(left)
                if not n or any(len(a) != n for a in (right, feature, value)) or left.max() >= n or right.max() >= n:
                    raise ValueError(f"tree {number} is not a tree: arrays of different lengths or children out of range")
                inner = left >= 0
                if (right[inner] < 0).any() or ((feature[inner] < 0) | (feature[inner] >= features)).any():
                    raise ValueError(f"tree {number} splits on a feature outside 0..{features - 1}")
                if (left[inner] <= np.flatnonzero(inner)).any() or (right[inner] <= np.flatnonzero(inner)).any():
                    raise ValueError(f"tree {number} has a child before its parent (a cycle)")
            return model
        except (KeyError, TypeError, ValueError) as error:
            raise MedlinkError(f"{where}: the boosted trees cannot be read ({error})") from None

"""Boosted trees kept as JSON: the same log-odds as scikit-learn's, interactions a logistic model misses, bad JSON refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from medlink.boosted_trees import BoostedTrees
from medlink.errors import MedlinkError


def interacting(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Right only when a weak string match is vouched for by meaning (x1) or a strong match stands alone: an XOR-like label."""
    rng = np.random.default_rng(seed)
    matrix = rng.random((n, 3))
    labels = (matrix[:, 0] > 0.5) ^ (matrix[:, 1] > 0.5)
    return matrix, labels


def test_json_round_trip_gives_scikit_learns_log_odds():
    from sklearn.ensemble import GradientBoostingClassifier

    matrix, labels = interacting()
    model = BoostedTrees.fit(matrix, labels, n_estimators=40)
    again = BoostedTrees.from_dict(json.loads(json.dumps(model.to_dict())), 3, "test")
    reference = GradientBoostingClassifier(init="zero", max_depth=None, random_state=0, n_estimators=40, max_leaf_nodes=8,
                                           learning_rate=0.05).fit(matrix, labels)
    probe = np.random.default_rng(1).random((200, 3))
    assert np.allclose(again.log_odds(probe), reference.decision_function(probe), atol=1e-9)


def test_trees_learn_an_interaction_a_logistic_model_cannot():
    from sklearn.linear_model import LogisticRegression

    matrix, labels = interacting()
    test_matrix, test_labels = interacting(seed=2)
    trees = BoostedTrees.fit(matrix, labels)
    tree_accuracy = np.mean((trees.log_odds(test_matrix) > 0) == test_labels)
    logistic_accuracy = LogisticRegression().fit(matrix, labels).score(test_matrix, test_labels)
    assert tree_accuracy > 0.9 and logistic_accuracy < 0.7, (tree_accuracy, logistic_accuracy)


@pytest.mark.parametrize("damage, message", [
    (lambda d: d.update(kind="pickle"), "kind"),
    (lambda d: d["trees"][0]["feature"].__setitem__(0, 7), "feature outside"),
    (lambda d: d["trees"][0]["left"].__setitem__(0, 0), "child before its parent"),
    (lambda d: d["trees"][0]["value"].pop(), "not a tree"),
    (lambda d: d.pop("trees"), "trees"),
])
def test_damaged_trees_are_refused_in_words(damage, message):
    matrix, labels = interacting(100)
    data = json.loads(json.dumps(BoostedTrees.fit(matrix, labels, n_estimators=3).to_dict()))
    damage(data)
    with pytest.raises(MedlinkError, match=message):
        BoostedTrees.from_dict(data, 3, "aligner.json")

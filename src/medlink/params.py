"""What each config knob of a dense generator or a reranker accepts, checked when a config is read.

Why here and not where the knobs are used: a typo ("lambda" for "lambda_") or an impossible value
(beta1 = 0, nprobe = 0) must fail when the index is built, naming the config file and the field,
not later as a ZeroDivisionError or a FAISS assertion while linking. This module imports nothing
heavy, so a config is checked without torch or faiss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from medlink.errors import MedlinkError
from medlink.text.concept_text import CONCEPT_TEXTS


@dataclass(frozen=True)
class Param:
    """One knob: its type, its range or choices, and whether null is allowed."""

    kind: type
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None  # strictly greater than
    choices: tuple | None = None
    nullable: bool = False

    def describe(self) -> str:
        kind = ("one of " + ", ".join(map(str, self.choices))) if self.choices else \
            {bool: "true or false", int: "an integer", float: "a number", str: "a string"}[self.kind]
        bounds = [f"{sign} {value:g}" for sign, value in ((">", self.above), (">=", self.minimum), ("<=", self.maximum)) if value is not None]
        return " ".join([kind, " and ".join(bounds)]).strip() + (" (or null)" if self.nullable else "")

    def accepts(self, value: Any) -> bool:
        if value is None:
            return self.nullable
        if self.kind is bool:
            ok = isinstance(value, bool)
        elif self.kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif self.kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = isinstance(value, self.kind)
        if not ok:
            return False
        if self.choices is not None:
            return value in self.choices
        return ((self.minimum is None or value >= self.minimum) and (self.maximum is None or value <= self.maximum)
                and (self.above is None or value > self.above))


def check_params(where: str, params: Mapping[str, Any], schema: Mapping[str, Param]) -> None:
    """Unknown keys and values out of type or range raise one error naming ``where`` and the field."""
    unknown = sorted(set(params) - set(schema))
    if unknown:
        raise MedlinkError(f"{where}: unknown {'keys' if len(unknown) > 1 else 'key'} {', '.join(map(repr, unknown))}; known: {', '.join(schema)}")
    for key, value in params.items():
        if not schema[key].accepts(value):
            raise MedlinkError(f"{where}: {key!r} must be {schema[key].describe()}, not {value!r}")


POOLINGS = ("mean", "cls")
PRECISIONS = ("auto", "fp32", "bf16")  # the same tuple as medlink.encoders.precision.PRECISIONS, which imports torch lazily
DENSE_INDEXES = ("flat", "hnsw", "ivfpq")

# a dense generator's params (their defaults: medlink.retrieval.dense.DEFAULTS)
DENSE_PARAMS = {
    "model": Param(str, nullable=True),
    "pooling": Param(str, choices=POOLINGS, nullable=True),
    "max_length": Param(int, minimum=2, maximum=512),
    "precision": Param(str, choices=PRECISIONS),  # auto: decided per machine (medlink.encoders.precision)
    "index": Param(str, choices=DENSE_INDEXES),
    "fp16": Param(bool),
    "batch_size": Param(int, minimum=1),
    "text": Param(str, choices=CONCEPT_TEXTS),
    "definition_words": Param(int, minimum=0),
    "hnsw_m": Param(int, minimum=2),
    "ef_construction": Param(int, minimum=1),
    "ef_search": Param(int, minimum=1),
    "nlist": Param(int, minimum=1, nullable=True),
    "pq_m": Param(int, minimum=1, nullable=True),
    "nprobe": Param(int, minimum=1),
}

# reranker entries of a linker config (check_reranker; for kNN, the config checks that "generator" names a dense generator)
KNN_PARAMS = {
    "type": Param(str),
    "generator": Param(str),
    "k": Param(int, minimum=1),
    "lambda_": Param(float, minimum=0.0, maximum=1.0),
    "beta1": Param(float, above=0.0),
    "beta2": Param(float, above=0.0),
}
CROSS_TEXTS = ("name", "matched")
CROSS_PARAMS = {
    "type": Param(str),
    "model": Param(str),  # a trained cross-encoder folder (required)
    "top": Param(int, minimum=1),
    "weight": Param(float, minimum=0.0),
    "text": Param(str, choices=CROSS_TEXTS),
    "max_length": Param(int, minimum=2, maximum=512),
    "precision": Param(str, choices=PRECISIONS),  # auto: decided per machine (medlink.encoders.precision)
}


def check_reranker(where: str, settings: Mapping[str, Any]) -> None:
    """A config's reranker entry (``type`` known to the caller): its keys and values, and a cross-encoder's required model."""
    check_params(where, settings, KNN_PARAMS if settings.get("type") == "knn" else CROSS_PARAMS)
    if settings.get("type") == "cross-encoder" and not settings.get("model"):
        raise MedlinkError(f"{where}: 'model' must name a trained cross-encoder folder ('medlink train cross-encoder')")

"""The reranker protocol, and the registry that checks, builds and loads rerankers by type name.

A reranker is any stage that runs after candidate generation and fusion: it takes each mention's
link result and returns a new one (candidates re-scored, re-ordered, added or judged NIL). An
index config lists them in order (``"rerankers": [{"type": "knn", ...}, {"type": "cross-encoder",
...}]``); the Linker runs them one after another without knowing what any of them is. A new kind
is one module with a class and its ``PARAMS`` schema, and one line in ``RERANKERS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import import_module
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from medlink.core import Candidate, LinkResult, Mention
from medlink.errors import MedlinkError
from medlink.params import Param, Schema, read_params


@dataclass
class LinkerParts:
    """What a reranker may use of the linker it belongs to: its generators (kNN encodes with a dense one), a way to
    describe a concept it adds, and, when building, the mention memory (normalised text, concept id)."""

    generators: Mapping[str, Any]
    candidate_for: Callable[[str], Candidate]  # concept id -> a zero-score candidate carrying its name and alt ids
    memory: Sequence[tuple[str, str]] = field(default_factory=list)
    memory_summary: dict | None = None  # what the memory given held and skipped (None: no memory was given)
    normalize: Callable[[str], str] | None = None  # the index's normaliser (the calibration stage compares aliases with mentions)
    describe: Callable[[], dict[str, str]] | None = None  # when building: concept id -> entity text (text.concept_text.entity_texts)


@runtime_checkable
class Reranker(Protocol):
    """Re-scores each mention's candidates. ``mentions`` are the mentions as the generators saw them (normalised text,
    with their context); ``results[i]`` belongs to ``mentions[i]``; the returned list is aligned the same way."""

    type: ClassVar[str]
    PARAMS: ClassVar[Schema]
    settings: dict  # checked, completed with defaults; ``type`` included
    requires_generator: str | None  # a generator that must be among a call's stages for this reranker to run (kNN's dense one)
    # Optional (read through ``reads_context``; absent means False): ``reads_context: bool``, true when the reranker reads
    # a mention's left / right context, so the linker must rerank each occurrence of a string, not the string once.
    # Not declared here: a runtime-checkable protocol would then refuse every reranker written without it.

    def rerank(self, mentions: Sequence[Mention], results: list[LinkResult]) -> list[LinkResult]: ...

    def with_settings(self, **changes: Any) -> Reranker: ...  # the same model with other settings (dev tuning)

    def save(self, directory: Path) -> None: ...


def reads_context(reranker: Reranker) -> bool:
    """Does this reranker read a mention's context (the optional ``reads_context`` attribute; False when absent)?"""
    return bool(getattr(reranker, "reads_context", False))


# type name -> "module:Class" (a bare module name is under medlink.rerank); each class has PARAMS, build(settings, parts),
# load(directory, settings, parts) and the Reranker methods
RERANKERS = {
    "knn": "knn:KnnReranker",
    "cross-encoder": "cross_encoder:CrossEncoderReranker",
    "pairwise": "pairwise:PairwiseRanker",
    "calibration": "medlink.linking.calibration:CalibrationStage",  # probabilities, backoff, NIL: always last
}


def register_reranker(type_name: str, target: str) -> None:
    """Make a reranker of another package usable in configs: ``target`` is "package.module:Class"."""
    RERANKERS[type_name] = target


def reranker_class(type_name: str) -> Any:
    if type_name not in RERANKERS:
        raise MedlinkError(f"unknown reranker type {type_name!r}; known: {', '.join(RERANKERS)}")
    module, cls = RERANKERS[type_name].split(":")
    return getattr(import_module(module if "." in module else f"medlink.rerank.{module}"), cls)


def read_reranker_settings(where: str, settings: Any) -> dict:
    """A config's reranker entry checked against its type's schema and completed with its defaults."""
    if not isinstance(settings, Mapping):
        raise MedlinkError(f"{where}: expected an object with a 'type', not {type(settings).__name__}")
    type_param = Param(str, choices=tuple(RERANKERS))
    type_name = settings.get("type")
    if not type_param.accepts(type_name):
        raise MedlinkError(f"{where}: 'type' must be {type_param.describe()}, not {type_name!r}")
    cls = reranker_class(type_name)
    return read_params(f"{where} ({type_name})", settings, {"type": type_param, **cls.PARAMS})


def own_settings(type_name: str, schema: Schema, settings: Mapping[str, Any]) -> dict:
    """A reranker's settings (with or without their ``type``) checked against its schema, defaults filled, ``type`` set."""
    body = {key: value for key, value in settings.items() if key != "type"}
    return read_params(f"{type_name} reranker", body, schema) | {"type": type_name}


def build_reranker(settings: dict, parts: LinkerParts) -> Reranker:
    return reranker_class(settings["type"]).build(settings, parts)


def load_reranker(directory: Path, settings: dict, parts: LinkerParts) -> Reranker:
    return reranker_class(settings["type"]).load(directory, settings, parts)


def replaced_candidates(results: Sequence[LinkResult], candidates: Sequence[list[Candidate]]) -> list[LinkResult]:
    """New results with each one's candidates replaced (the mention and any decisions kept)."""
    return [replace(result, candidates=list(ranked)) for result, ranked in zip(results, candidates)]

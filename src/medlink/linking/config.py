"""What an index is made of: generators (type, which names they search, parameters) and fusion.

A config is plain JSON so that ``medlink index build --config FILE`` and the manifest share it.
``names`` says which alias table a generator searches: ``kb`` (KB names), ``memory`` (training
mentions only) or ``kb+memory`` (both in one table, the BioSyn "train dictionary + mentions"
setting). Without a memory, ``kb+memory`` is just ``kb`` and ``memory`` generators are left out.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.encoders.precision import from_legacy
from medlink.params import DENSE_PARAMS, check_params, check_reranker
from medlink.retrieval.base import GENERATORS
from medlink.retrieval.fusion import Fusion

NAME_SOURCES = ("kb", "memory", "kb+memory")
RERANKERS = ("knn", "cross-encoder")


@dataclass
class GeneratorConfig:
    name: str
    type: str
    names: str = "kb+memory"
    params: dict = field(default_factory=dict)


@dataclass
class LinkerConfig:
    generators: list[GeneratorConfig]
    fusion: Fusion = field(default_factory=Fusion)
    k_per_generator: int = 64
    # {"type": "knn", "generator": "dense", "k", "lambda_", "beta1", "beta2"} or {"type": "cross-encoder", "model", "top", "weight"}
    reranker: dict | None = None

    @classmethod
    def from_dict(cls, data: dict, where: str = "config") -> "LinkerConfig":
        unknown = set(data) - {"generators", "fusion", "k_per_generator", "reranker"}
        if unknown:
            raise MedlinkError(f"{where}: unknown keys {sorted(unknown)}; expected generators, fusion, k_per_generator, reranker")
        generators = []
        for i, g in enumerate(data.get("generators") or []):
            try:
                generator = GeneratorConfig(**g)
            except TypeError as error:
                raise MedlinkError(f"{where}: generators[{i}]: {error}; expected keys name, type, names, params") from error
            if generator.type not in GENERATORS:
                raise MedlinkError(f"{where}: generators[{i}]: unknown type {generator.type!r}; known: {', '.join(GENERATORS)}")
            if generator.names not in NAME_SOURCES:
                raise MedlinkError(f"{where}: generators[{i}]: names must be one of {', '.join(NAME_SOURCES)}, not {generator.names!r}")
            if generator.type == "dense":
                generator.params = from_legacy(generator.params or {})
                check_params(f"{where}: generators[{i}] ({generator.name}) params", generator.params or {}, DENSE_PARAMS)
            generators.append(generator)
        if not generators:
            raise MedlinkError(f"{where}: at least one generator is needed")
        if len({g.name for g in generators}) != len(generators):
            raise MedlinkError(f"{where}: generator names must be unique")
        try:
            fusion = Fusion(**(data.get("fusion") or {}))
        except (TypeError, ValueError) as error:
            raise MedlinkError(f"{where}: fusion: {error}") from error
        reranker = data.get("reranker")
        if reranker is not None:
            reranker = from_legacy(reranker)
            if reranker.get("type") not in RERANKERS:
                raise MedlinkError(f"{where}: reranker: unknown type {reranker.get('type')!r}; known: {', '.join(RERANKERS)}")
            check_reranker(f"{where}: reranker", reranker)
            target = reranker.get("generator")
            if reranker["type"] == "knn" and not any(g.name == target and g.type == "dense" for g in generators):
                raise MedlinkError(f"{where}: reranker: 'generator' must name a dense generator of this config (got {target!r})")
        return cls(generators, fusion, int(data.get("k_per_generator", 64)), reranker)

    @classmethod
    def from_file(cls, path: Path) -> "LinkerConfig":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as error:
            raise MedlinkError(f"config file not found: {path}") from error
        except json.JSONDecodeError as error:
            raise MedlinkError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from error
        return cls.from_dict(data, str(path))

    def to_dict(self) -> dict:
        return {"generators": [asdict(g) for g in self.generators], "fusion": asdict(self.fusion), "k_per_generator": self.k_per_generator,
                "reranker": self.reranker}


LEXICAL_GENERATORS = [{"name": "exact", "type": "exact"}, {"name": "tfidf", "type": "tfidf"}, {"name": "bm25", "type": "bm25"}]
LEXICAL_WEIGHTS = {"exact": 1.0, "tfidf": 1.0, "bm25": 0.25}
# weight of the packaged MiniLM next to LEXICAL_WEIGHTS; chosen on AskAPatient fold-0 validation + NCBI dev (benchmarks/default_dense.py)
DEFAULT_DENSE_WEIGHT = 4.0


def default_config() -> LinkerConfig:
    """Exact + char n-gram TF-IDF + BM25 over KB names and the memory, weighted fusion (weights from NCBI dev)."""
    return LinkerConfig.from_dict({"generators": LEXICAL_GENERATORS, "fusion": {"method": "weighted", "weights": dict(LEXICAL_WEIGHTS)}})


def default_dense_config(dense_weight: float = DEFAULT_DENSE_WEIGHT) -> LinkerConfig:
    """The default config plus the packaged MiniLM (untrained): lay wording ("can't sleep") that shares no
    characters with a KB name can still land on it. Needs the dense extra."""
    return LinkerConfig.from_dict({
        "generators": [*LEXICAL_GENERATORS, {"name": "dense", "type": "dense"}],
        "fusion": {"method": "weighted", "weights": {**LEXICAL_WEIGHTS, "dense": dense_weight}},
    })


# recipes a user can name instead of a config file (``medlink index build --config default-dense``), for any KB
PRESETS = {"default": default_config, "default-dense": default_dense_config}


def load_config(config: "LinkerConfig | Path | str | None") -> "LinkerConfig | None":
    """A config object, a preset's name (``PRESETS``) or a JSON file's path; None stays None (the default)."""
    if config is None or isinstance(config, LinkerConfig):
        return config
    if str(config) in PRESETS and not Path(config).is_file():
        return PRESETS[str(config)]()
    return LinkerConfig.from_file(Path(config))

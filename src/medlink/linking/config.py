"""What an index is made of: generators (type, which names they search, parameters) and fusion.

A config is plain JSON so that ``medlink index build --config FILE`` and the manifest share it.
``names`` says which alias table a generator searches: ``kb`` (KB names), ``memory`` (training
mentions only) or ``kb+memory`` (both in one table, the BioSyn "train dictionary + mentions"
setting). Without a memory, ``kb+memory`` is just ``kb`` and ``memory`` generators are left out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from medlink.directories import json_has_keys
from medlink.encoders.precision import from_legacy
from medlink.errors import MedlinkError
from medlink.kb.readers.files import parse_json
from medlink.kb.readers.icd10cm import (
    EPISODE_OF_CARE,  # the dense stage embeds each condition once, without it (fewer tokens to encode: benchmarks/dense/episode_strip.py)
)
from medlink.params import GENERATOR_PARAMS, SAFE_NAME, Param, check_params, read_params
from medlink.rerank.base import read_reranker_settings, reranker_class
from medlink.retrieval import fusion as fusion_settings
from medlink.retrieval.base import GENERATORS
from medlink.retrieval.fusion import Fusion

NAME_SOURCES = ("kb", "memory", "kb+memory")
CONFIG_PARAMS = {
    "generators": Param(list, items=dict),
    "fusion": Param(dict, items=object, default={}),
    "k_per_generator": Param(int, minimum=1, default=64),  # candidates each generator gives to fusion (and rerankers)
    "rerankers": Param(list, items=dict, default=[]),  # run in this order after fusion
    "reranker": Param(dict, items=object, nullable=True, default=None),  # one reranker: a config without "rerankers" may name it here
    "tuned": Param(dict, items=object, nullable=True, default=None),  # what 'medlink tune' chose this with (dev figures), kept as written
}
GENERATOR_ENTRY = {
    "name": Param(str, pattern=SAFE_NAME),
    "type": Param(str, choices=tuple(GENERATORS)),
    "names": Param(str, choices=NAME_SOURCES, default="kb+memory"),
    "params": Param(dict, items=object, default={}),
}


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
    rerankers: list[dict] = field(default_factory=list)  # each: {"type": ..., its settings}, defaults filled in
    tuned: dict | None = None  # the dev figures 'medlink tune' chose this config with

    @classmethod
    def from_dict(cls, data: dict, where: str = "config") -> LinkerConfig:
        """Every key and value checked against its component's schema; a mistake names ``where`` and the field."""
        data = read_params(where, data, CONFIG_PARAMS)
        generators = []
        for i, entry in enumerate(data["generators"]):
            entry = read_params(f"{where}: generators[{i}]", entry, GENERATOR_ENTRY)
            params = from_legacy(entry["params"]) if entry["type"] == "dense" else entry["params"]
            check_params(f"{where}: generators[{i}] ({entry['name']}) params", params, GENERATOR_PARAMS[entry["type"]])
            generators.append(GeneratorConfig(entry["name"], entry["type"], entry["names"], params))
        if not generators:
            raise MedlinkError(f"{where}: at least one generator is needed")
        names = [g.name for g in generators]
        if len(set(names)) != len(names):
            raise MedlinkError(f"{where}: generator names must be unique")
        fusion = Fusion(**read_params(f"{where}: fusion", data["fusion"], fusion_settings.PARAMS))
        unknown = sorted(set(fusion.weights) - set(names))
        if unknown:
            raise MedlinkError(
                f"{where}: fusion: weights name no generator of this config: {', '.join(map(repr, unknown))}; "
                f"generators: {', '.join(names)}"
            )
        entries = data["rerankers"] + ([data["reranker"]] if data["reranker"] else [])
        types = {g.name: g.type for g in generators}
        rerankers = []
        for i, entry in enumerate(entries):
            label = f"{where}: rerankers[{i}]" if data["rerankers"] else f"{where}: reranker"
            settings = read_reranker_settings(label, from_legacy(entry) if isinstance(entry, dict) else entry)
            check = getattr(reranker_class(settings["type"]), "check_generators", None)
            if check is not None:
                check(settings, types, label)
            rerankers.append(settings)
        return cls(generators, fusion, data["k_per_generator"], rerankers, data["tuned"])

    @classmethod
    def from_file(cls, path: Path) -> LinkerConfig:
        try:
            text = Path(path).read_text(encoding="utf-8-sig")
        except FileNotFoundError as error:
            raise MedlinkError(f"config file not found: {path} (a preset is 'default' or 'default-dense')") from error
        except (UnicodeDecodeError, IsADirectoryError) as error:
            raise MedlinkError(f"{path}: not a UTF-8 JSON config file ({error})") from error
        data = parse_json(text, path)
        return cls.from_dict(data, str(path))

    def to_dict(self) -> dict:
        data = {
            "generators": [asdict(g) for g in self.generators],
            "fusion": asdict(self.fusion),
            "k_per_generator": self.k_per_generator,
            "rerankers": [dict(r) for r in self.rerankers],
        }
        return data | ({"tuned": self.tuned} if self.tuned else {})


# "words": exact on the set of word stems ("fracture of hip" = "hip fractures"); its weight chosen on default-KB
# pseudo-mentions (seed 2), AskAPatient fold-0 validation and NCBI dev (weights 0 to 2 tried; the chosen one best or
# tied best on each: docs/benchmark-history.md, weights of the words generator).
# BM25's spelling correction: on those dev sets as good or better (benchmarks/lexical/bm25_spelling.py).
# "completion": the names holding the mention's words, the most expected first ("diabetes" -> "Diabetes mellitus"); its
# weight chosen on the same dev sets, seed 2 (weights 0 to 2 tried; the chosen one best or tied best Acc@1 on each:
# benchmarks/lexical/completion_stage.py)
# "thesaurus": the names a synonym of the mention spells (HPO says "Heart attack" and "Myocardial infarction"); weighed as
# the two exact stages together, so a name a synonym spells ranks with the mention's own exact match, not above it;
# chosen on NCBI dev and the 10 AskAPatient validation folds, KB only and with memory (benchmarks/lexical/thesaurus_stage.py)
LEXICAL_GENERATORS = [
    {"name": "exact", "type": "exact"},
    {"name": "words", "type": "exact", "params": {"words": True, "lay_words": True}},
    {"name": "thesaurus", "type": "thesaurus"},
    {"name": "completion", "type": "completion"},
    {"name": "tfidf", "type": "tfidf"},
    {"name": "bm25", "type": "bm25", "params": {"spelling": True}},
]
LEXICAL_WEIGHTS = {"exact": 1.0, "words": 1.0, "thesaurus": 2.0, "completion": 0.25, "tfidf": 1.0, "bm25": 0.25}
# weight of the packaged MiniLM next to LEXICAL_WEIGHTS; chosen on AskAPatient fold-0 validation + NCBI dev
# (benchmarks/dense/default_dense.py): beside the thesaurus stage, which reads lay wording too, the dense stage weighs less
DEFAULT_DENSE_WEIGHT = 1.0


def default_config() -> LinkerConfig:
    """Exact (whole name and word set) + char n-gram TF-IDF + BM25 over KB names and the memory, weighted fusion."""
    return LinkerConfig.from_dict({"generators": LEXICAL_GENERATORS, "fusion": {"method": "weighted", "weights": dict(LEXICAL_WEIGHTS)}})


# beside a dense stage: the names a mention's spelling-corrected reading spells exactly, weighed as the dense stage's best
# ("pnuemonia" is Pneumonia, not the dense stage's Pyuria); chosen on AskAPatient fold-0 validation + NCBI dev
# (docs/benchmark-history.md, the spelled stage)
SPELLED = {"name": "spelled", "type": "exact", "params": {"spelling": True}}


def default_dense_config(dense_weight: float = DEFAULT_DENSE_WEIGHT, model: str | None = None) -> LinkerConfig:
    """The default config plus the packaged MiniLM (untrained; or ``model``, a bi-encoder folder): lay wording ("can't
    sleep") that shares no characters with a KB name can still land on it; and the names a misspelt mention's corrected
    reading spells, which the dense stage reads poorly. Needs the dense extra."""
    dense = {"name": "dense", "type": "dense", "params": {"strip": EPISODE_OF_CARE, **({"model": str(model)} if model else {})}}
    return LinkerConfig.from_dict(
        {
            "generators": [*LEXICAL_GENERATORS, SPELLED, dense],
            "fusion": {"method": "weighted", "weights": {**LEXICAL_WEIGHTS, "spelled": dense_weight, "dense": dense_weight}},
        }
    )


def is_tuned_config(path: Path) -> bool:
    """Did 'medlink tune --out' write this file (a config with its 'tuned' record)? Only such a file may it replace: a
    config written by hand has no record of a search."""
    return json_has_keys(path, ("generators", "tuned"))


# recipes a user can name instead of a config file (``medlink index build --config default-dense``), for any KB
PRESETS = {"default": default_config, "default-dense": default_dense_config}


def load_config(config: LinkerConfig | Path | str | None) -> LinkerConfig | None:
    """A config object, a preset's name (``PRESETS``) or a JSON file's path; None stays None (the default)."""
    if config is None or isinstance(config, LinkerConfig):
        return config
    if str(config) in PRESETS and not Path(config).is_file():
        return PRESETS[str(config)]()
    return LinkerConfig.from_file(Path(config))

"""What each config knob of a dense generator or a reranker accepts, checked when a config is read.

Why here and not where the knobs are used: a typo ("lambda" for "lambda_") or an impossible value
(beta1 = 0, nprobe = 0) must fail when the index is built, naming the config file and the field,
not later as a ZeroDivisionError or a FAISS assertion while linking. This module imports nothing
heavy, so a config is checked without torch or faiss.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from medlink.errors import MedlinkError
from medlink.text.concept_text import CONCEPT_TEXTS

_NO_DEFAULT = object()


@dataclass(frozen=True)
class Param:
    """One knob: its type, its range or choices, whether null is allowed, and its default."""

    kind: type
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None  # strictly greater than
    choices: tuple | None = None
    nullable: bool = False
    default: Any = _NO_DEFAULT  # _NO_DEFAULT: required
    items: type | None = None  # list / dict knobs: the type of each item (value for a dict), bounded like a scalar
    length: int | None = None  # list knobs: exactly this many items
    note: str | None = None  # what to give, said when a required knob is missing
    pattern: str | None = None  # strings: a regular expression the whole value must match
    regex: bool = False  # strings: the value is itself a regular expression, refused when it does not compile

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT

    def describe(self) -> str:
        names = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
        if self.choices:
            kind = "one of " + ", ".join(map(str, self.choices))
        elif self.pattern:
            kind = f"a string matching {self.pattern}"
        elif self.regex:
            kind = "a regular expression (Python's re)"
        elif self.kind in (list, dict):
            item = {dict: "object", object: "value"}.get(self.items) or names[self.items].split(" ", 1)[-1]
            kind = f"a list of {self.length or 'any number of'} {item}s" if self.kind is list else f"an object whose values are {item}s"
        else:
            kind = names[self.kind]
        bounds = [
            f"{sign} {value:g}" for sign, value in ((">", self.above), (">=", self.minimum), ("<=", self.maximum)) if value is not None
        ]
        return " ".join([kind, " and ".join(bounds)]).strip() + (" (or null)" if self.nullable else "")

    def accepts(self, value: Any) -> bool:
        if value is None:
            return self.nullable
        if self.kind is list:
            return isinstance(value, list) and (self.length is None or len(value) == self.length) and all(map(self._accepts_one, value))
        if self.kind is dict:
            return isinstance(value, dict) and all(isinstance(key, str) for key in value) and all(map(self._accepts_one, value.values()))
        return self._accepts_one(value)

    def _accepts_one(self, value: Any) -> bool:
        kind = self.items if self.kind in (list, dict) else self.kind
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value  # NaN is no number
        else:
            ok = isinstance(value, kind)
        if not ok:
            return False
        if self.choices is not None:
            return value in self.choices
        if self.pattern is not None:
            return re.fullmatch(self.pattern, value) is not None
        if self.regex:
            try:
                re.compile(value)
            except (re.error, RecursionError, OverflowError):
                return False
            return True
        return (
            (self.minimum is None or value >= self.minimum)
            and (self.maximum is None or value <= self.maximum)
            and (self.above is None or value > self.above)
        )


Schema = Mapping[str, Param]


def check_params(where: str, params: Mapping[str, Any], schema: Schema) -> None:
    """Unknown keys and values out of type or range raise one error naming ``where`` and the field."""
    if not isinstance(params, Mapping):
        raise MedlinkError(f"{where}: expected an object of settings, not {type(params).__name__}")
    unknown = sorted(set(params) - set(schema))
    if unknown:
        known = ", ".join(schema) or "none"
        raise MedlinkError(f"{where}: unknown {'keys' if len(unknown) > 1 else 'key'} {', '.join(map(repr, unknown))}; known: {known}")
    for key, param in schema.items():
        if param.required and key not in params:
            raise MedlinkError(f"{where}: {key!r} is required" + (f": {param.note}" if param.note else ""))
    for key, value in params.items():
        if not schema[key].accepts(value):
            raise MedlinkError(f"{where}: {key!r} must be {schema[key].describe()}, not {value!r}")


def defaults(schema: Schema) -> dict[str, Any]:
    """The schema's defaults (required knobs have none)."""
    return {key: param.default for key, param in schema.items() if not param.required}


def read_params(where: str, params: Mapping[str, Any] | None, schema: Schema) -> dict[str, Any]:
    """``params`` checked against ``schema`` and completed with its defaults: what every component reads its settings through."""
    params = {} if params is None else params
    check_params(where, params, schema)
    return {**defaults(schema), **params}


POOLINGS = ("mean", "cls")
PRECISIONS = ("auto", "fp32", "bf16", "int8")  # the same tuple as medlink.encoders.precision.PRECISIONS, which imports torch lazily
DENSE_INDEXES = ("flat", "hnsw", "ivfpq")

# -- candidate generators' params (the generator modules import heavy libraries, so their schemas live here) ----------
EXACT_PARAMS: dict[str, Param] = {
    # match the set of word stems instead of the whole name: word order, inflection and a few function words stop
    # mattering ("fracture of hip" = "hip fractures"); retrieval.exact.word_key
    "words": Param(bool, default=False),
    # answer only mentions that a spelling correction changes, by the names their corrected reading spells exactly
    # ("pnuemonia": Pneumonia): lexical evidence a dense stage may outweigh; retrieval.exact
    "spelling": Param(bool, default=False),
    # in the words form, a mention whose own words match no name is read with people's words for a symptom as names
    # say them ("sore knees": Knee pain); text.lay_words
    "lay_words": Param(bool, default=False),
}
# names a synonym of the mention spells: retrieval.thesaurus
THESAURUS_PARAMS: dict[str, Param] = {
    "hpo": Param(bool, default=True),  # HPO's names and EXACT synonyms, and medlink's shorthand list, as sets
    "synonyms": Param(list, items=str, default=[]),  # more sets: KB sources (FORMAT:PATH), each concept's names one set
}
COMPLETION_PARAMS: dict[str, Param] = {}  # names holding every word of the mention, by how expected their other words are
TFIDF_PARAMS = {
    "analyzer": Param(str, choices=("char_wb", "char", "word"), default="char_wb"),
    "ngram_range": Param(list, items=int, length=2, minimum=1, default=[2, 4]),
    "sublinear_tf": Param(bool, default=True),
    "min_df": Param(int, minimum=1, default=1),
    "common_df": Param(float, minimum=0.0, maximum=1.0, default=0.02),  # n-grams in more names than this share are "common"
    "shortlist": Param(int, minimum=1, default=256),
    "vocabulary": Param(str, choices=("auto", "exact", "hashed"), default="auto"),
    "n_features": Param(int, minimum=2, default=2**22),
    "max_postings": Param(int, minimum=1, default=10_000),
    "query_batch": Param(int, minimum=1, default=256),
    "impact_depth": Param(int, minimum=1, default=1024),
    "impact_full_df": Param(int, minimum=0, default=20_000),
}
BM25_PARAMS = {
    "k1": Param(float, minimum=0.0, default=1.2),
    "b": Param(float, minimum=0.0, maximum=1.0, default=0.75),
    "method": Param(str, choices=("lucene", "robertson", "atire", "bm25l", "bm25+"), default="lucene"),
    "stem": Param(bool, default=True),
    "spelling": Param(bool, default=False),  # a query word no name has is read as the most frequent name word one edit away
}
DENSE_PARAMS = {
    "model": Param(str, nullable=True, default=None),  # a local Hugging Face folder; None = the packaged all-MiniLM-L6-v2
    "pooling": Param(str, choices=POOLINGS, nullable=True, default=None),  # None = what the model folder declares, else mean
    "max_length": Param(int, minimum=2, maximum=512, default=32),
    "precision": Param(str, choices=PRECISIONS, default="auto"),  # auto: bf16 only where this CPU runs it faster
    "index": Param(str, choices=DENSE_INDEXES, default="flat"),
    "fp16": Param(bool, default=False),  # store vectors as float16 (flat and hnsw)
    "batch_size": Param(int, minimum=1, default=128),  # texts per forward pass (BENCHMARKS.md dense_speed)
    "text": Param(str, choices=CONCEPT_TEXTS, default="name"),  # the name, or name [SEP] types [SEP] definition
    # a regular expression removed from each name's text before encoding (names that then read alike are encoded once):
    # qualifiers that name no condition, such as ICD-10-CM's episode of care; the lexical stages still read them
    "strip": Param(str, nullable=True, default=None, regex=True),
    "definition_words": Param(int, minimum=0, default=24),
    "hnsw_m": Param(int, minimum=2, default=32),
    "ef_construction": Param(int, minimum=1, default=40),
    "ef_search": Param(int, minimum=1, default=128),
    "nlist": Param(int, minimum=1, nullable=True, default=None),  # ivfpq: inverted lists; None = about 4 * sqrt(names)
    "pq_m": Param(int, minimum=1, nullable=True, default=None),  # ivfpq: sub-quantizers; None = dimension / 8
    "nprobe": Param(int, minimum=1, default=16),
}
SAFE_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"  # a name that is also a folder name inside an index: no '/', no '..', no dot first
GENERATOR_PARAMS = {
    "exact": EXACT_PARAMS,
    "completion": COMPLETION_PARAMS,
    "thesaurus": THESAURUS_PARAMS,
    "tfidf": TFIDF_PARAMS,
    "bm25": BM25_PARAMS,
    "dense": DENSE_PARAMS,
}


_KINDS = {"int": int, "float": float, "bool": bool, "str": str}


def dataclass_schema(cls) -> dict[str, Param]:
    """A settings dataclass's fields as a schema (type, null allowed, default), so a JSON file of them is checked like a config."""
    from dataclasses import MISSING, fields

    schema = {}
    for f in fields(cls):
        kinds = [part.strip() for part in str(f.type).split("|")]
        nullable = "None" in kinds
        kind = next(_KINDS[k] for k in kinds if k != "None")
        schema[f.name] = Param(kind, nullable=nullable, default=f.default if f.default is not MISSING else None)
    return schema


def read_settings_file(path, cls) -> dict[str, Any]:
    """The settings a JSON file gives for ``cls`` (a dataclass), every key and value checked, naming the file and field."""
    import json
    from pathlib import Path

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise MedlinkError(f"settings file not found: {path}") from None
    except (ValueError, UnicodeDecodeError, RecursionError, IsADirectoryError) as error:
        raise MedlinkError(f"{path}: not a JSON settings file ({type(error).__name__}: {str(error)[:120]})") from None
    schema = dataclass_schema(cls)
    if isinstance(data, dict) and "config" in data and set(data) - set(schema):  # a training.json: its resolved 'config'
        data = data["config"]
    check_params(str(path), data, schema)
    return dict(data)

"""Dense retrieval: names and mentions embedded by a transformer encoder, searched with FAISS.

Vectors are L2-normalised, so inner product is cosine. ``index`` chooses exact search
(``flat``, the default: quick enough on a MEDIC-sized table),
graph search (``hnsw``) or compressed search (``ivfpq``, for UMLS-sized tables that would not fit
in memory as float32). ``fp16`` halves a flat / HNSW index for a negligible change in scores.

Encoding every name is the slow part of a build (minutes for MEDIC, hours for UMLS on a CPU), so
it is resumable: vectors go to a memory-mapped cache under ``$MEDLINK_HOME/encode-cache`` chunk by
chunk, with a sidecar recording how many rows are done. An interrupted build continues where it
stopped, and a later build of the same names with the same encoder (e.g. trying another index
type) reuses the finished cache and encodes nothing.

An index remembers its encoder's folder and weight fingerprint (``dense.json``): loading refuses a
folder whose weights changed, and a missing folder says which one and how to rebuild.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.lib.format import open_memmap

from medlink.directories import write_atomic
from medlink.encoders.precision import ENV as PRECISION_ENV
from medlink.encoders.precision import from_legacy
from medlink.encoders.transformer import ENCODE_BATCH, Encoder, default_model_dir, require_dense_extra

require_dense_extra()  # name the missing extra here, where a dense index or config first needs it, not in a faiss ImportError
from medlink.errors import MedlinkError, MissingInputError, reading
from medlink.openmp import CALLS as OPENMP_CALLS
from medlink.params import DENSE_PARAMS, check_params, defaults
from medlink.progress import bar as progress_bar
from medlink.retrieval.base import GeneratorBase
from medlink.retrieval.encode_cache import cache_dir, mark_used, reuse_encoded, text_hashes
from medlink.retrieval.hits import Hits
from medlink.retrieval.names import NameTable, read_json
from medlink.retrieval.vector_index import add_in_chunks, configured_index, read_index, tune, use_threads, write_index
from medlink.text.concept_text import NAME, entity_text
from medlink.versions import DENSE_PACKAGES, package_versions

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent builds of the same names are then unsafe
    fcntl = None

log = logging.getLogger(__name__)
DEFAULTS = defaults(DENSE_PARAMS)  # what each knob means: medlink.params.DENSE_PARAMS
CHUNK_ROWS = 8192  # rows encoded between two cache checkpoints
# An index whose names were encoded in float32 or int8 encodes mentions in that same format under 'auto' (an explicit
# --precision still wins): mentions are few, so float32 costs little, and int8 names against int8 mentions keep the
# same rounding on both sides. bf16 names take what 'auto' means on the loading machine (bf16 is within 0.999 of float32).
QUERY_AS_BUILT = ("fp32", "int8")
INDEX_FILE = "faiss.index"
PARAMS_FILE = "dense.json"


def _check_params(params: dict, name: str) -> None:
    check_params(f"dense generator {name!r}", params, DENSE_PARAMS)
    if params["fp16"] and params["index"] == "ivfpq":
        raise MedlinkError(f"dense generator {name!r}: fp16 applies to flat and hnsw indexes (ivfpq is already compressed)")


class RepeatedRows:
    """``vectors[rows]``, read on demand: each table row's vector is its distinct text's (FAISS adds the rows chunk by
    chunk, so the repeated vectors never sit in memory all at once)."""

    def __init__(self, vectors: np.ndarray, rows: np.ndarray):
        self.vectors, self.rows = vectors, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, key) -> np.ndarray:
        return self.vectors[self.rows[key]]


def encode_distinct(encoder: Encoder, texts: Sequence[str], batch_size: int) -> np.ndarray | RepeatedRows:
    """Each row's vector, every distinct text encoded once through the cache."""
    position: dict[str, int] = {}
    rows = np.fromiter((position.setdefault(text, len(position)) for text in texts), dtype=np.int64, count=len(texts))
    if len(position) == len(texts):
        return encode_cached(encoder, texts, batch_size)
    log.info("encoding names: %s distinct texts for %s names", f"{len(position):,}", f"{len(texts):,}")
    return RepeatedRows(encode_cached(encoder, list(position), batch_size), rows)


# -- resumable encoding -------------------------------------------------------------------------
def model_key(encoder: Encoder) -> str:
    """Identifies what makes a text's vector (encoder weights, pooling, length, precision): equal keys, equal vectors."""
    spec = encoder.spec
    precision = {"bf16": "bf16-weights", "int8": "int8-dynamic-linear"}.get(
        encoder.precision, "fp32"
    )  # bf16: bfloat16 weights (not autocast)
    return hashlib.blake2b(
        json.dumps([spec.fingerprint, spec.pooling, spec.max_length, precision, encoder.dimension]).encode(), digest_size=16
    ).hexdigest()


def cache_key(encoder: Encoder, texts: Sequence[str]) -> str:
    """Identifies (the model, the texts in order): the entry of one name table."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(json.dumps([model_key(encoder), len(texts)]).encode())
    for text in texts:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(4, "little"))
        digest.update(data)
    return digest.hexdigest()


def _open_cache(directory: Path, key: str, texts: Sequence[str], dimension: int, model: str) -> tuple[np.memmap, np.ndarray, int]:
    """The cache memmap, the rows this entry encodes itself (the others copied from earlier entries of the same model)
    and how many of those are done; a new or unusable entry is started again."""
    path, state_path, todo_path = directory / f"{key}.npy", directory / f"{key}.json", directory / f"{key}.todo"
    shape = (len(texts), dimension)
    if path.is_file() and state_path.is_file():
        try:
            state = json.loads(state_path.read_text())
            vectors = open_memmap(path, mode="r+")
            todo = np.fromfile(todo_path, dtype=np.int64) if todo_path.is_file() else np.arange(shape[0])  # no todo file: every row
            if tuple(vectors.shape) == shape and vectors.dtype == np.float32 and 0 <= state["rows"] <= len(todo) == state["total"]:
                return vectors, todo, int(state["rows"])
        except (ValueError, KeyError, OSError):
            pass  # a damaged cache is just started again
    vectors = open_memmap(path, mode="w+", dtype=np.float32, shape=shape)
    hashes = text_hashes(texts)
    hashes.tofile(directory / f"{key}.names")
    todo = np.flatnonzero(reuse_encoded(model, hashes, vectors, skip=key)).astype(np.int64)
    vectors.flush()
    todo.tofile(todo_path)
    write_atomic(state_path, json.dumps({"rows": 0, "total": len(todo), "size": shape[0], "model": model}))  # last: the entry exists
    if len(todo) < shape[0]:
        log.info(
            "encoding names: %s of %s already encoded by this model (cache), %s to encode",
            f"{shape[0] - len(todo):,}",
            f"{shape[0]:,}",
            f"{len(todo):,}",
        )
    return vectors, todo, 0


def encode_cached(encoder: Encoder, texts: Sequence[str], batch_size: int = ENCODE_BATCH, chunk_rows: int | None = None) -> np.ndarray:
    """Encode ``texts`` through the resumable cache; returns a read-only float32 memmap (n, d)."""

    n, chunk_rows = len(texts), chunk_rows or CHUNK_ROWS
    if n == 0:
        return np.zeros((0, encoder.dimension), np.float32)
    key, model = cache_key(encoder, texts), model_key(encoder)
    directory = cache_dir()
    path, state_path = directory / f"{key}.npy", directory / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(directory / f"{key}.lock", "w") as lock:
        if fcntl is not None:  # a second build of the same names waits, then reuses the finished cache
            fcntl.flock(lock, fcntl.LOCK_EX)
        vectors, todo, done = _open_cache(directory, key, texts, encoder.dimension, model)
        if done == len(todo):
            mark_used(state_path)
        with progress_bar(done < len(todo), total=len(todo), initial=done, desc="encoding names", unit="name") as bar:  # none when cached
            for start in range(done, len(todo), chunk_rows):
                end = min(start + chunk_rows, len(todo))
                rows = todo[start:end]
                vectors[rows] = encoder.encode([texts[i] for i in rows], batch_size=batch_size)
                vectors.flush()  # vectors on disk before the sidecar says they are there
                write_atomic(state_path, json.dumps({"rows": end, "total": len(todo), "size": n, "model": model}))  # old count or new
                bar.update(end - start)
        del vectors
        return np.load(path, mmap_mode="r")  # opened under the lock: 'medlink cache clear' cannot remove it in between


def stripped(keys: Sequence[str], strip: str | None) -> Sequence[str]:
    """Names less the regex ``strip`` (a qualifier the dense stage does not read); a name that is all qualifier keeps its text."""
    if strip is None:
        return keys
    pattern = re.compile(strip)
    return [pattern.sub("", key).strip() or key for key in keys]


def row_texts(table: NameTable, params: dict, descriptions: dict[int, tuple[list[str], str | None]] | None, separator: str) -> list[str]:
    """What is embedded for each table row: its key (less ``strip``), or that with its (first) concept's types and definition."""
    keys = stripped(table.keys, params["strip"])
    if params["text"] == NAME:
        return keys
    if descriptions is None:
        raise MedlinkError(f"dense generator: text {params['text']!r} needs the KB's types and definitions (build it through a Linker)")
    first_concept = table.concept_index[table.indptr[:-1]]
    return [
        entity_text(key, *descriptions.get(int(concept), ([], None)), separator=separator, definition_words=int(params["definition_words"]))
        for key, concept in zip(keys, first_concept)
    ]


class DenseGenerator(GeneratorBase):
    """Nearest names to a mention in the encoder's embedding space (cosine), aggregated to concepts."""

    uses_descriptions = True  # the Linker passes the KB's types and definitions (for text = name_types_definition)

    def __init__(self, table: NameTable, concept_ids: Sequence[str], encoder: Encoder, index: faiss.Index, params: dict, name: str):  # noqa: F821
        super().__init__(table, concept_ids, name)
        self.encoder = encoder
        self.index = index
        self.params = params
        self._last_batch: tuple[tuple[str, ...], np.ndarray] | None = None
        # text -> vector for every mention encoded, kept by a caller that reads the same mentions again (an alignment
        # searches every source alias, then weighs the same aliases' similarities); None: kept no longer than a batch
        self.mention_memo: dict[str, np.ndarray] | None = None
        tune(index, params)
        import torch

        use_threads(torch.get_num_threads())  # FAISS and torch share the same cores

    @classmethod
    def build(
        cls,
        table: NameTable,
        concept_ids: Sequence[str],
        name: str = "dense",
        descriptions: dict[int, tuple[list[str], str | None]] | None = None,
        **params,
    ) -> DenseGenerator:
        params = {**DEFAULTS, **params}
        _check_params(params, name)
        try:
            encoder = Encoder(params["model"], params["pooling"], params["max_length"], params["precision"], inference_only=True)
        except MedlinkError as error:
            relative = params["model"] and not Path(params["model"]).is_absolute()
            hint = f" (a relative 'model' path is read from the current folder, {Path.cwd()})" if relative else ""
            kind = MissingInputError if isinstance(error, MissingInputError) else MedlinkError
            raise kind(f"dense generator {name!r}: {error}{hint}") from error
        texts = row_texts(table, params, descriptions, encoder.tokenizer.sep_token or "[SEP]")
        vectors = encode_distinct(encoder, texts, params["batch_size"])
        index = configured_index(params, encoder.dimension, vectors)
        add_in_chunks(index, vectors, CHUNK_ROWS * 8)
        return cls(table, concept_ids, encoder, index, params, name)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        write_index(self.index, directory / INDEX_FILE)
        payload = {
            "params": self.params,
            "encoder": self.encoder.spec.to_dict(),
            "vectors": int(self.index.ntotal),
            "encoded_with": self.encoder.precision,  # what 'auto' meant on the machine that built it
            "packages": package_versions(DENSE_PACKAGES),
        }
        (directory / PARAMS_FILE).write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> DenseGenerator:
        saved = read_json(directory / PARAMS_FILE)
        params = {**DEFAULTS, **from_legacy(saved["params"])}
        spec = from_legacy(dict(saved["encoder"]))
        if params["model"] is None:  # the packaged model: wherever it is installed now (the fingerprint still must match)
            spec["model"] = str(default_model_dir())
        built_with = saved.get("encoded_with")
        if spec.get("precision", "auto") == "auto" and built_with in QUERY_AS_BUILT and not os.environ.get(PRECISION_ENV):
            spec["precision"] = built_with  # mentions in the names' own format (see QUERY_AS_BUILT)
        try:
            encoder = Encoder.from_spec(spec, inference_only=True)
        except MedlinkError as error:
            raise MedlinkError(
                f"{directory}: dense generator {name!r} cannot use its encoder {spec['model']}: {error}. "
                f"Restore that model folder, or rebuild the index (medlink index build --kb KB --out INDEX) with the model you have"
            ) from error
        with reading(directory / INDEX_FILE, (RuntimeError,)):  # FAISS says bad bytes with a RuntimeError
            index = read_index(directory / INDEX_FILE)
        if index.ntotal != len(table):
            raise MedlinkError(f"{directory / INDEX_FILE}: {index.ntotal} vectors for {len(table)} names; rebuild the index")
        return cls(table, concept_ids, encoder, index, params, name)

    def encode_mentions(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for normalised mentions, with the encoder the names were embedded with.

        The last batch's vectors are kept, so a reranker working on the same mentions right
        after the search (the kNN memory) does not encode them twice.
        """
        texts = tuple(texts)
        if self._last_batch is not None and self._last_batch[0] == texts:
            return self._last_batch[1]
        memo = self.mention_memo
        if memo is None:
            vectors = self.encoder.encode(list(texts), batch_size=self.params["batch_size"])
        else:
            missing = list(dict.fromkeys(text for text in texts if text not in memo))
            if missing:
                memo.update(zip(missing, self.encoder.encode(missing, batch_size=self.params["batch_size"])))
            vectors = np.stack([memo[text] for text in texts]) if texts else np.zeros((0, self.encoder.dimension), np.float32)
        self._last_batch = (texts, vectors)
        return vectors

    def name_vectors(self, rows: np.ndarray) -> np.ndarray:
        """The embedded names at these table rows, read back from the index (not encoded again)."""
        return self.index.reconstruct_batch(np.asarray(rows, dtype=np.int64))

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        fetch = min(2 * k, int(self.index.ntotal))
        if not mentions or fetch == 0:
            return Hits.empty(len(mentions))
        vectors = self.encode_mentions(mentions)
        with OPENMP_CALLS:  # FAISS's OpenMP team, one search at a time (medlink.openmp)
            if self.params["index"] == "hnsw" and self.index.hnsw.efSearch < fetch:
                self.index.hnsw.efSearch = fetch  # HNSW cannot return more than efSearch results
            scores, rows = self.index.search(vectors, fetch)
        query = np.repeat(np.arange(len(mentions)), fetch)
        rows, scores = rows.ravel(), scores.ravel()
        found = rows >= 0
        return self._concept_hits(query[found], rows[found], scores[found].astype(np.float32), stage, len(mentions), k)

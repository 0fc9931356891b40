"""Where encoded names are cached, and how a user sees and prunes that cache (``medlink cache``).

Each entry is ``KEY.npy`` (the vectors), ``KEY.json`` (rows done / total, and the model they were encoded with),
``KEY.names`` (a 64-bit hash of each row's text, so a later build over other names reuses every name already encoded by
the same model: adding a mention memory to an index encodes only the new names), ``KEY.todo`` (the rows this build
encodes, the others having come from earlier entries) and ``KEY.lock`` (held while a build writes or waits on it;
never removed). A finished index keeps its own copy of the vectors, so an entry
only speeds up a rebuild of the same names with the same model, or resumes an interrupted one; on a
UMLS-sized KB an entry is gigabytes, hence a way to list and remove them. No torch or faiss here.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medlink.settings import medlink_home

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; an entry in use cannot be told apart
    fcntl = None

DATA_SUFFIXES = (".npy", ".json", ".names", ".todo")  # an entry's data; its ".lock" file stays (0 bytes): a build waiting on it must
# find the same file when it gets the lock, or two builds would write one entry at once


def cache_dir() -> Path:
    return medlink_home() / "encode-cache"


@dataclass
class CacheEntry:
    key: str
    bytes: int
    last_used: float  # seconds since the epoch: the last encode into it or reuse of it
    complete: bool

    def files(self) -> list[Path]:
        return _data_files(self.key)


def _data_files(key: str) -> list[Path]:
    return [cache_dir() / f"{key}{suffix}" for suffix in DATA_SUFFIXES]


def _size_and_time(path: Path) -> tuple[int, float]:
    try:
        stat = path.stat()
    except FileNotFoundError:  # removed meanwhile (another 'cache clear')
        return 0, 0.0
    return stat.st_size, stat.st_mtime


def cache_entries() -> list[CacheEntry]:
    """Every entry (a vectors file, its progress file or both), oldest use first."""
    directory = cache_dir()
    keys = {path.stem for suffix in DATA_SUFFIXES for path in directory.glob(f"[!.]*{suffix}")} if directory.is_dir() else set()
    entries = []
    for key in keys:
        try:
            progress = json.loads((directory / f"{key}.json").read_text())
            complete = progress["rows"] == progress["total"]
        except (OSError, ValueError, KeyError, TypeError):
            complete = False
        (vectors_size, vectors_time), (state_size, state_time), *others = map(_size_and_time, _data_files(key))
        last_used = state_time or vectors_time  # the progress file is touched on every write and reuse
        entries.append(CacheEntry(key, vectors_size + state_size + sum(size for size, _ in others), last_used, complete))
    return sorted(entries, key=lambda entry: (entry.last_used, entry.key))


def text_hashes(texts) -> np.ndarray:
    """A 64-bit hash per text (what a later build matches its names against)."""
    return np.fromiter(
        (int.from_bytes(hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "little") for t in texts),
        dtype=np.uint64,
        count=len(texts),
    )


def reuse_encoded(model: str, hashes: np.ndarray, vectors: np.ndarray, skip: str) -> np.ndarray:
    """Copy into ``vectors`` the rows that complete entries of the same ``model`` (other than ``skip``) already hold;
    returns a mask of the rows still to encode."""
    missing = np.ones(len(hashes), dtype=bool)
    directory = cache_dir()
    for state_path in sorted(directory.glob("[!.]*.json")):
        key = state_path.stem
        if key == skip or not missing.any():
            continue
        try:
            state = json.loads(state_path.read_text())
            if state.get("model") != model or state["rows"] != state["total"]:
                continue
            donor_hashes = np.fromfile(directory / f"{key}.names", dtype=np.uint64)
            donor = np.load(directory / f"{key}.npy", mmap_mode="r")
            if donor.shape != (len(donor_hashes), vectors.shape[1]):
                continue
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an entry being cleared or damaged: not a donor
        order = np.argsort(donor_hashes, kind="stable")
        wanted = np.flatnonzero(missing)
        at = np.searchsorted(donor_hashes[order], hashes[wanted])
        found = at < len(order)
        found[found] = donor_hashes[order[at[found]]] == hashes[wanted[found]]
        rows = wanted[found]
        if len(rows):
            vectors[rows] = donor[order[at[found]]]
            missing[rows] = False
            mark_used(state_path)
    return missing


def mark_used(state_path: Path) -> None:
    """A reused entry counts as recently used (``medlink cache clear --older-than`` keeps it)."""
    os.utime(state_path)


def _remove_unless_in_use(entry: CacheEntry) -> bool:
    """Delete the entry's data while holding its lock; False (nothing deleted) when a build holds it now."""
    with open(cache_dir() / f"{entry.key}.lock", "a") as lock:
        if fcntl is not None:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
        for path in entry.files():
            path.unlink(missing_ok=True)
    return True


def clear_cache(older_than_days: float | None = None) -> tuple[list[CacheEntry], list[CacheEntry]]:
    """Remove entries (all, or those unused for ``older_than_days``); entries in use are kept. (removed, kept in use)."""
    cutoff = time.time() - older_than_days * 86400 if older_than_days is not None else None
    removed, busy = [], []
    for entry in cache_entries():
        if cutoff is None or entry.last_used < cutoff:
            (removed if _remove_unless_in_use(entry) else busy).append(entry)
    return removed, busy

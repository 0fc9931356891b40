"""Where encoded names are cached, and how a user sees and prunes that cache (``medlink cache``).

Each entry is ``KEY.npy`` (the vectors), ``KEY.json`` (rows done / total) and ``KEY.lock`` (held
while a build writes or waits on it; never removed). A finished index keeps its own copy of the vectors, so an entry
only speeds up a rebuild of the same names with the same model, or resumes an interrupted one; on a
UMLS-sized KB an entry is gigabytes, hence a way to list and remove them. No torch or faiss here.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from medlink.settings import medlink_home

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; an entry in use cannot be told apart
    fcntl = None

DATA_SUFFIXES = (".npy", ".json")  # an entry's data; its ".lock" file stays (0 bytes): a build waiting on it must
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
        (vectors_size, vectors_time), (state_size, state_time) = map(_size_and_time, _data_files(key))
        last_used = state_time or vectors_time  # the progress file is touched on every write and reuse
        entries.append(CacheEntry(key, vectors_size + state_size, last_used, complete))
    return sorted(entries, key=lambda entry: (entry.last_used, entry.key))


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

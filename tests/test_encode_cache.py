"""``medlink cache``: listing and pruning the encoded-names cache, never an entry a build holds."""

import json
import os
import time

import pytest

from medlink.retrieval import encode_cache
from tests.test_cli_kb import medlink

fcntl = pytest.importorskip("fcntl")


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDLINK_HOME", str(tmp_path))
    return tmp_path


def entry(key: str, rows: int, total: int, days_old: float = 0.0) -> None:
    directory = encode_cache.cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{key}.npy").write_bytes(b"\0" * 1000)
    (directory / f"{key}.json").write_text(json.dumps({"rows": rows, "total": total}))
    (directory / f"{key}.lock").touch()
    when = time.time() - days_old * 86400
    os.utime(directory / f"{key}.json", (when, when))


def test_entries_are_listed_oldest_first_with_size_and_completeness(home):
    entry("new", 5, 5)
    entry("old", 2, 5, days_old=10)
    listed = encode_cache.cache_entries()
    assert [(e.key, e.complete) for e in listed] == [("old", False), ("new", True)]
    assert all(e.bytes >= 1000 for e in listed)
    out = medlink("cache", "info").stdout
    assert "old\t0.0 MB" in out and "partial (resumable)" in out and "2 entries" in out


def test_clear_older_than_keeps_recent_entries_and_entries_in_use(home):
    entry("recent", 5, 5)
    entry("stale", 5, 5, days_old=30)
    entry("busy", 5, 5, days_old=30)
    with open(encode_cache.cache_dir() / "busy.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a build is writing it
        removed, busy = encode_cache.clear_cache(older_than_days=7)
    assert [e.key for e in removed] == ["stale"] and [e.key for e in busy] == ["busy"]
    assert sorted(p.name for p in encode_cache.cache_dir().iterdir()) == [
        "busy.json", "busy.lock", "busy.npy", "recent.json", "recent.lock", "recent.npy", "stale.lock"]  # locks stay
    (encode_cache.cache_dir() / "orphan.npy").write_bytes(b"\0" * 10)  # killed before its first progress file
    assert "removed 3 entries" in medlink("cache", "clear").stdout
    assert sorted(p.suffix for p in encode_cache.cache_dir().iterdir()) == [".lock"] * 4

"""Shared fixtures: paths of the small fixture files and of the real data (which may be absent), and the KB built from
the eval fixture dictionary.

Markers (registered in pyproject.toml): ``slow`` (over ~2 s: CLI runs that build indexes, training, the default KB),
``dense`` (needs torch, transformers and faiss), ``real_data`` (reads ../shared/data). ``pytest -m "not slow"`` is the
fast set.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def kb(tmp_path_factory):
    """The KB of tests/fixtures/eval/dictionary.txt (14 names), built once for the whole run: treat it as read-only."""
    from medlink.kb.build import build_kb
    from medlink.kb.store import KB

    path = build_kb(tmp_path_factory.mktemp("eval-kb") / "kb.sqlite", [f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"], progress=False).path
    with KB.open(path) as store:
        yield store


@pytest.fixture
def interrupt_on_third_call(monkeypatch):
    """``interrupt(owner, name)``: ``owner.name`` raises KeyboardInterrupt on its third call, as a user's Ctrl-C mid-training
    (the steps before it checkpointed); returns the real function, to put back with monkeypatch.setattr."""
    def interrupt(owner, name: str):
        real, calls = getattr(owner, name), {"n": 0}

        def third_interrupts(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, third_interrupts)
        return real

    return interrupt


def shared_data(relative: str) -> Path:
    """A file under ../shared/data, or skip the test when the data is not on this machine."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"real data not available: {path}")
    return path


@pytest.fixture(autouse=True)
def _precision_override_stays_in_its_test():
    """The CLI's --precision sets MEDLINK_PRECISION for its whole process (children included); a test running the CLI
    in-process must not hand it to the tests after it."""
    before = os.environ.get("MEDLINK_PRECISION")
    yield
    if before is None:
        os.environ.pop("MEDLINK_PRECISION", None)
    else:
        os.environ["MEDLINK_PRECISION"] = before


def pytest_configure(config):
    """Keep caches (the default KB) out of the user's home; one cache shared by the whole test run, its parallel
    workers included (they inherit the variable; the first to need the default KB or index builds it, the other waits)."""
    if not _is_worker(config):
        os.environ["MEDLINK_HOME"] = tempfile.mkdtemp(prefix="medlink-home-")


def pytest_unconfigure(config):
    if not _is_worker(config):
        shutil.rmtree(os.environ.get("MEDLINK_HOME", ""), ignore_errors=True)


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")  # a pytest-xdist worker process


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto`` (pyproject's addopts): one worker per CPU, at most 4 (each may hold a transformer, ~1.5 GB)."""
    return max(1, min(4, os.cpu_count() or 1))


@contextlib.contextmanager
def another_writer(output):
    """``output``'s writer's lock held by another thread, as a second medlink process would hold it (a command's own
    thread taking its lock again keeps it)."""
    from medlink.locks import output_lock

    holding, done = threading.Event(), threading.Event()

    def hold():
        with output_lock(output):
            holding.set()
            done.wait(60)

    thread = threading.Thread(target=hold)
    thread.start()
    holding.wait(60)
    try:
        yield
    finally:
        done.set()
        thread.join()

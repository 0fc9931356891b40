"""The KB's calibration fitted in a second process while the index is built: the same index, its errors told."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from medlink.errors import MedlinkError
from medlink.linking import fit_aside
from medlink.linking.config import default_config, default_dense_config
from medlink.linking.fit_aside import FitAside, fits_aside
from medlink.linking.index import build_index
from tests.test_calibration import organ_kb  # noqa: F401 (a fixture: 300 concepts with synonyms to hold out)


def index_files(folder: Path) -> dict[str, bytes]:
    """Every file of an index, the manifest without the time it was written."""
    files = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    files.pop(".medlink-files.json", None)  # stamps of the files themselves, compared above
    manifest = json.loads(files.pop("manifest.json"))
    manifest.pop("created")
    return {**files, "manifest.json": json.dumps(manifest, sort_keys=True).encode()}


@pytest.mark.slow
def test_a_fit_in_a_second_process_gives_the_index_the_fit_in_this_one_gives(organ_kb, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(fit_aside, "ASIDE_FROM", 10**9)
    assert not fits_aside(organ_kb, default_config())
    build_index(organ_kb, tmp_path / "here", default_config())
    monkeypatch.setattr(fit_aside, "ASIDE_FROM", 1)
    started, start = [], FitAside.start.__func__
    monkeypatch.setattr(FitAside, "start", classmethod(lambda cls, *a: started.append(1) or start(cls, *a)))
    built = build_index(organ_kb, tmp_path / "aside", default_config())
    assert started == [1]  # the second process did fit it
    assert index_files(tmp_path / "aside") == index_files(tmp_path / "here")
    assert built.link(["renal failure"], k=3)[0].probability is not None


def test_an_error_in_the_second_process_is_raised_here_with_its_message(tmp_path):
    missing = SimpleNamespace(path=tmp_path / "gone.sqlite")
    with pytest.raises(MedlinkError, match="KB file not found"):
        FitAside.start(missing, default_config(), None).result()


def test_a_dense_config_or_a_small_kb_fits_first_in_this_process(organ_kb, monkeypatch):  # noqa: F811
    monkeypatch.setattr(fit_aside, "ASIDE_FROM", 1)
    monkeypatch.setattr(fit_aside.os, "sched_getaffinity", lambda _pid: {0, 1})
    assert fits_aside(organ_kb, default_config())
    assert not fits_aside(organ_kb, default_dense_config())  # the final index reads the fit's name encodings back
    monkeypatch.setattr(fit_aside.os, "sched_getaffinity", lambda _pid: {0})
    assert not fits_aside(organ_kb, default_config())  # one core: nothing runs beside


def ended(pid: str) -> bool:
    """Gone, or a zombie left to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux tells a child of its parent's death")
def test_the_second_process_ends_with_a_first_that_was_killed_and_removes_its_folder(organ_kb):  # noqa: F811
    first = f"""
import os
from medlink.kb.store import KB
from medlink.linking.config import default_config
from medlink.linking.fit_aside import FitAside
aside = FitAside.start(KB.open({str(organ_kb.path)!r}), default_config(), None)
print(aside.process.pid, aside.folder.name, flush=True)
os._exit(9)  # as if killed: nothing of this process cleans up
"""
    pid, folder = subprocess.run([sys.executable, "-c", first], capture_output=True, text=True, timeout=120).stdout.split()
    deadline = time.monotonic() + 60
    while not (ended(pid) and not Path(folder).exists()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ended(pid) and not Path(folder).exists()


@pytest.mark.slow
def test_a_second_process_killed_before_its_answer_leaves_the_fit_to_this_one(organ_kb, caplog):  # noqa: F811
    from medlink.linking.calibration_fit import fit_on_kb
    from medlink.linking.index import fit_beside

    aside = FitAside.start(organ_kb, default_config(), None)
    aside.process.kill()  # as the out-of-memory killer would
    with caplog.at_level("WARNING", logger="medlink"):
        fitted = fit_beside(aside, organ_kb, default_config(), None)
    [said] = [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "second process" in r.getMessage()]
    assert "was killed (SIGKILL: out of memory?)" in said and "fitting them in this process instead" in said
    assert fitted == fit_on_kb(organ_kb, default_config(), None)


def test_medlink_fit_aside_0_keeps_the_fit_in_this_process(organ_kb, monkeypatch):  # noqa: F811
    monkeypatch.setattr(fit_aside, "ASIDE_FROM", 1)
    monkeypatch.setattr(fit_aside.os, "sched_getaffinity", lambda _pid: {0, 1})
    monkeypatch.setenv("MEDLINK_FIT_ASIDE", "0")
    assert not fits_aside(organ_kb, default_config())

"""src/ is lint-clean and formatted by ruff (ruff.toml at the repository root)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "ruff.toml"

pytest.importorskip("ruff", reason="ruff comes with the test extra: pip install -e '.[test]'")


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_src_is_lint_clean():
    done = ruff("check", "--config", str(CONFIG), "src")
    assert done.returncode == 0, done.stdout[-4000:]


def test_src_is_formatted():
    done = ruff("format", "--check", "--config", str(CONFIG), "src")
    assert done.returncode == 0, done.stdout[-4000:]


def test_the_checks_see_a_lint_error_and_unformatted_code(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\ndef f( x ):\n  return [ x ]\n", encoding="utf-8")
    assert ruff("check", "--config", str(CONFIG), "--no-cache", str(bad)).returncode == 1  # os imported, unused
    assert ruff("format", "--check", "--config", str(CONFIG), "--no-cache", str(bad)).returncode == 1

"""What a user is told: a damaged file names itself and says rebuild; a bug in medlink says it is one and asks for a report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from medlink.errors import SHAPE_ERRORS, DamagedFileError, reading


def test_reading_names_a_damaged_file_and_lets_a_bug_through(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(DamagedFileError, match="settings.json: damaged or incomplete .*rebuild"):
        with reading(path):
            json.loads(path.read_text(encoding="utf-8"))
    with pytest.raises(TypeError):  # an internal error is not blamed on the file
        with reading(path):
            raise TypeError("unsupported operand")
    with pytest.raises(DamagedFileError):  # unless the caller says its reader raises it for a document of another shape
        with reading(path, SHAPE_ERRORS):
            json.loads("[1]")["config"]


def test_a_bug_in_a_command_asks_for_a_report_not_a_rebuild(tmp_path):
    code = (
        "import sys, medlink.cli as cli, medlink.linking.index as index\n"
        "def broken(*args):\n    raise AttributeError(\"'NoneType' object has no attribute 'rerankers'\")\n"
        "index.resolve_index = broken\n"
        "sys.argv = ['medlink', 'link', 'heart attack']\n"
        "cli.main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "internal error (AttributeError): this is a bug in medlink" in done.stderr and "please report" in done.stderr
    assert "rebuild" not in done.stderr and "Traceback" in done.stderr

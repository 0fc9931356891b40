"""``medlink annotate --out`` and ``medlink align --out`` killed mid-write: the previous file (or none) stays, never a
partial one; the next run removes the killed run's temporary file; two writers of one output are refused.
(The long run, kill -9 at random moments of the real commands: benchmarks/robustness/kill_trials.py.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from medlink.align import sssom
from medlink.core import Document
from medlink.corpora.document_files import WRITABLE_FORMATS, read_documents, write_documents
from medlink.errors import MedlinkError
from tests.test_cli_annotate import index_dir  # noqa: F401 - the fixture
from tests.conftest import another_writer
from tests.test_output_safety import dead_pid

DOCUMENTS = [Document.from_text(f"Breast cancer, case {n}.", str(n)) for n in range(3)]

# A writer that streams documents slowly, so a kill lands mid-write (as annotate's does: one document at a time).
SLOW_WRITER = """
import sys, time
from medlink.core import Document
from medlink.corpora.document_files import write_documents
def slowly():
    for n in range(1000):
        yield Document.from_text("Breast cancer, case %d." % n, str(n))
        time.sleep(0.002)
write_documents(slowly(), sys.argv[1], sys.argv[2])
"""


def staging(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.glob(f".{out.name}.*"))


@pytest.mark.parametrize("fmt", WRITABLE_FORMATS)
def test_a_writer_killed_mid_write_leaves_the_previous_file_and_the_next_run_tidies_up(fmt, tmp_path):
    out = tmp_path / f"out.{fmt}"
    write_documents(DOCUMENTS, out, fmt)
    before = out.read_bytes()
    process = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, str(out), fmt])
    deadline = time.monotonic() + 60
    while not any(name.endswith(".tmp") for name in staging(out)) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # well into the writing
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "the writer finished before the kill: nothing was tested"
    assert out.read_bytes() == before and [n for n in staging(out) if n.endswith(".tmp")]  # the killed run's file is aside
    write_documents(DOCUMENTS[:2], out, fmt)
    assert [d.doc_id for d in read_documents(out, fmt)] == ["0", "1"] and staging(out) == []


@pytest.mark.parametrize("write", ["documents", "sssom"])
def test_a_dead_writers_temporary_file_is_removed_and_a_live_writer_refused(write, tmp_path):
    out = tmp_path / "out.txt"
    left = tmp_path / f".out.txt.{dead_pid()}.abc123.tmp"
    left.write_text("half an output")
    live = tmp_path / f".out.txt.{os.getpid()}.def456.tmp"  # a live process's (this one's): not to be touched
    live.write_text("being written")

    def run() -> None:
        if write == "documents":
            write_documents(DOCUMENTS, out, "jsonl")
        else:
            sssom.write(out, "# mapping_tool: medlink\nsubject_id\tpredicate_id\tobject_id\n")

    with another_writer(out):
        with pytest.raises(MedlinkError, match="is writing"):
            run()
    assert left.exists() and not out.exists()
    run()
    assert out.is_file() and not left.exists() and live.exists()


@pytest.mark.slow
def test_annotate_out_removes_what_a_killed_annotate_left(index_dir, tmp_path):
    from tests.test_cli_kb import medlink

    out = tmp_path / "out.jsonl"
    left = tmp_path / f".out.jsonl.{dead_pid()}.k1ll3d.tmp"
    left.write_text('{"id": "1", "text": "half')
    medlink("annotate", "--index", index_dir, "--output-format", "jsonl", "--out", out, "Colorectal cancer.")
    assert [d.doc_id for d in read_documents(out, "jsonl")] == ["1"] and staging(out) == []

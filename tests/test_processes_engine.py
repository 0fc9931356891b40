"""``medlink annotate --workers N`` on the local engine: real worker processes on this machine, against the
single-process run on small corpora built here (the same output byte for byte), a failing record named and counted, a
run killed with SIGKILL resumed to the same output, and the options that cannot go together refused."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from medlink.batch import AnnotateJob, run
from medlink.batch.resume import partial_path, progress_path
from medlink.errors import MedlinkError
from medlink.linking.annotator import AnnotateOptions
from medlink.linking.index import build_index
from tests.corpora import documents_done_when_running, jsonl_corpus, text
from tests.test_calibration import ORGANS, organ_kb  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def index_dir(organ_kb, tmp_path_factory) -> Path:  # noqa: F811 - the fixture imported above
    out = tmp_path_factory.mktemp("processes-index") / "index"
    build_index(organ_kb, out)
    return out


def job(index_dir, source: Path, out: Path | None, fmt: str, **changes) -> AnnotateJob:
    return AnnotateJob(index=str(index_dir), input_path=source, output_format=fmt, out=out, **{"quiet": True, **changes})


def test_pubtator_output_is_byte_identical_and_a_failing_record_is_named_and_counted(index_dir, tmp_path, capsys):
    plain = jsonl_corpus(tmp_path / "plain.jsonl", 120)
    failing = jsonl_corpus(tmp_path / "failing.jsonl", 120, extra=((50, {"id": "bad|id", "text": "A kidney cyst."}),))
    options = AnnotateOptions(k=3, batch_documents=8)
    assert run(job(index_dir, plain, tmp_path / "local.pubtator", "pubtator", options=options)) == 0
    capsys.readouterr()
    out = tmp_path / "workers.pubtator"
    assert run(job(index_dir, failing, out, "pubtator", options=options, quiet=False), workers=2) == 1  # the others written
    assert out.read_bytes() == (tmp_path / "local.pubtator").read_bytes()
    assert not partial_path(out).exists() and not progress_path(out).exists()
    said = capsys.readouterr().err
    assert "document bad|id (document 51 of the input) failed: document 'bad|id': PubTator needs an id without '|'" in said
    assert "121 document(s), " in said and "; 1 record(s) failed" in said
    assert "documents/s after that" in said and "start 2 worker process(es)" in said


def test_jsonl_to_stdout_is_byte_identical(index_dir, tmp_path, capsys):
    source = tmp_path / "in.pubtator"
    source.write_text("".join(f"{n}|t|{ORGANS[n % 20][0].capitalize()} failure.\n{n}|a|{text(n)}\n\n" for n in range(70)))
    assert run(job(index_dir, source, None, "jsonl")) == 0
    local = capsys.readouterr().out
    assert run(job(index_dir, source, None, "jsonl", quiet=False, options=AnnotateOptions(batch_documents=64)), workers=3) == 0
    said = capsys.readouterr()
    assert said.out == local and local.count("\n") == 70
    assert "start 2 worker process(es)" in said.err  # 70 documents are two chunks: the third worker never starts


def test_a_run_killed_with_sigkill_resumes_to_the_same_output(index_dir, tmp_path):
    source = tmp_path / "in.jsonl"
    long_text = " ".join(text(n) for n in range(40))  # a few milliseconds a document: a run long enough to kill half-way
    source.write_text("".join(json.dumps({"id": f"d{n}", "text": f"{text(n)} {long_text}"}) + "\n" for n in range(600)))
    out = tmp_path / "workers.jsonl"
    assert run(job(index_dir, source, tmp_path / "local.jsonl", "jsonl", options=AnnotateOptions(k=3, batch_documents=4))) == 0
    command = [
        sys.executable,
        "-m",
        "medlink",
        "annotate",
        "--workers",
        "2",
        "--index",
        str(index_dir),
        "--input",
        str(source),
        "--out",
        str(out),
        "--output-format",
        "jsonl",
        "--top-k",
        "3",
        "--batch-size",
        "4",
    ]
    killed = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = documents_done_when_running(killed, out, 40)
    workers = children(killed.pid)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert 0 < done < 600 and not out.exists() and partial_path(out).exists()
    assert len(workers) >= 2 or not Path("/proc").exists()  # the two workers (and the pool's resource tracker)
    assert gone(workers, within=15), "a worker outlived its killed driver"
    one_process = [part for part in command if part not in ("--workers", "2")]  # no --workers: the record still continues it
    resumed = subprocess.run(one_process, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resumed after document" in resumed.stderr and "600 document(s)" in resumed.stderr
    assert "start 1 worker process(es)" in resumed.stderr
    assert out.read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert not partial_path(out).exists() and not progress_path(out).exists()


def children(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux's /proc; elsewhere none are seen)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            parent = next((line.split()[1] for line in status.read_text().splitlines() if line.startswith("PPid:")), None)
        except OSError:  # gone meanwhile
            continue
        if parent == str(pid):
            found.append(int(status.parent.name))
    return found


def gone(pids: list[int], within: float) -> bool:
    """Whether every one of ``pids`` has ended (or is a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                alive += [pid] if "State:\tZ" not in Path(f"/proc/{pid}/status").read_text() else []
            except OSError:
                pass
        if not alive:
            return True
        time.sleep(0.2)
    return False


def test_workers_and_address_are_checked(index_dir, tmp_path):
    source = jsonl_corpus(tmp_path / "in.jsonl", 3)
    with pytest.raises(MedlinkError, match="--workers must be 1 or more, not 0"):
        run(job(index_dir, source, None, "jsonl"), workers=0)
    with pytest.raises(MedlinkError, match="--address is Ray's: add --engine ray"):
        run(job(index_dir, source, None, "jsonl"), address="127.0.0.1:6379")

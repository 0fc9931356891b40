"""``medlink annotate --engine ray`` on a real Ray runtime on this machine (2 CPUs, one runtime for the module: Ray's
start is slow), against the single-process run on small corpora built here; plus the pieces that need no Ray: each
output format a document at a time, and the resumable output's record."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the Ray engine needs the ray extra: pip install 'medlink[ray]'")
pytest.importorskip("ray.data")

from medlink.batch import AnnotateJob, run  # noqa: E402
from medlink.batch.job import finished  # noqa: E402
from medlink.batch.render import Renderer, written  # noqa: E402
from medlink.batch.resume import ResumableOutput, partial_path, progress_path  # noqa: E402
from medlink.core import Document  # noqa: E402
from medlink.errors import MedlinkError  # noqa: E402
from medlink.linking.annotator import AnnotateOptions, Annotator  # noqa: E402
from medlink.linking.index import build_index  # noqa: E402
from tests.corpora import documents_done_when_running, jsonl_corpus, text  # noqa: E402
from tests.test_calibration import CONDITIONS, ORGANS, organ_kb  # noqa: E402,F401 - the fixture
from tests.test_cli_kb import medlink_without  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
HOOK = "tests.test_ray_engine.slow_and_failing_documents"


def slow_and_failing_documents() -> None:
    """Ray's worker set-up hook for this module's runtime: annotating a document whose id starts with "fail" raises, and
    one whose id starts with "slow" takes 30 ms (a run long enough to kill half-way)."""
    from medlink.linking.annotator import Annotator

    real = Annotator.annotate

    def annotate(self, documents, progress=False):
        documents = list(documents)
        if any(d.doc_id.startswith("fail") for d in documents):
            raise RuntimeError("a failure the test asked for")
        time.sleep(0.03 * sum(d.doc_id.startswith("slow") for d in documents))
        return real(self, documents, progress)

    Annotator.annotate = annotate


@pytest.fixture(scope="module")
def index_dir(organ_kb, tmp_path_factory) -> Path:  # noqa: F811 - the fixture imported above
    out = tmp_path_factory.mktemp("ray-index") / "index"
    build_index(organ_kb, out)
    return out


@pytest.fixture(scope="module")
def ray_address():
    """One local Ray runtime for the module (2 CPUs), its workers running this module's set-up hook."""
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             runtime_env={"worker_process_setup_hook": HOOK, "env_vars": {"PYTHONPATH": str(ROOT)}})
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def job(index_dir, source: Path, out: Path | None, fmt: str, **changes) -> AnnotateJob:
    return AnnotateJob(index=str(index_dir), input_path=source, output_format=fmt, out=out, **{"quiet": True, **changes})


def test_jsonl_output_is_byte_identical_and_a_failing_record_is_named_and_counted(index_dir, ray_address, tmp_path, capsys):
    plain = jsonl_corpus(tmp_path / "plain.jsonl", 150)
    failing = jsonl_corpus(tmp_path / "failing.jsonl", 150, extra=((77, {"id": "fail-me", "text": "A kidney cyst."}),))
    options = AnnotateOptions(k=3, batch_documents=8)
    assert run(job(index_dir, plain, tmp_path / "local.jsonl", "jsonl", options=options)) == 0
    capsys.readouterr()
    assert run(job(index_dir, failing, tmp_path / "ray.jsonl", "jsonl", options=options, quiet=False), "ray", workers=2) == 1  # the others written
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert not partial_path(tmp_path / "ray.jsonl").exists() and not progress_path(tmp_path / "ray.jsonl").exists()
    said = capsys.readouterr().err
    assert "document fail-me (document 78 of the input) failed: RuntimeError: a failure the test asked for" in said
    assert "151 document(s), " in said and "; 1 record(s) failed" in said
    assert "documents/s after that" in said and "2 actor(s)" in said


def test_pubtator_to_stdout_is_byte_identical(index_dir, ray_address, tmp_path, capsys):
    source = tmp_path / "in.pubtator"
    source.write_text("".join(f"{n}|t|{ORGANS[n % 20][0].capitalize()} {CONDITIONS[n % 15]}.\n{n}|a|{text(n)}\n\n" for n in range(60)))
    assert run(job(index_dir, source, None, "pubtator")) == 0
    local = capsys.readouterr().out
    assert run(job(index_dir, source, None, "pubtator"), "ray", workers=2) == 0
    assert capsys.readouterr().out == local and local.count("|t|") == 60


def test_a_run_killed_with_sigkill_resumes_to_the_same_output(index_dir, ray_address, tmp_path):
    source = jsonl_corpus(tmp_path / "in.jsonl", 300, prefix="slow-")
    out = tmp_path / "ray.jsonl"
    options = ["--output-format", "jsonl", "--top-k", "3", "--no-composites", "--batch-size", "8"]
    assert run(job(index_dir, source, tmp_path / "local.jsonl", "jsonl", options=AnnotateOptions(k=3, composites=False))) == 0
    hooked = (f"import ray, sys; ray.init(address=sys.argv.pop(1), runtime_env={{'worker_process_setup_hook': {HOOK!r}, "
              f"'env_vars': {{'PYTHONPATH': {str(ROOT)!r}}}}}); from medlink.cli import main; main()")
    command = ["annotate", "--engine", "ray", "--workers", "2", "--index", str(index_dir), "--input", str(source), "--out", str(out),
               *options]  # not -q: it leaves out the throughput line, which says where the run resumed
    killed = subprocess.Popen([sys.executable, "-c", hooked, ray_address, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = documents_done_when_running(killed, out, 24, poll=0.2)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert 0 < done < 301 and not out.exists() and partial_path(out).exists()
    with partial_path(out).open("ab") as partial:
        partial.write(b'{"id": "half a record written after the last save')  # cut back on resume
    resumed = subprocess.run([sys.executable, "-m", "medlink", *command, "--address", ray_address], capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resumed after document" in resumed.stderr and "301 document(s)" in resumed.stderr
    assert out.read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert not partial_path(out).exists() and not progress_path(out).exists()


def test_a_run_asked_something_else_is_not_resumed(index_dir, ray_address, tmp_path):
    source = jsonl_corpus(tmp_path / "in.jsonl", 5)
    out = tmp_path / "out.jsonl"
    first = ResumableOutput(out, job(index_dir, source, out, "jsonl").settings(index_dir), Renderer("jsonl"))
    first.open()
    first.close()
    with pytest.raises(MedlinkError, match=r"other settings \(options\.k: 5 then, 2 now\); run that command again to continue it"):
        run(job(index_dir, source, out, "jsonl", options=AnnotateOptions(k=2)), "ray", workers=1)


def test_without_ray_the_engine_says_how_to_install_it(index_dir):
    done = medlink_without("ray", "annotate", "--engine", "ray", "--index", str(index_dir), "a kidney cyst")
    assert done.returncode == 2 and "pip install 'medlink[ray]'" in done.stderr


# -- no Ray needed -------------------------------------------------------------------------------------------------------------

def test_every_format_a_document_at_a_time_is_the_writers_output(index_dir):
    annotator = Annotator.load(index_dir)
    documents = [Document.from_text("No kidney cyst. Renal cyst & <liver> failure (LF); LF again. é", "a"),
                 Document.from_title_abstract("22", "Liver failure.", "Mother had hepatic tumour."), Document.from_text("nothing", "b")]
    documents = [finished(d, (), "medlink test") for d in annotator.annotate(documents)]
    for fmt in ("jsonl", "pubtator", "bioc", "bioc-json", "text"):
        renderer = Renderer(fmt)
        pieces = renderer.head() + renderer.separator.join(renderer.document(d) for d in documents) + renderer.tail()
        if fmt == "text":
            from medlink.linking.output import annotation_lines

            assert pieces == "".join(line + "\n" for d in documents for line in annotation_lines(d))
        else:
            assert pieces == written(documents, fmt), fmt


def test_the_partial_output_is_cut_back_to_its_last_record(tmp_path):
    out, renderer = tmp_path / "out.bioc.json", Renderer("bioc-json")
    first = ResumableOutput(out, {"a": 1}, renderer)
    progress = first.open()
    first.append("\n{}")
    progress.documents = 1
    first.save(force=True)
    first.append("\n{not saved}")  # then killed: the stream is never closed
    first.stream.flush()
    again = ResumableOutput(out, {"a": 1}, renderer)
    assert again.open().documents == 1
    again.append("\n{}")
    again.finish()
    assert json.loads(out.read_text())["documents"] == [{}, {}]
    assert not partial_path(out).exists() and not progress_path(out).exists()
    ResumableOutput(out, {"a": 1}, renderer).open()
    with pytest.raises(MedlinkError, match=r"cannot resume: .* other settings \(a: 1 then, 2 now\)"):
        ResumableOutput(out, {"a": 2}, renderer).open()
    os.remove(progress_path(out))
    with pytest.raises(MedlinkError, match="no out.bioc.json.progress.json records a run that wrote it"):
        ResumableOutput(out, {"a": 1}, renderer).open()

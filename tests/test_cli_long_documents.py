"""``medlink annotate`` on long documents as a user runs it: the size limit's error and skip, progress on stderr (not with
-q), windows that change nothing, and --out locked before the index loads."""

from __future__ import annotations

import json

import pytest

from medlink import progress
from medlink.linking import windowed
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink
from tests.test_long_documents import PARAGRAPHS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    work = tmp_path_factory.mktemp("cli-long")
    medlink("kb", "build", work / "kb.sqlite", f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q")
    medlink("index", "build", "--kb", work / "kb.sqlite", "--out", work / "index", "-q")
    return work / "index"


def test_a_document_over_the_limit_stops_the_run_or_is_skipped_and_counted(index_dir, tmp_path):
    documents = tmp_path / "docs.jsonl"
    documents.write_text("".join(json.dumps({"id": doc_id, "text": text}) + "\n" for doc_id, text in
                                 (("a", "Colorectal cancer."), ("big", " ".join(PARAGRAPHS)), ("c", "No hamartoma."))), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    refused = medlink("annotate", "--index", index_dir, "--input", documents, "--out", out, "--max-document-mb", "0.0002", check=False)
    assert refused.returncode == 2 and not out.exists()
    assert f"{documents}:2: document big: " in refused.stderr and "over the limit of 0.0002 MB a document (210 characters)" in refused.stderr
    assert "raise it with --max-document-mb" in refused.stderr
    skipped = medlink("annotate", "--index", index_dir, "--input", documents, "--json", "--out", out, "--max-document-mb", "0.0002",
                      "--skip-invalid")
    assert "2 document(s)" in skipped.stderr and "1 malformed record(s) skipped" in skipped.stderr
    assert f"skipped {documents}:2: document big: " in skipped.stderr
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a", "c"]


def test_windows_change_nothing_and_progress_shows_unless_quiet(index_dir, monkeypatch):
    from click.testing import CliRunner

    from medlink.cli import command

    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)  # off a terminal: a line at every refresh, from the first
    monkeypatch.setattr(progress, "FIRST_LINE_AFTER", 0.0)
    monkeypatch.setattr(windowed, "PROGRESS_CHARS", 1000)
    text = "\n\n".join(PARAGRAPHS * 4)
    runs = {flags: CliRunner().invoke(command(), ["annotate", "--index", str(index_dir), "--json", text, *flags])
            for flags in ((), ("--window-chars", "150"), ("--window-chars", "150", "-q"))}
    assert all(run.exit_code == 0 for run in runs.values())
    whole, cut, quiet = (run.stdout for run in runs.values())
    assert cut == whole == quiet and len(json.loads(whole)["annotations"]) > 20
    assert "annotate 1: finding" in runs[("--window-chars", "150")].stderr and "annotate 1: linking" in runs[("--window-chars", "150")].stderr
    assert "annotate 1:" not in runs[()].stderr  # read whole: no window, no progress
    assert "annotate 1:" not in runs[("--window-chars", "150", "-q")].stderr


def test_out_is_locked_before_the_index_is_loaded(tmp_path):
    """A second run writing the same --out is refused at once, before it spends a minute loading its index: here the
    index does not even exist, and the lock is what it names."""
    from medlink.directories import output_lock

    out = tmp_path / "out.txt"
    with output_lock(out):
        second = medlink("annotate", "--index", tmp_path / "no-such-index", "--out", out, "Colorectal cancer.", check=False)
    assert second.returncode == 2 and f"is writing {out}" in second.stderr and "no-such-index" not in second.stderr

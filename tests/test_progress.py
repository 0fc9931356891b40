"""Progress shows wherever medlink runs: on a pipe or in a log file as lines (no carriage returns), with each long phase named."""

import pytest

from medlink import progress
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink


def test_a_bar_off_a_terminal_writes_lines(monkeypatch, capsys):
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    with progress.bar(total=3, desc="encoding names") as bar:
        for _ in range(3):
            bar.update(1)
    err = capsys.readouterr().err
    assert "\r" not in err and "encoding names" in err and err.count("\n") >= 2
    with progress.bar(False, total=3, desc="silent") as quiet:
        quiet.update(3)
    assert "silent" not in capsys.readouterr().err


def test_a_count_without_a_total_is_a_whole_number(monkeypatch, capsys):
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    monkeypatch.setattr(progress, "FIRST_LINE_AFTER", 0.0)
    with progress.bar(desc="building kb.sqlite", unit=" records", unit_scale=True) as bar:
        bar.update(12345)
    err = capsys.readouterr().err
    assert "building kb.sqlite: 12,345 records [" in err and "records/s" in err and "12.3k records" not in err


def test_a_quick_run_off_a_terminal_writes_no_bar(capsys):
    """A one-document annotate on a pipe: no '0doc' line before and none after (the summary line reports the counts)."""
    with progress.bar(desc="annotate", unit="doc") as bar:
        bar.update(1)
    assert "annotate" not in capsys.readouterr().err


@pytest.mark.slow
def test_an_index_build_names_its_phases_on_stderr(tmp_path):
    medlink("kb", "build", tmp_path / "kb.sqlite", f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q")
    err = medlink("index", "build", "--kb", tmp_path / "kb.sqlite", "--out", tmp_path / "index").stderr
    assert "medlink: index: tfidf (tfidf) over" in err and "medlink: index: bm25 (bm25) over" in err and ": done in" in err
    assert "\r" not in err
    quiet = medlink("index", "build", "--kb", tmp_path / "kb.sqlite", "--out", tmp_path / "index", "-q")
    said = [line for line in quiet.stderr.splitlines() if line.startswith("medlink:")]
    assert all("no probabilities fitted" in line for line in said) and "wrote" in quiet.stdout  # -q keeps a warning only
    for command in (("link", "heart attack"), ("annotate", "He had a heart attack.")):  # -q where a user runs medlink most
        loud, silent = (medlink(*command, "--index", tmp_path / "index", *flag) for flag in ((), ("-q",)))
        assert silent.stdout == loud.stdout and "medlink:" not in silent.stderr


@pytest.mark.slow
def test_quiet_silences_the_phase_lines_too(tmp_path):
    """'medlink align -q': no bars and no 'medlink: indexing ...' lines; without -q the phase shows."""
    align = FIXTURES / "align"
    medlink("kb", "build", tmp_path / "s.sqlite", f"obo:{align / 'source.obo'}", "-q")
    medlink("kb", "build", tmp_path / "t.sqlite", f"tsv=ICD10CM:{align / 'target.tsv'}", "-q")
    args = ("align", "--source", tmp_path / "s.sqlite", "--target", tmp_path / "t.sqlite", "--out", tmp_path / "m.sssom.tsv")
    assert "medlink: indexing the target's names" in medlink(*args).stderr
    quiet = medlink(*args, "-q")
    assert "medlink:" not in quiet.stderr and "wrote" in quiet.stdout


def test_quiet_in_process_gives_the_log_level_back(tmp_path):
    """A command run in-process with -q (a test, a script) restores the 'medlink' logger when it ends, even on an error."""
    import logging

    from click.testing import CliRunner

    from medlink.cli import command

    logger = logging.getLogger("medlink")
    before = logger.level
    result = CliRunner().invoke(command(), ["align", "--source", str(tmp_path / "none.sqlite"), "--target", str(tmp_path / "t.sqlite"),
                                            "--out", str(tmp_path / "m.tsv"), "-q"])
    assert result.exit_code != 0 and logger.level == before


def test_quiet_silences_every_bar_of_the_command_and_only_of_it(tmp_path, monkeypatch):
    """-q reaches bars deep in library code (pair mining asks for its own), and bars show again once the command ends."""
    from click.testing import CliRunner

    from medlink.cli import command

    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)  # off a terminal, a line at every refresh
    kb = tmp_path / "kb.sqlite"
    medlink("kb", "build", kb, f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q")
    runs = {flags: CliRunner().invoke(command(), ["train", "pairs", "--kb", str(kb), "--out", str(tmp_path / f"pairs{len(flags)}"),
                                                  "--tasks", "syn", *flags]) for flags in ((), ("-q",))}
    assert all(run.exit_code == 0 for run in runs.values())
    assert "syn: names" in runs[()].output and "syn: names" not in runs[("-q",)].output
    assert progress.silence_bars(False) is False  # given back when the command ended

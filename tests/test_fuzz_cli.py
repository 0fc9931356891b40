"""Property test of the command line: any mix of known options, odd values and stray words ends in an answer or one
'error: ...' line (exit 2 for a refused value, click's usage error otherwise), never a traceback."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medlink.cli import main
from medlink.kb.build import build_kb
from medlink.linking.index import build_index
from tests.conftest import FIXTURES

ODD = st.sampled_from(["", "-1", "0", "1e9", "nan", "x" * 300, "../../x", "/nonexistent", "biosyn:/nonexistent", "tsv:", "{}",
                       "fp16", "MESH", "weighted", "\u00e9", "a,b,,", "--", "-"])


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    work = tmp_path_factory.mktemp("cli-fuzz")
    build_kb(work / "kb.sqlite", [f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"], progress=False)
    build_index(work / "kb.sqlite", work / "index")
    return work


def run(args: list[str], monkeypatch) -> int:
    monkeypatch.setattr(sys, "argv", ["medlink", *args])
    try:
        main()
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1
    return 0


def link_args(index):
    options = st.lists(st.tuples(st.sampled_from(["--k", "--top-k", "--format", "--column", "--generators", "--prefer-prefix", "--precision",
                                                  "--batch-size", "--input"]), ODD), max_size=3)
    flags = st.lists(st.sampled_from(["--json", "--header"]), max_size=2, unique=True)
    words = st.lists(st.one_of(ODD, st.text(max_size=20)), min_size=1, max_size=3)
    return st.builds(lambda o, f, w: ["link", "--index", str(index / "index"), *[x for pair in o for x in pair], *f, *w], options, flags, words)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_link_arguments_never_end_in_a_traceback(index, monkeypatch, capsys, data):
    args = data.draw(link_args(index))
    code = run(args, monkeypatch)
    err = capsys.readouterr().err
    assert code in (0, 1, 2) and "Traceback" not in err, (args, err)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from([["kb", "build"], ["index", "build", "--kb"], ["eval", "--index"], ["tune", "--index"], ["kb", "show"],
                                ["kb", "search"], ["train", "pairs", "--kb"], ["cache", "clear", "--older-than"]]),
       values=st.lists(ODD, min_size=1, max_size=3))
def test_other_commands_refuse_odd_values_in_one_line(index, monkeypatch, capsys, tmp_path_factory, command, values):
    out = tmp_path_factory.mktemp("out")
    monkeypatch.chdir(out)  # whatever a stray word names as an output lands here, not in the repository
    args = [*command, *values] + (["--out", str(out / "x")] if command[:2] in (["index", "build"], ["train", "pairs"]) else [])
    code = run(args, monkeypatch)
    err = capsys.readouterr().err
    assert code in (0, 1, 2) and "Traceback" not in err, (args, err)


def test_a_bad_precision_in_the_environment_is_refused_before_any_command(index, monkeypatch, capsys):
    """MEDLINK_PRECISION=bogus was only refused when a command loaded a neural model; a lexical link ran on."""
    monkeypatch.setenv("MEDLINK_PRECISION", "bogus")
    assert run(["link", "--index", str(index / "index"), "heart attack"], monkeypatch) == 2
    assert "MEDLINK_PRECISION: precision must be one of auto, fp32, bf16, int8, not 'bogus'" in capsys.readouterr().err

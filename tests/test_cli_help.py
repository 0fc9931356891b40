"""The command line as a new user meets it: -h everywhere, --version, every option described, flags shown as flags."""

import re

import pytest

from medlink.cli import command
from tests.test_cli_kb import medlink


def commands(group, path=()):
    for name, sub in group.commands.items():
        if hasattr(sub, "commands"):
            yield from commands(sub, (*path, name))
        else:
            yield (*path, name), sub


def test_every_option_and_argument_says_what_it_is_for():
    undescribed = [f"{' '.join(path)} {param.opts[0] if param.opts else param.name}" for path, cmd in commands(command())
                   for param in cmd.params if not param.hidden and not getattr(param, "help", None) and param.name != "help"]
    assert undescribed == []


def test_no_method_is_named_by_a_paper_number():
    texts = [cmd.help or "" for _, cmd in commands(command())] + [getattr(p, "help", "") or "" for _, cmd in commands(command()) for p in cmd.params]
    assert not [t for t in texts if re.search(r"paper \d", t)]


@pytest.mark.parametrize("args", [["-h"], ["link", "-h"], ["kb", "build", "-h"], ["kb", "search", "-h"], ["kb", "show", "-h"],
                                  ["train", "bi-encoder", "-h"], ["tune", "--help"], ["eval", "-h"], ["cache", "clear", "-h"]])
def test_short_help_flags_and_metavars(args):
    out = medlink(*args).stdout
    assert "Usage: medlink" in out and not re.search(r"<[a-z\[\] ]+>", out), out  # no Python type such as <bool>, <list[str]>


def test_version():
    assert re.fullmatch(r"medlink \d+\.\d+\.\d+\S*\n", medlink("--version").stdout)


@pytest.mark.slow  # links with the default index, built on first use
def test_a_tsv_header_is_not_linked_as_a_mention(tmp_path):
    (tmp_path / "m.tsv").write_text("id\tmention\n1\theart attack\n")
    with_header = medlink("link", "--input", tmp_path / "m.tsv", "--column", "1", "--header", "--json", "--top-k", "1").stdout
    assert [line.split('"mention": ')[1].split(",")[0] for line in with_header.splitlines()] == ['"heart attack"']


def test_kb_build_takes_its_output_as_index_build_does(tmp_path):
    from tests.conftest import FIXTURES

    source = f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"
    medlink("kb", "build", "--out", tmp_path / "a.sqlite", source, "-q")
    medlink("kb", "build", tmp_path / "b.sqlite", source, "-q")  # the positional form still works
    assert (tmp_path / "a.sqlite").read_bytes()[:16] == (tmp_path / "b.sqlite").read_bytes()[:16] == b"SQLite format 3\x00"
    refused = medlink("kb", "build", tmp_path / "c.sqlite", check=False)
    assert refused.returncode == 2 and "at least one source" in refused.stderr


@pytest.mark.parametrize("group", [[], ["kb"], ["train"], ["cache"], ["index"]])
def test_command_lists_give_whole_sentences(group):
    listing = medlink(*group, "--help").stdout.split("Commands:")[1]
    assert listing.strip() and "..." not in listing  # click cuts a long first line at ~45 characters unless given whole


def test_a_command_line_is_its_first_sentence_whole():
    assert " ".join(medlink("cache", "--help").stdout.split()).endswith(
        "clear Remove cached encodings (indexes keep their own vectors; a rebuild of the same names re-encodes them)")

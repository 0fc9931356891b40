"""Property tests for what users feed the linker besides KBs: annotated corpora, mention files and index configs. Any
damaged input loads or is refused with medlink's own error naming the file; never a traceback or a hang."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medlink.corpora.datasets import load_dataset
from medlink.corpora.mention_files import read_mentions
from medlink.errors import MedlinkError
from medlink.linking.config import LinkerConfig
from tests.conftest import FIXTURES
from tests.fuzzing import MUTATIONS, mutate

ROOT = Path(__file__).resolve().parents[1]
DATASETS = {"biosyn": "eval/biosyn_processed", "askapatient": "eval/askapatient/AskAPatient.fold-0.test.txt", "pubtator": "eval/pubtator_small.txt"}
MENTION_FILES = {"lines": "heart attack\nchest pain\ncan't sleep\n", "tsv": "id\tmention\n1\theart attack\n2\tchest pain\n",
                 "jsonl": '{"mention": "heart attack"}\n{"mention": "chest pain"}\n'}


def damaged_copy(original: Path, kind: str, seed: int, work: Path) -> tuple[Path, Path]:
    """A copy of a file or folder (its first file damaged); returns the copy and the damaged file."""
    copy = work / original.name
    if original.is_dir():
        shutil.copytree(original, copy)
        damaged = sorted(p for p in copy.iterdir() if p.is_file())[0]
    else:
        shutil.copy(original, copy)
        damaged = copy
    damaged.write_bytes(mutate(damaged.read_bytes(), kind, random.Random(seed)))
    return copy, damaged


def refused_by_name(error: MedlinkError, *paths: Path) -> bool:
    return any(p.name in str(error) for p in paths)


FUZZ = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("name", sorted(DATASETS))
@FUZZ
@given(kind=st.sampled_from(MUTATIONS), seed=st.integers(0, 2**16))
def test_a_damaged_corpus_loads_or_is_refused_by_name(name, kind, seed, tmp_path_factory):
    copy, damaged = damaged_copy(FIXTURES / DATASETS[name], kind, seed, tmp_path_factory.mktemp(name))
    try:
        mentions = load_dataset(f"{name}:{copy}")
    except MedlinkError as error:
        assert refused_by_name(error, copy, damaged), error
    else:
        assert all(m.parts and all(m.parts) for m in mentions)


@pytest.mark.parametrize("name", sorted(MENTION_FILES))
@FUZZ
@given(kind=st.sampled_from(MUTATIONS), seed=st.integers(0, 2**16))
def test_a_damaged_mention_file_reads_or_is_refused_by_name(name, kind, seed, tmp_path_factory):
    path = tmp_path_factory.mktemp(name) / f"mentions.{name}"
    path.write_bytes(mutate(MENTION_FILES[name].encode(), kind, random.Random(seed)))
    try:
        mentions = list(read_mentions(path, name, 1 if name == "tsv" else 0))
    except MedlinkError as error:
        assert refused_by_name(error, path), error
    else:
        assert all(isinstance(m, str) for m in mentions)


@FUZZ
@given(kind=st.sampled_from(MUTATIONS), seed=st.integers(0, 2**16))
def test_a_damaged_config_loads_or_is_refused_by_name(kind, seed, tmp_path_factory):
    copy, _ = damaged_copy(ROOT / "examples" / "hybrid.json", kind, seed, tmp_path_factory.mktemp("config"))
    try:
        LinkerConfig.from_file(copy)
    except MedlinkError as error:
        assert refused_by_name(error, copy), error


@pytest.mark.parametrize("line", ["1||0|1|²||Disease||x||D1", "1||0|" + "9" * 5000 + "||Disease||x||D1", "1||-3|-1||Disease||x||D1"])
def test_impossible_spans_in_a_corpus_are_named(line, tmp_path):
    (tmp_path / "doc.concept").write_text(line + "\n")
    try:
        mentions = load_dataset(f"biosyn:{tmp_path}")
    except MedlinkError as error:
        assert "doc.concept:1" in str(error)
    else:  # a span is not needed to link; if it loads, it must not carry nonsense
        assert all(m.start is None or 0 <= m.start <= m.end < 10**12 for m in mentions)


def test_deeply_nested_json_is_refused_not_a_recursion_error(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "m.jsonl").write_text(deep + "\n")
    (tmp_path / "c.json").write_text(deep)
    with pytest.raises(MedlinkError, match="m.jsonl"):
        list(read_mentions(tmp_path / "m.jsonl", "jsonl"))
    with pytest.raises(MedlinkError, match="c.json"):
        LinkerConfig.from_file(tmp_path / "c.json")


@pytest.mark.slow
def test_a_command_line_mention_that_is_not_utf8_is_reported_not_a_traceback(tmp_path):
    import subprocess
    import sys

    from medlink.kb.build import build_kb
    from medlink.linking.index import build_index

    build_kb(tmp_path / "kb.sqlite", [f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"], progress=False)
    build_index(tmp_path / "kb.sqlite", tmp_path / "index")
    command = [sys.executable.encode(), b"-m", b"medlink", b"link", b"--index", str(tmp_path / "index").encode(), b"--json",
               b"\xff\xfecancer", b"renal"]
    done = subprocess.run(command, capture_output=True)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    first, second = done.stdout.decode().splitlines()
    assert '"error": "not valid UTF-8 text' in first and '"kidney diseases"' in second

"""Property tests: any damaged KB file either builds or is refused with medlink's own error naming the file; never a
traceback, a hang, a half-written KB, staging files left behind or a control character stored in the KB. (The long run is
benchmarks/robustness/fuzz_readers.py.)"""

from __future__ import annotations

import logging
import random
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medlink.errors import MedlinkError
from medlink.kb.build import build_kb
from tests.conftest import FIXTURES
from tests.control_characters import CHARACTERS, put_inside, stored_control_characters
from tests.fuzzing import MUTATIONS, mutate

CONTROL_DAMAGES = ("control_in_id", "control_in_name")  # a control character inside a value (tests/control_characters.py)
DAMAGES = MUTATIONS + CONTROL_DAMAGES
# what a build of a damaged file may end in; anything else fails
OUTCOMES = ("built clean", "built with replacements counted", "built with skips counted", "refused naming file:line",
            "refused naming the file only")

# format -> (fixture copied for each example, the file in it that is damaged)
READERS = {
    "biosyn": ("biosyn/medic_small.txt", ""),
    "obo": ("obo/mini_hp.obo", ""),
    "mesh": ("mesh/desc_small.xml", ""),
    "icd10cm": ("icd10cm/mini_tabular.xml", ""),
    "tsv": ("custom/terms.tsv", ""),
    "jsonl": ("custom/terms.jsonl", ""),
    "askapatient": ("eval/askapatient/ontology.json", ""),
    "umls": ("umls/META", "MRCONSO.RRF"),
    "snomed": ("snomed/Snapshot", "Terminology/sct2_Description_Snapshot-en_INT_20240101.txt"),
}


def damaged_source(reader: str, kind: str, seed: int, work: Path) -> tuple[str, Path]:
    """A copy of the reader's fixture with one file damaged; returns the source spec and the damaged file."""
    fixture, inner = READERS[reader]
    original = FIXTURES / fixture
    copy = work / original.name
    if original.is_dir():
        shutil.copytree(original, copy)
    else:
        shutil.copy(original, copy)
    damaged = copy / inner if inner else copy
    damaged.write_bytes(damage(reader, damaged.read_bytes(), kind, random.Random(seed)))
    return f"{reader}:{copy}", damaged


def damage(reader: str, data: bytes, kind: str, rng: random.Random) -> bytes:
    """``data`` damaged one way: a mutation of tests/fuzzing.py, or a control character inside an id or a name."""
    if kind in CONTROL_DAMAGES:
        return put_inside(reader, data, kind.removeprefix("control_in_"), rng.choice(CHARACTERS), rng)[0]
    return mutate(data, kind, rng)


HARMLESS = ("bom", "crlf", "cr_only")  # an editor's doing: the KB must be exactly the undamaged one's, or refused
_clean: dict[str, str] = {}


def clean_checksum(reader: str) -> str:
    """The content checksum of the reader's undamaged fixture, built once."""
    if reader not in _clean:
        import tempfile

        with tempfile.TemporaryDirectory() as work:
            fixture = FIXTURES / READERS[reader][0]
            _clean[reader] = build_kb(Path(work) / "kb.sqlite", [f"{reader}:{fixture}"], progress=False).checksum
    return _clean[reader]


@contextmanager
def replacement_warnings() -> Iterator[list[str]]:
    """The warnings the build logs of control characters it replaced, one per file."""
    caught: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: caught.append(record.getMessage()) if "control characters" in record.getMessage() else None
    logger = logging.getLogger("medlink")
    logger.addHandler(handler)
    try:
        yield caught
    finally:
        logger.removeHandler(handler)


def build_outcome(reader: str, kind: str, seed: int, skip_invalid: bool, work: Path) -> str:
    """One of ``OUTCOMES``; anything else fails the test (a traceback, a partial artefact, a refusal naming no file, a control
    character stored in the KB, a KB that silently differs from the undamaged one after a harmless change such as a BOM or
    other line endings)."""
    source, damaged = damaged_source(reader, kind, seed, work)
    out = work / "out" / "kb.sqlite"
    try:
        with replacement_warnings() as replaced:
            report = build_kb(out, [source], skip_invalid=skip_invalid, progress=False)
    except MedlinkError as error:
        assert damaged.name in str(error) or Path(source.split(":", 1)[1]).name in str(error), f"{error} names no file"
        assert not out.exists(), "a refused build left a KB behind"
        outcome = "refused naming file:line" if re.search(rf"{re.escape(damaged.name)}:\d+: ", str(error)) else "refused naming the file only"
    else:
        assert out.is_file()
        stored = stored_control_characters(out)
        assert not stored, f"control characters stored: {stored[:3]}"
        assert all(damaged.name in warning for warning in replaced), f"a warning names no file: {replaced}"
        outcome = "built with skips counted" if report.total_skipped else "built with replacements counted" if replaced else "built clean"
        if kind in HARMLESS and not skip_invalid:
            from medlink.kb.store import KB

            assert KB.open(out).checksum == clean_checksum(reader), f"a {kind} changed what the {reader} reader read, silently"
    leftovers = [p.name for p in out.parent.iterdir() if p.name != out.name] if out.parent.exists() else []
    assert not leftovers, f"staging files left behind: {leftovers}"
    return outcome


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(DAMAGES), seed=st.integers(0, 2**16), skip_invalid=st.booleans())
def test_a_damaged_kb_file_builds_or_is_refused_by_name(reader, kind, seed, skip_invalid, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"fuzz-{reader}")
    assert build_outcome(reader, kind, seed, skip_invalid, work) in OUTCOMES


@pytest.mark.parametrize("reader", ["biosyn", "tsv"])
def test_a_bom_is_not_part_of_the_first_id(reader, tmp_path):
    source, damaged = damaged_source(reader, "bom", 0, tmp_path)
    clean = tmp_path / "clean"
    clean.mkdir()
    plain, _ = damaged_source(reader, "crlf", 0, clean)  # the same content without a BOM (CRLF endings are harmless)
    build_kb(tmp_path / "bom.sqlite", [source], progress=False)
    build_kb(tmp_path / "plain.sqlite", [plain], progress=False)
    from medlink.kb.store import KB

    assert [c for c, _ in KB.open(tmp_path / "bom.sqlite").iter_concepts()] == [c for c, _ in KB.open(tmp_path / "plain.sqlite").iter_concepts()]


def test_cr_only_line_endings_read_like_lf(tmp_path):
    source, _ = damaged_source("biosyn", "cr_only", 0, tmp_path)
    build_kb(tmp_path / "cr.sqlite", [source], progress=False)
    build_kb(tmp_path / "lf.sqlite", [f"biosyn:{FIXTURES / READERS['biosyn'][0]}"], progress=False)
    from medlink.kb.store import KB

    assert KB.open(tmp_path / "cr.sqlite").stats()["names"] == KB.open(tmp_path / "lf.sqlite").stats()["names"] > 1


@pytest.mark.parametrize("stanzas, message", [
    ("[Trem]\nid: X:1\nname: one\n", "t.obo:2: unknown stanza header '[Trem]'; expected one of [Term], [Typedef], [Instance]"),
    ("[Term]\nid: X:1\nname: one\nname: uno\n", "t.obo:5: a second 'name:' tag in this [Term] (the first: 'one')"),
])
def test_obo_mistakes_that_used_to_pass_silently_are_named(stanzas, message, tmp_path):
    (tmp_path / "t.obo").write_text("format-version: 1.2\n" + stanzas)
    with pytest.raises(MedlinkError, match=re.escape(message)):
        build_kb(tmp_path / "t.sqlite", [f"obo:{tmp_path / 't.obo'}"], progress=False)

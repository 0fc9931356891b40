"""A damaged index folder is refused with the damaged file (or its component folder) named, never a traceback or a
bare 'Aborted.': every file of a real index is deleted, emptied, cut in half or overwritten, then loaded and used."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

from medlink.errors import MedlinkError
from medlink.inventory import INVENTORY
from medlink.kb.build import build_kb
from medlink.linking.config import LinkerConfig
from medlink.linking.index import build_index
from medlink.linking.linker import Linker
from tests.conftest import FIXTURES

DAMAGES = ("delete", "empty", "half", "garbage", "flip")
LEXICAL = {"generators": [{"name": "exact", "type": "exact"}, {"name": "words", "type": "exact", "params": {"words": True}},
                          {"name": "thesaurus", "type": "thesaurus"},
                          {"name": "completion", "type": "completion"}, {"name": "tfidf", "type": "tfidf"}, {"name": "bm25", "type": "bm25"}]}


def damage(path: Path, kind: str, rng: random.Random) -> None:
    data = path.read_bytes()
    if kind == "delete":
        path.unlink()
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "half":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "flip":  # ten bytes changed, the size kept: what only a checksum sees
        flipped = bytearray(data)
        for position in rng.sample(range(len(data)), min(10, len(data))):
            flipped[position] ^= 0xFF
        path.write_bytes(bytes(flipped))
    else:
        path.write_bytes(bytes(rng.randrange(256) for _ in range(max(16, len(data) // 4))))


def load_and_link(folder: Path) -> str:
    """'used' or 'refused'; anything but a MedlinkError naming a path inside the index fails."""
    try:
        Linker.load(folder).link(["colorectal cancer", "renal"], k=3)
    except MedlinkError as error:
        assert str(folder) in str(error), f"the refusal names nothing inside the index: {error}"
        return "refused"
    return "used"


def index_files(index: Path) -> list[Path]:
    return sorted(p for p in index.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    work = tmp_path_factory.mktemp("damaged")
    build_kb(work / "kb.sqlite", [f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"], progress=False)
    build_index(work / "kb.sqlite", work / "index", LinkerConfig.from_dict(LEXICAL), [f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}"])
    return work / "index"


@pytest.mark.slow
def test_every_file_of_a_lexical_index_damaged_every_way(built, tmp_path):
    rng = random.Random(0)
    outcomes = {}
    for file in index_files(built):
        for kind in DAMAGES:
            copy = tmp_path / f"{'-'.join(file.relative_to(built).parts)}-{kind}"  # two generators each have a medlink_params.json
            shutil.copytree(built, copy)
            damage(copy / file.relative_to(built), kind, rng)
            outcomes[(str(file.relative_to(built)), kind)] = load_and_link(copy)
    used = sorted(key for key, outcome in outcomes.items() if outcome == "used" and key[0] != INVENTORY)
    assert not used, f"damaged files used: {used}"  # the inventory only says what a rebuild may replace: linking never reads it


@pytest.mark.slow
@pytest.mark.dense
def test_a_damaged_dense_index_is_refused_by_name(tmp_path):
    pytest.importorskip("faiss")
    build_kb(tmp_path / "kb.sqlite", [f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"], progress=False)
    config = LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "params": {"precision": "fp32"}}]})
    build_index(tmp_path / "kb.sqlite", tmp_path / "index", config)
    rng = random.Random(1)
    for file in ("generators/dense/faiss.index", "generators/dense/dense.json"):
        for kind in DAMAGES:
            copy = tmp_path / f"copy-{kind}-{Path(file).name}"
            shutil.copytree(tmp_path / "index", copy)
            damage(copy / file, kind, rng)
            assert load_and_link(copy) == "refused"


def test_the_damages_users_met_are_refused_by_name(built, tmp_path):
    """Ten bytes flipped in BM25's postings, alt_ids.tsv cut in half, a generator's settings deleted: each was used."""
    for relative, kind in (("generators/bm25/indices.csc.index.npy", "flip"), ("alt_ids.tsv", "half"),
                           ("generators/words/medlink_params.json", "delete")):
        copy = tmp_path / relative.replace("/", "-")
        shutil.copytree(built, copy)
        damage(copy / relative, kind, random.Random(2))
        with pytest.raises(MedlinkError, match=re.escape(str(copy / relative))):
            Linker.load(copy)


def test_index_verify_checks_every_file_and_loading_checks_large_ones_by_size(built, tmp_path, monkeypatch):
    from medlink import inventory
    from medlink.linking.manifest import check_index_files, read_manifest
    from tests.test_cli_kb import medlink

    assert "as built" in medlink("index", "verify", built).stdout
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    damage(copy / "generators/tfidf/postings.data.npy", "flip", random.Random(3))
    monkeypatch.setattr(inventory, "SMALL_FILE", 0)  # every file "large": loading checks sizes only
    assert check_index_files(copy, read_manifest(copy))
    monkeypatch.undo()
    with pytest.raises(MedlinkError, match="postings.data.npy: damaged .*crc32 checksum differs"):
        check_index_files(copy, read_manifest(copy))
    result = medlink("index", "verify", copy, check=False)
    assert result.returncode != 0 and "generators/tfidf/postings.data.npy" in result.stderr and "sha256 checksum differs" in result.stderr


def test_a_matrix_too_large_to_checksum_at_load_is_refused_when_its_structure_is_damaged(built, tmp_path, monkeypatch):
    """A TF-IDF matrix is memory-mapped, and one above the load-time checksum's size is not read whole at load; a column
    index out of range in it (what would send scipy outside the arrays) is refused naming the file, not used."""
    import numpy as np

    from medlink import inventory
    from medlink.retrieval import csr_files

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    indices = copy / "generators/tfidf/common.indices.npy"
    damaged = np.load(indices)
    damaged[len(damaged) // 2] = 1 << 30
    np.save(indices, damaged)  # same size: loading's size check passes
    monkeypatch.setattr(inventory, "SMALL_FILE", 0)  # every file "large": sizes checked, no checksum at load
    assert not csr_files.load_csr(built / "generators/tfidf", "common").indices.flags.owndata  # a view of the mapped file
    with pytest.raises(MedlinkError, match=re.escape(str(indices)) + ".*column indices outside"):
        Linker.load(copy)


def test_a_file_unchanged_since_its_check_is_not_read_again_and_a_rewrite_is_still_refused(built, tmp_path, monkeypatch):
    """A second load reads no file to checksum it (their stamps say none was written since); a file rewritten with its
    size and modification time kept is read again and refused: a write changes the time no tool can set back."""
    import os

    from medlink import file_stamps, inventory

    monkeypatch.setattr(file_stamps, "RACY_SECONDS", 0)  # the copy is seconds old: stamp it all the same
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    read, checksums = [], inventory._checksums
    monkeypatch.setattr(inventory, "_checksums", lambda path, sha256: read.append(path.name) or checksums(path, sha256))
    Linker.load(copy)
    assert "concept_names.txt" in read
    read.clear()
    Linker.load(copy)
    assert read == []
    names = copy / "concept_names.txt"
    before = names.stat()
    damage(names, "flip", random.Random(0))
    os.utime(names, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert names.stat().st_size == before.st_size and names.stat().st_mtime_ns == before.st_mtime_ns
    with pytest.raises(MedlinkError, match=re.escape(str(names)) + ".*checksum differs"):
        Linker.load(copy)

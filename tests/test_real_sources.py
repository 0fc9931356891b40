"""The real terminologies: packaged ones (ICD-10-CM, HPO) always, ../shared/data ones when present."""

import pytest

from medlink.kb.build import build_kb
from medlink.kb.default import default_kb_path, default_recipe, packaged_hpo_obo
from medlink.kb.store import KB
from tests.conftest import shared_data


@pytest.fixture(scope="module")
def default_kb():
    return KB.open(default_kb_path(progress=False))


@pytest.mark.slow
def test_icd10cm_2026_and_hpo_counts(default_kb):
    by_source = default_kb.stats()["concepts_by_source"]
    assert by_source["ICD-10-CM"] == 98_505  # simple-icd-10-cm's count of codes for 2026
    assert by_source["hp"] == 19_034  # 19,484 terms less 450 obsolete
    assert default_kb.concept("ICD10CM:I21.9").name == "Acute myocardial infarction, unspecified"
    assert default_kb.lookup("heart attack")[0][0] == "HP:0001658"


@pytest.mark.slow
def test_default_kb_is_built_once_and_rebuilt_when_out_of_date(default_kb):
    path = default_kb.path
    assert default_kb.meta["recipe"] == default_recipe()
    stamp = path.stat().st_mtime_ns
    assert default_kb_path(progress=False) == path and path.stat().st_mtime_ns == stamp
    import sqlite3

    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE meta SET value = 'stale' WHERE key = 'recipe'")
    default_kb_path(progress=False)
    assert KB.open(path).meta["recipe"] == default_recipe()


def test_hpo_from_its_package(tmp_path):
    kb = KB.open(build_kb(tmp_path / "hp.sqlite", [f"obo:{packaged_hpo_obo()}"], progress=False).path)
    assert len(kb) == 19_034
    assert "UMLS:C0036572" in kb.xrefs("HP:0001250", prefix="UMLS")


@pytest.mark.real_data
def test_medic(tmp_path):
    path = shared_data("medic/medic_06Jul2012.txt")
    kb = KB.open(build_kb(tmp_path / "medic.sqlite", [f"biosyn:{path}"], progress=False).path)
    stats = kb.stats()
    assert stats["concepts"] == 11_915 and stats["names"] == 76_237


@pytest.mark.real_data
def test_disease_ontology_2016(tmp_path):
    path = shared_data("disease-ontology/doid_2016-09-01.obo")
    kb = KB.open(build_kb(tmp_path / "do.sqlite", [f"obo:{path}"], progress=False).path)
    assert len(kb) == 6_971
    assert kb.concepts_with_xref("MESH:D003924") == ["DOID:9352"]


@pytest.mark.real_data
def test_ncbi_train_dictionary(tmp_path):
    path = shared_data("ncbi-disease/train_dictionary.txt")
    kb = KB.open(build_kb(tmp_path / "ncbi.sqlite", [f"biosyn:{path}"], progress=False).path)
    assert kb.stats()["names"] == 71_924


def test_two_first_uses_at_once_build_the_default_kb_once(monkeypatch, tmp_path):
    """A second process (here a thread: flock locks conflict between two opens of one file) waits for the first's
    build and uses it, rather than being refused or building it again."""
    import threading

    from medlink.kb import default as default_module
    from medlink.kb.sources import SourceSpec
    from tests.conftest import FIXTURES

    monkeypatch.setenv("MEDLINK_HOME", str(tmp_path))
    monkeypatch.setattr(default_module, "default_sources", lambda: [SourceSpec("biosyn", FIXTURES / "eval" / "dictionary.txt", "")])
    builds, building, may_finish = [], threading.Event(), threading.Event()

    def slow_build(*args, **kwargs):
        builds.append(args[0])
        building.set()
        assert may_finish.wait(30)
        return build_kb(*args, **kwargs)

    monkeypatch.setattr(default_module, "build_kb", slow_build)
    paths = []
    first = threading.Thread(target=lambda: paths.append(default_kb_path(progress=False)))
    first.start()
    assert building.wait(30)
    second = threading.Thread(target=lambda: paths.append(default_kb_path(progress=False)))
    second.start()
    second.join(0.5)
    assert second.is_alive() and len(builds) == 1  # waiting on the first, not refused and not building
    may_finish.set()
    first.join(30)
    second.join(30)
    assert len(builds) == 1 and paths == [tmp_path / default_module.DEFAULT_KB_NAME] * 2
    assert KB.open(paths[0]).meta["recipe"] == default_recipe()

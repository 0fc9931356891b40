"""The default KB is keyed by what it is made of, not by where the packages are installed."""

import shutil

from medlink.kb import default
from medlink.kb.sources import SourceSpec


def test_the_same_sources_elsewhere_give_the_same_recipe(tmp_path, monkeypatch):
    here = default.default_recipe()
    copies = []
    for spec in default.default_sources():
        copy = tmp_path / spec.path.name
        shutil.copy(spec.path, copy)
        copies.append(SourceSpec(spec.format, copy, spec.prefix))
    monkeypatch.setattr(default, "default_sources", lambda: copies)
    assert default.default_recipe() == here and str(tmp_path) not in here
    with open(copies[1].path, "ab") as handle:
        handle.write(b"\n")  # a changed source is a new recipe (a rebuild)
    assert default.default_recipe() != here


def test_a_new_icd10cm_reader_is_a_new_recipe(monkeypatch):
    """A reader that reads more of the XML (a code's Includes notes) must rebuild a cached default KB."""
    here = default.default_recipe()
    monkeypatch.setattr(default, "ICD10CM_READER", default.ICD10CM_READER + 1)
    assert default.default_recipe() != here

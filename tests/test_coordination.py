"""Composite mentions: coordinations spelt out, and the annotator linking each part."""

from __future__ import annotations

import pytest

from medlink.core import Annotation
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.annotator import AnnotateOptions, Annotator
from medlink.linking.linker import Linker
from medlink.text.coordination import expand_coordination


@pytest.mark.parametrize("text, parts", [
    ("breast and ovarian cancer", ["breast cancer", "ovarian cancer"]),
    ("breast and/or ovarian cancer", ["breast cancer", "ovarian cancer"]),
    ("breast/ovarian cancer", ["breast cancer", "ovarian cancer"]),
    ("Saethre-Chotzen, Crouzon, and Pfeiffer syndromes", ["Saethre-Chotzen syndromes", "Crouzon syndromes", "Pfeiffer syndromes"]),
    ("colorectal adenomas and carcinoma", ["colorectal adenomas", "colorectal carcinoma"]),
    ("spinocerebellar ataxias 1 and 2", ["spinocerebellar ataxias 1", "spinocerebellar ataxias 2"]),
    ("breast cancer and ovarian cancer", ["breast cancer", "ovarian cancer"]),
    ("C6 or C7 deficiency", ["C6 deficiency", "C7 deficiency"]),
    ("type 1 and type 2 diabetes", ["type 1 diabetes", "type 2 diabetes"]),
    ("type 1 or 2 diabetes", ["type 1 diabetes", "type 2 diabetes"]),
    ("type I, II and III collagenopathies", ["type I collagenopathies", "type II collagenopathies", "type III collagenopathies"]),
    ("MEN 1 or MEN 2 syndrome", ["MEN 1 syndrome", "MEN 2 syndrome"]),
    ("breast cancer and breast cancer susceptibility", ["breast cancer", "breast cancer susceptibility"]),
    ("hypertension or type 2 diabetes mellitus", ["hypertension", "type 2 diabetes mellitus"]),  # not "hypertension 2 diabetes"
    ("T and B cell lymphomas", ["T cell lymphomas", "B cell lymphomas"]),
])
def test_conjuncts_take_the_words_they_share(text, parts):
    assert expand_coordination(text) == parts


@pytest.mark.parametrize("text", ["ovarian cancer", "pain and fever", "glucose-6-phosphate dehydrogenase (G6PD) deficiency",
                                  "cancer and", "and/or", "a, b, c, d, e, f, g cancer", "Brandt's and/or"])
def test_what_is_no_coordination_of_shared_words_is_left_alone(text):
    assert expand_coordination(text) is None


class Spans:
    """A finder reporting given strings wherever they first occur."""

    name = "spans"

    def __init__(self, *strings):
        self.strings = strings

    def find(self, document):
        found = []
        for string in self.strings:
            at = document.text.find(string)
            found.append(Annotation(at, at + len(string), string, source=self.name))
        return sorted(found, key=lambda a: a.start)


@pytest.fixture(scope="module")
def linker(tmp_path_factory):
    folder = tmp_path_factory.mktemp("coordination")
    (folder / "kb.txt").write_text("D001943||breast cancer\nD010051||ovarian cancer\nD061325||hereditary breast and ovarian cancer\n"
                                   "D009369||neoplasms\n", encoding="utf-8")
    with KB.open(build_kb(folder / "kb.sqlite", [f"biosyn:{folder / 'kb.txt'}"], progress=False).path) as kb:
        yield Linker.build(kb)


def test_a_coordination_takes_the_concepts_of_its_parts(linker):
    text = "Risk of breast and ovarian cancer in carriers."
    annotated = Annotator(linker, [Spans("breast and ovarian cancer")], AnnotateOptions()).annotate_text(text)
    [span] = annotated.annotations
    assert span.ids == ("D001943", "D010051") and span.infons["composite"] == "breast cancer | ovarian cancer"
    alone = Annotator(linker, [Spans("breast and ovarian cancer")], AnnotateOptions(composites=False)).annotate_text(text)
    assert len(alone.annotations[0].ids) == 1 and "composite" not in alone.annotations[0].infons


def test_a_coordination_that_is_a_name_keeps_its_concept(linker):
    text = "Families with hereditary breast and ovarian cancer were seen."
    [span] = Annotator(linker, [Spans("hereditary breast and ovarian cancer")], AnnotateOptions()).annotate_text(text).annotations
    assert span.ids == ("D061325",) and "composite" not in span.infons

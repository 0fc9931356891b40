"""``medlink annotate --types`` (issue 53 item 2): only spans of the named entity types are written, in every output
format and by either engine; an unknown type is refused before anything is annotated, naming the vocabulary."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from medlink.corpora.document_files import read_documents
from medlink.corpora.entity_types import DISEASE, ENTITY_TYPES, known_types
from medlink.errors import MedlinkError
from medlink.kb.build import build_kb
from tests.conftest import FIXTURES
from tests.test_cli_kb import medlink

TYPES = FIXTURES / "types"
CDR = TYPES / "cdr_small.pubtator"  # diseases and chemicals; kb.tsv types each concept, and "Cold" is both
TEXT = "Lithium caused polyuria and a cold; cocaine preceded chest pain and an infarction."


def test_known_types_read_vocabulary_names_and_corpus_labels_and_refuse_others():
    assert known_types("Disease,chemical") == frozenset({"disease", "chemical"})
    assert known_types(["SpecificDisease"]) == frozenset({"disease"})
    assert known_types([]) is None
    with pytest.raises(MedlinkError) as refused:
        known_types("Disease,Diseases")
    assert "'Diseases'" in str(refused.value) and ", ".join(ENTITY_TYPES) in str(refused.value)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("typed-index")
    kb = build_kb(folder / "kb.sqlite", [f"tsv:{TYPES / 'kb.tsv'}"], progress=False).path
    medlink("index", "build", "--kb", kb, "--out", folder / "index", "--calibrate", "none", "--quiet")
    return folder / "index"


def annotated(index, tmp_path, fmt: str, *types: str, engine: tuple[str, ...] = ()) -> list[tuple[str, str | None]]:
    """(text, type) of every span ``medlink annotate`` writes for the fixture corpus in ``fmt``."""
    out = tmp_path / f"out-{fmt}-{'-'.join(types) or 'all'}.{fmt}"
    medlink("annotate", "--index", index, "--input", CDR, "--output-format", fmt, "--out", out, "-q", *engine,
            *[option for kind in types for option in ("--types", kind)])
    return [(a.text, a.type) for document in read_documents(out, fmt) for a in document.annotations]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["pubtator", "bioc", "bioc-json", "jsonl"])
def test_every_output_format_keeps_only_the_named_types(index, tmp_path, fmt):
    every = annotated(index, tmp_path, fmt)
    assert {kind for _text, kind in every} >= {"Disease", "Chemical"}
    for kind in ("Disease", "Chemical"):
        assert annotated(index, tmp_path, fmt, kind.lower()) == [(t, k) for t, k in every if k in (kind, None)]
    assert annotated(index, tmp_path, fmt, "Disease", "Chemical") == every


@pytest.mark.slow
def test_text_and_json_outputs_and_untyped_spans(index):
    lines = medlink("annotate", "--index", index, "--types", "Chemical", TEXT).stdout
    assert "Lithium" in lines and "cocaine" in lines and "polyuria" not in lines and "chest pain" not in lines
    spans = [span for line in medlink("annotate", "--index", index, "--json", "--types", DISEASE, TEXT).stdout.splitlines()
             for span in json.loads(line)["annotations"]]
    texts = {span["text"]: span.get("type") for span in spans}
    assert texts["polyuria"] == texts["chest pain"] == DISEASE and "Lithium" not in texts and "cocaine" not in texts
    assert "cold" in texts  # a name of a disease and of a drug has no type: kept, as medlink score keeps it


def test_an_unknown_type_is_refused_before_any_index_is_read(tmp_path):
    result = medlink("annotate", "--index", tmp_path / "no-such-index", "--types", "Disease,Drugz", "chest pain", check=False)
    assert result.returncode == 2
    assert "--types: unknown entity type(s) 'Drugz'; known: Disease, Chemical" in result.stderr


@pytest.mark.slow
def test_the_ray_engine_keeps_the_same_spans(index, tmp_path):
    pytest.importorskip("ray.data", reason="the Ray engine needs the ray extra: pip install 'medlink[ray]'")
    local = tmp_path / "local.pubtator"
    medlink("annotate", "--index", index, "--input", CDR, "--output-format", "pubtator", "--out", local, "-q", "--types", "Chemical")
    out = tmp_path / "ray.pubtator"
    command = [sys.executable, "-m", "medlink", "annotate", "--engine", "ray", "--workers", "1", "--index", str(index),
               "--input", str(CDR), "--output-format", "pubtator", "--out", str(out), "-q", "--types", "Chemical"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert out.read_text() == local.read_text() and "\tChemical\t" in out.read_text() and "\tDisease\t" not in out.read_text()

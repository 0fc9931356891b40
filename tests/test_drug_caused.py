"""A condition a drug is said to cause ("isoniazid-induced hepatitis", "dyskinesia induced by levodopa") linked as the
KB's drug-induced concept of it, only where a KB name spells that reading and the text writes the cause beside it."""

from __future__ import annotations

from dataclasses import replace

from medlink.core import Document
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.annotator import Annotator
from medlink.linking.index import build_index


def test_a_drug_caused_condition_takes_the_drug_induced_concept_where_the_kb_names_it(tmp_path):
    (tmp_path / "kb.txt").write_text(
        "D1||Hepatitis\nD2||Drug-Induced Liver Injury|Hepatitis, Drug-Induced\nD3||Dyskinesias|Dyskinesia\n"
        "D4||Dyskinesia, Drug-Induced\nD5||Rash\nD6||Hypoxia\n"
    )
    build_kb(tmp_path / "kb.sqlite", [f"biosyn:{tmp_path / 'kb.txt'}"], progress=False)
    build_index(KB.open(tmp_path / "kb.sqlite"), tmp_path / "index", calibrate="none")
    text = ("Isoniazid-induced hepatitis resolved. Dyskinesia induced by levodopa. Hepatitis was seen in 1990. "
            "A penicillin-associated rash. Radiation-induced hepatitis; dyskinesia caused by the stress. Hypoxia-induced "
            "hepatitis. Alcohol-induced hepatitis.")  # fmt: skip
    spans = next(iter(Annotator.load(tmp_path / "index").annotate([Document.from_text(text)]))).annotations
    assert [(span.text, span.ids[0]) for span in spans] == [
        ("hepatitis", "D2"), ("Dyskinesia", "D4"), ("Hepatitis", "D1"), ("rash", "D5"),  # no "drug-induced rash" name: as it was
        ("hepatitis", "D1"), ("dyskinesia", "D3"),  # radiation and stress are no drugs
        ("Hypoxia", "D6"), ("hepatitis", "D1"), ("hepatitis", "D1"),  # nor a condition the KB names, nor alcohol
    ]
    assert spans[0].result.read_as == "drug-induced hepatitis"
    windows = Annotator.load(tmp_path / "index")
    windows = Annotator(windows.linker, windows.finders, replace(windows.options, window=80))  # a long document, read in windows
    read = next(iter(windows.annotate([Document.from_text(text)]))).annotations
    assert [(span.text, span.ids[0]) for span in read] == [(span.text, span.ids[0]) for span in spans]


def test_an_unsure_condition_still_takes_its_drug_induced_name(tmp_path):
    (tmp_path / "kb.txt").write_text("D3||Dyskinesias|Dyskinesia\nD4||Dyskinesia, Drug-Induced\nD7||Ataxia\n")
    build_kb(tmp_path / "kb.sqlite", [f"biosyn:{tmp_path / 'kb.txt'}"], progress=False)
    build_index(KB.open(tmp_path / "kb.sqlite"), tmp_path / "index")  # probabilities: a small KB's fallback
    annotator = Annotator.load(tmp_path / "index")
    annotator = Annotator(annotator.linker.with_decisions(nil_threshold=1.0), annotator.finders, annotator.options)  # every answer NIL
    document = Document.from_text("Levodopa-induced dyskinesia was seen.")
    (span,) = next(iter(annotator.annotate([document]))).annotations
    assert span.result.candidates[0].concept_id == "D4" and span.result.read_as == "drug-induced dyskinesia"

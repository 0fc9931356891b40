"""Words derived from a KB's names ("hypertensive" for Hypertension, "nephrotoxicity" for Kidney Diseases): which are
derived and which left out, the dictionary finder finding them in running text read as their names (and leaving one
that qualifies the next span), a saved finder keeping them, and `medlink annotate` and `link` linking them."""

from __future__ import annotations

from medlink.core import Document
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.annotator import Annotator
from medlink.linking.index import build_index
from medlink.linking.linker import Linker
from medlink.text.derived_names import DERIVED_MATCH, derived_names
from medlink.text.finders.dictionary import DictionaryFinder, DictionaryOptions
from medlink.text.normalize import normalize

NAMES = ["Drug Toxicity", "Drug Overdose", "Kidney Diseases", "Drug-Induced Liver Injury", "Liver Diseases", "Neurotoxicity Syndromes",
         "Hypertension", "Epilepsy", "Parkinsonism", "Psoriasis", "Arthritis", "Psoriatic arthritis", "Ischemia", "Ischemic stroke",
         "Toxic Disorder", "Toxic Shock", "Toxic Hepatitis", "Toxic Megacolon"]  # fmt: skip


def found(finder: DictionaryFinder, text: str) -> list[tuple[str, str | None]]:
    return [(span.text, span.infons.get("read_as")) for span in finder.find(Document.from_text(text))]


def test_words_are_derived_from_names_and_a_name_is_never_overridden():
    derived = derived_names({normalize(name) for name in NAMES})
    assert derived["toxicity"] == "drug toxicity" and derived["overdose"] == "drug overdose"
    assert derived["nephrotoxicity"] == derived["renal injury"] == derived["nephrotoxic"] == "kidney diseases"
    assert derived["hepatotoxicity"] == derived["liver damage"] == "drug induced liver injury"  # the drug-induced name first
    assert derived["nephropathy"] == derived["nephropathies"] == "kidney diseases" and derived["hepatopathy"] == "liver diseases"
    assert derived["neurotoxicity"] == "neurotoxicity syndromes"
    assert derived["hypertensive"] == "hypertension" and derived["epileptic"] == "epilepsy" and derived["ischemic"] == "ischemia"
    assert derived["parkinsonian"] == derived["parkinsonic"] == "parkinsonism"
    assert "toxic" not in derived  # "toxic" opens names with many other words: no one of them alone
    assert not set(derived) & {normalize(name) for name in NAMES}
    assert derived_names({"drug toxicity", "toxicity"}).get("toxicity") is None  # the KB's own name


def test_the_finder_reads_a_derived_word_as_its_name_unless_it_qualifies_the_next_span(tmp_path):
    finder = DictionaryFinder.build(NAMES, normalize)
    text = "Hypertensive rats developed nephrotoxicity and renal injury; psoriatic arthritis, ischemic stroke."
    assert found(finder, text) == [
        ("Hypertensive", "hypertension"),
        ("nephrotoxicity", "kidney diseases"),
        ("renal injury", "kidney diseases"),
        ("psoriatic arthritis", None),
        ("ischemic stroke", None),
    ]
    assert found(finder, "psoriatic joint arthritis") == [("psoriatic", "psoriasis"), ("arthritis", None)]
    assert found(finder, "psoriatic plaques") == [("psoriatic", "psoriasis")]
    assert all(span.infons["match"] == DERIVED_MATCH for span in finder.find(Document.from_text("hypertensive")))
    finder.save(tmp_path / "finder")
    assert found(DictionaryFinder.load(tmp_path / "finder"), text) == found(finder, text)
    assert found(DictionaryFinder.build(NAMES, normalize, DictionaryOptions(derived=False)), "hypertensive rats") == []


def test_annotate_links_a_derived_word_to_its_names_concept(tmp_path):
    (tmp_path / "kb.txt").write_text("D1||Hypertension|High blood pressure\nD2||Kidney Diseases|Nephropathy\nD3||Drug Toxicity\n")
    build_kb(tmp_path / "kb.sqlite", [f"biosyn:{tmp_path / 'kb.txt'}"], progress=False)
    build_index(KB.open(tmp_path / "kb.sqlite"), tmp_path / "index", calibrate="none")
    document = Document.from_text("Hypertensive rats showed nephrotoxicity, a known toxicity.")
    spans = next(iter(Annotator.load(tmp_path / "index").annotate([document]))).annotations
    assert [(span.text, span.ids[0]) for span in spans] == [("Hypertensive", "D1"), ("nephrotoxicity", "D2"), ("toxicity", "D3")]
    again = Document.from_text("Hypertensive kidney diseases. He is hypertensive.")  # found again: still a qualifier there
    spans = next(iter(Annotator.load(tmp_path / "index").annotate([again]))).annotations
    assert [(span.text, span.ids) for span in spans] == [("kidney diseases", ("D2",)), ("hypertensive", ("D1",))]
    linked = Linker.load(tmp_path / "index").link(["nephrotoxicity", "hypertensive", "renal"], k=1)  # link reads them alike
    assert [(r.candidates[0].concept_id, r.read_as) for r in linked[:2]] == [("D2", "kidney diseases"), ("D1", "hypertension")]
    assert linked[2].read_as is None

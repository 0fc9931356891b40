"""What the batch benchmarks share: MEDIC's lexical index (built as 'medlink index build' builds it, probabilities fitted
on its own pseudo-mentions), the NCBI Disease abstracts as JSONL documents, and the CPU's name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import SHARED_DATA, scratch  # noqa: E402
from benchmarks.documents.medlink_system import medic_kb  # noqa: E402

from medlink.corpora.pubtator import read_pubtator  # noqa: E402

WORKDIR = scratch("medlink-bench-batch")
SPLITS = {"train": "NCBItrainset_corpus.txt", "dev": "NCBIdevelopset_corpus.txt", "test": "NCBItestset_corpus.txt"}
BC5CDR = ("CDR_TrainingSet.PubTator.txt", "CDR_DevelopmentSet.PubTator.txt")  # 1,000 more PubMed abstracts, none of them NCBI's


def medic_index(workdir: Path = WORKDIR) -> Path:
    """MEDIC's default lexical index (its calibration included), built once per work directory."""
    from medlink.linking.index import build_index

    out = workdir / "medic-index"
    if not (out / "manifest.json").exists():
        workdir.mkdir(parents=True, exist_ok=True)
        build_index(medic_kb(workdir), out)
    return out


def ncbi_texts(splits: tuple[str, ...]) -> list[tuple[str, str]]:
    """(PMID, title + " " + abstract) of the NCBI Disease abstracts of ``splits``, in file order."""
    out = []
    for split in splits:
        for document in read_pubtator(SHARED_DATA / "ncbi-disease-pubtator" / SPLITS[split]):
            out.append((document.doc_id, document.text))
    return out


def bc5cdr_texts() -> list[tuple[str, str]]:
    """(PMID, title + " " + abstract) of BC5CDR's train and dev abstracts: more distinct abstracts for a longer run."""
    return [(d.doc_id, d.text) for name in BC5CDR for d in read_pubtator(SHARED_DATA / "bc5cdr-pubtator" / name)]


def write_jsonl(texts: list[tuple[str, str]], path: Path) -> Path:
    """The texts as JSONL documents (``{"id", "text"}``): what both engines and the spaCy pipe read alike."""
    path.write_text("".join(json.dumps({"id": doc_id, "text": text}) + "\n" for doc_id, text in texts), encoding="utf-8")
    return path


def cpu_name() -> str:
    """The CPU as ``lscpu`` names it, with its core count (every figure is stated with it)."""
    fields = dict(
        line.split(":", 1) for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines() if ":" in line
    )
    return f"{fields.get('Model name', '?').strip()}, {fields.get('CPU(s)', '?').strip()} CPU(s)"

"""The benchmark datasets: where they are, and the KBs / memories the protocols need (cached)."""

from __future__ import annotations

from pathlib import Path

from benchmarks._common.harness import SHARED_DATA

from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.text.normalize import normalize

NCBI = SHARED_DATA / "ncbi-disease"
AAP = SHARED_DATA / "askapatient"


def require(path: Path) -> Path:
    if not path.exists():
        raise SystemExit(f"benchmark data not found: {path}")
    return path


def cached_kb_path(workdir: Path, name: str, sources: list[str]) -> Path:
    """Build a KB once per work directory (benchmarks rebuild nothing they do not measure), again when medlink's
    normaliser has changed since (a cached KB would measure the old one)."""
    path = workdir / f"{name}.sqlite"
    if not path.exists() or _normalizer_of(path) != normalize.signature:
        build_kb(path, sources, progress=False)
    return path


def _normalizer_of(path: Path) -> str:
    with KB.open(path) as kb:
        return kb.meta["normalizer"]


def cached_kb(workdir: Path, name: str, sources: list[str]) -> KB:
    return KB.open(cached_kb_path(workdir, name, sources))


def ncbi_split(split: str) -> str:
    return f"biosyn:{require(NCBI / f'processed_{split}')}"


def ncbi_kb(workdir: Path, dictionary: str = "train") -> KB:
    """``train``: MEDIC as BioSyn ships it (KB only); ``test``: + train and dev mentions (the published setting)."""
    return cached_kb(workdir, f"ncbi-{dictionary}-dictionary", [f"biosyn:{require(NCBI / f'{dictionary}_dictionary.txt')}"])


def aap_kb(workdir: Path) -> KB:
    return cached_kb(workdir, "askapatient-ontology", [f"askapatient:{require(AAP / 'askapatient_ontology.json')}"])


def aap_split(fold: int, split: str) -> str:
    return f"askapatient:{require(AAP / f'AskAPatient.fold-{fold}.{split}.txt')}"

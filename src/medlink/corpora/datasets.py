"""Labelled datasets by format: ``load_dataset("biosyn:PATH")`` picks the format's loader."""

from __future__ import annotations

from collections.abc import Callable

from medlink.corpora.askapatient import load_askapatient
from medlink.corpora.biosyn import load_biosyn
from medlink.corpora.mentions import LabeledMention
from medlink.corpora.pubtator import load_pubtator
from medlink.errors import MedlinkError

DATASET_FORMATS: dict[str, tuple[Callable[..., list[LabeledMention]], str]] = {
    "biosyn": (load_biosyn, "BioSyn processed_* directory of *.concept files (or one file): PMID||start|end||type||mention||ids"),
    "askapatient": (load_askapatient, "AskAPatient fold file, latin-1: concept_id<TAB>concept_name<TAB>mention"),
    "pubtator": (load_pubtator, "PubTator corpus: PMID|t|title, PMID|a|abstract, PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids"),
}


def load_dataset(spec: str, **options) -> list[LabeledMention]:
    """Load ``FORMAT:PATH`` (``biosyn:../shared/data/ncbi-disease/processed_test``) with that format's loader."""
    format_name, sep, path = spec.partition(":")
    if format_name not in DATASET_FORMATS or not sep or not path:
        known = "; ".join(f"{name} ({description})" for name, (_, description) in DATASET_FORMATS.items())
        problem = f"unknown dataset format {format_name!r}" if format_name not in DATASET_FORMATS else "no path given"
        raise MedlinkError(f"{problem} in {spec!r}: write FORMAT:PATH with one of the known formats: {known}")
    loader, _ = DATASET_FORMATS[format_name]
    return loader(path, **options)

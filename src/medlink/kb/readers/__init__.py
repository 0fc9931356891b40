"""One reader per source format, registered by name for ``medlink kb build FORMAT:PATH``.

A reader is a function ``read(path, *, prefix, policy) -> Iterator[Record]`` that streams
records (never the whole source in Python objects), namespaces the ids it owns with ``prefix``
(``medlink.kb.records.qualify``), hands malformed lines to ``policy.invalid(path, line, why)``, and says where it is
before yielding a line's (stanza's, XML record's) records: ``decoded_lines`` and ``rrf_rows`` do it per line, other
readers call ``files.mover(policy)``. ``read_source`` passes every record through ``checked.checked_records``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.checked import checked_records
from medlink.kb.readers.files import LocatedPolicy
from medlink.kb.records import Record

ReadFunction = Callable[..., Iterator[Record]]


@dataclass(frozen=True)
class ReaderSpec:
    """How to read one format: module:function, default id namespace, and whether PATH is a file or a directory."""

    name: str
    target: str  # "module:function" under medlink.kb.readers
    default_prefix: str
    path_kind: str  # "file", "dir" or "optional-file" (may be omitted: the packaged copy is used)
    description: str

    def load(self) -> ReadFunction:
        module, function = self.target.split(":")
        return getattr(import_module(f"medlink.kb.readers.{module}"), function)


READERS: dict[str, ReaderSpec] = {
    spec.name: spec
    for spec in [
        ReaderSpec("biosyn", "biosyn:read_biosyn", "", "file", "BioSyn/SapBERT dictionary 'ids||name[|name...]' (MEDIC)"),
        ReaderSpec("obo", "obo:read_obo", "", "file", "OBO 1.2 ontology (HPO, DO, MONDO); ids are already CURIEs"),
        ReaderSpec(
            "icd10cm",
            "icd10cm:read_icd10cm",
            "ICD10CM",
            "optional-file",
            "ICD-10-CM tabular XML (default: the copy shipped by simple-icd-10-cm)",
        ),
        ReaderSpec("umls", "umls:read_umls", "UMLS", "dir", "UMLS Metathesaurus META directory (MRCONSO, MRSTY, MRDEF, MRREL .RRF)"),
        ReaderSpec("snomed", "snomed:read_snomed", "SCTID", "dir", "SNOMED CT RF2 Snapshot directory (Terminology/sct2_*.txt)"),
        ReaderSpec("mesh", "mesh:read_mesh", "MESH", "file", "MeSH descriptor XML (descYYYY.xml)"),
        ReaderSpec(
            "askapatient", "askapatient:read_askapatient_ontology", "", "file", "AskAPatient ontology JSON {id: [[kind, name], ...]}"
        ),
        ReaderSpec("jsonl", "tabular:read_jsonl", "", "file", "medlink JSONL: one concept object per line (docs/kb-schema.md)"),
        ReaderSpec("tsv", "tabular:read_tsv", "", "file", "medlink TSV: one name per row, header id/name/kind/... (docs/kb-schema.md)"),
    ]
}


def read_source(format_name: str, path: Path | None, *, prefix: str, policy: InvalidLinePolicy) -> Iterator[Record]:
    """Stream the records of one source with the named reader, checked for control characters (``checked``)."""
    located = LocatedPolicy.around(policy)
    return checked_records(READERS[format_name].load()(path, prefix=prefix, policy=located), located)


__all__ = ["READERS", "ReaderSpec", "read_source", "InvalidLinePolicy"]

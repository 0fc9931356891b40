"""Mappings from one namespace's concepts to another's codes, as a coding mode walks them (HPO -> ICD-10-CM).

Why a module of its own: the default KB answers mostly with HPO ids, while a coder wants ICD-10-CM codes. medlink
ships its own HPO -> ICD-10-CM mappings beside the default KB (``data/hpo_icd10cm.sssom.tsv``, made with ``medlink
align`` by ``benchmarks/coding/make_mappings.py``, its provenance in the file's header), and the ICD-10-CM "code first"
notes that the KB reader leaves out (``data/icd10cm_code_first.tsv``). A user's own KB brings an SSSOM file of its own;
a KB's cross-references into the namespace count too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from medlink.errors import InputFormatError, MissingInputError

DATA = Path(__file__).resolve().with_name("data")
DEFAULT_MAPPINGS = DATA / "hpo_icd10cm.sssom.tsv"  # HP: -> ICD10CM:, for any KB holding both (the default KB)
CODE_FIRST = DATA / "icd10cm_code_first.tsv"  # ICD-10-CM 2026: code, the code whose note applies, the note
XREF = "xref"  # the predicate shown for a KB's own cross-reference
# what a KB's xref prefixes are called for a namespace: HPO writes WHO ICD-10 codes, which ICD-10-CM keeps at the category
XREF_PREFIXES = {"ICD10CM": ("ICD10CM", "ICD-10-CM", "ICD10", "ICD-10")}
USED = ("skos:exactMatch", "skos:closeMatch", "skos:broadMatch", "skos:narrowMatch", "owl:equivalentClass", "skos:relatedMatch")
__all__ = [
    "CODE_FIRST",
    "DEFAULT_MAPPINGS",
    "CodeMapping",
    "mapped_objects",
    "provenance",
    "read_code_first",
    "read_mappings",
    "xref_mappings",
]


@dataclass(frozen=True, slots=True)
class CodeMapping:
    """One way from a concept (``subject``) to a code (``object``): the SSSOM predicate, its confidence, how it was made
    (``justification``, ``comment``) and where it was read (``origin``: a file's name, or "KB xref")."""

    subject: str
    object: str
    predicate: str
    confidence: float
    justification: str = ""
    comment: str = ""
    origin: str = ""

    def evidence(self) -> dict:
        """What a coded candidate says of the mapping it came through."""
        out = {"mapping": self.predicate, "mapping_confidence": round(self.confidence, 4), "mapping_source": self.origin}
        if self.comment:
            out["mapping_comment"] = self.comment
        return out


def _data_lines(path: Path) -> Iterator[tuple[int, str]]:
    with open(path, encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip() and not line.startswith("#"):
                yield number, line.rstrip("\r\n")


def provenance(path: Path | str) -> dict[str, str]:
    """An SSSOM file's metadata block (``# key: value`` lines before the header): how, when and by what it was made."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8-sig") as handle:
        for line in handle:
            if not line.startswith("#"):
                break
            key, colon, value = line[1:].strip().partition(":")
            if colon and value.strip() and not key.startswith(" "):
                out[key.strip()] = value.strip().strip("'\"")
    return out


def read_mappings(path: Path | str, keep: Iterable[str] = USED) -> list[CodeMapping]:
    """The mapping rows of an SSSOM TSV (or a TSV of subject and object ids) whose predicate is in ``keep``: no
    NoTermFound row, no negated one; a row without a confidence counts as 1. A malformed row names file and line."""
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"mappings file not found: {path}")
    rows = _data_lines(path)
    first = next(rows, None)
    if first is None:
        return []
    header = first[1].split("\t")
    named = "subject_id" in header and "object_id" in header
    column = {name: i for i, name in enumerate(header)} if named else {"subject_id": 0, "object_id": 1}
    lines = rows if named else iter([first, *rows])
    kept, out = set(keep), []
    for number, line in lines:
        cells = line.split("\t")  # what csv's reader gives a tab-separated line without quoting, at a fraction of its cost
        if len(cells) < 2 or (named and len(cells) != len(header)):
            raise InputFormatError(path, number, f"{len(cells)} fields, expected {len(header) if named else 'at least 2'}")
        values = {name: cells[i].strip() for name, i in column.items()}
        value = lambda name, default="", values=values: values.get(name, default)  # noqa: E731
        predicate = value("predicate_id", "skos:exactMatch")
        if predicate not in kept or value("object_id") == "sssom:NoTermFound" or value("predicate_modifier") == "Not":
            continue
        try:
            confidence = float(value("confidence") or 1.0)
        except ValueError:
            raise InputFormatError(path, number, f"confidence {value('confidence')!r} is not a number") from None
        out.append(
            CodeMapping(
                value("subject_id"), value("object_id"), predicate, confidence, value("mapping_justification"), value("comment"), path.name
            )
        )
    return out


def mapped_objects(path: Path | str, predicates: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Subject -> the objects it maps to by one of ``predicates``, from an SSSOM TSV with its header (negated rows left
    out): what telling rivals apart needs at the first link of a process, read without ``read_mappings``' checks and
    objects, a fifth of its time."""
    with open(path, encoding="utf-8-sig") as handle:
        lines = [line for line in handle.read().split("\n") if line.strip() and not line.startswith("#")]
    header = lines[0].rstrip("\r").split("\t") if lines else []
    if not {"subject_id", "predicate_id", "object_id"} <= set(header):
        return _grouped((m.subject, m.object) for m in read_mappings(path, predicates))
    subject, predicate, target = (header.index(name) for name in ("subject_id", "predicate_id", "object_id"))
    negated = header.index("predicate_modifier") if "predicate_modifier" in header else None
    kept = set(predicates)
    pairs = []
    for line in lines[1:]:
        cells = line.rstrip("\r").split("\t")
        if len(cells) == len(header) and cells[predicate].strip() in kept and (negated is None or cells[negated].strip() != "Not"):
            pairs.append((cells[subject].strip(), cells[target].strip()))
    return _grouped(pair for pair in pairs if pair[1] != "sssom:NoTermFound")


def _grouped(pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for subject, target in pairs:
        out.setdefault(subject, []).append(target)
    return {subject: tuple(targets) for subject, targets in out.items()}


def xref_mappings(xrefs: Iterable[tuple[str, str]], namespace: str, codes: set[str]) -> list[CodeMapping]:
    """A KB's own cross-references (concept, xref) that name a code of ``namespace`` the KB has ("ICD-10:Q21.1" in HPO
    -> ICD10CM:Q21.1)."""
    prefixes = {p.upper() for p in XREF_PREFIXES.get(namespace.upper(), (namespace,))}
    out = []
    for concept, xref in xrefs:
        prefix, _, local = xref.partition(":")
        code = f"{namespace}:{local.strip()}"
        if prefix.upper() in prefixes and code in codes and not concept.startswith(f"{namespace}:"):
            out.append(CodeMapping(concept, code, XREF, 1.0, "semapv:ManualMappingCuration", f"the KB's xref {xref}", "KB xref"))
    return out


def read_code_first(path: Path | str = CODE_FIRST) -> dict[str, tuple[str, str]]:
    """ICD-10-CM's "code first" notes by code (``ICD10CM:N16.`` style ids): (the code that carries the note, the note)."""
    path = Path(path)
    if not path.is_file():
        return {}
    out = {}
    for _number, line in _data_lines(path):
        code, holder, note = (line.split("\t") + ["", ""])[:3]
        if code != "code":
            out[code] = (holder, note.replace("\\n", "\n"))
    return out

"""SSSOM TSV out (and back in, for ``kb augment`` and gold files): the mapping format terminology teams exchange.

Written by hand, following the SSSOM conventions the ``sssom`` package checks (``sssom validate``): a YAML metadata
block of ``#`` lines (curie_map, mapping_set_id, license, tool, sources), then one row per mapping with CURIE ids,
``skos:exactMatch`` for a source's best target (broadMatch / narrowMatch when it reads as broader / narrower:
``align.predicates``) and ``skos:closeMatch`` for the runners-up kept, a semapv justification and a confidence; a
source with nothing above the threshold gets one ``sssom:NoTermFound`` row. The ``sssom`` package itself (linkml,
pandas, rdflib...) is far heavier than medlink's core, so it is only a test / extra dependency (``pip install
'medlink[align]'``). Ids a KB keeps without a prefix (MEDIC's "D003924") are written with
the side's prefix (``MEDIC:D003924``) and resolved back without it. A local part with characters a CURIE may not hold
(a space, "|", a non-ASCII letter, a URI's "://") is percent-encoded (``LOCAL:A%2001`` for "A 01"), because sssom
silently drops a row whose id is neither a CURIE nor a URI; an id that is itself a well-formed absolute URI is written as
it is. Reading decodes, so every id comes back as the KB keeps it. Each side's ``subject_source`` / ``object_source``
is an entity reference, ``medlinkkb:STEM`` (https://w3id.org/medlink/kb/STEM), so ``sssom convert -O rdf|owl`` works.
"""

from __future__ import annotations

import csv
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

from medlink.directories import replaced_file
from medlink.errors import InputFormatError, MissingInputError

SIGNATURE = "# mapping_tool: medlink"  # how an SSSOM file medlink wrote is recognised (outputs only replace their own kind)
EXACT, CLOSE, BROAD, NARROW = "skos:exactMatch", "skos:closeMatch", "skos:broadMatch", "skos:narrowMatch"
NO_TERM = "sssom:NoTermFound"
LEXICAL, SEMANTIC = "semapv:LexicalMatching", "semapv:SemanticSimilarityThresholdMatching"
COLUMNS = (
    "subject_id",
    "subject_label",
    "predicate_id",
    "object_id",
    "object_label",
    "mapping_justification",
    "confidence",
    "subject_source",
    "object_source",
    "comment",
)
KNOWN_PREFIXES = {
    "DOID": "http://purl.obolibrary.org/obo/DOID_",
    "HP": "http://purl.obolibrary.org/obo/HP_",
    "MONDO": "http://purl.obolibrary.org/obo/MONDO_",
    "ICD10CM": "http://purl.bioontology.org/ontology/ICD10CM/",
    "MESH": "http://id.nlm.nih.gov/mesh/",
    "OMIM": "https://omim.org/entry/",
    "UMLS": "https://uts.nlm.nih.gov/uts/umls/concept/",
    "SNOMEDCT": "http://snomed.info/id/",
    "NCIT": "http://purl.obolibrary.org/obo/NCIT_",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "semapv": "https://w3id.org/semapv/vocab/",
    "sssom": "https://w3id.org/sssom/",
    "medlinkkb": "https://w3id.org/medlink/kb/",
}
SOURCE_PREFIX = "medlinkkb"  # subject_source / object_source: the KB a side came from, by its name's stem
PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")  # what both an XML NCName and sssom's own CURIE pattern accept
URI_CHARS = r"[A-Za-z0-9\-._~:/?@!$&'()*+,;=%]"  # RFC 3986's unreserved, reserved but "#[]", and escapes
URI = re.compile(rf"[A-Za-z][A-Za-z0-9+.-]*://{URI_CHARS}+(?:#{URI_CHARS}*)?")  # at most one fragment


@dataclass
class Mapping:
    subject_id: str
    subject_label: str
    predicate_id: str
    object_id: str
    object_label: str
    justification: str
    confidence: float | None
    comment: str = ""


def is_uri(identifier: str) -> bool:
    """Is the id a well-formed absolute URI (written as it is: sssom keeps it, and it needs no prefix)?"""
    return URI.fullmatch(identifier) is not None and all(re.match(r"[0-9A-Fa-f]{2}", part) for part in identifier.split("%")[1:])


def curie(identifier: str, default_prefix: str) -> str:
    """A CURIE for an id (a well-formed URI stays as it is): its own prefix when it has a valid one, else
    ``default_prefix``; the local part percent-encoded except for letters, digits and "-._~" (``resolve`` decodes)."""
    if is_uri(identifier):
        return identifier
    prefix, sep, local = identifier.partition(":")
    if sep and local and PREFIX.fullmatch(prefix) and not local.startswith("//"):  # "http://x/a b" is no CURIE of "http"
        return f"{prefix}:{quote(local, safe='')}"
    return f"{default_prefix}:{quote(identifier, safe='')}"


def source_reference(name: str) -> str:
    """A side's ``subject_source`` / ``object_source``: ``medlinkkb:`` and the KB's name without its extensions
    ("doid.obo", "do.sqlite" -> ``medlinkkb:doid``, ``medlinkkb:do``); an entity reference already is kept."""
    if is_uri(name) or name.startswith(f"{SOURCE_PREFIX}:"):
        return name
    stem = Path(name.removesuffix(".gz")).stem or name
    return f"{SOURCE_PREFIX}:{quote(stem, safe='')}"


def prefix_of(reference: str) -> str | None:
    """The CURIE prefix of a written id (None for a URI)."""
    return None if is_uri(reference) else reference.split(":", 1)[0]


def _expansion(prefix: str) -> str:
    return KNOWN_PREFIXES.get(prefix) or f"https://w3id.org/medlink/prefix/{prefix}/"


def render(
    mappings: list[Mapping],
    *,
    subject_source: str,
    object_source: str,
    subject_prefix: str,
    object_prefix: str,
    metadata: dict[str, str] | None = None,
) -> str:
    """The whole SSSOM TSV text (metadata block, header, rows)."""
    from importlib.metadata import version

    subject_source, object_source = source_reference(subject_source), source_reference(object_source)
    rows = [
        (
            curie(m.subject_id, subject_prefix),
            m.subject_label,
            m.predicate_id,
            m.object_id if m.object_id == NO_TERM else curie(m.object_id, object_prefix),
            m.object_label,
            m.justification,
            "" if m.confidence is None else f"{m.confidence:.4f}",
            subject_source,
            object_source,
            m.comment,
        )
        for m in mappings
    ]
    used = {prefix_of(r[i]) for r in rows for i in (0, 3, 7, 8)} | {"skos", "semapv", "sssom"}
    prefixes = sorted(p for p in used if p)
    lines = [
        "# curie_map:",
        *(f"#   {p}: {_expansion(p)}" for p in prefixes),
        f"# mapping_set_id: https://w3id.org/medlink/mappings/{subject_prefix.lower()}-to-{object_prefix.lower()}",
        "# license: https://creativecommons.org/publicdomain/zero/1.0/",
        SIGNATURE,
        f"# mapping_tool_version: {version('medlink')}",
        f"# mapping_date: {time.strftime('%Y-%m-%d')}",
        *(f"# {key}: {_yaml_scalar(value)}" for key, value in (metadata or {}).items()),
    ]
    body = ["\t".join(COLUMNS), *("\t".join(_cell(c) for c in row) for row in rows)]
    return "\n".join(lines + body) + "\n"


def write(path: Path, text: str) -> Path:
    """Rendered SSSOM text to ``path``, atomically: one writer at a time, and a killed writer's temporary file removed
    (``medlink align --out`` killed mid-write leaves the previous file or none, and the next run tidies up)."""
    with replaced_file(Path(path)) as out:
        out.write(text)
    return Path(path)


def _yaml_scalar(value: str) -> str:
    text = str(value).replace("\n", " ")
    return "'" + text.replace("'", "''") + "'"


def _cell(value: str) -> str:
    return " ".join(str(value).replace("\t", " ").split())


def is_medlink_sssom(path: Path) -> bool:
    """Did medlink write this file (its metadata block names medlink as the mapping tool)?"""
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.startswith("#"):
                    return False
                if line.strip() == SIGNATURE:
                    return True
    except (OSError, UnicodeDecodeError):
        return False
    return False


@dataclass
class ReadMapping:
    line: int
    subject_id: str
    predicate_id: str
    object_id: str
    confidence: float | None
    justification: str
    negated: bool = False  # predicate_modifier "Not": the subject is NOT the predicate of the object


def utf8_lines(binary: Iterable[bytes], path: Path) -> Iterator[str]:
    """The lines of a file opened in binary, decoded as UTF-8 (a leading BOM dropped); a line that is not UTF-8 is an
    error naming the file, the line and the byte offset, not a UnicodeDecodeError traceback."""
    offset = 0
    for lineno, line in enumerate(binary, 1):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputFormatError(
                path, lineno, f"not UTF-8 (byte 0x{line[error.start]:02x} at byte offset {offset + error.start}): save the file as UTF-8"
            ) from None
        yield text.removeprefix("\ufeff") if lineno == 1 else text
        offset += len(line)


def read_sssom(path: Path | str) -> Iterator[ReadMapping]:
    """The mapping rows of an SSSOM TSV (metadata lines skipped); a malformed row names file, line and field."""
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"SSSOM file not found: {path}")
    with open(path, "rb") as binary:
        handle = utf8_lines(binary, path)
        lineno, header = 0, None
        for raw in handle:
            lineno += 1
            if raw.startswith("#") or not raw.strip():
                continue
            header = raw.rstrip("\r\n").split("\t")
            break
        if header is None:
            raise InputFormatError(path, None, "no header row (subject_id, predicate_id, object_id, ...): not an SSSOM TSV")
        missing = [c for c in ("subject_id", "predicate_id", "object_id") if c not in header]
        if missing:
            raise InputFormatError(path, lineno, f"the header lacks {', '.join(missing)}: not an SSSOM TSV")
        column = {name: i for i, name in enumerate(header)}
        for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            lineno += 1
            if not row or not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise InputFormatError(path, lineno, f"{len(row)} fields, the header has {len(header)}")
            values = {name: row[i].strip() for name, i in column.items()}
            for name in ("subject_id", "predicate_id", "object_id"):
                if ":" not in values[name]:
                    raise InputFormatError(path, lineno, f"{name} {values[name]!r} is not a CURIE (PREFIX:ID)")
            confidence = None
            if values.get("confidence"):
                try:
                    confidence = float(values["confidence"])
                except ValueError:
                    raise InputFormatError(path, lineno, f"confidence {values['confidence']!r} is not a number") from None
                if not 0.0 <= confidence <= 1.0:
                    raise InputFormatError(path, lineno, f"confidence {confidence} is outside [0, 1]")
            yield ReadMapping(
                lineno,
                values["subject_id"],
                values["predicate_id"],
                values["object_id"],
                confidence,
                values.get("mapping_justification", ""),
                values.get("predicate_modifier", "") == "Not",
            )


def resolve(kb, identifier: str) -> str | None:
    """A mapping's id in ``kb``: the CURIE itself, else its local part (an id the KB keeps without prefix); decoded
    first (``curie`` percent-encodes), then as written (files from before the encoding, other tools' files)."""
    for text in dict.fromkeys((unquote(identifier), identifier)):
        local = text.partition(":")[2]
        found = kb.resolve(text) or (kb.resolve(local) if local else None)
        if found is not None:
            return found
    return None


def read_gold(path: Path | str, source, target) -> dict[str, set[str]]:
    """Known mappings for training: an SSSOM TSV (its rows other than NoTermFound), or a TSV of subject and object ids
    (first two columns; a header line is skipped). Ids are resolved in the two KBs; unknown ones are errors."""
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"gold mappings file not found: {path}")
    with open(path, "rb") as binary:
        first = next((line for line in utf8_lines(binary, path) if not line.startswith("#") and line.strip()), "")
    if {"subject_id", "predicate_id", "object_id"} <= set(first.rstrip("\r\n").split("\t")):
        pairs = [(m.line, m.subject_id, m.object_id) for m in read_sssom(path) if m.object_id != NO_TERM and not m.negated]
    else:
        pairs = []
        with open(path, "rb") as binary:
            for lineno, line in enumerate(utf8_lines(binary, path), 1):
                cells = line.rstrip("\r\n").split("\t")
                if line.startswith("#") or not line.strip() or (lineno == 1 and cells[0].strip() == "subject_id"):
                    continue
                if len(cells) < 2 or not cells[1].strip():
                    raise InputFormatError(path, lineno, "expected 'subject id<TAB>object id'")
                pairs.append((lineno, cells[0].strip(), cells[1].strip()))
    gold: dict[str, set[str]] = {}
    for lineno, subject, obj in pairs:
        s, o = resolve(source, subject), resolve(target, obj)
        if s is None or o is None:
            which = f"subject_id {subject!r} is not in {source.path}" if s is None else f"object_id {obj!r} is not in {target.path}"
            raise InputFormatError(path, lineno, which)
        gold.setdefault(s, set()).add(o)
    if not gold:
        raise InputFormatError(path, None, "no mapping in it")
    return gold

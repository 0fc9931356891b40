"""UMLS Metathesaurus reader: streams MRCONSO (names), MRSTY (types), MRDEF (definitions), MRREL
(relations) and MRCUI (retired CUIs) from a META directory in Rich Release Format.

Files are read one line at a time (real MRCONSO has ~16M rows). The only state kept across rows:

* a 10 MB ``bytearray`` marking which CUIs kept at least one name (CUIs are ``C`` + 7 digits, so
  the CUI number indexes it; any other id goes to a small fallback set). It lets types,
  definitions and relations be kept only for concepts that are in the KB once the language, SAB,
  TTY and SUPPRESS filters have been applied, instead of emitting millions of orphan records;
* the set of SABs that contributed a kept name (a few hundred strings), so that with the default
  ``languages=("ENG",)`` only definitions from English sources are kept;
* per-CUI scratch (the xref codes already emitted, the fallback preferred name), reset whenever
  the CUI changes: rows are grouped by CUI in every RRF file.

Reading direction of MRREL: a row ``CUI1 REL CUI2 RELA`` says that *CUI2* has relation REL/RELA to
*CUI1* (``REL=PAR``: CUI2 is a parent of CUI1; ``CHD ... RELA=isa``: CUI2 isa CUI1). Records are
emitted so that ``head relation tail`` reads correctly: ``PAR`` -> ``CUI1 is_a CUI2``,
``RB`` -> ``CUI1 broader CUI2`` (SKOS sense: the tail is broader), any other row ->
``CUI2 RELA CUI1`` (``RELA`` or else ``REL`` lowercased). Inverse rows are dropped: ``CHD`` and
``RN`` always, and for other relations the row whose ``DIR`` is ``N`` (the source asserted the
other direction, which MRREL also carries).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path

from medlink.errors import MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import as_set, mover
from medlink.kb.readers.rrf import rrf_rows
from medlink.kb.records import (
    ABBREVIATION,
    IS_A,
    PREFERRED,
    REPLACED_BY,
    SYNONYM,
    ConceptRecord,
    IdAliasRecord,
    NameRecord,
    Record,
    RelationRecord,
    TypeRecord,
    XrefRecord,
)

SOURCE = "UMLS"

ABBREVIATION_TTYS = frozenset({"AB", "ACR", "AA", "AM"})
SUPPRESSED = frozenset({"O", "E", "Y"})
# Relations never emitted: inverses of emitted ones (CHD, RN), siblings (derivable from PAR and
# huge), MeSH qualifier pairings (AQ, QB), "not related" (XR) and deleted (DEL).
DEFAULT_SKIPPED_RELS = frozenset({"CHD", "RN", "SIB", "AQ", "QB", "XR", "DEL"})

# UMLS LAT (ISO 639-2/B-like) -> ISO 639-1 where there is one; anything else is lowercased.
LANGUAGES = dict(
    code.split(":")
    for code in (
        "ENG:en SPA:es FRE:fr GER:de ITA:it POR:pt DUT:nl JPN:ja CHI:zh RUS:ru SWE:sv CZE:cs KOR:ko POL:pl NOR:no HUN:hu FIN:fi "
        "DAN:da TUR:tr GRE:el HEB:he ARA:ar LAV:lv EST:et HRV:hr SCR:hr BAQ:eu UKR:uk CAT:ca FAS:fa PER:fa LIT:lt SLV:sl SLO:sk ISL:is"
    ).split()
)


# Number of fields per file (without the empty string after the final '|').
_NF_MRCONSO = 18
_NF_MRSTY = 6
_NF_MRDEF = 8
_NF_MRREL = 16
_NF_MRCUI = 7


class _CuiSet:
    """Membership of CUIs: a byte per possible ``C#######`` number, a set for anything else."""

    __slots__ = ("_flags", "_other")

    def __init__(self) -> None:
        self._flags = bytearray(10_000_000)
        self._other: set[str] = set()

    def add(self, cui: str) -> None:
        digits = cui[1:]
        if len(cui) == 8 and cui[0] == "C" and digits.isdecimal():
            self._flags[int(digits)] = 1
        else:
            self._other.add(cui)

    def __contains__(self, cui: str) -> bool:
        digits = cui[1:]
        if len(cui) == 8 and cui[0] == "C" and digits.isdecimal():
            return self._flags[int(digits)] == 1
        return cui in self._other


def _meta_dir(path: str | Path | None) -> Path:
    if path is None:
        raise MissingInputError("the umls reader needs a UMLS META directory (containing MRCONSO.RRF)")
    path = Path(path)
    if not path.exists():
        raise MissingInputError(f"UMLS META directory not found: {path}")
    if not path.is_dir():
        raise MissingInputError(f"UMLS input must be a META directory, not a file: {path}")
    if not _find(path, "MRCONSO.RRF") and (path / "META").is_dir():
        return path / "META"
    return path


def _find(meta: Path, name: str) -> Path | None:
    """The RRF file, or its gzipped copy, or None."""
    for candidate in (meta / name, meta / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def read_umls(
    path: str | Path | None,
    *,
    prefix: str = "UMLS",
    policy: InvalidLinePolicy | None = None,
    languages: Iterable[str] | str | None = ("ENG",),
    sabs: Iterable[str] | str | None = None,
    ttys: Iterable[str] | str | None = None,
    keep_suppressed: bool = False,
    relations: bool = True,
    definitions: bool = True,
    types: bool = True,
    aliases: bool = True,
    only_named_concepts: bool = True,
    skip_rels: Iterable[str] = DEFAULT_SKIPPED_RELS,
) -> Iterator[Record]:
    """Stream the records of a UMLS META directory (or of the directory that contains ``META/``).

    Options:
        languages: LAT values to keep (``None``: all). The preferred name of a concept comes from
            the first language listed (``ENG`` when ``None``).
        sabs: source abbreviations to keep (``None``: all); applies to names, definitions, relations.
        ttys: term types to keep (``None``: all).
        keep_suppressed: keep atoms, definitions and relations whose SUPPRESS is O, E or Y.
        relations / definitions / types / aliases: read MRREL / MRDEF / MRSTY / MRCUI (when present).
        only_named_concepts: emit types, definitions, relations and aliases only for CUIs that
            kept at least one name in MRCONSO (default), so filters do not leave orphan records.
        skip_rels: MRREL REL values never emitted (default: CHD, RN, SIB, AQ, QB, XR, DEL).

    MRCONSO.RRF is required; the other files are read when present (plain or ``.gz``). A missing
    directory or MRCONSO raises ``MissingInputError`` at call time; records stream lazily.
    """
    policy = policy if policy is not None else InvalidLinePolicy()
    meta = _meta_dir(path)
    mrconso = _find(meta, "MRCONSO.RRF")
    if mrconso is None:
        raise MissingInputError(f"UMLS MRCONSO.RRF not found in {meta}")
    language_set = as_set(languages)
    if languages is None:
        primary = "ENG"
    elif isinstance(languages, str):
        primary = languages
    elif isinstance(languages, (list, tuple)):
        primary = languages[0] if languages else "ENG"
    else:  # an unordered collection: English if listed, else any, deterministically
        primary = "ENG" if "ENG" in language_set else min(language_set, default="ENG")
    sab_set = as_set(sabs)
    drop_suppress = frozenset() if keep_suppressed else SUPPRESSED
    kept = _CuiSet() if only_named_concepts else None
    kept_sabs: set[str] = set()

    parts: list[Iterator[Record]] = [
        _read_mrconso(mrconso, prefix, policy, language_set, primary, sab_set, as_set(ttys), drop_suppress, kept, kept_sabs)
    ]
    # Generators run lazily, in order: MRCONSO has filled ``kept`` and ``kept_sabs`` before the others start.
    if types and (mrsty := _find(meta, "MRSTY.RRF")):
        parts.append(_read_mrsty(mrsty, prefix, policy, kept))
    if definitions and (mrdef := _find(meta, "MRDEF.RRF")):
        parts.append(_read_mrdef(mrdef, prefix, policy, kept_sabs, drop_suppress, kept))
    if relations and (mrrel := _find(meta, "MRREL.RRF")):
        parts.append(_read_mrrel(mrrel, prefix, policy, sab_set, drop_suppress, kept, frozenset(skip_rels)))
    if aliases and (mrcui := _find(meta, "MRCUI.RRF")):
        parts.append(_read_mrcui(mrcui, prefix, policy, kept))
    return chain.from_iterable(parts)


def _read_mrconso(
    path: Path,
    prefix: str,
    policy: InvalidLinePolicy,
    languages: frozenset[str] | None,
    primary: str,
    sabs: frozenset[str] | None,
    ttys: frozenset[str] | None,
    drop_suppress: frozenset[str],
    kept: _CuiSet | None,
    kept_sabs: set[str],
) -> Iterator[Record]:
    # Locals for the per-row path.
    abbreviations = ABBREVIATION_TTYS
    facets: dict[tuple[str, str, str], tuple[str, str]] = {}  # (LAT, SAB, TTY) -> (lang, scope)
    Name = NameRecord
    Xref = XrefRecord

    last_cui = None
    cid = ""
    pref_done = True  # no group open yet
    fallback = None  # best non-Y preferred-looking atom of the current CUI: (rank, text)
    codes: set[str] = set()
    move = mover(policy)
    named_at = 0  # line of the last row kept: where a CUI without a preferred atom is named from, for the record check

    for lineno, parts in rrf_rows(path, _NF_MRCONSO, "MRCONSO", policy):
        lat = parts[1]
        if languages is not None and lat not in languages:
            continue
        if parts[16] in drop_suppress:
            continue
        sab = parts[11]
        if sabs is not None and sab not in sabs:
            continue
        tty = parts[12]
        if ttys is not None and tty not in ttys:
            continue
        cui = parts[0]
        text = parts[14]
        if not cui or not text:
            policy.invalid(path, lineno, "expected a non-empty CUI (field 1) and STR (field 15) (MRCONSO)")
            continue

        if cui != last_cui:
            if not pref_done:
                # The previous CUI had no kept preferred atom: name it from the best fallback (a record of its last row).
                move(path, named_at)
                yield ConceptRecord(cid, fallback[1] if fallback else None, SOURCE)
                move(path, lineno)
            last_cui = cui
            cid = f"{prefix}:{cui}" if prefix else cui
            pref_done = False
            fallback = None
            codes.clear()
            if kept is not None:
                kept.add(cui)

        if tty in abbreviations:
            kind = ABBREVIATION
        elif not pref_done and parts[2] == "P" and lat == primary:
            if parts[4] == "PF" and parts[6] == "Y":
                kind = PREFERRED
                pref_done = True
                yield ConceptRecord(cid, text, SOURCE)
            else:
                rank = 2 if parts[4] == "PF" else 1
                if fallback is None or rank > fallback[0]:
                    fallback = (rank, text)
                kind = SYNONYM
        else:
            kind = SYNONYM

        key = (lat, sab, tty)
        cached = facets.get(key)
        if cached is None:
            cached = facets[key] = (LANGUAGES.get(lat) or lat.lower(), f"{sab}/{tty}")
            kept_sabs.add(sab)
        yield Name(cid, text, kind, cached[1], cached[0], sab)
        named_at = lineno

        code = parts[13]
        if code and code != "NOCODE":
            xref = f"{sab}:{code}"
            if xref not in codes:
                codes.add(xref)
                yield Xref(cid, xref)

    if not pref_done:
        move(path, named_at)
        yield ConceptRecord(cid, fallback[1] if fallback else None, SOURCE)


def _read_mrsty(path: Path, prefix: str, policy: InvalidLinePolicy, kept: _CuiSet | None) -> Iterator[Record]:
    last_cui = None
    cid = ""
    keep = True
    for lineno, parts in rrf_rows(path, _NF_MRSTY, "MRSTY", policy):
        cui = parts[0]
        sty = parts[3]
        if not cui or not sty:
            policy.invalid(path, lineno, "expected a non-empty CUI (field 1) and STY (field 4) (MRSTY)")
            continue
        if cui != last_cui:
            last_cui = cui
            cid = f"{prefix}:{cui}" if prefix else cui
            keep = kept is None or cui in kept
        if keep:
            yield TypeRecord(cid, sty)


def _read_mrdef(
    path: Path,
    prefix: str,
    policy: InvalidLinePolicy,
    kept_sabs: set[str],
    drop_suppress: frozenset[str],
    kept: _CuiSet | None,
) -> Iterator[Record]:
    """The first definition of each CUI from a SAB that contributed kept names."""
    done_cui = None  # last CUI that got its definition (MRDEF is grouped by CUI)
    for lineno, parts in rrf_rows(path, _NF_MRDEF, "MRDEF", policy):
        cui = parts[0]
        if cui == done_cui:
            continue
        text = parts[5]
        if not cui or not text:
            policy.invalid(path, lineno, "expected a non-empty CUI (field 1) and DEF (field 6) (MRDEF)")
            continue
        if parts[6] in drop_suppress or parts[4] not in kept_sabs:
            continue
        if kept is not None and cui not in kept:
            done_cui = cui
            continue
        done_cui = cui
        yield ConceptRecord(f"{prefix}:{cui}" if prefix else cui, definition=text)


def _read_mrrel(
    path: Path,
    prefix: str,
    policy: InvalidLinePolicy,
    sabs: frozenset[str] | None,
    drop_suppress: frozenset[str],
    kept: _CuiSet | None,
    skip_rels: frozenset[str],
) -> Iterator[Record]:
    last_cui1 = None
    keep1 = True
    seen: set[tuple[str, str, str]] = set()  # relations already emitted for the current CUI1
    for _, parts in rrf_rows(path, _NF_MRREL, "MRREL", policy):
        rel = parts[3]
        if rel in skip_rels or parts[14] in drop_suppress:
            continue
        cui1 = parts[0]
        cui2 = parts[4]
        if not cui1 or not cui2 or cui1 == cui2:
            continue  # self relations; MRREL also has rows without CUIs (atom-level leftovers)
        if sabs is not None and parts[10] not in sabs:
            continue
        if cui1 != last_cui1:
            last_cui1 = cui1
            seen.clear()
            keep1 = kept is None or cui1 in kept
        if not keep1 or (kept is not None and cui2 not in kept):
            continue
        if rel == "PAR":
            key = (cui1, IS_A, cui2)
        elif rel == "RB":
            key = (cui1, "broader", cui2)
        else:
            if parts[13] == "N":
                continue  # the source asserted the inverse row, which is emitted instead
            key = (cui2, parts[7] or rel.lower(), cui1)
        if key in seen:
            continue
        seen.add(key)
        head, relation, tail = key
        if prefix:
            head = f"{prefix}:{head}"
            tail = f"{prefix}:{tail}"
        yield RelationRecord(head, relation, tail, parts[10])


def _read_mrcui(path: Path, prefix: str, policy: InvalidLinePolicy, kept: _CuiSet | None) -> Iterator[Record]:
    """Retired CUIs merged into a current one (REL ``SY``, MAPIN ``Y``) become id aliases."""
    for _, parts in rrf_rows(path, _NF_MRCUI, "MRCUI", policy):
        if parts[2] != "SY" or parts[6] != "Y":
            continue
        old, new = parts[0], parts[5]
        if not old or not new or old == new or (kept is not None and new not in kept):
            continue
        if prefix:
            old, new = f"{prefix}:{old}", f"{prefix}:{new}"
        yield IdAliasRecord(old, new, REPLACED_BY)

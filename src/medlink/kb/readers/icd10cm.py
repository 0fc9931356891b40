"""ICD-10-CM tabular XML (the CMS ``icd10cm-tabular-*.xml``).

The hierarchy chapter > block (section) > category > subcategory becomes ``is_a`` relations;
titles are preferred names; inclusion terms, and a code's "Includes" notes that name a condition rather than describe
the code's scope (I10's "high blood pressure"; not "any condition classifiable to ..."), are names of kind ``inclusion``; a
name's closing bracket that abbreviates it all ("acquired immune deficiency syndrome [AIDS]") is an ``abbreviation``; Excludes1 /
Excludes2 notes become ``excludes1`` / ``excludes2`` relations to the codes they cite (related
but different conditions, useful later as hard negatives). Codes that take a 7th character
(``sevenChrDef``) are expanded as the official code list does (S52.501 -> S52.501A ...), their
names being the parent title joined with the 7th-character meaning: the "title concatenation"
of Kong et al. (2021). A block title also gets a name without its code range.

Ids follow simple-icd-10-cm (chapters "1".."22", blocks "A00-A09", codes with their dot), namespaced
``ICD10CM:`` by default, with one exception: a block of a single category ("B99") is written
"B99-B99" so that it stays a concept distinct from the category. 7th-character codes are checked
against the official code list shipped beside the XML (``code-list-*.txt``) when there is one, as
some combinations do not exist. The 2026 release gives 98,505 concepts, the package's count.
"""

from __future__ import annotations

import importlib.util
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from medlink.errors import MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import TagLines, mover, require_file
from medlink.kb.records import (
    ABBREVIATION,
    INCLUSION,
    IS_A,
    PREFERRED,
    SYNONYM,
    ConceptRecord,
    NameRecord,
    Record,
    RelationRecord,
    TypeRecord,
    qualify,
)
from medlink.text.abbreviations import find_abbreviations

# ICD-10-CM's seventh-character qualifiers as normalised names end ("... initial encounter for open fracture",
# "... sequela"): the episode of care, not the condition. Read by the dense stage and the aligner's bi-encoder, which
# embed each condition once without it.
EPISODE_OF_CARE = r" (?:initial|subsequent) encounter(?: for .*)?$| sequela$"

_RANGE_SUFFIX = re.compile(r"\s*\(([A-Z][0-9][0-9A-Z](?:\.[0-9A-Z]+)?-[A-Z][0-9][0-9A-Z](?:\.[0-9A-Z]+)?|[A-Z][0-9][0-9A-Z])\)\s*$")
_PARENTHESISED = re.compile(r"\(([^()]*)\)")
_CODE = r"[A-Z][0-9][0-9A-Z](?:\.[0-9A-Z]{1,4})?"
_CITED = re.compile(rf"^({_CODE})(?:\.?-)?(?:-({_CODE}))?-?$")
_NODE_OPEN = re.compile(r"<(?:chapter|section|diag)(?=[\s/>])")
_NOTE_CONTAINERS = {"inclusionTerm", "includes", "excludes1", "excludes2"}
_DESCRIBES = re.compile(
    r"^(?:any|all|the listed)\b|classifiable|classified|:", re.IGNORECASE
)  # "any condition classifiable to ...": a description
SOURCE = "ICD-10-CM"
READER_VERSION = 5  # what a KB read from the XML holds (2: a code's Includes notes among its names; 3: a bracketed abbreviation
# of a whole name, "[AIDS]", a name too; 4: one with a sign too, "[ER+]"; 5: a manifestation code's inclusion terms say "in
# diseases classified elsewhere"): a default KB built before is rebuilt
# a manifestation code's title ends so ("Renal tubulo-interstitial disorders in diseases classified elsewhere"): its
# inclusion terms ("Pyelonephritis") name the condition only where another disease causes it, and ICD-10-CM never lists it first
_MANIFESTATION = re.compile(r"\bin (?:[\w(),-]+ )*?(?:diseases|disorders|conditions) classified elsewhere$", re.IGNORECASE)
_QUALIFIED = re.compile(r"\b(?:in|due to)\b|elsewhere", re.IGNORECASE)  # an inclusion term that says its own context
TITLE_CONCATENATION = "title concatenation"  # scope of a name made of the parent title + a sub-specifier


def packaged_tabular_xml() -> Path:
    """The ICD-10-CM tabular XML shipped by the installed ``simple-icd-10-cm`` package (newest if several)."""
    spec = importlib.util.find_spec("simple_icd_10_cm")  # locate without importing: its import parses the whole XML
    if spec is None or not spec.submodule_search_locations:
        raise MissingInputError("the ICD-10-CM default needs the 'simple-icd-10-cm' package (pip install simple-icd-10-cm)")
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    candidates = sorted(data.glob("icd10c*.xml"))
    if not candidates:
        raise MissingInputError(f"no ICD-10-CM tabular XML found in {data}")
    return candidates[-1]


def official_code_list(xml_path: Path) -> set[str] | None:
    """Valid codes (without dots) from a ``code-list-*.txt`` beside the tabular XML, if present."""
    lists = sorted(xml_path.parent.glob("code-list-*.txt"))
    if not lists:
        return None
    with open(lists[-1], encoding="utf-8") as lines:
        return {line.split()[0].replace(".", "") for line in lines if line.strip()}


def block_id(section_id: str) -> str:
    """A block's id: its code range; a single-category block "B99" becomes "B99-B99" (distinct from the category)."""
    return section_id if "-" in section_id else f"{section_id}-{section_id}"


def cited_codes(note: str) -> list[str]:
    """Codes cited in an excludes note: ``"listeriosis (A32.-)"`` -> ``["A32"]``; a range cites its block or first code."""
    codes: list[str] = []
    for group in _PARENTHESISED.findall(note):
        for item in group.split(","):
            match = _CITED.match(item.strip())
            if not match:
                continue
            first, last = match.groups()
            if last and "." not in first and "." not in last:
                codes.append(f"{first}-{last}")  # a block id such as P35-P39
            else:
                codes.append(first)
    return codes


def bracketed_abbreviation(name: str) -> str | None:
    """The short form a name ends with in brackets when it abbreviates the whole name (Schwartz-Hearst's match:
    "acquired immune deficiency syndrome [AIDS]" -> "AIDS"); None for one that abbreviates only the last words
    ("Elevated prostate specific antigen [PSA]" is not named "PSA"), and for other bracketed words ("Giardiasis
    [lambliasis]"). A short form with a sign is one ("Estrogen receptor positive status [ER+]" -> "ER+"): the
    normaliser reads the sign as a word, so "ER+" is not the "ER" of "seen in the ER"."""
    if not name.endswith("]"):
        return None
    for found in find_abbreviations(name[:-1].replace("[", "(").replace("]", ")") + ")"):
        if found.long_start == 0 and found.short_end == len(name) - 1:
            return found.short
    return None


def seventh_character_code(code: str, character: str) -> str:
    """``S52.501`` + ``A`` -> ``S52.501A``; short codes are padded with the placeholder X (``T15.0`` -> ``T15.0XXA``)."""
    bare = code.replace(".", "").ljust(6, "X")
    return f"{bare[:3]}.{bare[3:]}{character}"


@dataclass
class _Node:
    """An open chapter, section or diag element while its children are being read."""

    kind: str  # chapter | block | category | subcategory
    id: str | None = None
    title: str | None = None
    inclusions: list[str] = field(default_factory=list)
    excludes: list[tuple[str, str]] = field(default_factory=list)
    seven: dict[str, str] | None = None  # 7th-character definitions declared here or inherited
    has_children: bool = False
    index: int = 0  # the element's place among the file's chapter, section and diag tags (``TagLines`` finds its line)


def _stay() -> None:
    """No reader position to move (the reader called without a located policy)."""


def _node_records(
    node: _Node,
    parent: _Node | None,
    prefix: str,
    valid_codes: set[str] | None,
    to_parent: Callable[[], None] = _stay,
    back: Callable[[], None] = _stay,
) -> Iterator[Record]:
    """Records of one finished node (and, for a leaf under a 7th-character rule, of its extensions). The is_a relation to
    the parent comes from the nesting, not from this node's text: ``to_parent`` and ``back`` move the reader's position to
    the parent's element for it, so a bad parent id is named where it is written and never costs this node."""
    concept_id = qualify(prefix, node.id)
    yield ConceptRecord(concept_id, node.title, SOURCE)
    yield NameRecord(concept_id, node.title, PREFERRED, source=SOURCE)
    short = _RANGE_SUFFIX.sub("", node.title)
    if short != node.title and short:
        yield NameRecord(concept_id, short, SYNONYM, source=SOURCE)
    manifestation = _MANIFESTATION.search(node.title)
    for text in dict.fromkeys(node.inclusions):
        if manifestation and not _QUALIFIED.search(text):
            text = f"{text} {manifestation.group(0)}"  # "Pyelonephritis in diseases classified elsewhere"
        if text != node.title:
            yield NameRecord(concept_id, text, INCLUSION, source=SOURCE)
    for short in dict.fromkeys(filter(None, map(bracketed_abbreviation, [node.title, *node.inclusions]))):
        yield NameRecord(concept_id, short, ABBREVIATION, source=SOURCE)
    yield TypeRecord(concept_id, node.kind)
    if node.kind == "subcategory" or (node.kind == "category" and not node.has_children):
        if not node.has_children and not node.seven:
            yield TypeRecord(concept_id, "billable")
    if parent is not None and parent.id is not None:
        to_parent()
        yield RelationRecord(concept_id, IS_A, qualify(prefix, parent.id), SOURCE)
        back()
    for relation, note in node.excludes:
        for code in cited_codes(note):
            target = qualify(prefix, code)
            if target != concept_id:
                yield RelationRecord(concept_id, relation, target, SOURCE)
    if node.seven and not node.has_children and node.kind in ("category", "subcategory"):
        for character, meaning in node.seven.items():
            extended = seventh_character_code(node.id, character)
            if valid_codes is not None and extended.replace(".", "") not in valid_codes:
                continue
            code = qualify(prefix, extended)
            title = f"{node.title}, {meaning}"
            yield ConceptRecord(code, title, SOURCE)
            yield NameRecord(code, title, PREFERRED, scope=TITLE_CONCATENATION, source=SOURCE)
            yield TypeRecord(code, "subcategory")
            yield TypeRecord(code, "billable")
            yield RelationRecord(code, IS_A, concept_id, SOURCE)


def read_icd10cm(path: Path | str | None = None, *, prefix: str = "ICD10CM", policy: InvalidLinePolicy | None = None) -> Iterator[Record]:
    """Stream ICD-10-CM concepts from a tabular XML file (default: the packaged 2026 release)."""
    path = packaged_tabular_xml() if path is None else require_file(path, "ICD-10-CM tabular XML")
    policy = policy or InvalidLinePolicy()
    valid_codes = official_code_list(path)
    stack: list[_Node] = []
    tags: list[str] = []
    included: set[str] = set()  # Includes notes already given to a code
    lines = TagLines(path, _NODE_OPEN)  # a node's line, found only for one that needs it (an error)
    move = mover(policy)
    opened = 0
    try:
        for event, element in ET.iterparse(path, events=("start", "end")):
            tag = element.tag
            if event == "start":
                tags.append(tag)
                if tag in ("chapter", "section", "diag"):
                    parent = stack[-1] if stack else None
                    if parent is not None:
                        parent.has_children = True
                    kind = {"chapter": "chapter", "section": "block"}.get(tag) or (
                        "category" if parent is not None and parent.kind == "block" else "subcategory"
                    )
                    section_id = element.get("id")
                    opened += 1
                    stack.append(
                        _Node(kind, id=block_id(section_id) if section_id else None, seven=parent.seven if parent else None, index=opened)
                    )
                continue
            tags.pop()
            container = tags[-1] if tags else None
            node = stack[-1] if stack else None
            if node is None:
                continue
            if tag == "name" and container in ("chapter", "diag"):
                node.id = (element.text or "").strip()
            elif tag == "desc" and container in ("chapter", "section", "diag"):
                node.title = " ".join((element.text or "").split())
            elif tag == "note" and container in _NOTE_CONTAINERS:
                text = " ".join((element.text or "").split())
                if container == "inclusionTerm":
                    node.inclusions.append(text)
                elif container == "includes" and node.kind in ("category", "subcategory") and text and not _DESCRIBES.search(text):
                    if text.lower() not in included:  # I22 (a subsequent infarction) repeats I21's notes: they name I21
                        node.inclusions.append(text)  # a code's "Includes" notes name what it holds: I10's "high blood pressure"
                        included.add(text.lower())
                elif container != "includes":  # a chapter's or block's: what the range covers, not names
                    node.excludes.append((container, text))
            elif tag == "extension" and container == "sevenChrDef":
                if node.seven is None or node.seven is (stack[-2].seven if len(stack) > 1 else None):
                    node.seven = {}  # a definition here replaces the inherited one
                node.seven[element.get("char", "")] = " ".join((element.text or "").split())
            elif tag in ("chapter", "section", "diag"):
                stack.pop()
                if not node.id or not node.title:
                    policy.invalid(
                        path, lines.line_of(node.index), f"<{tag}> without {'a name' if not node.id else 'a desc'} (id {node.id!r})"
                    )
                else:
                    parent = stack[-1] if stack else None
                    own = partial(lines.line_of, node.index)
                    parent_relation = {None: own, "tail": partial(lines.line_of, parent.index) if parent else None}
                    move(path, own)
                    yield from _node_records(
                        node, parent, prefix, valid_codes, partial(move, path, parent_relation), partial(move, path, own)
                    )
                element.clear()
    except ET.ParseError as error:
        line = error.position[0] if error.position else None
        policy.invalid(path, line, f"not well-formed XML ({error.msg if hasattr(error, 'msg') else error})")
    finally:
        lines.close()

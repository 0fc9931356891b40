"""MeSH descriptor XML (``descYYYY.xml``, NLM's nlmdescriptorrecordset DTD), streamed.

The file is read twice with ``ElementTree.iterparse``, one ``DescriptorRecord`` at a time,
clearing each record once handled so memory stays flat (the real file is ~300 MB):

1. a light pass keeps only ``tree number -> DescriptorUI`` strings (~60k for real MeSH), since a
   descriptor's parents are the descriptors owning its tree numbers minus their last ``.xxx``;
2. the main pass yields, per descriptor (ids namespaced, ``D009203`` -> ``MESH:D009203``):

   - ``ConceptRecord``: DescriptorName, definition = the preferred concept's ScopeNote;
   - ``NameRecord`` for the DescriptorName (``preferred``, scope ``EXACT``) and every
     Concept/TermList/Term (``abbreviation`` if its LexicalTag is ABB or ACR, else
     ``synonym``); scope ``EXACT`` for terms of the preferred concept, otherwise the concept's
     ConceptRelation to the preferred concept (NRW/BRD/REL -> NARROW/BROAD/RELATED);
     identical strings are kept once per descriptor;
   - ``TypeRecord``: ``tree:<letter>`` per top-level tree category (``C`` diseases, ``D``
     chemicals...) and the preferred concept's SemanticTypeName (only older files have them);
   - ``RelationRecord``: ``is_a`` parents from tree numbers, ``pharmacological_action`` and
     ``see_related`` to the referred descriptors.

Registry numbers, qualifiers, entry combinations and notes are ignored. A file that is not
well-formed XML (e.g. a truncated download) raises ``InputFormatError`` with its line and column
whatever the policy, as parsing cannot resume after it; a record without DescriptorUI or
DescriptorName goes to the policy with its line (found by a forward scan of the file, only when
such an error happens).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from medlink.errors import InputFormatError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import TagLines, mover, open_bytes, require_file
from medlink.kb.records import (
    ABBREVIATION,
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

SOURCE = "MeSH"
ROOT_TAG = "DescriptorRecordSet"
RECORD_TAG = "DescriptorRecord"
PHARMACOLOGICAL_ACTION = "pharmacological_action"
SEE_RELATED = "see_related"

_ABBREVIATION_TAGS = {"ABB", "ACR"}
# ConceptRelation RelationName, read as "Concept2 is <scope> than Concept1".
_RELATION_SCOPES = {"NRW": "NARROW", "BRD": "BROAD", "REL": "RELATED"}
_INVERSE_SCOPES = {"NARROW": "BROAD", "BROAD": "NARROW", "RELATED": "RELATED"}
_RECORD_OPEN = re.compile(r"<DescriptorRecord(?=[\s/>])")
_POSITION_SUFFIX = re.compile(r":\s*line \d+, column \d+\s*$")


def _text(elem: ET.Element | None) -> str:
    """An element's text with whitespace collapsed ('' if absent)."""
    if elem is None or elem.text is None:
        return ""
    return " ".join(elem.text.split())


def _ui(elem: ET.Element | None) -> str:
    """A descriptor UI as written, only its ends stripped: whitespace collapsing would turn a control character inside
    one into a space the record check cannot see."""
    return "" if elem is None or elem.text is None else elem.text.strip()


def _parse_error(path: Path, error: ET.ParseError) -> InputFormatError:
    """Turn an expat error into an InputFormatError naming the file, line and column."""
    line, column = error.position
    reason = _POSITION_SUFFIX.sub("", str(error))
    hint = ""
    if reason.startswith("no element found") or reason.startswith("unclosed token"):
        hint = " (the file looks truncated: download it again)"
    elif line == 1:
        hint = " (expected MeSH descriptor XML, descYYYY.xml; the ASCII dYYYY.bin format is not supported)"
    return InputFormatError(path, line, f"XML is not well-formed at column {column + 1}: {reason}{hint}")


def _records_of(path: Path) -> Iterator[tuple[int, ET.Element]]:
    """Yield (1-based index, element) for each complete DescriptorRecord, clearing it afterwards.

    The caller must be done with the element before asking for the next one.
    """
    index = 0
    root: ET.Element | None = None
    with open_bytes(path) as handle:
        try:
            for event, elem in ET.iterparse(handle, events=("start", "end")):
                if root is None:
                    root = elem
                    if elem.tag != ROOT_TAG:
                        raise InputFormatError(
                            path,
                            1,
                            f"expected a MeSH descriptor file with root <{ROOT_TAG}>, found <{elem.tag}> "
                            "(qualifier qYYYY.xml and supplementary suppYYYY.xml files are not descriptor files)",
                        )
                    continue
                if elem.tag != RECORD_TAG:
                    continue
                if event == "start":
                    index += 1
                    continue
                yield index, elem
                elem.clear()
                root.clear()  # drop the finished records from the root as well
        except ET.ParseError as error:
            raise _parse_error(path, error) from None
    if root is None:
        raise InputFormatError(path, None, "the file is empty: expected MeSH descriptor XML")


def _tree_map(path: Path) -> tuple[dict[str, str], dict[str, int]]:
    """First pass: tree number -> DescriptorUI, and DescriptorUI -> its record's place in the file, for every descriptor."""
    owners: dict[str, str] = {}
    places: dict[str, int] = {}
    for index, record in _records_of(path):
        ui = (record.findtext("DescriptorUI") or "").strip()
        if not ui:
            continue  # reported by the main pass
        places[ui] = index
        for tree in record.iterfind("TreeNumberList/TreeNumber"):
            number = _text(tree)
            if number:
                owners[number] = ui
    return owners, places


def _concept_scopes(concepts: list[ET.Element], preferred_ui: str) -> dict[str, str]:
    """ConceptUI -> scope relative to the preferred concept, from every ConceptRelationList."""
    scopes: dict[str, str] = {}
    for concept in concepts:
        for relation in concept.iterfind("ConceptRelationList/ConceptRelation"):
            scope = _RELATION_SCOPES.get((relation.get("RelationName") or "").strip().upper())
            if scope is None:
                continue
            first = _text(relation.find("Concept1UI"))
            second = _text(relation.find("Concept2UI"))
            if first == preferred_ui and second:
                scopes.setdefault(second, scope)
            elif second == preferred_ui and first:
                scopes.setdefault(first, _INVERSE_SCOPES[scope])
    return scopes


def _stay_on(parent_ui: str | None) -> None:
    """No reader position to move (the reader called without a located policy)."""


def _descriptor_records(
    record: ET.Element,
    ui: str,
    name: str,
    owners: dict[str, str],
    prefix: str,
    source: str,
    include_permuted: bool,
    at_parent: Callable[[str | None], None] = _stay_on,
) -> Iterator[Record]:
    """All records of one valid DescriptorRecord. A parent found by tree number is not written in this record:
    ``at_parent(ui)`` moves the reader's position to the parent's record for that relation (``at_parent(None)``: back)."""
    concept_id = qualify(prefix, ui)
    concepts = record.findall("ConceptList/Concept")
    preferred = next((c for c in concepts if c.get("PreferredConceptYN") == "Y"), concepts[0] if concepts else None)
    definition = _text(preferred.find("ScopeNote")) if preferred is not None else ""
    yield ConceptRecord(concept_id, name, source, definition or None)

    # Names: the descriptor name first, then every term in file order, each string once.
    yield NameRecord(concept_id, name, PREFERRED, scope="EXACT", source=source)
    seen = {name}
    preferred_ui = _text(preferred.find("ConceptUI")) if preferred is not None else ""
    scopes = _concept_scopes(concepts, preferred_ui)
    for concept in concepts:
        scope = "EXACT" if concept is preferred else scopes.get(_text(concept.find("ConceptUI")))
        for term in concept.iterfind("TermList/Term"):
            if not include_permuted and term.get("IsPermutedTermYN") == "Y":
                continue
            text = _text(term.find("String"))
            if not text or text in seen:
                continue
            seen.add(text)
            kind = ABBREVIATION if (term.get("LexicalTag") or "").strip() in _ABBREVIATION_TAGS else SYNONYM
            yield NameRecord(concept_id, text, kind, scope=scope, source=source)

    # Types: top-level tree categories, then the preferred concept's semantic types (older files).
    tree_numbers = [n for n in (_text(t) for t in record.iterfind("TreeNumberList/TreeNumber")) if n]
    types: list[str] = []
    for number in tree_numbers:
        category = f"tree:{number[0]}"
        if category not in types:
            types.append(category)
    if preferred is not None:
        for semantic_type in preferred.iterfind("SemanticTypeList/SemanticType"):
            type_name = _text(semantic_type.find("SemanticTypeName"))
            if type_name and type_name not in types:
                types.append(type_name)
    for type_name in types:
        yield TypeRecord(concept_id, type_name)

    # Relations: parents from tree numbers, then pharmacological actions and see-related.
    relations: list[tuple[str, str]] = []
    for number in tree_numbers:
        if "." not in number:
            continue  # top of a tree (e.g. C14): its parent is the category, not a descriptor
        parent = owners.get(number.rsplit(".", 1)[0])
        if parent and parent != ui and (IS_A, parent) not in relations:
            relations.append((IS_A, parent))
    for relation, xpath in (
        (PHARMACOLOGICAL_ACTION, "PharmacologicalActionList/PharmacologicalAction/DescriptorReferredTo/DescriptorUI"),
        (SEE_RELATED, "SeeRelatedList/SeeRelatedDescriptor/DescriptorReferredTo/DescriptorUI"),
    ):
        for target in record.iterfind(xpath):
            target_ui = _ui(target)
            if target_ui and (relation, target_ui) not in relations:
                relations.append((relation, target_ui))
    for relation, target_ui in relations:
        if relation == IS_A:
            at_parent(target_ui)
        yield RelationRecord(concept_id, relation, qualify(prefix, target_ui), source)
        if relation == IS_A:
            at_parent(None)


def read_mesh(
    path: Path | str,
    *,
    prefix: str = "MESH",
    policy: InvalidLinePolicy | None = None,
    source: str = SOURCE,
    include_permuted: bool = True,
) -> Iterator[Record]:
    """Stream the records of a MeSH descriptor file (``descYYYY.xml`` or ``.xml.gz``).

    ``include_permuted=False`` drops terms flagged ``IsPermutedTermYN="Y"`` (word-order
    permutations of another entry term). Raises ``MissingInputError`` at once if the file is missing.
    """
    path = require_file(path, "MeSH descriptor file (descYYYY.xml)")
    return _read_mesh(path, prefix, policy or InvalidLinePolicy(), source, include_permuted)


def _read_mesh(path: Path, prefix: str, policy: InvalidLinePolicy, source: str, include_permuted: bool) -> Iterator[Record]:
    owners, places = _tree_map(path)
    lines = TagLines(path, _RECORD_OPEN)  # the line of a record, found only for one that needs it (an error)
    move = mover(policy)
    index = 0

    def at(parent_ui: str | None = None) -> None:
        """Tell the record check where the next records come from: the current record, or (a relation to a parent found
        by tree number) that parent's record for the relation's target."""
        own = partial(lines.line_of, index)
        move(path, own if parent_ui is None else {None: own, "tail": partial(lines.line_of, places.get(parent_ui, 0))})

    try:
        for index, record in _records_of(path):
            ui = _ui(record.find("DescriptorUI"))
            name = _text(record.find("DescriptorName/String"))
            if not ui or not name:
                line = lines.line_of(index)
                where = "" if line is not None else f"DescriptorRecord #{index}: "
                if not ui:
                    what = "expected a <DescriptorUI> (e.g. D009203) in every <DescriptorRecord>"
                    label = f" (named {name!r})" if name else ""
                else:
                    what = f"expected <DescriptorName><String> in DescriptorRecord {ui}"
                    label = ""
                policy.invalid(path, line, f"{where}{what}{label}")
                continue
            at()
            yield from _descriptor_records(record, ui, name, owners, prefix, source, include_permuted, at)
    finally:
        lines.close()

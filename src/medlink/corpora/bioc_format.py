"""BioC XML and BioC JSON documents in and out, through the ``bioc`` package's readers and writers.

Reading: passages keep their offsets, text and type (infon ``type``; other infons stay in
``Passage.infons``); a passage given as sentences only is laid out from them. An annotation's
location (offset, length; document offsets, as BioC has them) becomes start / end in
``Document.text``; one with several locations (a discontinuous mention) becomes the span covering
them; annotations come in text order (start, end). Concept ids come from the infon ``identifier`` (PubTator Central), else ``Identifier``,
``MESH`` or ``MeSH`` (BC5CDR), split on ``;`` ``,`` ``|``; ``-`` and ``-1`` mean none. The infon
``type`` is the type, ``source`` the source (default ``gold``: a file's spans are someone's
annotations); other infons stay in ``Annotation.infons``. Relations are not read.

Bad input goes to the ``InvalidLinePolicy`` (fail, or skip and count) naming file, line and
document: an annotation outside its passage, without a location, or whose text is not the slice
it claims is skipped alone; a document that is not BioC (overlapping passages, a missing offset)
as a whole. XML is streamed document by document (``lxml.etree.iterparse`` finds each
``<document>``, bioc's decoder reads it); entities are not resolved and no DTD is loaded, so a file
cannot pull in other files. XML that is not well-formed (or not UTF-8 / its declared encoding)
stops the reading at that line: the documents before it are kept. BioC JSON is one collection
(or a document, a list of documents, PubTator3's ``{"PubTator3": [...]}``), or one document per
line (PubTator Central's export); a document is reported by the line it starts on
(``json_positions``). A key BioC does not have below the document level ("annotatons") refuses
its document: read as missing, it would lose what it holds without a word.

Writing: one BioC annotation per ``Annotation`` (ids ``1``..``n`` per document), in the passage
that holds it (else at document level), with infons ``type``, ``identifier`` (ids joined by
``;``), ``source`` and, when the annotation was linked, ``score`` (top candidate), ``probability``
and ``nil`` when set.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import IO

import bioc
from bioc import biocjson, biocxml
from lxml import etree

from medlink import core
from medlink.corpora.document_io import (
    OverlapTally,
    Source,
    checked_annotations,
    is_int,
    json_lines,
    near_miss_key,
    open_source,
    passage_problem,
    report_overlaps,
    size_problem,
    source_name,
    starts_like_json,
    unknown_keys,
)
from medlink.corpora.json_positions import document_lines
from medlink.kb.errors_policy import InvalidLinePolicy

IDENTIFIER_KEYS = ("identifier", "Identifier", "MESH", "MeSH")
NO_ID = frozenset({"", "-", "-1"})
_ID_SEPARATORS = re.compile(r"[;,|]")
_DECODE_ERRORS = (etree.XMLSyntaxError, ValueError, TypeError, KeyError, AttributeError, IndexError)


class _NotBioC(ValueError):
    """A document or annotation that cannot become a medlink one; its message says why."""


# --- reading -----------------------------------------------------------------------------------------------------------


def read_bioc(source: Source, *, policy: InvalidLinePolicy | None = None, max_chars: int | None = None) -> Iterator[core.Document]:
    """The documents of a BioC XML collection, streamed in file order; one whose text is over ``max_chars`` characters
    goes to ``policy`` with its line."""
    policy = policy if policy is not None else InvalidLinePolicy()
    where, tally = source_name(source), OverlapTally()
    with open_source(source, "BioC XML file") as handle:
        try:
            for line, element in _document_elements(handle, where, policy):
                document = _from_element(element, line, where, policy, tally)
                element.clear()
                problem = size_problem(document, max_chars) if document is not None else None
                if problem:
                    policy.invalid(where, line, problem)
                elif document is not None:
                    yield document
        except etree.XMLSyntaxError as error:
            policy.invalid(where, error.lineno, _xml_problem(error, handle))
    report_overlaps(where, tally)


def _xml_problem(error: etree.XMLSyntaxError, handle: IO[bytes]) -> str:
    encoding = " (not in its declared encoding, UTF-8 when it declares none)" if "encoding" in error.msg.lower() else ""
    json_hint = " (it looks like JSON: BioC JSON is --format bioc-json)" if starts_like_json(handle) else ""
    return f"not well-formed XML{encoding}{json_hint}: {error.msg}; the file is not read past it"


def _document_elements(handle: IO[bytes], where: str, policy: InvalidLinePolicy) -> Iterator[tuple[int, etree._Element]]:
    """Each ``<document>`` of the collection when its end tag is read, with its line; the ones before are freed."""
    events = etree.iterparse(
        handle, events=("start", "end"), resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True, remove_pis=True
    )
    root = None
    for event, element in events:
        if root is None:
            root = element
            if element.tag != "collection":
                policy.invalid(where, element.sourceline, f"not a BioC collection: the root element is <{element.tag}>")
                return
        elif event == "end" and element.tag == "document" and element.getparent() is root:
            yield element.sourceline, element
            while element.getprevious() is not None:
                del root[0]


def _from_element(element: etree._Element, line: int, where: str, policy: InvalidLinePolicy, tally: OverlapTally) -> core.Document | None:
    try:
        wrapped = "<collection>" + etree.tostring(element, encoding="unicode", with_tail=False) + "</collection>"
        document = biocxml.loads(wrapped).documents[0]
    except _DECODE_ERRORS as error:
        policy.invalid(where, line, f"document {element.findtext('id')}: not a BioC document ({type(error).__name__}: {error})")
        return None
    return from_bioc(document, where, line, policy, tally)


def read_bioc_json(source: Source, *, policy: InvalidLinePolicy | None = None, max_chars: int | None = None) -> Iterator[core.Document]:
    """The documents of a BioC JSON file, or of BioC JSON lines (read whole: a JSON value cannot be streamed); one whose
    text is over ``max_chars`` characters goes to ``policy`` with its line, or its place in the file."""
    policy = policy if policy is not None else InvalidLinePolicy()
    where, tally = source_name(source), OverlapTally()
    with open_source(source, "BioC JSON file") as handle:
        data = handle.read()
    for line, value, item_lines in _json_values(data, where, policy):
        for position, obj in _json_documents(value, where, line, policy):
            at = line or (item_lines[position - 1] if item_lines else None)
            document = _json_document(obj, position, where, at, policy, tally)
            problem = size_problem(document, max_chars, "" if at else f" (#{position} in the file)") if document is not None else None
            if problem:
                policy.invalid(where, at, problem)
            elif document is not None:
                yield document
    report_overlaps(where, tally)


def _json_values(data: bytes, where: str, policy: InvalidLinePolicy) -> Iterator[tuple[int | None, object, list[int] | None]]:
    """The file's one JSON value (line None, and the line of each of its documents), or each line's when it holds
    several (JSON lines)."""
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        policy.invalid(where, line, f"not valid UTF-8 at byte {error.start + 1} of the file (save the file as UTF-8)")
        return
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg != "Extra data":  # "Extra data": several values, one per line
            policy.invalid(where, error.lineno, f"not valid JSON: {error.msg} (column {error.colno})")
            return
    except RecursionError:
        policy.invalid(where, 1, "JSON nested too deeply to read")
        return
    else:
        yield None, value, document_lines(text, value)
        return
    for line, value in json_lines(enumerate(text.split("\n"), 1), where, policy):
        yield line, value, None


def _json_documents(value: object, where: str, line: int | None, policy: InvalidLinePolicy) -> Iterator[tuple[int, object]]:
    if isinstance(value, dict) and isinstance(value.get("documents"), list):
        yield from enumerate(value["documents"], 1)
    elif isinstance(value, dict) and isinstance(value.get("PubTator3"), list):
        yield from enumerate(value["PubTator3"], 1)
    elif isinstance(value, dict) and "passages" in value:
        yield 1, value
    elif isinstance(value, list):
        yield from enumerate(value, 1)
    else:
        policy.invalid(where, line or 1, 'expected a BioC collection (an object with "documents"), a document or a list of documents')


def _json_document(
    obj: object, position: int, where: str, line: int | None, policy: InvalidLinePolicy, tally: OverlapTally
) -> core.Document | None:
    place = "" if line else f" (#{position} in the file)"  # where no line can be given
    try:
        document = biocjson.fromJSON(_with_defaults(obj), "BioCDocument")
    except _NotBioC as error:
        doc_id = obj.get("id") if isinstance(obj, dict) else None
        policy.invalid(where, line, f"document {doc_id}{place}: {error}")
        return None
    except _DECODE_ERRORS as error:
        doc_id = obj.get("id") if isinstance(obj, dict) else None
        policy.invalid(where, line, f"document {doc_id}{place}: not a BioC document ({type(error).__name__}: {error})")
        return None
    return from_bioc(document, where, line, policy, tally, place)


# Keys BioC JSON gives below the document ("bioctype": the bioc package's own marker); a document may carry others
# (PubTator3 adds pmid, journal, authors...).
_KEYS = {
    "passage": frozenset({"bioctype", "offset", "infons", "text", "sentences", "annotations", "relations"}),
    "sentence": frozenset({"bioctype", "offset", "infons", "text", "annotations", "relations"}),
    "annotation": frozenset({"bioctype", "id", "infons", "text", "locations"}),
    "location": frozenset({"bioctype", "offset", "length"}),
}


def _with_defaults(obj: object) -> object:
    """``obj`` with the keys bioc's JSON decoder requires but BioC lets a writer leave out (empty infons, relations...);
    level by level, not recursively, so no nesting exhausts the stack. A key BioC does not have below the document
    level is an error (a damaged "annotations" would otherwise read as none)."""
    if isinstance(obj, dict):
        if problem := near_miss_key(obj, _DOCUMENT_KEYS, "the document"):
            raise _NotBioC(problem)
        if not isinstance(obj.get("passages"), list):
            raise _NotBioC('a BioC document needs "passages", a list of passages')
        _fill(obj, infons={}, relations=[], annotations=[])
        for passage in _dicts(obj.get("passages")):
            _known("passage", passage)
            _fill(passage, infons={}, sentences=[], annotations=[], relations=[])
            for sentence in _dicts(passage["sentences"]):
                _known("sentence", sentence)
                _fill(sentence, infons={}, annotations=[], relations=[])
            for holder in [obj, passage, *_dicts(passage["sentences"])]:
                for annotation in _dicts(holder["annotations"]):
                    _known("annotation", annotation)
                    _fill(annotation, id="", infons={}, text=None)
                    for location in _dicts(annotation.get("locations")):
                        _known("location", location)
    return obj


_DOCUMENT_KEYS = ("bioctype", "id", "infons", "passages", "annotations", "relations")  # a document may carry others too


def _known(what: str, obj: dict) -> None:
    problem = unknown_keys(obj, _KEYS[what], f"a {what}")
    if problem:
        raise _NotBioC(problem)


def _dicts(value: object) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _fill(obj: dict, **defaults: object) -> None:
    for key, value in defaults.items():
        obj.setdefault(key, value)


def from_bioc(
    document: bioc.BioCDocument, where: str, line: int | None, policy: InvalidLinePolicy, tally: OverlapTally, place: str = ""
) -> core.Document | None:
    """A bioc document as a medlink one, its annotations checked against its passages; None (reported) if it is not one."""
    doc_id = str(document.id) if isinstance(document.id, str) or is_int(document.id) else None
    try:
        if doc_id is None:
            raise _NotBioC("no document id")
        passages = [_passage(p) for p in document.passages]
        problem = passage_problem(passages)
        if problem:
            raise _NotBioC(problem)
        result = core.Document(doc_id, passages, infons=_infons(document.infons))
    except _NotBioC as error:
        policy.invalid(where, line, f"document {doc_id}{place}: {error}")
        return None
    text = result.text
    items = ((line, f"annotation {a.id}: ", _annotation(a, text), bounds) for bounds, a in _annotations(document, passages, len(text)))
    kept = checked_annotations(doc_id + place, items, text, where, policy)
    tally.add(doc_id, kept)
    result.annotations = sorted((annotation for _, annotation in kept), key=lambda a: (a.start, a.end))  # text order
    return result


def _passage(passage: bioc.BioCPassage) -> core.Passage:
    if not is_int(passage.offset) or passage.offset < 0:
        raise _NotBioC(f"passage offset {repr(passage.offset)[:40]} is not a character offset")
    text = passage.text if isinstance(passage.text, str) else ""
    if not text and passage.sentences:
        text = _sentence_text(passage)
    infons = _infons(passage.infons)
    return core.Passage(passage.offset, text, infons.pop("type", None) or None, infons)


def _sentence_text(passage: bioc.BioCPassage) -> str:
    """A passage given as sentences: their texts at their offsets (gaps as spaces)."""
    pieces = []
    for sentence in passage.sentences:
        if not is_int(sentence.offset) or sentence.offset < passage.offset or not isinstance(sentence.text, str):
            raise _NotBioC(f"sentence offset {repr(sentence.offset)[:40]} is not an offset within its passage")
        pieces.append(core.Passage(sentence.offset - passage.offset, sentence.text))
    problem = passage_problem(pieces)
    if problem:
        raise _NotBioC(f"sentences: {problem}")
    return core.Document("", pieces).text


def _infons(infons: object) -> dict[str, str]:
    if not isinstance(infons, dict):
        raise _NotBioC(f"infons are {type(infons).__name__}, not a mapping")
    return {str(key): _infon(key, value) for key, value in infons.items()}


def _infon(key: str, value: object) -> str:
    """An infon's value as text: strings as they are, numbers and booleans as JSON writes them, null as empty."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return "" if value is None else json.dumps(value)
    raise _NotBioC(f"infon {key!r} is {type(value).__name__}, not a string")


def _annotations(
    document: bioc.BioCDocument, passages: list[core.Passage], length: int
) -> Iterator[tuple[tuple[int, int], bioc.BioCAnnotation]]:
    """Every annotation of the document with the range it must lie in: its passage's, or the whole text's."""
    for container, passage in zip(document.passages, passages, strict=True):
        for annotation in [*container.annotations, *(a for s in container.sentences for a in s.annotations)]:
            yield (passage.offset, passage.end), annotation
    for annotation in document.annotations:
        yield (0, length), annotation


def _annotation(annotation: bioc.BioCAnnotation, text: str) -> core.Annotation | str:
    """A bioc annotation as a medlink one (its text checked later), or why it cannot be one."""
    locations = annotation.locations
    if not locations or not all(is_int(loc.offset) and is_int(loc.length) and loc.offset >= 0 and loc.length > 0 for loc in locations):
        return "expected one or more locations, each a character offset and a positive length"
    start, end = min(loc.offset for loc in locations), max(loc.offset + loc.length for loc in locations)
    try:
        infons = _infons(annotation.infons)
    except _NotBioC as error:
        return str(error)
    given = annotation.text if isinstance(annotation.text, str) and len(locations) == 1 else text[start:end]
    kind, ids, source = infons.pop("type", None) or None, _ids(infons), infons.pop("source", None) or "gold"
    return core.Annotation(start, end, given, kind, ids, source, infons=infons, assertion=core.Assertion.from_infons(infons))


def _ids(infons: dict[str, str]) -> tuple[str, ...]:
    """The concept ids of the first identifier infon present (removed from ``infons``), in order, without repeats."""
    key = next((k for k in IDENTIFIER_KEYS if k in infons), None)
    raw = infons.pop(key) if key else ""
    return tuple(dict.fromkeys(i.strip() for i in _ID_SEPARATORS.split(raw) if i.strip() not in NO_ID))


# --- writing -----------------------------------------------------------------------------------------------------------

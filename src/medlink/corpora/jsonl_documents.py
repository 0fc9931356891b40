"""Reading JSONL documents: one JSON object per line, its passages and annotations checked (``document_files`` describes
the format and writes it).

Why a module of its own: the readers of annotated mentions (``corpora.datasets``: a mention memory, training data)
read JSONL documents without the writing side, which renders a linked annotation's candidates (``linking.output``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from medlink import core
from medlink.corpora.document_io import (
    OverlapTally,
    Source,
    checked_annotations,
    is_int,
    json_lines,
    passage_problem,
    report_overlaps,
    size_problem,
    source_lines,
    source_name,
    unknown_keys,
)
from medlink.kb.errors_policy import InvalidLinePolicy

DOCUMENT_KEYS = frozenset({"id", "text", "passages", "infons", "annotations"})
PASSAGE_KEYS = frozenset({"offset", "text", "type", "infons"})
ANNOTATION_KEYS = frozenset(
    {"start", "end", "text", "type", "ids", "source", "infons", "short_form_of", "candidates", "probability", "nil", "error"}
)  # the last four: what a linked annotation carries out, ignored when read


class _NotADocument(ValueError):
    """A JSONL record that cannot become a document; its message says why."""


def read_jsonl(source: Source, *, policy: InvalidLinePolicy, max_chars: int | None = None) -> Iterator[core.Document]:
    """One document per JSON line; a bad line or annotation is reported with its line and the document's id."""
    where, tally = source_name(source), OverlapTally()
    for lineno, value in json_lines(source_lines(source, policy, "JSONL file"), where, policy):
        document = _checked_document(value, lineno, where, policy, tally)
        problem = size_problem(document, max_chars) if document is not None else None
        if problem:
            policy.invalid(where, lineno, problem)
        elif document is not None:
            yield document
    report_overlaps(where, tally)


def _checked_document(value: object, lineno: int, where: str, policy: InvalidLinePolicy, tally: OverlapTally) -> core.Document | None:
    try:
        document = document_from_json(value, str(lineno))
    except _NotADocument as error:
        doc_id = value.get("id") if isinstance(value, dict) else None
        policy.invalid(where, lineno, f"document {str(doc_id)[:40] if doc_id is not None else lineno}: {error}")
        return None
    text = document.text
    annotations = enumerate(value.get("annotations") or (), 1)
    items = ((lineno, f"annotation #{n}: ", annotation_from_json(item, text), (0, len(text))) for n, item in annotations)
    kept = checked_annotations(document.doc_id, items, text, where, policy)
    tally.add(document.doc_id, kept)
    document.annotations = [annotation for _, annotation in kept]
    return document


def document_from_json(value: object, default_id: str) -> core.Document:
    """A JSON object's document, without annotations (``_NotADocument`` says what is wrong)."""
    if not isinstance(value, dict) or not (isinstance(value.get("text"), str) or isinstance(value.get("passages"), list)):
        raise _NotADocument('expected a JSON object with a "text" string or a "passages" list')
    problem = unknown_keys(value, DOCUMENT_KEYS, "the document")
    if problem:
        raise _NotADocument(problem)
    doc_id = value.get("id", default_id)
    if not isinstance(doc_id, str) and not is_int(doc_id):
        raise _NotADocument(f'"id" must be a string or an integer, not {doc_id!r}')
    if not isinstance(value.get("annotations", []), list):
        raise _NotADocument('"annotations" must be a list')
    if isinstance(value.get("passages"), list):
        passages = [_passage(item) for item in value["passages"]]
        problem = passage_problem(passages)
        if problem:
            raise _NotADocument(problem)
    else:
        passages = [core.Passage(0, value["text"])]
    return core.Document(str(doc_id), passages, infons=_strings(value.get("infons"), "infons"))


def _passage(item: object) -> core.Passage:
    if not isinstance(item, dict) or not is_int(item.get("offset")) or item["offset"] < 0 or not isinstance(item.get("text"), str):
        raise _NotADocument(f'a passage must be an object with an "offset" (a character offset) and a "text"; found {str(item)[:80]}')
    problem = unknown_keys(item, PASSAGE_KEYS, "a passage")
    if problem:
        raise _NotADocument(problem)
    kind = item.get("type")
    if kind is not None and not isinstance(kind, str):
        raise _NotADocument(f'a passage "type" must be a string, not {kind!r}')
    return core.Passage(item["offset"], item["text"], kind, _strings(item.get("infons"), "passage infons"))


def _strings(value: object, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _NotADocument(f"{what} must be an object of strings")
    return dict(value)


_FIELDS: dict[str, Callable[[object], bool]] = {
    "start": is_int,
    "end": is_int,
    "text": lambda v: isinstance(v, str),
    "type": lambda v: isinstance(v, str),
    "source": lambda v: isinstance(v, str),
    "ids": lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
    "short_form_of": lambda v: isinstance(v, list) and len(v) == 2 and all(is_int(i) for i in v),
}


def annotation_from_json(item: object, text: str) -> core.Annotation | str:
    """An annotation object as an Annotation (text and bounds checked later), or what is wrong with it."""
    problem = unknown_keys(item, ANNOTATION_KEYS, "the annotation") if isinstance(item, dict) else None
    if problem:
        return problem
    if not isinstance(item, dict) or not is_int(item.get("start")) or not is_int(item.get("end")):
        return 'expected an object with "start" and "end" (integer character offsets)'
    wrong = [key for key, valid in _FIELDS.items() if item.get(key) is not None and not valid(item[key])]
    if wrong:
        return f"{', '.join(wrong)} of the wrong kind (offsets are integers, ids a list of strings)"
    try:
        infons = _strings(item.get("infons"), "infons")
    except _NotADocument as error:
        return str(error)
    start, end, short = item["start"], item["end"], item.get("short_form_of")
    given = item.get("text")
    return core.Annotation(
        start,
        end,
        given if given is not None else text[start:end],
        item.get("type"),
        tuple(item.get("ids") or ()),
        item.get("source") or "gold",
        short_form_of=tuple(short) if short else None,
        infons=infons,
        assertion=core.Assertion.from_infons(infons),
    )

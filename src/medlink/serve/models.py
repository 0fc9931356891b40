"""Request and response bodies (pydantic): what the OpenAPI schema at /openapi.json shows and what requests are checked
against before any linking.

The response models describe the JSON the library's renderers write (``linking.output.result_json``,
``corpora.document_files.document_json``): the service returns those objects as they are, so its output is the CLI's.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

_SURROGATE = re.compile("[\ud800-\udfff]")


def _unicode(text: str) -> str:
    if _SURROGATE.search(text):
        raise ValueError("holds a lone surrogate (an escape from \\ud800 to \\udfff alone): not valid Unicode text")
    return text


Text = Annotated[str, AfterValidator(_unicode)]
DOCUMENT_FORMATS = ("text", "lines", "jsonl", "pubtator", "bioc", "bioc-json")
OUTPUT_FORMATS = ("json", "jsonl", "pubtator", "bioc", "bioc-json")
TOP_K = Field(5, ge=1, description="Candidates per mention (at most the server's --max-candidates).")
NIL = Field(
    None, ge=0.0, le=1.0, description="Link a mention only when its first candidate's probability reaches this; default: the index's own."
)
GENERATORS = Field(None, description="Generator names to use (default: all the index has; /info lists them).")
TARGET = Field(
    None,
    pattern=r"^[A-Za-z][A-Za-z0-9_]{0,31}$",
    description="Coding mode: answer with codes of this namespace (e.g. ICD10CM), matched directly or reached through "
    "mappings; each code's path is in its evidence (docs/coding.md).",
)
PREFER = Field(default_factory=list, description="Show a concept under its id in this namespace when it has one (e.g. MESH); first wins.")
EXPLAIN = Field(False, description="Add the decision in one sentence ('why') and one line per candidate ('explanation').")


class Strict(BaseModel):
    """A request body: an unknown key is refused with its name, not ignored."""

    model_config = ConfigDict(extra="forbid")


class MentionIn(Strict):
    text: Text = Field(description="The mention as written.")
    left: Text | None = Field(None, description="Text before it (read by an index with a context-reading reranker).")
    right: Text | None = Field(None, description="Text after it.")
    doc_id: Text | None = None
    start: int | None = Field(None, ge=0)
    end: int | None = Field(None, ge=0)


class LinkRequest(Strict):
    mentions: list[Text | MentionIn] = Field(
        description="Mention strings, or objects with their context.", examples=[["heart attack", "T2DM"]]
    )
    top_k: int = TOP_K
    nil_threshold: float | None = NIL
    generators: list[Text] | None = GENERATORS
    prefer_prefix: list[Text] = PREFER
    explain: bool = EXPLAIN
    target_namespace: str | None = TARGET


class AnnotateRequest(Strict):
    """Exactly one of ``text``, ``texts``, ``documents`` or ``content`` (a file's content in ``format``)."""

    text: Text | None = Field(None, description="One text: one document.", examples=["Hx of MI, denies chest pain."])
    texts: list[Text] | None = Field(None, description="Several texts, one document each (ids 1, 2, ...).")
    documents: list[dict[str, Any]] | None = Field(
        None, description="Documents as objects of 'medlink annotate --format jsonl': id, text or passages, infons, annotations."
    )
    content: Text | None = Field(None, description="The content of a document file, in 'format'.")
    format: Literal[DOCUMENT_FORMATS] | None = Field(None, description="The format of 'content' (default text).")
    finder: Literal["dictionary", "given"] = Field(
        "dictionary", description="dictionary (the KB's names) | given (link the spans the documents carry)."
    )
    top_k: int = TOP_K
    nil_threshold: float | None = NIL
    context: int = Field(0, ge=0, le=10_000, description="Characters of text each side of a mention given to the linker.")
    abbreviations: bool = Field(True, description="Link 'long form (SF)' short forms through their long form.")
    abbreviation_choice: Literal["long", "best"] = "long"
    consistency: Literal["off", "propagate", "vote", "both"] = "both"
    composites: bool = True
    assertion: bool = Field(True, description="Mark each mention's assertion status (present, absent, possible, ...).")
    overlap: Literal["longest", "all"] = "longest"
    generators: list[Text] | None = GENERATORS
    prefer_prefix: list[Text] = PREFER
    explain: bool = EXPLAIN
    target_namespace: str | None = TARGET
    output_format: Literal[OUTPUT_FORMATS] = Field(
        "json", description="json (a list of 'medlink annotate --json' objects) | jsonl | pubtator | bioc | bioc-json (the file, as text)."
    )

    @model_validator(mode="after")
    def one_input(self) -> AnnotateRequest:
        given = [name for name in ("text", "texts", "documents", "content") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of text, texts, documents or content (this request gave {', '.join(given) or 'none'})")
        if self.format is not None and self.content is None:
            raise ValueError("'format' is the format of 'content': give content with it, or leave it out")
        return self


class GroundRequest(BaseModel):
    """Gilda's /ground input; keys Gilda does not read are ignored, as Gilda ignores them."""

    text: Text = Field(description="The entity text to ground.", examples=["heart attack"])
    context: Text | None = Field(None, description="Surrounding text (read by an index with a context-reading reranker).")
    organisms: list[Text] | None = Field(None, description="Accepted for Gilda's clients; medlink's KBs are not species-specific.")
    namespaces: list[Text] | None = Field(None, description="Keep only matches with an id in these namespaces (HP, ICD10CM, MESH, ...).")
    top_k: int = Field(5, ge=1, description="medlink's addition: matches returned at most.")


# -- responses --------------------------------------------------------------------------------------


class CandidateOut(BaseModel):
    id: str
    alt_ids: list[str]
    name: str | None
    score: float
    matched: str | None
    scores: dict[str, float]
    evidence: list[dict[str, Any]]
    probability: float | None = None


class LinkResultOut(BaseModel):
    mention: str
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None
    candidates: list[CandidateOut]
    error: str | None = None
    nil: bool | None = None
    probability: float | None = None
    nil_threshold: float | None = None
    read_as: str | None = None  # what the stages searched, where not the mention's own words ("breast ca": "breast cancer")
    why: str | None = None
    explanation: list[str] | None = None
    coding: dict[str, Any] | None = None  # coding mode: the namespace, whether a code was reached, the first code's path


class AnnotationOut(BaseModel):
    start: int
    end: int
    text: str
    type: str | None
    ids: list[str]
    source: str | None
    infons: dict[str, str] | None = None
    short_form_of: list[int] | None = None
    candidates: list[CandidateOut] | None = None
    probability: float | None = None
    nil: bool | None = None
    error: str | None = None
    why: str | None = None
    explanation: list[str] | None = None


class PassageOut(BaseModel):
    offset: int
    text: str
    type: str | None = None
    infons: dict[str, str] | None = None


class DocumentOut(BaseModel):
    id: str
    infons: dict[str, str] | None = None
    text: str | None = None
    passages: list[PassageOut] | None = None
    annotations: list[AnnotationOut]


class NamedId(BaseModel):
    id: str
    name: str | None


class RelationOut(BaseModel):
    relation: str
    id: str
    name: str | None


class ConceptOut(BaseModel):
    id: str
    asked: str = Field(description="The id as asked (an alt id or a replaced one resolves to the concept's own).")
    name: str
    source: str | None
    definition: str | None
    synonyms: list[dict[str, str]]
    types: list[str]
    parents: list[NamedId]
    children: list[NamedId]
    relations: list[RelationOut]
    xrefs: list[str]
    alt_ids: list[str]


class SearchHit(BaseModel):
    id: str
    name: str | None
    matched: str | None
    score: float
    probability: float | None = None


class SearchOut(BaseModel):
    query: str
    hits: list[SearchHit]


class HealthOut(BaseModel):
    status: Literal["ok"]
    index: str
    reloads: int = Field(description="Reloads this worker made (a worker started by a reload of several workers counts 0).")
    loaded_at: str = Field(description="When this worker loaded the index it serves: after a reload, a later time.")
    index_created: str | None = Field(None, description="When the index served was built, from its manifest.")


class ReloadOut(BaseModel):
    reloaded: bool = Field(description="true once the index is swapped in (one worker); false while several are replaced (202).")
    index: str
    load_seconds: float | None = None
    workers: str = Field(description="'this worker', or 'all workers, one at a time' with --workers above 1.")
    detail: str | None = Field(None, description="With several workers: how to tell when every one serves the new index.")


class GildaTerm(BaseModel):
    norm_text: str
    text: str
    db: str
    id: str
    entry_name: str
    status: str
    source: str


class GildaMatch(BaseModel):
    query: str
    ref: str
    exact: bool
    space_mismatch: bool
    dash_mismatches: list[str]
    cap_combos: list[list[str]]


class ScoredMatch(BaseModel):
    term: GildaTerm
    url: str | None
    score: float
    match: GildaMatch


class ErrorOut(BaseModel):
    detail: str = Field(description="What was wrong, in words.")
    errors: list[dict[str, Any]] | None = Field(None, description="For a request that does not fit the schema: each field's problem.")

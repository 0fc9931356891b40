"""The service's own endpoints: link, annotate, a concept's record, name search, health, info and reload.

Each one checks the request against the limits, takes the current ``Engine`` once, calls the library, and renders
with the library's renderers: the JSON is the CLI's (``medlink link --json``, ``medlink annotate --json``).
"""

from __future__ import annotations

import os
import signal
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from medlink.core import Mention
from medlink.errors import MedlinkError
from medlink.linking.annotator import AnnotateOptions
from medlink.linking.output import link_stream
from medlink.serve.auth import require_admin, require_key
from medlink.serve.documents import MEDIA_TYPES, documents_file, documents_json, request_documents, results_json, signed
from medlink.serve.engine import check_on_disk
from medlink.serve.errors import SafeJSON
from medlink.serve.limits import check_candidates, check_count, check_lengths, too_large
from medlink.serve.models import (
    AnnotateRequest,
    ConceptOut,
    DocumentOut,
    ErrorOut,
    HealthOut,
    LinkRequest,
    LinkResultOut,
    ReloadOut,
    SearchOut,
)
from medlink.serve.settings import SUPERVISOR_ENV
from medlink.serve.state import engine_of, holder_of, settings_of

ERRORS = {status: {"model": ErrorOut} for status in (401, 413, 422)}
RECORD_LISTS = 200  # children, relations, synonyms shown at most per concept
router = APIRouter()


@router.post("/link", summary="Link mentions", response_model=list[LinkResultOut], responses=ERRORS, dependencies=[Depends(require_key)])
def link(body: LinkRequest, request: Request) -> SafeJSON:
    """Ranked concepts per mention, in order: the JSON objects of `medlink link --json`."""
    limits = settings_of(request).limits
    check_count(len(body.mentions), limits.max_mentions, "mentions", "--max-mentions")
    check_candidates(body.top_k, limits)
    items = [Mention(m) if isinstance(m, str) else Mention(m.text, m.doc_id, m.start, m.end, m.left, m.right) for m in body.mentions]
    check_lengths(((f"mention {n}", m.text) for n, m in enumerate(items, 1)), limits.max_mention_chars, "--max-mention-chars")
    check_lengths(
        ((f"the context of mention {n}", (m.left or "") + (m.right or "")) for n, m in enumerate(items, 1)),
        limits.max_text_chars,
        "--max-text-chars",
    )
    linker = engine_of(request).linker_for(body.nil_threshold)
    if body.target_namespace:
        return SafeJSON(coded_results_json(linker, items, body))
    results = link_stream(linker, items, body.top_k, body.generators, prefer=body.prefer_prefix)
    return SafeJSON(results_json(results, body.explain))


def coded_results_json(linker, items: list[Mention], body: LinkRequest) -> list[dict]:
    """Coding mode's answers (``medlink link --target-namespace NS --json``); an index without codes of the namespace is
    the library's error (422). The coder is built on the first such request of a worker, then kept."""
    from medlink.linking.coding import link_coded
    from medlink.linking.coding_output import coded_explanation, coded_json

    namespace = body.target_namespace
    out = []
    for result in link_coded(linker, items, body.top_k, namespace, body.generators):
        payload = coded_json(result, namespace, body.explain)
        if body.explain:
            payload["explanation"] = coded_explanation(result)
        out.append(payload)
    return out


@router.post(
    "/annotate",
    summary="Annotate texts or documents",
    response_model=list[DocumentOut] | dict[str, Any],  # the documents' objects, or (bioc-json) one BioC collection
    responses={**ERRORS, 200: {"content": {t: {} for t in ("application/json", *MEDIA_TYPES.values())}}},
    dependencies=[Depends(require_key)],
)
def annotate(body: AnnotateRequest, request: Request) -> Response:
    """Find and link the mentions in each document: the JSON objects of `medlink annotate --json`, or the file of
    `--output-format` (jsonl, pubtator, bioc, bioc-json) as text."""
    limits = settings_of(request).limits
    check_candidates(body.top_k, limits)
    documents = request_documents(body, limits)
    options = AnnotateOptions(
        k=body.top_k,
        context=body.context,
        abbreviations=body.abbreviations,
        abbreviation_choice=body.abbreviation_choice,
        consistency=body.consistency,
        composites=body.composites,
        assertion=body.assertion,
        overlap=body.overlap,
        generators=tuple(body.generators) if body.generators else None,
        target_namespace=body.target_namespace,
    )
    annotator = engine_of(request).annotator(body.finder, body.nil_threshold, options)
    annotated = signed(list(annotator.annotate(documents)), body.prefer_prefix)
    if body.output_format == "json":
        return SafeJSON(documents_json(annotated, body.explain))
    return Response(documents_file(annotated, body.output_format), media_type=MEDIA_TYPES[body.output_format])


@router.get(
    "/concepts/{concept_id:path}",
    summary="A concept's KB record",
    response_model=ConceptOut,
    responses={**ERRORS, 404: {"model": ErrorOut}, 503: {"model": ErrorOut}},
    dependencies=[Depends(require_key)],
)
def concept(request: Request, concept_id: Annotated[str, Path(min_length=1, max_length=300)]) -> SafeJSON:
    """Names, definition, types, parents, children, relations, cross-references and alt ids; an alt id or a replaced
    id finds the concept it now belongs to."""
    engine = engine_of(request)
    try:
        kb = engine.kb()
    except MedlinkError as error:
        raise HTTPException(status_code=503, detail=str(error)) from None
    found = kb.concept(concept_id)
    if found is None:
        raise HTTPException(
            status_code=404, detail=f"no concept {concept_id!r} in this index's KB (alt ids and replaced ids were looked up too)"
        )
    named = lambda ids: [{"id": i, "name": kb.name_of(i)} for i in ids[:RECORD_LISTS]]  # noqa: E731
    return SafeJSON(
        {
            "id": found.id,
            "asked": concept_id,
            "name": found.name,
            "source": found.source,
            "definition": found.definition,
            "synonyms": [{"text": text, "kind": kind} for text, kind in found.synonyms[:RECORD_LISTS]],
            "types": list(found.types),
            "parents": named(found.parents),
            "children": named(kb.children(found.id)),
            "relations": [{"relation": r, "id": t, "name": kb.name_of(t)} for r, t in found.relations[:RECORD_LISTS]],
            "xrefs": list(found.xrefs[:RECORD_LISTS]),
            "alt_ids": list(found.alt_ids[:RECORD_LISTS]),
        }
    )


@router.get("/search", summary="Search concept names", response_model=SearchOut, responses=ERRORS, dependencies=[Depends(require_key)])
def search(
    request: Request,
    q: Annotated[str, Query(min_length=1, description="A name, or part of one, as a person would type it.")],
    limit: Annotated[int, Query(ge=1, description="Concepts returned at most (up to --max-candidates).")] = 10,
) -> SafeJSON:
    """The concepts whose names best match ``q``, ranked, whatever the NIL threshold (a search shows everything)."""
    limits = settings_of(request).limits
    check_candidates(limit, limits)
    if len(q) > limits.max_mention_chars:
        raise too_large(f"q has {len(q):,} characters, over the limit of {limits.max_mention_chars:,} (the server's --max-mention-chars)")
    result = engine_of(request).linker.link([q], k=limit)[0]
    hits = [
        {"id": c.concept_id, "name": c.name, "matched": c.matched_name, "score": round(c.score, 6), "probability": c.probability}
        for c in result.candidates
    ]
    return SafeJSON({"query": q, "hits": hits})


@router.get("/health", summary="Is the service up", response_model=HealthOut)
def health(request: Request) -> SafeJSON:
    holder = holder_of(request)
    engine = engine_of(request)
    return SafeJSON(
        {
            "status": "ok",
            "index": holder.index,
            "reloads": holder.reloads,
            "loaded_at": engine.loaded_at,
            "index_created": engine.linker.manifest.get("created"),
        }
    )


@router.get("/info", summary="The index and the service", responses=ERRORS, dependencies=[Depends(require_key)])
def info(request: Request) -> SafeJSON:
    """The index's manifest (KB, its version and sources, generators, models, calibration, precision), medlink's
    version, and the limits a request must keep to."""
    settings = settings_of(request)
    payload = engine_of(request).info()
    payload.update(workers=settings.workers, api_key=request.app.state.api_key is not None, limits=asdict(settings.limits))
    return SafeJSON(payload)


@router.post(
    "/admin/reload",
    summary="Load the index afresh",
    response_model=ReloadOut,
    responses={**ERRORS, 202: {"model": ReloadOut}, 403: {"model": ErrorOut}, 503: {"model": ErrorOut}},
    dependencies=[Depends(require_admin)],
)
async def reload(request: Request) -> SafeJSON:
    """Swap in the index as it now is on disk (after 'medlink index build' rebuilt it); requests already running
    finish on the old one. With several workers, the index on disk is checked first (a damaged one is refused with a
    503 and the workers kept), then each worker is replaced in turn by a fresh one: the answer, 202, comes before they
    have loaded it, and /health's ``loaded_at`` tells when a worker serves it."""
    settings = settings_of(request)
    holder = holder_of(request)
    supervisor = os.environ.get(SUPERVISOR_ENV)
    if settings.workers > 1 and supervisor:
        try:
            await run_in_threadpool(check_on_disk, holder.index)
        except MedlinkError as error:
            raise HTTPException(
                status_code=503, detail=f"the index on disk cannot be loaded, so every worker keeps the one it has: {error}"
            ) from None
        os.kill(int(supervisor), signal.SIGHUP)  # uvicorn's supervisor starts a fresh worker before it stops each old one
        return SafeJSON(
            {
                "reloaded": False,
                "index": holder.index,
                "workers": "all workers, one at a time",
                "detail": "each worker is being replaced by one that loads the index: GET /health answers with a later loaded_at once it serves it",
            },
            status_code=202,
        )
    try:
        engine = await run_in_threadpool(holder.reload)
    except MedlinkError as error:
        raise HTTPException(
            status_code=503, detail=f"the index could not be reloaded, so the one loaded before still serves: {error}"
        ) from None
    return SafeJSON({"reloaded": True, "index": holder.index, "load_seconds": engine.load_seconds, "workers": "this worker"})

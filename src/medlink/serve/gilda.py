"""Gilda-compatible grounding: ``POST /ground`` and ``POST /ground_multi`` take Gilda's requests and answer with
Gilda's ScoredMatch JSON, so a Gilda user's HTTP calls work unchanged against medlink.

The mapping (docs/service.md): ``term.db`` is the id's namespace as Gilda names it (HP, ICD10CM, MESH, ...), ``term.id``
the id as Gilda writes ids of that namespace: with its prefix for the OBO namespaces Gilda keeps whole (``HP:0001250``),
without it for the others (MESH ``D009203``, ICD10CM ``I21.9``). ``score`` is the candidate's probability (its fused
score on an index without probabilities). A mention medlink decides is NIL gets an empty list, as Gilda answers a text
it cannot ground; so is a candidate under the NIL threshold left out.
"""

from __future__ import annotations

from dataclasses import replace

from fastapi import APIRouter, Depends, Request

from medlink.core import Candidate, LinkResult, Mention
from medlink.errors import MedlinkError
from medlink.linking.output import BARE_ID_SHAPES
from medlink.serve.auth import require_key
from medlink.serve.errors import SafeJSON
from medlink.serve.limits import check_candidates, check_count, check_lengths
from medlink.serve.models import ErrorOut, GroundRequest, ScoredMatch
from medlink.serve.state import engine_of, settings_of

# namespace prefixes as medlink's KBs write them -> as Gilda (INDRA) names the namespace
NAMESPACES = {"MSH": "MESH", "HPO": "HP", "SCTID": "SNOMEDCT", "SNOMEDCT_US": "SNOMEDCT", "MIM": "OMIM", "ICD-10-CM": "ICD10CM"}
CODED = {"ICD10CM"}  # code systems a /ground filter answers in coding mode (docs/coding.md)
FILTER_DEPTH = 200  # candidates a namespace filter looks through: Gilda filters before ranking, medlink ranks first
PREFIXED = {"HP", "DOID", "GO", "CHEBI", "UBERON", "CL", "BTO"}  # Gilda writes these ids with their prefix: HP:0001250
OWN_KB = "KB"  # the namespace of a bare id of your own KB (no prefix, no recognised shape)
router = APIRouter()
ERRORS = {status: {"model": ErrorOut} for status in (401, 413, 422)}


def gilda_id(concept_id: str) -> tuple[str, str]:
    """(db, id) as Gilda writes them: ``HP:0001250`` -> (HP, HP:0001250); ``MESH:D009203`` -> (MESH, D009203);
    ``ICD10CM:I21.9`` -> (ICD10CM, I21.9); a bare ``D009203`` -> (MESH, D009203), by its shape."""
    prefix, colon, local = concept_id.partition(":")
    if not colon:
        shaped = next((name for name, shape in BARE_ID_SHAPES.items() if shape.fullmatch(concept_id)), None)
        return shaped or OWN_KB, concept_id
    db = NAMESPACES.get(prefix.upper(), prefix.upper())
    return db, f"{db}:{local}" if db in PREFIXED else local


def bioregistry_url(db: str, local: str) -> str | None:
    """The URL Gilda 1.6 gives a match: ``https://bioregistry.io/hp:0001250``, ``https://bioregistry.io/mesh:D009203``."""
    if db == OWN_KB:
        return None
    parts = local.split(":")
    if len(parts) == 2:
        return f"https://bioregistry.io/{parts[0].lower()}:{parts[1]}"
    return f"https://bioregistry.io/{db.lower()}:{local}"


def in_any(candidate: Candidate, namespaces: list[str]) -> Candidate | None:
    """The candidate shown under its id in the first of ``namespaces`` it has one in, or None. A namespace is compared
    as ``term.db`` names it (``gilda_id``), so the db an answer gave filters to it again, and medlink's prefixes and
    their aliases are read as that db (SNOMEDCT_US and SCTID as SNOMEDCT, HPO as HP, MSH as MESH; KB: your own KB's)."""
    for wanted in (NAMESPACES.get(n.upper(), n.upper()) for n in namespaces):
        shown = next((i for i in candidate.ids if gilda_id(i)[0] == wanted), None)
        if shown is not None:
            return replace(candidate, concept_id=shown, alt_ids=[i for i in candidate.ids if i != shown])
    return None


def scored_matches(result: LinkResult, asked: GroundRequest, normalize) -> list[dict]:
    """Gilda's list of ScoredMatch JSON for one mention, best first: the candidates medlink would link to (on a calibrated
    index, those whose probability reaches the NIL threshold); empty for a NIL mention or one with no candidate."""
    if result.error or result.nil:
        return []
    candidates = result.candidates
    if result.nil_threshold is not None:
        candidates = [c for c in candidates if c.probability is not None and c.probability >= result.nil_threshold]
    if asked.namespaces:
        candidates = [c for c in (in_any(c, asked.namespaces) for c in candidates) if c is not None]
    return [scored_match(c, asked.text, normalize) for c in candidates[: asked.top_k]]


def scored_match(candidate: Candidate, query: str, normalize) -> dict:
    db, local = gilda_id(candidate.concept_id)
    entry = candidate.name or candidate.concept_id
    ref = candidate.matched_name or entry
    dashes = [side for side, (one, other) in (("query", (query, ref)), ("ref", (ref, query))) if "-" in one and "-" not in other]
    return {
        "term": {
            "norm_text": normalize(ref),
            "text": ref,
            "db": db,
            "id": local,
            "entry_name": entry,
            "status": "name" if ref == entry else "synonym",
            "source": db.lower(),
        },
        "url": bioregistry_url(db, local),
        "score": candidate.probability if candidate.probability is not None else round(candidate.score, 6),
        "match": {
            "query": query,
            "ref": ref,
            "exact": query == ref,
            "space_mismatch": query != ref and query.replace(" ", "") == ref.replace(" ", ""),
            "dash_mismatches": dashes,
            "cap_combos": [],
        },
    }


def ground_all(request: Request, asked: list[GroundRequest]) -> list[list[dict]]:
    """Every request's matches, linked in one batch, in order."""
    limits = settings_of(request).limits
    check_count(len(asked), limits.max_mentions, "texts", "--max-mentions")
    for one in asked:
        check_candidates(one.top_k, limits)
    check_lengths(((f"text {n}", a.text) for n, a in enumerate(asked, 1)), limits.max_mention_chars, "--max-mention-chars")
    check_lengths(
        ((f"the context of text {n}", a.context or "") for n, a in enumerate(asked, 1)), limits.max_text_chars, "--max-text-chars"
    )
    if not asked:
        return []
    linker = engine_of(request).linker
    coded = coded_answers(linker, asked)
    rest = [n for n in range(len(asked)) if n not in coded]  # each text linked once: in coding mode or in the batch
    depth = max((asked[n].top_k for n in rest), default=1)
    if any(asked[n].namespaces for n in rest):
        depth = max(depth, FILTER_DEPTH)
    linked = linker.link([Mention(asked[n].text, left=asked[n].context) for n in rest], k=depth) if rest else []
    results = {**dict(zip(rest, linked)), **coded}
    return [scored_matches(results[n], one, linker.key) for n, one in enumerate(asked)]


def coded_answers(linker, asked: list[GroundRequest]) -> dict[int, LinkResult]:
    """By position, the texts asked in a code system's namespace (``CODED``): coding mode's answer in it, that
    namespace's codes reached by name or through mappings (HPO -> ICD-10-CM on the default index). Ranking first and
    then filtering kept only the codes an HPO term outranked, at probability 0. An index without such codes: none."""
    from medlink.linking.coding import link_coded

    out: dict[int, LinkResult] = {}
    for n, one in enumerate(asked):
        wanted = [NAMESPACES.get(name.upper(), name.upper()) for name in one.namespaces or ()]
        for namespace in (name for name in wanted if name in CODED):
            try:
                out[n] = link_coded(linker, [Mention(one.text, left=one.context)], one.top_k, namespace)[0]
                break
            except MedlinkError:  # no code of that namespace in this index
                continue
    return out


@router.post(
    "/ground",
    summary="Ground a text (Gilda-compatible)",
    response_model=list[ScoredMatch],
    responses=ERRORS,
    dependencies=[Depends(require_key)],
)
def ground(body: GroundRequest, request: Request) -> SafeJSON:
    """Gilda's /ground: a list of scored matches, best first; an empty list when the text is NIL."""
    return SafeJSON(ground_all(request, [body])[0])


@router.post(
    "/ground_multi",
    summary="Ground several texts (Gilda-compatible)",
    response_model=list[list[ScoredMatch]],
    responses=ERRORS,
    dependencies=[Depends(require_key)],
)
def ground_multi(body: list[GroundRequest], request: Request) -> SafeJSON:
    """Gilda's /ground_multi: one list of scored matches per input, in order."""
    return SafeJSON(ground_all(request, body))

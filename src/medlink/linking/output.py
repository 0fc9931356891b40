"""Link results as a front end shows them (JSON objects, plain lines), the batched loop over a stream of mentions, and
which of a concept's ids is shown first.

Why in the library: the CLI, a REST service and a batch job render the same results the same way; each front end
only turns its input into mentions and writes these out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import islice

from medlink.core import Annotation, Candidate, Document, LinkResult, Mention

# ids written without a prefix in BioSyn / NCBI Disease / BC5CDR data, recognised by their shape
# (MeSH: D or C and 6 or 9 digits; C and 7 digits is a UMLS CUI, no MeSH id)
BARE_ID_SHAPES = {"MESH": re.compile(r"[CD](?:\d{6}|\d{9})"), "OMIM": re.compile(r"\d{6}")}


def in_namespace(concept_id: str, prefix: str) -> bool:
    """``MESH:D008228`` is in MESH (case-insensitive prefix); so is a bare ``D008228`` (its shape, for MESH and OMIM)."""
    namespace, colon, local = concept_id.partition(":")
    if colon:
        return namespace.upper() == prefix.upper()
    shape = BARE_ID_SHAPES.get(prefix.upper())
    return bool(shape and shape.fullmatch(concept_id))


def first_in_namespaces(ids: Sequence[str], prefixes: Sequence[str]) -> tuple[str, str] | None:
    """The first of ``ids`` in the first of ``prefixes`` that has one, with that prefix; None when none has one."""
    for prefix in prefixes:
        chosen = next((i for i in ids if in_namespace(i, prefix)), None)
        if chosen is not None:
            return chosen, prefix
    return None


def prefer_namespace(candidate: Candidate, prefixes: Sequence[str]) -> Candidate:
    """The candidate with its first id in the first of ``prefixes`` that has one made primary; the others become alt ids."""
    found = first_in_namespaces(candidate.ids, prefixes)
    if found is None or found[0] == candidate.concept_id:
        return candidate
    return candidate.copy(concept_id=found[0], alt_ids=[i for i in candidate.ids if i != found[0]])


def with_preferred_ids(result: LinkResult, prefixes: Sequence[str]) -> LinkResult:
    if not prefixes:
        return result
    return replace(result, candidates=[prefer_namespace(c, prefixes) for c in result.candidates])


def link_stream(
    linker,
    mentions: Iterable[str | Mention],
    k: int,
    generators: Sequence[str] | None = None,
    batch_size: int = 2048,
    prefer: Sequence[str] = (),
) -> Iterator[LinkResult]:
    """Link an arbitrarily long stream in batches (memory stays flat); results come out in input order."""
    stream = iter(mentions)
    while batch := list(islice(stream, batch_size)):
        for result in linker.link(batch, k=k, generators=generators):
            yield with_preferred_ids(result, prefer)


def printable(text: str) -> str:
    """``text`` as it can be written out: bytes that were not UTF-8 shown as escapes (a mention is echoed as given)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def candidate_json(candidate: Candidate) -> dict:
    payload = {
        "id": candidate.concept_id,
        "alt_ids": list(candidate.alt_ids),
        "name": candidate.name,
        "score": round(candidate.score, 6),
        "matched": candidate.matched_name,
        "scores": {k: round(v, 6) for k, v in candidate.scores_by_stage.items()},
        "evidence": candidate.evidence,
    }
    if candidate.probability is not None:
        payload["probability"] = candidate.probability
    return payload


def result_json(result: LinkResult, explain: bool = False) -> dict:
    """One JSON object per mention: the mention (and its document position when known), candidates, error / NIL / probability
    when set; ``explain`` adds the decision in words ("why")."""
    mention = result.mention
    payload: dict = {"mention": printable(mention.text)}
    payload.update(
        {key: value for key, value in (("doc_id", mention.doc_id), ("start", mention.start), ("end", mention.end)) if value is not None}
    )
    payload["candidates"] = [candidate_json(c) for c in result.candidates]
    payload.update(
        {
            key: value
            for key, value in (
                ("error", result.error),
                ("nil", result.nil),
                ("probability", result.probability),
                ("nil_threshold", result.nil_threshold),
                ("read_as", result.read_as),
            )
            if value is not None
        }
    )
    if explain:
        payload["why"] = decision_text(result)
    return payload


def decision_text(result: LinkResult) -> str:
    """The decision on a mention in one sentence: linked (to what, how sure) or NIL, or why it could not be linked."""
    if result.error:
        return f"not linked: {result.error}"
    if not result.candidates:
        return "not linked: no candidate"
    top = result.candidates[0]
    sure = f" with probability {top.probability:.3f}" if top.probability is not None else " (this index has no probabilities: scores only)"
    threshold = _threshold(result)
    if result.nil:
        probability, threshold = _under(top.probability, result.nil_threshold)
        return (
            f"NIL: its first candidate{_after_backoff(top)}, {top.concept_id} ({top.name}), has probability "
            f"{probability}, under the NIL threshold{threshold}"
        )
    return f"linked to {top.concept_id} ({top.name}){sure}" + (f" (NIL threshold{threshold})" if threshold else "")


def _after_backoff(candidate) -> str:
    """ " after backoff" when backoff put ``candidate`` first: the NIL decision is on it, not on the model's first choice."""
    return " after backoff" if any("backoff" in e for e in candidate.evidence) else ""


def _under(probability: float | None, threshold: float | None) -> tuple[str, str]:
    """A probability and the NIL threshold it is under, as "0.3797" and " 0.3800": three decimals, or as many more as
    tell them apart (a strict comparison never reads "0.380 is under 0.380"); the threshold "" when there is none."""
    if probability is None or threshold is None:
        return (f"{probability:.3f}" if probability is not None else "none"), (f" {threshold:.3f}" if threshold is not None else "")
    for digits in range(3, 10):
        shown = f"{probability:.{digits}f}", f"{threshold:.{digits}f}"
        if shown[0] != shown[1]:
            return shown[0], f" {shown[1]}"
    return repr(probability), f" {threshold!r}"


def _threshold(result: LinkResult) -> str:
    """ " 0.290": the NIL threshold the result was decided at, for the sentences that quote it ("" when none)."""
    return f" {result.nil_threshold:.3f}" if result.nil_threshold is not None else ""


def mention_heading(result: LinkResult) -> str:
    """The mention as an explanation names it, with what the stages searched where that differs ("breast ca (read as
    'breast cancer')")."""
    read = f" (read as '{printable(result.read_as)}')" if result.read_as else ""
    return printable(result.mention.text) + read


def explanation_lines(result: LinkResult) -> list[str]:
    """``--explain``: the decision, then per candidate its probability, the alias that matched, each stage's score and any
    other evidence (the training mentions that voted, a backoff)."""
    lines = [f"{mention_heading(result)}: {decision_text(result)}"]
    for rank, c in enumerate(result.candidates, 1):
        probability = f"p={c.probability:.3f} " if c.probability is not None else ""
        stages = ", ".join(f"{stage} {value:.3f}" for stage, value in c.scores_by_stage.items())
        lines.append(
            f"  {rank}. {c.concept_id} {c.name}: {probability}score {c.score:.3f}; matched '{c.matched_name}'"
            + (f"; stages: {stages}" if stages else "")
            + _neighbours(c)
        )
        lines.extend(f"     {e[kind]}" for e in c.evidence for kind in ("spelling", "synonym", "backoff") if kind in e)
    return lines


def result_lines(result: LinkResult) -> list[str]:
    """Plain output: one tab-separated line per candidate (mention, rank, id, name, score, what matched, other ids)."""
    text = printable(result.mention.text)
    if result.error:
        return [f"{text!r}\terror: {result.error}"]
    if not result.candidates:
        return [f"{text}\t(no candidate)"]
    lines = []
    if result.nil:  # the mention's text is not a format string: "H{" is a mention like any other
        probability, threshold = _under(result.probability, result.nil_threshold)
        lines.append(
            f"{text}\tNIL\t(first candidate's probability{_after_backoff(result.candidates[0])} {probability} is under the NIL "
            f"threshold{threshold}; candidates follow)"
        )
    for rank, c in enumerate(result.candidates, 1):
        also = f"; also {' '.join(c.alt_ids)}" if c.alt_ids else ""
        probability = f"\tp={c.probability:.3f}" if c.probability is not None else ""
        lines.append(
            f"{text}\t{rank}\t{c.concept_id}\t{c.name}\t{c.score:.3f}{probability}\t(matched '{c.matched_name}'{_neighbours(c)}{also})"
        )
    return lines


def _neighbours(candidate: Candidate, shown: int = 3) -> str:
    """The kNN reranker's voting training mentions, for the plain-text output (JSON lists them all)."""
    voters = [e for e in candidate.evidence if "neighbour" in e]
    if not voters:
        return ""
    more = f" and {len(voters) - shown} more" if len(voters) > shown else ""
    return "; neighbours " + ", ".join(f"'{v['neighbour']}' {v['similarity']:.2f}" for v in voters[:shown]) + more


def annotation_lines(document: Document, top: int = 1) -> list[str]:
    """Plain output of an annotated document: a header line, then per span its offsets, text, and its ``top`` candidates
    (id, name, score), tab-separated; an abbreviation says which long form it was linked through, a head linked for a
    longer phrase (or a phrase linked as its head) says so, a mention the text denies, doubts or gives to someone else says so (its assertion and cue)."""
    lines = [f"# {document.doc_id}\t{len(document.annotations)} mention(s)"]
    for span in document.annotations:
        lines.extend(_span_lines(span, top))
    return lines


def assertion_note(span: Annotation) -> str:
    """What the text says of the mention when it is not simply there: "[absent: 'denies']", "[present; historical: 'hx of']"."""
    said = span.assertion
    if said is None or (said.status == "present" and not said.historical):
        return ""
    parts = [f"{said.status}: '{said.cue}'" if said.cue else said.status]
    if said.historical:
        parts.append(f"historical: '{said.historical_cue}'" if said.historical_cue else "historical")
    return "\t[" + "; ".join(parts) + "]"


def _span_lines(span: Annotation, top: int) -> list[str]:
    where = f"{span.start}-{span.end}\t{printable(span.text)}"
    via = f"\t(via {span.infons['linked_through']})" if "linked_through" in span.infons else ""
    if "partial_of" in span.infons:  # a head linked for a longer phrase no name says: its probability is discounted
        via += f"\t(partial: the head of '{printable(span.infons['partial_of'])}')"
    elif "head" in span.infons and span.result is not None and span.infons["head"] in (span.result.mention.text, span.result.read_as):
        via += f"\t(partial: linked as its head '{printable(span.infons['head'])}')"  # or coded as it (``coding_readings``)
    elif "head" in span.infons:  # a phrase linked as itself, no name saying it whole: its probability discounted too
        via += "\t(partial: no name says the whole phrase)"
    via += assertion_note(span)
    result = span.result
    if "composite" in span.infons and span.ids:  # a coordination: one concept per spelt-out conjunct
        return [f"{where}\t{' + '.join(span.ids)}\t(composite: {span.infons['composite']})" + via]
    if result is None or result.best is None:
        reason = result.error if result is not None and result.error else "no candidate"
        if result is not None and result.nil and result.candidates:
            reason = decision_text(result)  # the same sentence 'medlink link --explain' gives
        return [f"{where}\t-\t({reason})" + assertion_note(span)]
    return [
        f"{where}\t{c.concept_id}\t{c.name}\t{c.score:.3f}" + (f"\tp={c.probability:.3f}" if c.probability is not None else "") + via
        for c in result.candidates[:top]
    ]


def with_preferred_document_ids(document: Document, prefixes: Sequence[str]) -> Document:
    """``document`` with each span's result (and ids) shown under the preferred namespaces (in place; returned)."""
    if prefixes:
        for span in document.annotations:
            if span.result is not None:
                span.result = with_preferred_ids(span.result, prefixes)
                span.ids = (span.result.best.concept_id,) if span.result.best is not None else ()
    return document

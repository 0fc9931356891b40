"""A condition's adjective before another condition is one mention of both: "hemorrhagic cystitis", "cholestatic hepatitis".

Why: where no name spells the pair, the dictionary finds the adjective ("hemorrhagic", a training mention of
hemorrhage) and the noun ("cystitis") as two spans. Annotators mark the pair as one mention that denotes both
conditions, as they mark "breast and ovarian cancer" (``medlink.text.coordination``). So two linked spans are joined
when only a space parts them and the first is one adjective (its ending says so: -ic, -al, -ar, -ed, -ive, -ous,
-oid). The joined span takes the head's result and both concepts, in the text's order (as its parts are listed); its
probability is the lower of the two. Short forms and their long forms are left apart: a later "(HC)" is linked through the span it defines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from medlink.core import Annotation

ADJECTIVE = re.compile(r"[A-Za-z][a-z-]*(?:ic|al|ar|ed|ive|ous|oid)")


def _joinable(text: str, left: Annotation, right: Annotation, defined: set[tuple[int, int]]) -> bool:
    return (
        text[left.end : right.start] == " "
        and ADJECTIVE.fullmatch(left.text) is not None
        and not right.text.isupper()
        and left.short_form_of is None
        and right.short_form_of is None
        and not {left.span, right.span} & defined
        and "composite" not in left.infons
        and "composite" not in right.infons
        and left.result is not None
        and left.result.best is not None
        and right.result is not None
        and right.result.best is not None
    )


def joined_conditions(
    text: str, spans: Sequence[Annotation], long_forms: Iterable[tuple[int, int]] = ()
) -> tuple[list[Annotation], dict[int, tuple[str, ...]]]:
    """``spans`` (in text order) with each adjective + condition pair joined, and the joined spans' concepts by
    ``id(span)`` (the adjective's, then the head's: the text's order). ``long_forms``: spans that define a short form elsewhere (a
    window's later text), kept apart as the short forms among ``spans`` keep theirs."""
    defined = {span.short_form_of for span in spans if span.short_form_of is not None} | set(long_forms)
    out: list[Annotation] = []
    concepts: dict[int, tuple[str, ...]] = {}
    for span in spans:
        left = out[-1] if out else None
        if left is None or id(left) in concepts or not _joinable(text, left, span, defined):
            out.append(span)
            continue
        head, modifier = span.result.best, left.result.best
        probabilities = (span.result.probability, left.result.probability)
        result = replace(span.result, probability=min(probabilities) if None not in probabilities else None)
        joined = replace(
            span,
            start=left.start,
            text=text[left.start : span.end],
            result=result,
            infons={**span.infons, "composite": f"{left.text} | {span.text}"},
        )
        out[-1] = joined
        concepts[id(joined)] = tuple(dict.fromkeys((modifier.concept_id, head.concept_id)))
    return out, concepts

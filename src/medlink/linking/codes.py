"""Codes written as mentions ("I10", "E11.9", "HP:0001658", "D003920"): looked up among the index's ids, not searched.

Why: a code is an exact reference, and searching it as a name finds whatever name shares its characters ("E11.9" ->
"NIHSS score 9"). A mention that is one code-shaped token resolves when the index has that id: as written, with one
of the index's prefixes before it (``ICD10CM:`` + "I10"), in ICD-10-CM's dotted form ("E119" -> "E11.9"), or as
another id of a concept (its alt ids: a MeSH id beside an OMIM one, a UMLS CUI).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from medlink.core import Annotation, Candidate, LinkResult, Mention

CODE_SHAPE = re.compile(r"(?:[A-Za-z][A-Za-z0-9_]*:)?[A-Za-z0-9][A-Za-z0-9._\-]*")  # one token, an optional prefix
ICD_UNDOTTED = re.compile(r"[A-TV-Z][0-9][0-9A-Z][0-9A-Z]{1,4}")  # "E119" -> "E11.9"
MAX_CODE_CHARS = 32
# a code written in running text: one token (a prefix allowed), upper case or prefixed, at least 3 characters, not a number
CODE_IN_TEXT = re.compile(r"(?<![\w.:/-])((?:[A-Za-z][A-Za-z0-9_]*:)?[A-Z0-9][A-Z0-9]*(?:[.\-][A-Z0-9]+)*)(?![\w:/-]|\.\w)")


class CodeLookup:
    """An index's ids (and each concept's alt ids) by every form a user may write them in."""

    def __init__(self, concept_ids: Sequence[str], alt_ids: Mapping[str, Sequence[str]]):
        self._concept_of = {concept_id: concept_id for concept_id in concept_ids}
        for concept_id, others in alt_ids.items():
            for other in others:
                self._concept_of.setdefault(other, concept_id)
        self._prefixes = sorted({concept_id.split(":", 1)[0] for concept_id in concept_ids if ":" in concept_id})

    def concept_of(self, text: str) -> str | None:
        """The concept ``text`` names as a code, or None (anything that is not one code-shaped token with a digit)."""
        text = text.strip()
        if len(text) > MAX_CODE_CHARS or not CODE_SHAPE.fullmatch(text) or not any(c.isdigit() for c in text):
            return None
        for form in self._forms(text):
            if form in self._concept_of:
                return self._concept_of[form]
        return None

    def _forms(self, text: str) -> Iterable[str]:
        bare = text.split(":", 1)[1] if ":" in text else text
        spellings = dict.fromkeys([bare, bare.upper(), *self._dotted(bare.upper())])
        if ":" in text:
            prefix = text.split(":", 1)[0]
            yield text
            yield from (f"{written}:{spelling}" for written in (prefix, prefix.upper()) for spelling in spellings)
            yield from spellings  # an index whose ids carry no prefix ("MESH:D015179" in a MEDIC index of "D015179")
            return
        yield from spellings
        yield from (f"{prefix}:{spelling}" for prefix in self._prefixes for spelling in spellings)

    @staticmethod
    def _dotted(code: str) -> list[str]:
        return [f"{code[:3]}.{code[3:]}"] if ICD_UNDOTTED.fullmatch(code) else []


def code_result(mention: Mention, code: Candidate, searched: LinkResult | None) -> LinkResult:
    """``mention`` linked, with certainty, to the concept its code names; the searched candidates (if any) after it."""
    code.score, code.probability, code.matched_name = 1.0, 1.0, mention.text
    code.scores_by_stage = {"code": 1.0}
    code.evidence = [{"code": f"'{mention.text}' is the id {code.concept_id}"}]
    others = [c for c in (searched.candidates if searched else []) if c.concept_id != code.concept_id]
    kept = [code, *others][: max(1, len(searched.candidates) if searched else 1)]  # as many candidates as were asked for
    return LinkResult(mention, kept, None, False, 1.0, searched.nil_threshold if searched else None)


def resolve_codes(
    results: list[LinkResult], lookup: Callable[[], CodeLookup], candidate_for: Callable[[str], Candidate]
) -> list[LinkResult]:
    """Each result as it is, unless its mention is a code of the index: then that concept, certain, first (``lookup``
    is called only once a mention with a digit comes, so an index's ids are gathered only when codes may be asked)."""
    out = []
    for result in results:
        text = result.mention.text
        concept_id = lookup().concept_of(text) if isinstance(text, str) and any(c.isdigit() for c in text) else None
        out.append(
            result if concept_id is None else code_result(result.mention, candidate_for(concept_id), result if result.candidates else None)
        )
    return out


def code_spans(text: str, lookup: CodeLookup, taken: Sequence[Annotation] = ()) -> list[Annotation]:
    """Codes of the index written in ``text`` ("HTN (I10)", "dx E11.9") as spans to link, where no span in ``taken``
    already covers them: tokens that look like a code (a digit in them, not only digits) and that the index has."""
    covered = [(span.start, span.end) for span in taken]
    found = []
    for match in CODE_IN_TEXT.finditer(text):
        written, start, end = match.group(1), match.start(1), match.end(1)
        bare = written.split(":", 1)[-1]
        number = ":" not in written and bare.replace(".", "").replace("-", "").isdigit()  # a dose, a date: no code
        if len(bare) < 3 or number or not any(c.isdigit() for c in bare):
            continue
        if any(s < end and start < e for s, e in covered) or lookup.concept_of(written) is None:
            continue
        found.append(Annotation(start, end, written, source="code"))
    return found

"""A condition a drug is said to cause, linked as the KB's drug-induced concept of it where the KB names one.

Why: "isoniazid-induced hepatitis" is, to a terminology of diseases such as MeSH, *Drug-Induced Liver Injury* (entry term
"Hepatitis, Drug-Induced"), and "levodopa-induced dyskinesia" *Dyskinesia, Drug-Induced*, not the plain condition.
The text says the cause right beside the mention ("X-induced", "induced by"), so the mention is read again as
"drug-induced" + its words, and that reading is kept only where a KB name spells its words, in any order ("Hepatitis,
Drug-Induced").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from medlink.core import READ_AS, Annotation, LinkResult, Mention

CAUSE_BEFORE = re.compile(r"(\w+)[-\u2010\s](?:induced|associated|related|evoked|caused)\s+$", re.IGNORECASE)  # "isoniazid-induced "
CAUSE_AFTER = re.compile(
    r"\s+(?:induced|caused|associated)\s+(?:by|with)\s+(?:an?\s+|the\s+)?(\w+)", re.IGNORECASE
)  # " induced by levodopa"
# causes that are no drug: "exercise-induced asthma", "age-related macular degeneration", "HIV-associated nephropathy"
NOT_DRUGS = frozenset(
    "exercise stress radiation irradiation noise cold heat light sun trauma injury surgery age pregnancy virus viral "
    "infection hiv immune autoimmune ventilator transfusion diet obesity smoking sleep altitude alcohol ethanol".split()
)
LOOK_BACK = 40  # characters before a mention where its cause is read


def caused_by_drugs(
    documents: Sequence[tuple[str, Sequence[Annotation]]],
    link: Callable[[list[Mention]], list[LinkResult]],
    key: Callable[[str], str],
    is_name: Callable[[str], bool] | None = None,
) -> None:
    """In each (text, spans) of ``documents``, a span with candidates whose cause the text writes beside it takes the
    result of its drug-induced reading, where a KB name (``key``: the linker's normalised form) spells that reading's
    words; a cause that is a KB name (``is_name``: "hypoxia-induced") is a condition, no drug. One link call for all."""
    caused = [
        span
        for text, spans in documents
        for span in spans
        if span.result is not None
        and span.result.candidates  # a NIL too: "dyskinesia" alone may be unsure, "drug-induced dyskinesia" a name
        and span.short_form_of is None
        and _drug_said(text, span, is_name)
    ]
    if not caused:
        return
    readings = [f"drug-induced {span.reading}" for span in caused]
    for span, reading, result in zip(caused, readings, link([Mention(reading) for reading in readings])):
        first = result.candidates[0] if result.candidates else None
        spelt = first is not None and first.matched_name and sorted(key(first.matched_name).split()) == sorted(key(reading).split())
        if spelt and first.concept_id != span.result.candidates[0].concept_id:
            span.result = replace(result, mention=span.result.mention, read_as=reading)
            span.infons[READ_AS] = reading  # and so read apart when the document's strings vote on one answer each


def _drug_said(text: str, span: Annotation, is_name: Callable[[str], bool] | None) -> bool:
    """Whether the text names a cause beside ``span`` ("X-induced" before it, "induced by X" after it) that may be a drug."""
    cause = CAUSE_BEFORE.search(text, max(0, span.start - LOOK_BACK), span.start) or CAUSE_AFTER.match(text, span.end)
    return cause is not None and cause.group(1).lower() not in NOT_DRUGS and not (is_name and is_name(cause.group(1)))

"""medspaCy's ConText over given spans, for ``assertion_status.py``; runs in medspaCy's own environment (no medlink).

    PYTHON_WITH_MEDSPACY benchmarks/documents/medspacy_context_driver.py < {"records": [{"text", "spans"}], "repeats": N}

Writes ``{"labels": [[status, historical], ...], "seconds": [...]}``: one label per span, in order. medspaCy's pipeline
is ``medspacy.load`` with its PyRuSH sentence splitter and ConText (default English rules); the spans are set as the
doc's entities before ConText runs, as its documentation does for a target matcher's spans. Its modifiers are read as
the i2b2 classes with the precedence medlink uses: a denial before a relative, a relative before doubt; FAMILY is
someone_else, NEGATED_EXISTENCE absent, POSSIBLE_EXISTENCE possible, HYPOTHETICAL hypothetical; HISTORICAL the past.
medspaCy has no conditional category.
"""

from __future__ import annotations

import json
import sys
import time


def labels_of(entity) -> list:
    historical, family, negated, possible, hypothetical = (getattr(entity._, name) for name in
                                                           ("is_historical", "is_family", "is_negated", "is_uncertain", "is_hypothetical"))
    if negated:
        status = "absent"
    elif family:
        status = "someone_else"
    elif hypothetical:
        status = "hypothetical"
    elif possible:
        status = "possible"
    else:
        status = "present"
    return [status, bool(historical) and status != "someone_else"]


def main() -> None:
    import medspacy
    from loguru import logger  # PyRuSH logs each token at DEBUG: silenced, or its cost would be timed as medspaCy's
    from spacy.tokens import Span

    logger.remove()

    request = json.load(sys.stdin)
    nlp = medspacy.load(enable=["medspacy_pyrush", "medspacy_context"])
    context = nlp.get_pipe("medspacy_context")
    splitter = nlp.get_pipe("medspacy_pyrush")
    seconds, labels = [], []
    for _ in range(request["repeats"]):
        started = time.perf_counter()
        labels = []
        for record in request["records"]:
            doc = splitter(nlp.make_doc(record["text"]))
            doc.ents = [Span(doc, span.start, span.end, label="PROBLEM") for span in
                        (doc.char_span(start, end, alignment_mode="expand") for start, end in record["spans"])]
            doc = context(doc)
            labels += [labels_of(entity) for entity in doc.ents]
        seconds.append(time.perf_counter() - started)
    json.dump({"labels": labels, "seconds": seconds}, sys.stdout)


if __name__ == "__main__":
    main()

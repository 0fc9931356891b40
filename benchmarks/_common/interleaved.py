"""Two or more settings of one built linker measured side by side: accuracy, and speed taken in turns so the machine's
drift falls on every setting alike (what ``tfidf_rescore.py`` and ``words_form.py`` share)."""

from __future__ import annotations

import statistics
import time
from typing import Callable, Mapping

from benchmarks._common.pseudo import accuracy_at


def scored(linker, texts: list[str], golds: list[frozenset[str]] | None) -> tuple[dict, float]:
    """Acc@1 and Acc@5 (None without gold) and the first candidates; mentions/s of the one call."""
    started = time.perf_counter()
    results = linker.link(texts, k=5, rerank=False)
    seconds = time.perf_counter() - started
    firsts = [r.candidates[0].concept_id if r.candidates else None for r in results]
    figures = {"acc@1": None, "acc@5": None} if golds is None else accuracy_at(results, golds)
    return {**figures, "firsts": firsts}, len(texts) / seconds


def interleaved_row(name: str, linker, texts: list[str], golds, settings: Mapping[str, Callable[[], None]], repeats: int) -> dict:
    """One result row: per setting (``settings``: label -> what puts the linker in it) Acc@1 / Acc@5 and the median
    mentions/s over ``repeats`` rounds, and how many first candidates the first two settings disagree on."""
    figures, rates = {}, {label: [] for label in settings}
    linker.link(texts[:50], k=5, rerank=False)  # warm: memory-mapped matrices paged in
    for _ in range(repeats):
        for label, apply in settings.items():
            apply()
            figures[label], rate = scored(linker, texts, golds)
            rates[label].append(rate)
    firsts = [figures[label].pop("firsts") for label in settings]
    return {"set": name, "mentions": len(texts), "first_candidates_differ": sum(a != b for a, b in zip(firsts[0], firsts[1])),
            **{label: {**figures[label], "mentions_per_second": round(statistics.median(rates[label]))} for label in settings}}

"""Two or more settings of one built linker measured side by side: accuracy, and speed taken in turns so the machine's
drift falls on every setting alike (what ``tfidf_rescore.py`` and ``words_form.py`` share)."""

from __future__ import annotations

import statistics
import time
from typing import Callable, Iterable, Mapping, Sequence

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


def probe_rows(linker, probe: Sequence[tuple[str, str]], settings: Mapping[str, Callable[[], None]]) -> list[dict]:
    """Per probe (text, the ids a coder would pick, "|"-joined): the first candidate under each setting, and whether it
    is one of those ids."""
    rows = []
    for text, expected in probe:
        row = {"mention": text, "expected": expected}
        for label, apply in settings.items():
            apply()
            first = linker.link([text], k=1, rerank=False)[0].candidates[:1]
            row[label] = {"id": first[0].concept_id, "name": first[0].name} if first else None
            row[f"{label}_right"] = bool(first) and first[0].concept_id in expected.split("|")
        rows.append(row)
    return rows


def setting_runs(sets: Iterable, settings_of: Callable, repeats: int, probe: Sequence[tuple[str, str]]) -> tuple[list[dict], list[dict], object]:
    """``interleaved_row`` for each (name, linker, texts, golds) of ``sets`` (``settings_of(linker)``: its settings), and
    ``probe_rows`` over the default KB's set: the rows, the probe's rows and the default KB's linker (None without it)."""
    rows, probed, default = [], [], None
    for name, linker, texts, golds in sets:
        settings = settings_of(linker)
        rows.append(interleaved_row(name, linker, texts, golds, settings, repeats))
        print(rows[-1], flush=True)
        if name.startswith("default KB"):
            probed, default = probe_rows(linker, probe, settings), linker
            print(probed, flush=True)
    return rows, probed, default


def default_index_decisions(probe: Sequence[tuple[str, str]], linker=None) -> list[dict]:
    """What the default index itself (probabilities fitted on its KB's pseudo-mentions, NIL threshold), or ``linker``,
    says of each probe (mention, its right ids joined by "|"; "" for a mention that should be NIL)."""
    import medlink

    linker = linker if linker is not None else medlink.load_index("default")
    results = linker.link([text for text, _ in probe], k=1)
    return [{"mention": text, "nil": bool(r.nil), "id": r.candidates[0].concept_id if r.candidates else None,
             "probability": r.candidates[0].probability if r.candidates else None, "right": bool(r.candidates) and r.candidates[0].concept_id in expected.split("|")}
            for (text, expected), r in zip(probe, results)]


def with_stage_weight(linker, stage: str, weight: float) -> None:
    """Put ``linker`` in one setting of a stage: its fusion weight (0: the stage is not searched)."""
    from dataclasses import replace

    fusion = linker.config.fusion
    linker.config = replace(linker.config, fusion=replace(fusion, weights={**fusion.weights, stage: weight}))

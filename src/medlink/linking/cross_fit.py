"""More data for the probability model: the index's own memory, each fold linked by an index built without it.

Why: a dev set is small (NCBI Disease: 787 mentions), and a model fitted on it alone carries dev's quirks to new text
(NCBI test ECE 0.0439 against 0.0169 out of fold on dev: BENCHMARKS.md, calibration). The memory already holds
labelled mentions, usually many more (NCBI: the train split, six times dev). Linked by an index over the KB + the memory's other folds, a held-out mention is a fair example of
what the index meets: a wording the memory holds elsewhere links as exactly as it would, a new one does not. Folds go
over mention occurrences, so a text annotated many times mostly stays in the other folds, as it would for new text.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from medlink.errors import MedlinkError
from medlink.kb.store import KB
from medlink.linking.calibration import memory_tag
from medlink.linking.calibration_fit import FIT_TOP, Labelled, fit_calibration, uncalibrated
from medlink.linking.config import LinkerConfig
from medlink.linking.manifest import MEMORY
from medlink.linking.memory import MemoryEntries, read_memory
from medlink.progress import phase

MIN_MENTIONS = 50  # fewer memory mentions than this: nothing worth a second index per fold


def index_memory(linker) -> MemoryEntries | None:
    """The memory ``linker`` was built with: in hand after a build, else the index folder's copy."""
    if linker.memory is not None:
        return linker.memory
    path = linker.directory / MEMORY if linker.directory is not None else None
    return read_memory(path) if path is not None and path.is_file() else None


def memory_mentions(memory: MemoryEntries) -> list[tuple[str, frozenset[str]]]:
    """The memory's mentions: consecutive pairs of one text and new concepts are one mention with several concepts (as
    they were read); the same pair again is the next occurrence."""
    mentions: list[tuple[str, set[str]]] = []
    for text, concept_id in memory.pairs:
        if mentions and mentions[-1][0] == text and concept_id not in mentions[-1][1]:
            mentions[-1][1].add(concept_id)
        else:
            mentions.append((text, {concept_id}))
    return [(text, frozenset(ids)) for text, ids in mentions]


def cross_fit_items(kb: KB, config: LinkerConfig, memory: MemoryEntries, folds: int = 5, seed: int = 0) -> list[Labelled]:
    """Each memory mention's candidate list from an index over ``kb`` + the other ``folds`` - 1 folds of ``memory``
    built with ``config`` (one without a calibration stage: ``calibration_fit.uncalibrated``), labelled by its own concepts.

    No concept is removed to make NIL examples (as ``fit_on_kb``'s pseudo-mentions do): tried with 15% of each fold's
    concepts, the probabilities learnt that share of absent concepts and ran low on a full KB (NCBI dev ECE out of fold
    0.067 against 0.017), and dev's NIL F1 did not rise."""
    from medlink.linking.linker import Linker

    if folds < 2:
        raise MedlinkError(f"cross-fitting needs at least 2 folds, not {folds}")
    mentions = memory_mentions(memory)
    if len(mentions) < MIN_MENTIONS:
        raise MedlinkError(f"fitting probabilities on the memory needs at least {MIN_MENTIONS} of its mentions, and it has {len(mentions)}: "
                           "give --memory FORMAT:PATH (annotated mentions), or use the KB's own pseudo-mentions (--calibrate kb)")
    fold_of = np.random.default_rng(seed).permutation(len(mentions)) % folds
    items: list[Labelled] = []
    for fold in range(folds):
        held = [mentions[i] for i in np.flatnonzero(fold_of == fold)]
        kept = replace(memory, pairs=[(text, cid) for i, (text, ids) in enumerate(mentions) if fold_of[i] != fold for cid in sorted(ids)])
        with phase(f"probabilities cross-fitted on the memory, fold {fold + 1} of {folds} ({len(held):,} mentions linked by an "
                   "index without them)"):
            linker = Linker.build(kb, config, kept, dictionary=False)
            results = linker.link([text for text, _ in held], k=FIT_TOP)
        items.extend(Labelled(linker.key(text), r.candidates, [c.concept_id in ids or not ids.isdisjoint(c.alt_ids) for c in r.candidates], True)
                     for (text, ids), r in zip(held, results) if r.candidates)
    return items


def cross_fit_summary(items: Sequence[Labelled], folds: int) -> dict:
    """What the report and the model's ``fitted_on`` say about the extra data."""
    return {"folds": folds, "mentions": len(items), "right_first": sum(bool(i.right and i.right[0]) for i in items)}


def fit_on_memory(kb: KB, config: LinkerConfig, memory: MemoryEntries, folds: int = 5, nil_target: str = "f1") -> tuple[dict, dict]:
    """Calibration settings for an index of ``kb`` + ``memory`` built with ``config``, fitted on the memory's own mentions
    cross-fitted (``index build --calibrate memory``: labelled mentions without a dev set). They are all of concepts in
    the KB, so the NIL threshold is the one for the best linking F1 among them."""
    base, fingerprint = uncalibrated(config, kb)
    items = cross_fit_items(kb, base, memory, folds)
    fitted_on = {"source": "the index memory's mentions, cross-fitted", "mentions": len(items), "cross_fit": cross_fit_summary(items, folds)}
    return fit_calibration(items, kb.normalize, fingerprint, nil_target=nil_target, fitted_on=fitted_on, memory=memory_tag(memory.summary()))


def memory_cross_fit(linker, kb: KB | None, config: LinkerConfig, folds: int) -> list[Labelled]:
    """``linker``'s memory mentions as extra fitting data for ``medlink tune --cross-fit`` (``config``: the tuned one, uncalibrated)."""
    memory = index_memory(linker)
    if memory is None or not memory.pairs:
        raise MedlinkError("cross-fitting the probabilities needs an index built with a memory (medlink index build --memory ...); "
                           "this one has none: leave out --cross-fit")
    if kb is None:
        raise MedlinkError("cross-fitting the probabilities rebuilds the index per fold and needs its KB; the KB the index was built from is gone")
    return cross_fit_items(kb, config, memory, folds)

"""More data for the probability model: the index's own memory, each fold linked by an index built without it.

Why: a dev set is small (NCBI Disease: 787 mentions), and a model fitted on it alone carries dev's quirks to new text
(NCBI's test ECE is well above dev's own out of fold: BENCHMARKS.md, Probabilities and NIL). The memory already holds
labelled mentions, usually many more (NCBI: the train split, six times dev). Linked by an index over the KB + the memory's other folds, a
held-out mention is a fair example of
what the index meets: a wording the memory holds elsewhere links as exactly as it would, a new one does not. Folds go
over documents where the memory knows them (else mention occurrences): a text annotated in many documents mostly stays
in the other folds, as it would for new text, but not its own document's repeats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from medlink.errors import MedlinkError
from medlink.kb.store import KB
from medlink.linking.calibration import memory_tag
from medlink.linking.calibration_fit import FIT_TOP, Labelled, fit_calibration, fold_numbers, uncalibrated
from medlink.linking.config import LinkerConfig
from medlink.linking.memory import MemoryEntries
from medlink.progress import phase

MIN_MENTIONS = 50  # fewer memory mentions than this: nothing worth a second index per fold


class MemoryMention(NamedTuple):
    text: str
    concepts: frozenset[str]
    document: str  # "" when the memory does not know it
    pairs: tuple[int, ...]  # its pairs' numbers in the memory


def memory_mentions(memory: MemoryEntries) -> list[MemoryMention]:
    """The memory's mentions: consecutive pairs of one text, one document and new concepts are one mention with several
    concepts (as they were read); the same pair again is the next occurrence."""
    mentions: list[tuple[str, set[str], str, list[int]]] = []
    for number, (text, concept_id) in enumerate(memory.pairs):
        document = memory.document_of(number)
        last = mentions[-1] if mentions else None
        if last and last[0] == text and last[2] == document and concept_id not in last[1]:
            last[1].add(concept_id)
            last[3].append(number)
        else:
            mentions.append((text, {concept_id}, document, [number]))
    return [MemoryMention(text, frozenset(ids), document, tuple(pairs)) for text, ids, document, pairs in mentions]


def too_few_mentions(count: int) -> str:
    """What is wrong with a memory of ``count`` mentions for cross-fitting (each command adds its own remedy)."""
    return f"fitting probabilities on the memory needs at least {MIN_MENTIONS} of its mentions, and it has {count}"


def cross_fit_items(kb: KB, config: LinkerConfig, memory: MemoryEntries, folds: int = 5, seed: int = 0) -> list[Labelled]:
    """Each memory mention's candidate list from an index over ``kb`` + the other ``folds`` - 1 folds of ``memory``
    built with ``config`` (one without a calibration stage: ``calibration_fit.uncalibrated``), labelled by its own concepts.
    Folds take whole documents where the memory knows them: the other mentions of a held-out mention's document would
    otherwise stay in the index that links it, as they never are for new text.

    No concept is removed to make NIL examples (as ``fit_on_kb``'s pseudo-mentions do): with a share of each fold's
    concepts left out, the probabilities learn that share of absent concepts and run low on a full KB (a worse NCBI dev
    ECE out of fold), and dev's NIL F1 does not rise (docs/benchmark-history.md, NIL examples simulated in the
    cross-fit)."""
    from medlink.linking.linker import Linker

    if folds < 2:
        raise MedlinkError(f"cross-fitting needs at least 2 folds, not {folds}")
    mentions = memory_mentions(memory)
    if len(mentions) < MIN_MENTIONS:
        raise MedlinkError(
            f"{too_few_mentions(len(mentions))}: build the index with more annotated mentions (--memory FORMAT:PATH), or use the KB's own "
            "pseudo-mentions (--calibrate kb)"
        )
    fold_of = fold_numbers([m.document for m in mentions], folds, seed)
    items: list[Labelled] = []
    for fold in range(folds):
        held = [mentions[i] for i in np.flatnonzero(fold_of == fold)]
        kept = memory.subset(number for i in np.flatnonzero(fold_of != fold) for number in mentions[i].pairs)
        with phase(
            f"probabilities cross-fitted on the memory, fold {fold + 1} of {folds} ({len(held):,} mentions linked by an index without them)"
        ):
            linker = Linker.build(kb, config, kept, dictionary=False)
            results = linker.link([m.text for m in held], k=FIT_TOP)
        items.extend(
            Labelled(
                linker.key(m.text),
                r.candidates,
                [c.concept_id in m.concepts or not m.concepts.isdisjoint(c.alt_ids) for c in r.candidates],
                True,
                m.document or None,
            )
            for m, r in zip(held, results)
            if r.candidates
        )
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
    fitted_on = {
        "source": "the index memory's mentions, cross-fitted",
        "mentions": len(items),
        "cross_fit": cross_fit_summary(items, folds),
    }
    return fit_calibration(
        items, kb.normalize, fingerprint, nil_target=nil_target, fitted_on=fitted_on, memory=memory_tag(memory.summary())
    )


def memory_cross_fit(linker, kb: KB | None, config: LinkerConfig, folds: int) -> list[Labelled]:
    """``linker``'s memory mentions as extra fitting data for ``medlink tune --cross-fit`` (``config``: the tuned one, uncalibrated)."""
    memory = linker.memory_entries()
    if memory is None or not memory.pairs:
        raise MedlinkError(
            "cross-fitting the probabilities needs an index built with a memory (medlink index build --memory ...); "
            "this one has none: leave out --cross-fit"
        )
    if kb is None:
        raise MedlinkError(
            "cross-fitting the probabilities rebuilds the index per fold and needs its KB; the KB the index was built from is gone"
        )
    return cross_fit_items(kb, config, memory, folds)

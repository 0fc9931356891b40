"""Subpopulations of the evaluation mentions (Varma et al. (2021), Table 8), to see where a linker fails.

Each subpopulation is a membership mask over the mentions, computed only from what is given:
word count always; seen / unseen mention, seen / unseen concept, top-100 concepts, rare concepts
and unpopular mentions from the training mentions; direct match from the KB. Mention strings are
compared after normalisation (the KB's normaliser when a KB is given, else ``medlink.text.normalize``).

Definitions (a composite mention is one mention; its text is all parts):
- single-word / multi-word: one token or more after normalisation.
- seen / unseen mention: the normalised text occurs among the training mentions.
- seen / unseen concept: any gold id (or an equivalent id) is a gold id of a training mention.
- direct match / not direct match: every part, looked up in the KB by normalised name, hits a gold concept.
- top-100 concepts: a gold id is among the 100 concepts with most training mentions.
- rare concepts: the gold concept has fewer than 5 training mentions (unseen ones included, as in Varma et al. (2021)).
- unpopular: the mention was seen in training but mostly linked to a concept not in its gold set.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from medlink.corpora.mentions import LabeledMention
from medlink.eval.metrics import EquivalentIds, id_matches
from medlink.text import normalize as default_normalize


def _expand(ids: frozenset[str], equivalent_ids: EquivalentIds | None) -> set[str]:
    out = set(ids)
    if equivalent_ids:
        for i in ids:
            out.update(equivalent_ids.get(i, ()))
    return out


def subpopulation_masks(
    mentions: Sequence[LabeledMention],
    *,
    train: Sequence[LabeledMention] | None = None,
    kb: Any = None,
    equivalent_ids: EquivalentIds | None = None,
    normalize: Callable[[str], str] | None = None,
    top_n: int = 100,
    rare_below: int = 5,
) -> dict[str, list[bool]]:
    """Name -> membership mask (one bool per mention), in a stable display order."""
    norm = normalize or (kb.normalize if kb is not None else default_normalize)
    texts = [norm(m.text) for m in mentions]
    masks: dict[str, list[bool]] = {}
    multi = [len(t.split()) > 1 for t in texts]
    masks["single-word"] = [not x for x in multi]
    masks["multi-word"] = multi
    masks["composite"] = [m.is_composite for m in mentions]
    if train is not None:
        masks.update(_training_masks(mentions, texts, train, norm, equivalent_ids, top_n, rare_below))
    if kb is not None:
        direct = [_direct_match(m, kb, equivalent_ids) for m in mentions]
        masks["direct match"] = direct
        masks["not direct match"] = [not x for x in direct]
    return masks


def _training_masks(
    mentions: Sequence[LabeledMention],
    texts: list[str],
    train: Sequence[LabeledMention],
    norm: Callable[[str], str],
    equivalent_ids: EquivalentIds | None,
    top_n: int,
    rare_below: int,
) -> dict[str, list[bool]]:
    """The masks that compare each mention with the training mentions."""
    concept_counts: Counter[str] = Counter()
    links_by_text: dict[str, Counter[str]] = {}
    for m in train:
        concept_counts.update(m.gold)
        links_by_text.setdefault(norm(m.text), Counter()).update(m.gold)
    train_ids = _expand(frozenset(concept_counts), equivalent_ids)
    top = {cid for cid, _ in concept_counts.most_common(top_n)}

    def count(m: LabeledMention) -> int:
        return max(sum(concept_counts[i] for i in _expand(frozenset({g}), equivalent_ids)) for g in m.gold)

    seen_text = [t in links_by_text for t in texts]
    seen_concept = [not _expand(m.gold, equivalent_ids).isdisjoint(train_ids) for m in mentions]
    unpopular = []
    for m, t in zip(mentions, texts):
        links = links_by_text.get(t)
        unpopular.append(bool(links) and not id_matches(links.most_common(1)[0][0], m.gold, equivalent_ids))
    return {
        "seen mention": seen_text,
        "unseen mention": [not x for x in seen_text],
        "seen concept": seen_concept,
        "unseen concept": [not x for x in seen_concept],
        f"top-{top_n} concepts": [not _expand(m.gold, equivalent_ids).isdisjoint(top) for m in mentions],
        f"rare concepts (<{rare_below})": [count(m) < rare_below for m in mentions],
        "unpopular": unpopular,
    }


def _direct_match(mention: LabeledMention, kb: Any, equivalent_ids: EquivalentIds | None) -> bool:
    """Every part is, after normalisation, a name of one of the mention's gold concepts."""
    return all(any(id_matches(cid, mention.gold, equivalent_ids) for cid, _name, _kind in kb.lookup(part)) for part in mention.parts)

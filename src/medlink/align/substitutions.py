"""Word -> phrase substitutions learned from known mappings: how the source terminology's words read in the target.

Why: two terminologies name one thing with different words, systematically. The Disease Ontology says "bladder
cancer", ICD-10-CM "Malignant neoplasm of bladder"; "renal" is "kidney", "cutaneous" is "skin". No string measure
links "cancer" to "malignant neoplasm" and a general-purpose encoder does it only in part, while the known mappings an
aligner is trained on show it again and again. Each known (source alias, target name) pair that shares a content word
and differs in exactly one source word against one or two target words votes for that substitution; one that enough
known mappings vote for (``min_count`` source concepts, and ``min_share`` of the known sources using the word) is
kept. Every source alias holding such a word then gets a twin with the phrase in its place, one more query for the
candidate generators ("bladder malignant neoplasm" meets "Malignant neoplasm of bladder"). Learned by ``medlink train
aligner`` from its training mappings only and stored with the aligner (BENCHMARKS.md: DO -> ICD-10-CM).
"""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np

from medlink.align.candidates import SourceQueries, TargetIndex

log = logging.getLogger(__name__)

MIN_COUNT = 3  # known source concepts voting for a substitution (2 let in "lateral" -> "posterior" on DO -> ICD-10-CM)
MIN_SHARE = 0.2  # of the known source concepts whose aliases use the word
MAX_PHRASE = 2  # target words a source word may stand for
# words that carry no meaning of their own in a name, or only a level of detail ("other", "unspecified"): a pair differing
# in them is still a one-word difference, and none of them is learned as a substitution
FUNCTION_WORDS = frozenset(
    "a an and or of the in on with without to due by for nos unspecified other specified disease diseases disorder disorders".split()
)


def content_words(key: str) -> set[str]:
    """The words of a normalised name that can differ meaningfully (function words told apart whatever their case)."""
    return {w for w in key.split() if w.lower() not in FUNCTION_WORDS}


def learn(
    queries: SourceQueries,
    target: TargetIndex,
    gold: dict[int, set[int]],
    normalize,
    min_count: int = MIN_COUNT,
    min_share: float = MIN_SHARE,
) -> dict[str, str]:
    """The substitutions the known mappings ``gold`` (source position -> target positions) support, strongest first
    (module docstring); ``normalize``: the target's normaliser, as the queries' keys were made."""
    votes: Counter[tuple[str, str]] = Counter()
    users: Counter[str] = Counter()
    keys = [[] for _ in queries.concept_ids]
    for key, owner in zip(queries.aliases, queries.owner.tolist()):
        keys[owner].append(key)
    for source, targets in gold.items():
        names = [(key, content_words(key)) for t in targets for key in map(normalize, (target.names[t], *target.synonyms.get(t, ())))]
        found: set[tuple[str, str]] = set()
        used: set[str] = set()
        for key in keys[source]:
            words = content_words(key)
            used |= words
            for name, name_words in names:
                only_source, only_target = words - name_words, name_words - words
                if words & name_words and len(only_source) == 1 and 1 <= len(only_target) <= MAX_PHRASE:
                    found.add((next(iter(only_source)), " ".join(w for w in dict.fromkeys(name.split()) if w in only_target)))
        votes.update(found)
        users.update(used)
    learned: dict[str, str] = {}
    for (word, phrase), count in sorted(votes.items(), key=lambda item: (-item[1], item[0])):
        if count >= min_count and count / users[word] >= min_share and word not in learned:
            learned[word] = phrase
    return learned


def normalized(substitutions: dict[str, str], normalize) -> dict[str, str]:
    """``substitutions`` in the form the queries' keys take (a hand-edited "Cancer" -> "MALIGNANT NEOPLASM" meets the key
    "bladder cancer" where the target folds case); an entry whose word does not stay one word ("kid-ney" -> "kid ney"),
    or that normalises to nothing, cannot match a word: it is dropped with a warning naming it."""
    out: dict[str, str] = {}
    dropped = []
    for word, phrase in substitutions.items():
        key, value = normalize(word), normalize(phrase)
        if key and value and len(key.split()) == 1:
            out.setdefault(key, value)
        else:
            dropped.append(word)
    if dropped:
        log.warning("substitutions ignored (not one word once normalised, or nothing left): %s", ", ".join(map(repr, dropped[:10])))
    return out


def _twin(words: list[str], substitutions: dict[str, str]) -> str:
    """The alias with each substituted word replaced by its phrase, less the phrase's words the alias already has
    ("malignant cancer" -> "malignant neoplasm", not "malignant malignant neoplasm")."""
    out: list[str] = []
    for word in words:
        out.extend([w for w in substitutions[word].split() if w not in words] if word in substitutions else [word])
    return " ".join(out)


def expand(queries: SourceQueries, substitutions: dict[str, str], normalize=None) -> SourceQueries:
    """``queries`` with, after each concept's own aliases, a twin of every alias holding a substituted word (``_twin``);
    a twin equal to one of the concept's keys is left out. Each twin records the alias it reads (``reads``), so pooling
    takes the better of the two rather than counting them as two synonyms; the display aliases (what a reranker reads)
    stay the concept's own names. ``normalize``: the queries' normaliser, for substitutions not written in normalised form
    (``normalized``)."""
    if normalize is not None:
        substitutions = normalized(substitutions, normalize)
    if not substitutions:
        return queries
    owners = queries.owner.tolist()
    split = ((i, o, key.split()) for i, (key, o) in enumerate(zip(queries.aliases, owners)))
    twins = [(i, o, _twin(words, substitutions)) for i, o, words in split if any(w in substitutions for w in words)]
    if not twins:
        return queries
    seen: dict[int, set[str]] = {o: set() for _, o, _ in twins}  # keys only of the concepts that get a twin
    for key, o in zip(queries.aliases, owners):
        if o in seen:
            seen[o].add(key)
    aliases, owner = list(queries.aliases), owners
    reads = list(range(len(aliases))) if queries.reads is None else queries.reads.tolist()
    for i, o, twin in twins:
        if twin and twin not in seen[o]:
            seen[o].add(twin)
            aliases.append(twin)
            owner.append(o)
            reads.append(reads[i])
    order = np.argsort(np.asarray(owner, dtype=np.int64), kind="stable")  # each concept's aliases together, as from_kb writes them
    moved = np.empty(len(order), np.int64)
    moved[order] = np.arange(len(order))
    return SourceQueries(
        queries.concept_ids,
        queries.names,
        [aliases[i] for i in order],
        np.asarray(owner, dtype=np.int64)[order],
        queries.alias_sets,
        moved[np.asarray(reads, dtype=np.int64)[order]],
    )


MAX_EDITED_PHRASE = 8  # words a hand-edited phrase may hold (learning writes at most MAX_PHRASE)


def check(substitutions: object) -> None:
    """Refuse what neither ``learn`` nor a sensible hand edit writes (ValueError naming the entry, worded for an aligner
    file's reader)."""
    if not isinstance(substitutions, dict):
        raise ValueError(f'"substitutions" must be an object of word: phrase entries, not {type(substitutions).__name__}')
    for word, phrase in substitutions.items():
        if not isinstance(phrase, str) or len(word.split()) != 1 or not 1 <= len(phrase.split()) <= MAX_EDITED_PHRASE:
            raise ValueError(
                f'"substitutions" entry {word[:40]!r}: {str(phrase)[:40]!r} must map one word to a phrase of 1 to {MAX_EDITED_PHRASE} words'
            )

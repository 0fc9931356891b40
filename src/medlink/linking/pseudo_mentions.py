"""Labelled mentions drawn from the KB itself, for an index nobody has dev data for (the default one included).

Why: the calibration stage learns P(correct) from labelled candidate lists, and most users have no labelled mentions
for their terminology. The KB's own synonyms are the next best thing if each is asked about as a mention *after it
was taken out of the index* (otherwise it matches itself exactly and everything looks certain): a seeded sample of
concepts gives up one synonym each (every name of the concept with the same normalised form), and a smaller sample
of concepts leaves the index entirely, their names becoming NIL mentions. Real mentions also often *are* a KB name,
and a model that never saw an exact match would learn that exact matches are rare and wrong: as many names again are
asked about as they stand in the index (right when the name is that concept's alone, ambiguous when shared). And real
mentions are often a name misspelt or inflected ("heart failures", "diabetis mellitus"): a model that saw only exact
names and held-out synonyms (which read unlike the names left) learns that a near-miss spelling is wrong, so some
names are asked about with one edit (a letter dropped, doubled or swapped, a plural "s" added or taken away). And people
name a disease by what its name says before a generic head ("Parkinson's" for "Parkinson's disease", "celiac"): short
names ending in one are asked about without it. A linker built with the index's own config over what is left links
them all; its candidate lists are the fitting data.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from medlink.kb.store import KB
from medlink.text.normalize import GENERIC_HEADS as HEADS

DRAW_VERSION = 2  # what is drawn (2: shortened names): a default index whose probabilities an older draw fitted is rebuilt
HELD_OUT = 1500  # concepts that give up a synonym
PRESENT = 1500  # names asked about as they stand in the index
NIL_SHARE = 0.15  # of HELD_OUT + PRESENT, concepts removed whole: their preferred names become NIL mentions
VARIANTS = 750  # names asked about with one edit (still in the index)
SHORTENED = 500  # names ending in a generic head asked about without it ("Crohn's" for "Crohn's disease")
SHORTENED_HEADS = frozenset(head + plural for head in HEADS for plural in ("", "s"))  # "disease(s)", "syndrome(s)"...
SHORTENED_WORDS = 2  # at most this many words before the head
NOT_SHORTENED = frozenset({"other", "unspecified", "specified"})  # a classification's residual names


@dataclass
class PseudoMention:
    text: str
    concept_id: str  # the concept it names (removed from the index when ``nil``)
    nil: bool
    named: str | None = None  # the KB name it was shortened from: concepts named so are right answers too


class HeldOutKB:
    """A KB without some names and some concepts: what ``Linker.build`` reads (it reads no more than this)."""

    def __init__(self, kb: KB, held_names: set[tuple[str, str]], removed: set[str]):
        self.kb, self.held_names, self.removed = kb, held_names, removed
        self.path, self.checksum, self.normalize = kb.path, kb.checksum, kb.normalize

    def iter_concepts(self) -> Iterator[tuple[str, str]]:
        return ((cid, name) for cid, name in self.kb.iter_concepts() if cid not in self.removed)

    def iter_names(self) -> Iterator[tuple[str, str, str]]:
        for cid, text, kind in self.kb.iter_names():
            if cid not in self.removed and (cid, self.normalize(text)) not in self.held_names:
                yield cid, text, kind

    def iter_descriptions(self):
        return ((cid, types, definition) for cid, types, definition in self.kb.iter_descriptions() if cid not in self.removed)

    def iter_id_aliases(self):
        return ((alias, cid, reason) for alias, cid, reason in self.kb.iter_id_aliases() if cid not in self.removed)


def misspelt(text: str, rng: random.Random) -> str:
    """``text`` with one edit in one of its longer words: a plural "s" added or taken away, or a letter inside the word
    dropped, doubled or swapped with the next (the first letter stays: people rarely miss it)."""
    words = text.split(" ")
    long_words = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
    if not long_words:
        return text
    i = rng.choice(long_words)
    word, at = words[i], rng.randrange(1, len(words[i]) - 1)
    edit = rng.choice(("plural", "drop", "double", "swap"))
    if edit == "plural":
        word = word[:-1] if word.endswith("s") else word + "s"
    elif edit == "drop":
        word = word[:at] + word[at + 1 :]
    elif edit == "double":
        word = word[:at] + word[at] + word[at:]
    else:
        word = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    return " ".join(words[:i] + [word] + words[i + 1 :])


def without_generic_head(text: str) -> str | None:
    """A short name without its generic head ("Parkinson's disease" -> "Parkinson's", "Celiac disease" -> "Celiac"): one
    or two words before the head, a word of four letters or more among them, nothing but letters, hyphens and
    apostrophes; None for anything else ("Other specified retinal disorders" is not something people shorten)."""
    words = text.split()
    rest = words[:-1]
    if not 1 <= len(rest) <= SHORTENED_WORDS or words[-1].lower() not in SHORTENED_HEADS or rest[0].lower() in NOT_SHORTENED:
        return None
    if not all(ch.isalpha() or ch in "-'’" for word in rest for ch in word):
        return None
    return " ".join(rest) if any(sum(ch.isalpha() for ch in word) >= 4 for word in rest) else None


def draw_pseudo_mentions(
    kb: KB,
    held_out: int = HELD_OUT,
    present: int = PRESENT,
    nil_share: float = NIL_SHARE,
    seed: int = 0,
    variants: int = VARIANTS,
    shortened: int = SHORTENED,
) -> tuple[list[PseudoMention], HeldOutKB]:
    """Seeded pseudo-mentions and the KB they must be linked against."""
    names: dict[str, dict[str, str]] = {}  # concept -> normalised form -> one spelling of it
    for cid, text, _kind in kb.iter_names():
        key = kb.normalize(text)
        if key:
            names.setdefault(cid, {}).setdefault(key, text)
    preferred = dict(kb.iter_concepts())
    rng = random.Random(seed)
    concepts = sorted(names)
    rng.shuffle(concepts)
    with_synonyms = [cid for cid in concepts if len(names[cid]) > 1]
    chosen = with_synonyms[:held_out]
    taken = set(chosen)
    others = [cid for cid in concepts if cid not in taken]
    as_they_stand = others[:present]
    removed = others[present : present + int(round((len(chosen) + len(as_they_stand)) * nil_share))]
    varied = others[present + len(removed) : present + len(removed) + variants]
    mentions, held_names = [], set()
    for cid in chosen:
        preferred_key = kb.normalize(preferred.get(cid, ""))
        key = rng.choice(sorted(k for k in names[cid] if k != preferred_key) or sorted(names[cid]))
        held_names.add((cid, key))
        mentions.append(PseudoMention(names[cid][key], cid, False))
    for cid in as_they_stand:
        mentions.append(PseudoMention(names[cid][rng.choice(sorted(names[cid]))], cid, False))
    for cid in removed:
        mentions.append(PseudoMention(preferred.get(cid) or next(iter(names[cid].values())), cid, True))
    for cid in varied:
        variant = misspelt(names[cid][rng.choice(sorted(names[cid]))], rng)
        if kb.normalize(variant) not in names[cid]:  # a name of short words only stays as it is: asked about as it stands already
            mentions.append(PseudoMention(variant, cid, False))
    every_name = {key for keys in names.values() for key in keys}
    for cid in others[present + len(removed) + len(varied) :]:
        if shortened <= 0:
            break
        short = [
            (rest, text)
            for _key, text in sorted(names[cid].items())
            if (rest := without_generic_head(text)) is not None and kb.normalize(rest) not in every_name
        ]  # a shortening that is some concept's name is asked about as it stands
        if short:
            rest, text = rng.choice(short)
            mentions.append(PseudoMention(rest, cid, False, named=text))
            shortened -= 1
    return mentions, HeldOutKB(kb, held_names, set(removed))

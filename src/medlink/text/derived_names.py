"""Words that text uses for a KB's conditions and no name spells, derived from the names themselves.

Why: an article says "hypertensive rats", "nephrotoxicity", "renal injury" or "drug toxicity" as "toxicity"; a KB
names *Hypertension*, *Kidney Diseases* and *Drug Toxicity*. Each derived word is found in running text (the
dictionary finder) and read as the name it came from, so the linker links that name. Derived, in this order, the first
reading of a word kept:

- a name less its leading "drug": "toxicity", "overdose" (*Drug Toxicity*, *Drug Overdose*);
- an organ's combining form with "toxicity" or "toxic", and an organ's adjective with "injury", "damage" or
  "toxicity": "nephrotoxicity", "renal injury" read as the KB's "drug-induced ORGAN injury", else "ORGAN diseases";
- an organ's combining form with "-pathy": "encephalopathy", "neuropathy" read as "ORGAN diseases";
- a two-word name less its head "syndrome" or "disorder", where the word left is an adjective in "-ic" or a
  "-toxicity" that opens names with few other words: "neurotoxicity", "manic" (*Neurotoxicity Syndromes*, *Manic
  Disorder*);
- a one-word name's adjective, by its ending: "hypertensive" (*Hypertension*), "ischemic" (*Ischemia*),
  "cholestatic" (*Cholestasis*), "atrophic" (*Atrophy*), "parkinsonian" (*Parkinsonism*).

A derived word that is a name itself, or shorter than ``MIN_LENGTH``, is left out: a KB's own words come first. Found
right before another span, a derived word qualifies it ("psoriatic arthritis") and is no mention of its own.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from medlink.core import Annotation

DERIVED_MATCH = "derived"  # a derived word's span's ``infons["match"]``
SPACES = re.compile(" *")
MIN_LENGTH = 5
GENERIC_HEADS = ("syndrome", "syndromes", "disorder", "disorders")
MAX_FOLLOWERS = 2  # other words a word may open names with and still stand for one alone ("manic": depressive, state)
# an organ's combining form, and the adjectives text gives it, by the organ's word in a KB's names
ORGANS = {
    "kidney": (("nephro",), ("renal", "kidney")),
    "liver": (("hepato",), ("hepatic", "liver")),
    "heart": (("cardio",), ("cardiac",)),
    "myocardial": ((), ("myocardial",)),
    "lung": (("pneumo", "pulmono"), ("pulmonary", "lung")),
    "ear": (("oto",), ()),
    "bone marrow": (("myelo",), ()),
    "hematologic": (("hemato",), ()),
    "skin": (("dermato",), ()),
}
# a combining form with "-pathy" (disease of), by the word a KB's "... diseases" names its organ with
DISEASE_OF = {"encephalo": "brain", "neuro": "nervous system", "nephro": "kidney", "hepato": "liver", "retino": "retinal",
              "entero": "intestinal", "arthro": "joint", "angio": "vascular", "myelo": "spinal cord", "osteo": "bone"}  # fmt: skip
TOXIC = ("toxicity", "toxicities", "toxic")
INJURIES = ("injury", "injuries", "damage", "toxicity")
# a one-word name's ending -> its adjective's (longest ending first)
ADJECTIVES = (
    ("tension", "tensive"), ("emia", "emic"), ("osis", "otic"), ("sis", "tic"), ("psy", "ptic"), ("ism", "ian"), ("ism", "ic"), ("ia", "ic"), ("y", "ic"),
)  # fmt: skip
HEAD_ADJECTIVE = re.compile(r"(?:ic|toxicity)$")
ENDINGS = tuple(dict.fromkeys(ending for ending, _ in ADJECTIVES))


def derived_names(keys: Collection[str]) -> dict[str, str]:
    """Each derived word and the name it is read as, both as the normaliser writes them, from a KB's normalised names
    (``keys``: every name's and every other form's, a set or a dict's keys): see the module docstring. A single pass
    collects each rule's candidates, so a UMLS-sized KB's millions of names cost no copy of themselves."""
    drugs, heads, singles = [], {}, []
    for key in keys:
        first, _, rest = key.partition(" ")
        if not rest:
            if "-" not in key and key.endswith(ENDINGS):
                singles.append(key)
        elif " " not in rest:
            if first == "drug":
                drugs.append((rest, key))
            elif rest in GENERIC_HEADS and HEAD_ADJECTIVE.search(first):
                heads.setdefault(first, key)
    followers: dict[str, set[str]] = {first: set() for first in heads}  # the words after it in names, plurals as singulars
    for key in keys:
        first, _, rest = key.partition(" ")
        if rest and first in followers:
            followers[first].add(rest.split()[0].removesuffix("s"))
    out: dict[str, str] = {}

    def add(word: str, key: str) -> None:
        if len(word) >= MIN_LENGTH and word not in keys and word not in out:
            out[word] = key

    for word, key in drugs:
        add(word, key)
    for organ, (forms, adjectives) in ORGANS.items():
        target = next(
            (key for key in (f"drug-induced {organ} injury", f"drug induced {organ} injury", f"{organ} diseases") if key in keys), None
        )
        if target is not None:
            for word in [form + toxic for form in forms for toxic in TOXIC] + [
                f"{adjective} {injury}" for adjective in adjectives for injury in INJURIES
            ]:
                add(word, target)
    for form, organ in DISEASE_OF.items():
        if f"{organ} diseases" in keys:
            for word in (f"{form}pathy", f"{form}pathies"):
                add(word, f"{organ} diseases")
    generic = {head.removesuffix("s") for head in GENERIC_HEADS}
    for first, key in heads.items():
        if len(followers[first] - generic) <= MAX_FOLLOWERS:
            add(first, key)
    for key in singles:
        ending = next((ending for ending, _ in ADJECTIVES if key.endswith(ending) and len(key) > len(ending) + 3), None)
        for adjective in (adjective for named, adjective in ADJECTIVES if named == ending):  # "-ism": "-ian" and "-ic"
            add(key[: -len(ending)] + adjective, key)
    return out


def qualifiers_dropped(text: str, spans: list[Annotation]) -> list[Annotation]:
    """``spans`` less each derived word that stands right before another span: there it qualifies that one
    ("psoriatic arthritis", whose head is "arthritis"), where alone it names the condition ("hypertensive rats")."""
    starts = {span.start for span in spans if span.infons.get("match") != DERIVED_MATCH}
    return [span for span in spans if span.infons.get("match") != DERIVED_MATCH or SPACES.match(text, span.end).end() not in starts]

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
from collections.abc import Callable, Iterable

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


def derived_names(names: Iterable[str], normalize: Callable[[str], str]) -> dict[str, str]:
    """Each derived word (normalised) and the name it is read as (as written): see the module docstring."""
    written: dict[str, str] = {}
    for name in names:
        key = normalize(name)
        if key:
            written.setdefault(key, name)
    followers: dict[str, set[str]] = {}  # the words after each first word of a name, plurals read as singulars
    for key in written:
        first, _, rest = key.partition(" ")
        if rest:
            followers.setdefault(first, set()).add(rest.split()[0].removesuffix("s"))
    out: dict[str, str] = {}

    def add(word: str, key: str) -> None:
        if len(word) >= MIN_LENGTH and word not in written and word not in out:
            out[word] = written[key]

    for key in written:
        words = key.split()
        if len(words) == 2 and words[0] == "drug":
            add(words[1], key)
    for organ, (forms, adjectives) in ORGANS.items():
        target = next(
            (key for key in (f"drug-induced {organ} injury", f"drug induced {organ} injury", f"{organ} diseases") if key in written), None
        )
        if target is not None:
            for word in [form + toxic for form in forms for toxic in TOXIC] + [
                f"{adjective} {injury}" for adjective in adjectives for injury in INJURIES
            ]:
                add(word, target)
    for form, organ in DISEASE_OF.items():
        if f"{organ} diseases" in written:
            for word in (f"{form}pathy", f"{form}pathies"):
                add(word, f"{organ} diseases")
    for key in written:
        words = key.split()
        others = followers.get(words[0], set()) - {head.removesuffix("s") for head in GENERIC_HEADS}
        if len(words) == 2 and words[1] in GENERIC_HEADS and HEAD_ADJECTIVE.search(words[0]) and len(others) <= MAX_FOLLOWERS:
            add(words[0], key)
    for key in written:
        if " " in key or "-" in key:
            continue
        ending = next((ending for ending, _ in ADJECTIVES if key.endswith(ending) and len(key) > len(ending) + 3), None)
        for adjective in (adjective for named, adjective in ADJECTIVES if named == ending):  # "-ism": "-ian" and "-ic"
            add(key[: -len(ending)] + adjective, key)
    return out


def qualifiers_dropped(text: str, spans: list[Annotation]) -> list[Annotation]:
    """``spans`` less each derived word that stands right before another span: there it qualifies that one
    ("psoriatic arthritis", whose head is "arthritis"), where alone it names the condition ("hypertensive rats")."""
    starts = {span.start for span in spans if span.infons.get("match") != DERIVED_MATCH}
    return [span for span in spans if span.infons.get("match") != DERIVED_MATCH or SPACES.match(text, span.end).end() not in starts]

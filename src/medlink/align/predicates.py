"""Whether a source's best target is broader than the source (``skos:broadMatch``) or narrower (``skos:narrowMatch``).

Why: a target terminology often has no concept as specific as the source's, and its best candidate is then the
broader one a terminology team would map to, but not an equivalent: DO's "X-linked chondrodysplasia punctata" goes to
ICD-10-CM's "Chondrodysplasia punctata", "chromosome 18q deletion syndrome" to "Other deletions of part of a
chromosome". Calling those exactMatch tells a user (and ``kb augment``, which carries an equivalent's names and
definition but only a broader match's types and ancestors) more than the evidence says. Two readings, each from the
names alone:

- a **residual class** of the target ("Other ...", "... not elsewhere classified") for a source that is not one itself
  ("X, unspecified" is where a classification keeps X itself: broader only by the next reading);
- **words left out**: some target name says in fewer words what a source name says (every word it has, the source
  name has, and more), while no name of the one reads word for word as a name of the other.

The mirror of the second reading (every word of a source name in a target name that has more) is a narrower target.
Words that do not tell concepts apart ("disease", "syndrome", "of", the "s" of a possessive) are set aside first, so
"Asperger's syndrome" and "Asperger syndrome" read alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from medlink.align.sssom import BROAD, EXACT, NARROW
from medlink.text.normalize import read_signs

# "X, unspecified" is where a classification puts X itself, not detailed further: broader only if "X" is (words left out)
RESIDUAL = re.compile(r"^other\b|\bnot elsewhere classified\b|\bnec$")
NOT_TELLING = frozenset(
    {
        "of",
        "the",
        "and",
        "or",
        "in",
        "with",
        "without",
        "due",
        "to",
        "by",
        "a",
        "an",
        "for",
        "on",
        "as",
        "s",
        "disease",
        "diseases",
        "disorder",
        "disorders",
        "syndrome",
        "syndromes",
        "condition",
        "conditions",
        "other",
        "unspecified",
        "specified",
        "nos",
        "not",
        "elsewhere",
        "classified",
    }
)


def words(name: str) -> list[str]:
    """A name's words, lower case, punctuation aside and a sign read as its word, as the normaliser reads them ("HER2-"
    is "her2 negative"; names as a KB spells them or normalised: the same words)."""
    return re.findall(r"[^\W_]+", read_signs(name).lower())


def telling_words(name: str) -> frozenset[str]:
    """The words of a name that tell concepts apart."""
    return frozenset(word for word in words(name) if word not in NOT_TELLING)


def is_residual(name: str) -> bool:
    """A residual class's name ("Other specified leukemias", "Congenital malformations of lips, not elsewhere classified")."""
    return bool(RESIDUAL.search(" ".join(words(name))))


def predicate(source_names: Iterable[str], target_names: Iterable[str]) -> str:
    """The SKOS match a source's best target (its names, the preferred one first) reads as from the names alone:
    exactMatch, broadMatch (the target broader) or narrowMatch (the target says more: "Acute myocardial infarction"
    for "myocardial infarction", where the target terminology has nothing as general)."""
    sources, targets = list(source_names), list(target_names)
    source_words = [told for name in sources for told in map(telling_words, readings(name)) if told]
    target_words = [told for name in targets for told in map(telling_words, readings(name)) if told]
    if any(t == s for t in target_words for s in source_words):
        return EXACT  # a name in common, word for word: an equivalent
    if any(t < s for t in target_words for s in source_words):
        return BROAD
    if targets and is_residual(targets[0]) and not any(is_residual(name) for name in sources):
        return BROAD
    # the narrower reading from the source's own name only: a terminology's synonyms are often looser ("ovary neoplasm")
    own = telling_words(sources[0]) if sources else frozenset()
    said_more = [t for t in target_words if own and own < t]
    if said_more:
        return BROAD if groups_more(targets, sources) else NARROW
    return EXACT


def groups_more(target_names: Iterable[str], source_names: Iterable[str]) -> bool:
    """Does a target that says more say it with "and" where the source does not? "Syringomyelia and syringobulbia" or
    "Syncope and collapse" for "syncope" groups more conditions: broader, not narrower."""
    return any("and" in words(name) for name in target_names) and not any("and" in words(name) for name in source_names)


SHORT_FORM_AT_END = re.compile(r"^(.+?)\s*\(([A-Z][A-Z]{1,6})\)\s*$")  # "... disorder (PTSD)"; not "(primary)"
SMALL_WORDS = frozenset({"of", "and", "the", "in", "with", "to"})


def spelled_short_form(name: str) -> str | None:
    """The short form in parentheses that ends a name and spells all of it before ("Post-traumatic stress disorder
    (PTSD)"); None for one that spells only part ("Personal history of transient ischemic attack (TIA)")."""
    found = SHORT_FORM_AT_END.match(name)
    if found is None:
        return None
    said = re.findall(r"[A-Za-z]+", found.group(1))
    initials = {"".join(w[0] for w in said), "".join(w[0] for w in said if w.lower() not in SMALL_WORDS)}
    return found.group(2) if found.group(2).lower() in {i.lower() for i in initials} else None


def readings(name: str) -> list[str]:
    """A name and what its brackets say it also is: ICD-10-CM's "Mucocutaneous lymph node syndrome [Kawasaki]" is also
    "Kawasaki" and the name before the bracket; "Essential (primary) hypertension" also reads without the parentheses;
    "Post-traumatic stress disorder (PTSD)" is also the short form that spells it, "PTSD"."""
    out = [name]
    bracket = re.search(r"\[([^\]]+)\]", name)
    if bracket:
        out += [bracket.group(1), (name[: bracket.start()] + name[bracket.end() :]).strip()]
    out += [re.sub(r"\s*\([^)]*\)", "", text) for text in out if "(" in text]
    short = spelled_short_form(name)
    return out + ([short] if short else [])

"""The forms of a word the dictionary finder reads besides its spelling: plurals (English, Latin and Greek), a
British spelling ("anaemia" for "anemia"), a misspelt disease name, a prefix written joined ("preeclampsia" for
"pre-eclampsia"), a contraction written without its apostrophe ("cant" for "can't")."""

from __future__ import annotations

import re
from collections.abc import Container
from functools import lru_cache
from itertools import combinations

from medlink.text.tokens import Token


def spaced(text: str, tokens: list[Token]) -> bool:
    """Whether nothing but spaces parts the words, or a hyphen inside one ("COVID-19"): a name turned round, "hip fracture",
    is not "hip: fracture"."""
    return all(
        text[before.end : after.start] == "-" or not text[before.end : after.start].strip() for before, after in zip(tokens, tokens[1:])
    )


@lru_cache(maxsize=1 << 18)  # names and texts repeat their words: each read once
def loose_word(word: str) -> str:
    """Harman's S-stemmer: a plural reduced to its singular, nothing else touched."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


VOWELS = frozenset("aeiou")
SIS_PLURAL = "ses"  # "keratoses", "stenoses": the plural of a "-sis" name
# Latin and Greek plurals the S-stemmer leaves alone or cuts wrong ("emboli", "metastases", "vertebrae", "diverticula"), each
# with the singular endings it may stand for; longer endings first ("ata" before "a")
CLASSICAL_PLURALS = (
    ("ices", ("ix", "ex")),
    ("ses", ("sis",)),
    ("ges", ("x",)),
    ("ata", ("a",)),
    ("ina", ("en",)),
    ("ae", ("a",)),
    ("i", ("us",)),
    ("a", ("um", "on")),
)


def classical_singular(word: str, vocabulary: dict[str, int]) -> str | None:
    """The singular a Latin or Greek plural the names never spell stands for, where they spell it ("metastases" ->
    "metastasis"); None otherwise ("diseases" has no "diseasis"). As a spelling correction does, it reads only a word the
    names do not use: "ganglia" in "basal ganglia" stays, never the name "Ganglion", nor "pylori" "pylorus"; nor a
    word of five letters or fewer ("typhi" in "Salmonella typhi" is no typhus). A "-ses" plural of a "-sis" name is
    read so though some names use it ("keratoses": a few names say "Palmoplantar keratoses", the rest "Seborrheic
    keratosis"): it is never another word, and a name that spells the plural is still met as written."""
    if len(word) <= 5 or word in vocabulary and not (word.endswith(SIS_PLURAL) and word[: -len(SIS_PLURAL)] + "sis" in vocabulary):
        return None
    for plural, singulars in CLASSICAL_PLURALS:
        if word.endswith(plural):
            stem = word[: -len(plural)]
            return next((stem + ending for ending in singulars if stem + ending in vocabulary), None)
    return None


# how British medical spelling differs from American: "ae" and "oe" for "e" ("anaemia", "haemorrhage", "oedema",
# "diarrhoea", "paediatric"), "our" for "or" at a word's end ("tumour", "tumours")
BRITISH_TO_AMERICAN = ((re.compile("ae"), "e"), (re.compile("oe"), "e"), (re.compile(r"our(?=s?$)"), "or"))


def american_spelling(word: str, vocabulary: Container[str]) -> str | None:
    """The American spelling of a British one, where the names use it ("anaemia" -> "anemia", "tumours" -> "tumors");
    None otherwise, and for a word of four letters or fewer ("toe" stays a toe)."""
    if len(word) <= 4 or "ae" not in word and "oe" not in word and not word.endswith(("our", "ours")):
        return None
    for size in range(1, len(BRITISH_TO_AMERICAN) + 1):
        for rules in combinations(BRITISH_TO_AMERICAN, size):
            variant = word
            for pattern, replacement in rules:
                variant = pattern.sub(replacement, variant)
            if variant != word and (variant in vocabulary or loose_word(variant) in vocabulary):
                return variant
    return None


# the endings of a disease's Greek or Latin name: a lone word corrected to one of them reads as a misspelt disease
DISEASE_ENDINGS = tuple("ia itis osis oma omas pathy algia rrhea rrhoea uria plegia trophy genesis iasis megaly penia cytosis".split())


def slip(word: str, correction: str) -> bool:
    """Whether a misspelt word can stand alone as its correction: a disease's Greek or Latin name (``DISEASE_ENDINGS``)
    of seven letters or more, with a letter dropped, doubled or two swapped inside the word ("pnuemonia", "diarhea",
    "hyperlipdemia"), or one vowel for another inside that ending ("cellulitus", "dysurea"; not its last letter:
    "keratome" is no keratoma). Not one letter for another elsewhere, the edit that turns English words into names
    ("structure" -> "stricture", "found" -> "wound"), nor an ending ("include" -> "included"), nor an English word
    ("propose" -> "proptose", a loose form of "proptosis")."""
    ending = next((e for e in DISEASE_ENDINGS if correction.endswith(e)), None)
    if len(word) < 7 or ending is None or word[:2] != correction[:2]:
        return False
    if word[-2:] == correction[-2:] and (len(word) != len(correction) or sorted(word) == sorted(correction)):
        return True
    changed = [i for i, (a, b) in enumerate(zip(word, correction)) if a != b] if len(word) == len(correction) else []
    at = changed[0] if len(changed) == 1 else -1
    return len(word) - len(ending) <= at < len(word) - 1 and {word[at], correction[at]} <= VOWELS  # "keratome" is a word


# prefixes a name hyphenates and text often joins ("Pre-eclampsia" / "preeclampsia", "Post-traumatic" / "posttraumatic")
JOINED_PREFIXES = tuple(
    "pre post non anti intra extra peri para hyper hypo sub supra inter micro macro multi poly pseudo semi trans neo auto co re over under mid".split()
)
JOINED = frozenset(JOINED_PREFIXES)
PREFIX_LENGTHS = sorted({len(prefix) for prefix in JOINED_PREFIXES})  # a word's first k letters looked up, not every prefix tried

# "n't" contractions as text writes them without the apostrophe ("cant sleep", "doesnt eat"), read as the names'
# normalised words ("can't" is "can t"); "wont" and "cant" are English words too, so only where the names never use them
CONTRACTIONS = frozenset(
    """cant dont wont isnt doesnt didnt couldnt shouldnt wouldnt wasnt werent arent hasnt havent hadnt aint mustnt neednt""".split()
)


def prefixes_split(tokens: list[Token], known: Container[str]) -> tuple[list[Token], set[int]]:
    """``tokens`` with a word the names never use, but that is a prefix and a word they do ("preeclampsia": "pre" +
    "eclampsia", as "Pre-eclampsia" is written), read as those two words; and the offsets where a word was cut."""
    out, inside = [], set()
    for token in tokens:
        word, prefix = token.norm, None
        if word not in known and len(word) > 4 and token.end - token.start == len(word):
            prefix = next((word[:k] for k in PREFIX_LENGTHS if word[:k] in JOINED and word[:k] in known and word[k:] in known), None)
        if prefix is None:
            out.append(token)
            continue
        cut = token.start + len(prefix)
        out += [Token(token.start, cut, prefix), Token(cut, token.end, token.norm[len(prefix) :])]
        inside.add(cut)
    return out, inside


def contractions_split(tokens: list[Token], known: Container[str]) -> tuple[list[Token], set[int]]:
    """``tokens`` with a contraction written without its apostrophe ("cant") read as the names' words for it ("can",
    "t"), where the names use those and not the word itself; and the offsets of the cuts (before the "t")."""
    if "t" not in known:
        return tokens, set()
    out, joints = [], set()
    for token in tokens:
        word = token.norm
        if word in CONTRACTIONS and word not in known and word[:-1] in known and token.end - token.start == len(word):
            cut = token.end - 1
            out += [Token(token.start, cut, word[:-1]), Token(cut, token.end, "t")]
            joints.add(cut)
        else:
            out.append(token)
    return out, joints

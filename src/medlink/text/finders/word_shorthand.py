"""Words a clinical note shortens inside a longer name, read as the words the names spell.

"breast ca", "brain mets", "bipolar d/o", "pulmonary HTN", "hip fx", "EtOH withdrawal", "1st degree AV block": the KB
spells "Breast cancer", "Brain metastasis", "Bipolar disorder", "Pulmonary hypertension" ... and a word automaton
meets none of them. The dictionary finder also matches the passage with these words written out (``expanded``); a span
so found carries the written-out reading (``infons["read_as"]``), the text the linker then links.

A shortened word makes no span alone (but the few in ``ALONE``: "sz", "infxn"): at least one word of the span is
written as the names spell it, so "Ca 9.2" (calcium) is no cancer and "4 METs" no metastasis, and a span takes a
shortened word's expansion whole ("RLQ" is "right lower quadrant", never "right" alone). A curated list, like the
clinical shorthand the default KB adds (``kb/data/clinical_shorthand.jsonl``); words written in capitals only ("DM",
"LE", "L") are matched so only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from medlink.core import READ_AS, Annotation
from medlink.text.lay_words import LAY_WORDS
from medlink.text.normalize import Normalizer
from medlink.text.tokens import Token, respelt, tokenize

# surface (lower case) -> the words it stands for, matched in any case
ANY_CASE = {
    "ca": "cancer",
    "mets": "metastasis",
    "d/o": "disorder",
    "dz": "disease",
    "abd": "abdominal",
    "wt": "weight",
    "resp": "respiratory",
    "infxn": "infection",
    "htn": "hypertension",
    "etoh": "alcohol",
    "gtc": "generalized tonic-clonic",
    "rlq": "right lower quadrant",
    "ruq": "right upper quadrant",
    "llq": "left lower quadrant",
    "luq": "left upper quadrant",
    "bilat": "bilateral",
    "1st": "first",
    "2nd": "second",
    "3rd": "third",
    "4th": "fourth",
    "fx": "fracture",
    "hep": "hepatitis",
    "w/o": "without",
    "rt": "right",
    "lt": "left",
    "sz": "seizure",
    "szs": "seizure",
    "bm": "bowel movement",
    "bms": "bowel movements",
    "w/": "with",
    "hfref": "systolic heart failure",
    "hfpef": "diastolic heart failure",
}
# shortened words unambiguous enough to make a span alone ("sz x2 today": seizures; "ca" alone could be calcium)
ALONE = frozenset({"sz", "szs", "infxn"})
# written so only: "DM" (not "dm", decimetres), "L" and "R" (not "l" litres), "AM" (not "am")
CAPITALS = {
    "DM": "diabetes mellitus",
    "AF": "atrial fibrillation",
    "LE": "lower extremity",
    "LEs": "lower extremities",
    "BLE": "bilateral lower extremity",
    "UE": "upper extremity",
    "L": "left",
    "R": "right",
    "CKD": "chronic kidney disease",
    "CAD": "coronary artery disease",
    "CHF": "congestive heart failure",
    "AM": "morning",
    "RA": "rheumatoid arthritis",
    "TB": "tuberculosis",  # "latent TB": *Latent tuberculosis* (Z22.7); "TB" alone is the shorthand list's
    "MRSA": "methicillin resistant staphylococcus aureus",  # "MRSA pneumonia": J15.212
    "OA": "osteoarthritis",  # "R knee OA": M17.11
    "DCIS": "ductal carcinoma in situ",  # "DCIS left breast": D05.12
    # a lung's lobes, as radiology writes them, read with the adjective names use ("RUL nodule": *Pulmonary nodule*; "of
    # lung" would outweigh the finding: "LLL pneumonia" met *Abscess of lung with pneumonia*)
    "RUL": "right upper lobe pulmonary",
    "RML": "right middle lobe pulmonary",
    "RLL": "right lower lobe pulmonary",
    "LUL": "left upper lobe pulmonary",
    "LLL": "left lower lobe pulmonary",
}


@dataclass(frozen=True)
class WordTable:
    """Words read as other words in running text: ``any_case`` (surface in lower case -> its reading), ``capitals``
    (written so only), ``alone`` (surfaces that may make a span alone)."""

    any_case: dict[str, str]
    capitals: dict[str, str]
    alone: frozenset[str]

    @cached_property
    def surface(self) -> re.Pattern:
        """A surface as a whole token run: not a part of a longer word, nor of "R/O" or "L5"."""
        surfaces = sorted((re.escape(s) for s in {*self.any_case, *self.capitals}), key=len, reverse=True)
        return re.compile(r"(?<![\w/])(" + "|".join(surfaces) + r")(?![\w/])", re.IGNORECASE)

    @cached_property
    def first_words(self) -> frozenset[str]:
        """The normalised first word of every surface ("d" of "d/o"): a passage with none of them is not searched."""
        return frozenset(re.split(r"\W", surface.lower())[0] for surface in {*self.any_case, *self.capitals})

    def reading(self, written: str) -> str | None:
        """What a surface stands for, or None."""
        return self.capitals.get(written) or self.any_case.get(written.lower())


SHORTHAND = WordTable(ANY_CASE, CAPITALS, ALONE)
# people's words in running text ("my hip hurts": *Hip pain*, "trouble breathing"), the linker's lay words
# (``text.lay_words``) as written, but "painful", which papers write too ("burning painful paresthesias"); only a
# symptom's adjective makes a span alone ("feels dizzy": *Dizziness*)
LAY = WordTable(
    {written: reading for written, reading in LAY_WORDS.items() if "t" not in written.split() and written != "painful"},
    {},
    frozenset({"dizzy", "nauseous", "nauseated", "itchy", "drowsy", "tingly", "numb", "hard to fall asleep"}),
)


@dataclass(frozen=True)
class Expanded:
    """A passage's tokens with shortened words written out: each written-out word a token over the shortened word's
    characters; ``group[i]`` numbers the shortened word token ``i`` comes from (-1: a word as written)."""

    tokens: list[Token]
    group: list[int]
    readings: dict[int, str]  # group -> what the shortened word is read as
    alone: frozenset[int] = frozenset()  # groups whose shortened word may make a span alone (``ALONE``)

    def whole(self, first: int, last: int) -> bool:
        """Whether tokens ``first:last`` take each shortened word whole and hold a word as written (or are one
        shortened word that may stand alone)."""
        inside = self.group[first:last]
        cut = (
            first > 0
            and inside[0] >= 0
            and self.group[first - 1] == inside[0]
            or last < len(self.group)
            and inside[-1] >= 0
            and self.group[last] == inside[-1]
        )
        return not cut and (-1 in inside or inside[0] in self.alone and inside[0] == inside[-1])

    def reading(self, text: str, first: int, last: int, cuts: frozenset[int] | set[int] = frozenset()) -> str:
        """The span's text with its shortened words written out ("breast ca" -> "breast cancer"), and a hyphen where
        a prefix was cut from its word (``cuts``: "Preeclampsia w/ ..." -> "Pre-eclampsia with ...")."""
        tokens, spellings, seen = [], {}, set()
        for token, group in zip(self.tokens[first:last], self.group[first:last]):
            if group in seen:
                continue  # a written-out word after its shortened word's first: one token over the same characters
            if group >= 0:
                seen.add(group)
                spellings[len(tokens)] = self.readings[group]
            tokens.append(token)
        return respelt(text, tokens, spellings, cuts)


_WORDS = re.compile(r"\w+")


def expanded(text: str, tokens: list[Token], normalize, table: WordTable = SHORTHAND) -> Expanded | None:
    """``tokens`` (one passage's) with every shortened word (or ``table``'s word) written out; None when the passage
    has none."""
    if not any(token.norm in table.first_words for token in tokens):
        return None
    found = [
        (m.start(), m.end(), words)
        for m in table.surface.finditer(text, tokens[0].start if tokens else 0, tokens[-1].end if tokens else 0)
        if (words := table.reading(m.group()))
    ]
    if not found:
        return None
    out, group, readings, alone = [], [], {}, set()
    at = 0
    for number, (start, end, words) in enumerate(found):
        while at < len(tokens) and tokens[at].end <= start:
            out.append(tokens[at])
            group.append(-1)
            at += 1
        covered = at
        while at < len(tokens) and tokens[at].start < end:
            at += 1
        if covered == at or tokens[covered].start != start or tokens[at - 1].end not in (end, end - (text[end - 1] == "/")):
            out += tokens[covered:at]  # the surface is not whole tokens here: words as written
            group += [-1] * (at - covered)
            continue
        readings[number] = words
        if text[start:end].lower() in table.alone:
            alone.add(number)
        for word in normalize(words).split():
            out.append(Token(start, end, word))
            group.append(number)
    out += tokens[at:]
    group += [-1] * (len(tokens) - at)
    return Expanded(out, group, readings, frozenset(alone))


def shorthand_span(
    text: str, expanded_tokens: Expanded, first: int, last: int, source: str, cuts: set[int], match: str = "shorthand"
) -> Annotation:
    """The span tokens ``first:last`` cover, read with its shortened words written out (and its cut prefixes hyphenated)."""
    start, end = expanded_tokens.tokens[first].start, expanded_tokens.tokens[last - 1].end
    return Annotation(
        start, end, text[start:end], source=source, infons={"match": match, READ_AS: expanded_tokens.reading(text, first, last, cuts)}
    )


def shorthand_reading(text: str, normalize: Normalizer) -> str | None:
    """A mention given alone ("breast ca", "L knee pain", "hip fx") read with its shortened words written out, as the
    dictionary finder reads the same words in running text; None when it has none, or no word as written ("DM" alone
    may be myotonic dystrophy; "Ca 9.2" is calcium)."""
    if SHORTHAND.first_words.isdisjoint(_WORDS.findall(text.lower())):  # the word set first: a few times cheaper
        return None
    if not SHORTHAND.surface.search(text):
        return None
    tokens = tokenize(text, normalize)
    written = expanded(text, tokens, normalize) if tokens else None
    if written is None or not written.readings:
        return None
    as_written = [token.norm for token, group in zip(written.tokens, written.group) if group < 0]
    if not any(character.isalpha() for word in as_written for character in word):
        return None
    return written.reading(text, 0, len(written.tokens))

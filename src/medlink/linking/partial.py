"""Heads of longer phrases: keep the words that change the concept, or say the match is partial.

Why: the dictionary finder reports the KB names it meets, so in "Juvenile diabetes", "Rotavirus gastroenteritis" or
"invasive ductal carcinoma of the left breast" it found the generic head ("diabetes", "gastroenteritis",
"carcinoma") and the head was linked as surely as a whole name (E11 at p = 0.98 for "Juvenile diabetes"). The words
around the head that could change its concept (``phrases``: up to ``MAX_LEFT`` modifiers before it, "of [the] [side]
X [Y]", "in [the] [side]" and a body site, a site or side in capitals ("RLQ", "R>L") or up to two ", qualifier" after
it, only words the KB's names use or sides, never a cue, a size, a stop word or another span's word) make longer
phrases, which are linked too:

- the longest phrase that links (not NIL) to a name that says its modifiers, with at least ``PARTIAL`` x the head's
  probability or (the longest phrase of all) to a name that says its every word and at most one more, replaces the
  head: the span keeps them ("type 1 diabetes", "Left hip pain"), ``infons["widened_from"]`` the head ("human
  cancers" stays "cancers": no name says "human");
- else the head stays, a partial match (``infons["partial_of"]``: the longest phrase): each
  candidate's probability is ``PARTIAL`` x its own, so a head-only match is never as sure as a whole name;
- or, in "phrase" mode, the span becomes the longest phrase all the same (a comma's qualifier only where a name says
  it or it names a side), a partial match (``infons["head"]``: the head, or the part a name says): clinical annotation
  marks the whole phrase ("Acute uncomplicated sigmoid diverticulitis"). It is linked as the phrase where that links at
  least ``PARTIAL`` x as surely as the named part or the head (its words choose a code's side or type), else as that
  part; each at ``PARTIAL`` x its probability.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from medlink.align.sites import SITES as BODY_SITES
from medlink.align.sites import as_sites
from medlink.core import READ_AS, Annotation, LinkResult, Mention
from medlink.linking.coding_words import SIDE_SHORT_FORMS
from medlink.linking.contradictions import capped_result, decided_again
from medlink.text.finders.base import english_stop_words
from medlink.text.normalize import SIDES

MODIFIER_MODES = ("widen", "phrase", "partial", "off")
PARTIAL = 0.8  # a head-only match's share of its own probability (chosen on the clinical notes' dev split)
MAX_LEFT = 3  # modifiers read before a head
# words before a head that say something of the patient or the statement, or a size or grade, not the concept's kind
NOT_MODIFIERS = frozenset(
    (
        "no not denies deny denied hx h/o s/p r/o c/o c/w pt patient pts known possible probable likely "
        "suspected presumed new recent now also today worsening improving resolved resolving mild moderate "
        "severe small large tiny low high grade significant mom dad mother father brother sister son daughter "
        "family history neg negative positive developed has had having complains reports ongoing vs versus "
        "newly diagnosed suggest suggests suggesting concern concerning consistent e/o"
    ).split()
    # what a report says a finding was seen by ("CT shows cystic bronchiectasis")
    + "shows show showed showing reveals revealed demonstrates demonstrated imaging ct mri cxr xr us echo ekg ecg".split()
    # units of a size written before the finding ("3 cm right thyroid nodule")
    + "mm cm m ml cc mg kg g".split()
)
SITES = frozenset(
    {"RLQ", "LLQ", "RUQ", "LUQ", "RUL", "RML", "RLL", "LUL", "LLL", "RLE", "LLE", "RUE", "LUE", "BLE", "BUE", "OU", "OD", "OS"}
)  # "OU": both eyes
# words after a comma that say how the condition goes, not which it is ("Acute kidney injury, resolved")
AFTER_NOT_QUALIFIERS = frozenset(
    {"resolved", "resolving", "improving", "worsening", "stable", "controlled", "now", "today", "new", "chronic"}
)
# "Chemo-induced", "statin-associated", "Community-acquired": a modifier though the KB's names never say "chemo"
CAUSE_WORD = re.compile(r"^[a-z]+-(?:induced|associated|related|acquired|onset|dependent|resistant)$")
_LEFT_WORD = re.compile(r"(?:(?<=\s)|^)([A-Za-z][A-Za-z0-9+'/-]*|[A-Z][a-z]?\.|\d+)[ ]$")  # "Lt." too
_ABBREVIATION_AFTER = re.compile(r"[ ]([A-Z]{2,4}\b|[RL][ ]?[<>&][ ]?[RL](?![\w/-]))")  # "RLQ", "OU", "R>L"
_QUALIFIER = re.compile(r",[ ]+([A-Za-z][A-Za-z-]*(?:[ ]+[A-Za-z][A-Za-z-]*){0,2})(?=[ ]*(?:[,.;\n]|$))")
_SIDE = r"(?:(?:left|right|bilateral|R|L)[ ]+)?"  # "of the R forearm" too
_IN_SITE = re.compile(r"[ ]+in[ ]+(?:the[ ]+|his[ ]+|her[ ]+)?" + _SIDE + r"([A-Za-z]+)")  # "Pain in the left hip"
_OF_PHRASE = re.compile(r"[ ]+of[ ]+(?:the[ ]+)?" + _SIDE + r"([A-Za-z][A-Za-z-]+)(?:[ ]+([A-Za-z][A-Za-z-]+))?")


def _is_modifier(word: str, before: str | None, known: Callable[[str], bool]) -> bool:
    lowered = word.lower()
    if lowered.isdigit():
        return before is not None and before.lower() == "type"  # "type 1 diabetes"
    if lowered in NOT_MODIFIERS or lowered in english_stop_words() and lowered not in SIDES:
        return False
    return any(c.isalpha() for c in word) and (_is_side(lowered) or known(word) or CAUSE_WORD.match(lowered) is not None)


def _is_side(lowered: str) -> bool:
    """A side, written out or in a clinician's shorthand ("Lt", "b/l"): a modifier though the KB's names never say it."""
    return lowered in SIDES or lowered.rstrip(".") in SIDE_SHORT_FORMS


def _cut_short(word: str, known: Callable[[str], bool]) -> bool:
    """Does a word the KB's names never use, but that could modify the words after it, stop a phrase mid-way? Then
    the words after it are no phrase of their own ("Community acquired pneumonia" is not "acquired pneumonia"); a stop
    word, a cue or a number before them ends the phrase where it is."""
    lowered = word.lower()
    return lowered.isalpha() and lowered not in NOT_MODIFIERS and lowered not in english_stop_words() and not known(word)


def phrases(
    text: str, start: int, end: int, taken: Callable[[int, int], bool], known: Callable[[str], bool] = lambda word: True
) -> list[tuple[int, int]]:
    """The longer spans around the head ``text[start:end]`` whose extra words could change its concept, longest first;
    ``taken(i, j)``: is a character of ``text[i:j]`` part of another span (never crossed); ``known(word)``: do the
    KB's names use the word (one they never use, "suggest", "appy", cannot make a name more specific)."""
    lefts = [start]
    at = start
    for _ in range(MAX_LEFT):
        found = _LEFT_WORD.search(text, max(0, at - 40), at)
        if found is None or found.end() != at:
            break
        word = found.group(1)
        before = _LEFT_WORD.search(text, max(0, found.start() - 40), found.start())
        if not _is_modifier(word, before.group(1) if before is not None and before.end() == found.start() else None, known):
            if len(lefts) > 1 and _cut_short(word, known):  # "Community acquired pneumonia": not "acquired pneumonia"
                lefts = [start]
            break
        if taken(found.start(1), found.end(1)):
            break
        at = found.start(1)
        lefts.append(at)
    rights = [end]
    of = _OF_PHRASE.match(text, end)
    if of is not None:
        last = of.group(2) if of.group(2) and of.group(2).lower() not in english_stop_words() else None
        right = of.end(2) if last else of.end(1)
        word = of.group(1).lower()
        if word not in english_stop_words() and not word.endswith("ing") and not taken(end, right):  # "tired of waiting"
            rights.append(right)
    inside = _IN_SITE.match(text, end)
    if inside is not None and as_sites([inside.group(1).lower()]) & BODY_SITES and not taken(end, inside.end(1)):
        rights.append(inside.end(1))
    after = _ABBREVIATION_AFTER.match(text, end)  # "abd pain RLQ", "CTS R>L": a site or side right after the head
    word = after.group(1) if after is not None else ""
    if word and (word in SITES or known(word) or _is_side(word.lower()) or not word.isalpha()) and not taken(end, after.end(1)):
        rights.append(after.end(1))
    at = end
    for _ in range(2):  # "Asthma, mild intermittent, uncomplicated": a name's own qualifiers after commas
        qualifier = _QUALIFIER.match(text, at)
        words = qualifier.group(1).split() if qualifier is not None else []
        if not words or any(
            w.lower() in AFTER_NOT_QUALIFIERS or w.lower() in english_stop_words() or not (known(w) or _is_side(w.lower())) for w in words
        ):
            break
        if taken(at, qualifier.end(1)):
            break
        at = qualifier.end(1)
        rights.append(at)
    out = [(s, e) for s in lefts for e in rights if (s, e) != (start, end)]
    return sorted(out, key=lambda span: (span[0] - span[1], span[0]))


def discounted(result: LinkResult, share: float = PARTIAL, phrase: str = "", key: Callable[[str], str] = str.lower) -> LinkResult:
    """``result`` as a partial match: each candidate's probability times ``share``, at most ``CONTRADICTED_AT_MOST`` where
    its name says the opposite of the whole ``phrase`` ("Ductal carcinoma in situ" for "invasive ductal carcinoma",
    found by its head), the NIL decision taken again."""
    candidates = [c.with_probability(round(c.probability * share, 6)) if c.probability is not None else c for c in result.candidates]
    scaled = decided_again(result, candidates)
    return capped_result(scaled, phrase, key) if phrase else scaled


def _matched_words(result: LinkResult, key: Callable[[str], str]) -> set[str]:
    best = result.best
    return set(key(best.matched_name or best.name or "").split()) if best is not None else set()


def names_the_modifiers(phrase: str, head: str, result: LinkResult, key: Callable[[str], str]) -> bool:
    """Does the name ``result``'s first candidate matched say every modifier the phrase adds to its head (stop words
    aside)? Only then do the modifiers change the concept as the KB knows it ("type 1 diabetes": *Type 1 diabetes
    mellitus*); "human cancers" or "sporadic tumors" find no name that says "human" or "sporadic"."""
    added = set(key(phrase).split()) - set(key(head).split()) - english_stop_words()
    return bool(added) and added <= _matched_words(result, key)


def names_the_whole(phrase: str, result: LinkResult, key: Callable[[str], str]) -> bool:
    """Does the matched name say every word of the phrase, its head's too, and at most one more? Then the phrase is
    nearly a KB name's own wording ("Juvenile diabetes": *Juvenile diabetes mellitus*), better evidence than the head
    alone however sure the head is; a name with many more words ("symptomatic anemia": *Cold type (symptomatic)
    autoimmune hemolytic anemia*) is a narrower concept, not the phrase."""
    words = set(key(phrase).split()) - english_stop_words()
    named = _matched_words(result, key) - english_stop_words()
    return words <= named and len(named - words) <= 1


def phrase_options(
    text: str, spans: Sequence[Annotation], known: Callable[[str], bool] = lambda word: True, linked_only: bool = True
) -> dict[int, list[tuple[int, int]]]:
    """Each head's longer phrases (``phrases``), by the head's position in ``spans``: the dictionary's spans that are
    no short form and, with ``linked_only``, have a first candidate (without it: what an annotator links beforehand,
    with the spans, in one call)."""
    covered = bytearray(len(text))  # 1 where a span is: a phrase reads only characters outside its head
    for span in spans:
        covered[span.start : span.end] = b"\x01" * (span.end - span.start)

    def taken(i: int, j: int) -> bool:
        return 1 in covered[i:j]

    options = {}
    for number, span in enumerate(spans):
        if span.short_form_of is not None or span.source != "dictionary":
            continue
        if linked_only and (span.result is None or span.result.best is None):
            continue
        found = phrases(text, span.start, span.end, taken, known)
        if found:
            options[number] = found
    return options


def widen_or_discount(
    text: str,
    spans: Sequence[Annotation],
    link: Callable[[list[Mention]], list[LinkResult]],
    known: Callable[[str], bool] = lambda word: True,
    mode: str = "widen",
    key: Callable[[str], str] = str.lower,
) -> list[Annotation]:
    """``spans`` (linked) with each head of a longer phrase widened to the phrase, or marked a partial match
    (``known``: as ``phrases`` reads it; ``key``: the linker's normalised form of a text, to compare words);
    ``mode`` (``MODIFIER_MODES``): "widen" both; "phrase" widens every head to its longest phrase, partial where no
    name says the modifiers; "partial" never widens, and marks a head partial only where a phrase links to a name that
    says its modifiers (the KB knows a concept they make: "sporadic tumors" is left as it is); "off" leaves the spans as
    they are."""
    if mode == "off":
        return list(spans)
    options = phrase_options(text, spans, known)
    if not options:
        return list(spans)
    texts = list(dict.fromkeys(text[s:e] for found in options.values() for s, e in found))
    linked = dict(zip(texts, link([Mention(t) for t in texts])))
    out = list(spans)
    for number, found in options.items():
        span = spans[number]
        head_p = span.result.probability or 0.0
        named = [
            (s, e) for s, e in found if not linked[text[s:e]].nil and names_the_modifiers(text[s:e], span.text, linked[text[s:e]], key)
        ]
        widened = next(
            (
                (s, e)
                for s, e in named
                if (linked[text[s:e]].probability or 0.0) >= PARTIAL * head_p
                or (s, e) == found[0]
                and names_the_whole(text[s:e], linked[text[s:e]], key)
            ),
            None,
        )
        if mode == "phrase":
            whole = _marked(text, span, found, widened)
            if whole is not None:
                out[number] = _as_phrase(text, span, whole, widened, linked, head_p, key)
        elif mode == "widen" and widened is not None:
            out[number] = _widened(text, span, widened, linked[text[widened[0] : widened[1]]])
        elif mode == "widen" or named:  # partial mode: only where the KB names a concept the modifiers make
            s, e = named[0] if named else found[0]
            out[number] = replace(
                span, infons={**span.infons, "partial_of": text[s:e]}, result=discounted(span.result, phrase=text[s:e], key=key)
            )
    return out


def _marked(text: str, span: Annotation, found: list[tuple[int, int]], widened: tuple[int, int] | None) -> tuple[int, int] | None:
    """The phrase a note marks around ``span``: the longest that holds the named phrase (``widened``), a comma's
    qualifier kept only where that phrase says it or it says a side ("Acne vulgaris, inflammatory" is marked "Acne
    vulgaris"; "otitis media, right ear" keeps the side its code reads); None where every phrase adds a qualifier no
    name says."""
    said_to = widened[1] if widened is not None else span.end
    for s, e in found:
        holds = widened is None or s <= widened[0] and widened[1] <= e
        added = text[max(span.end, said_to) : e]
        if holds and ("," not in added or any(_is_side(word.lower()) for word in added.replace(",", " ").split())):
            return s, e
    return None


def _widened(text: str, span: Annotation, phrase: tuple[int, int], result: LinkResult) -> Annotation:
    s, e = phrase
    infons = {k: v for k, v in span.infons.items() if k != READ_AS}
    infons["widened_from"] = span.text
    return replace(span, start=s, end=e, text=text[s:e], infons=infons, result=result)


def _as_phrase(
    text: str,
    span: Annotation,
    whole: tuple[int, int],
    widened: tuple[int, int] | None,
    linked: dict[str, LinkResult],
    head_p: float,
    key: Callable[[str], str],
) -> Annotation:
    """``span`` as the phrase ``whole``: linked as it where a name says it (``widened``), else as the named part inside it
    or the head, or as the phrase where that links at least ``PARTIAL`` x as surely (its words choose a code's side: "acute
    conjunctivitis OU"); a partial match at ``PARTIAL`` x the probability."""
    s, e = whole
    if widened == whole:
        return _widened(text, span, whole, linked[text[s:e]])
    infons = {k: v for k, v in span.infons.items() if k != READ_AS}
    phrase = linked[text[s:e]]
    if widened is not None:  # the whole phrase, linked as its named part unless as surely as itself (its side: "OU")
        infons["head"] = text[widened[0] : widened[1]]
        named = linked[infons["head"]]
        surer = not phrase.nil and (phrase.probability or 0.0) >= PARTIAL * (named.probability or 0.0)
    else:
        infons["head"] = span.text
        named = span.result
        surer = not phrase.nil and (phrase.probability or 0.0) >= PARTIAL * head_p
    chosen = discounted(phrase if surer else named, phrase=text[s:e], key=key)
    return replace(span, start=s, end=e, text=text[s:e], infons=infons, result=chosen)


def phrase_heads(documents: Sequence[tuple[str, Sequence[Annotation]]], known: Callable[[str], bool]) -> dict[str, str]:
    """Every longer phrase around the spans of ``documents`` (text, spans) that ``phrase_options`` finds, linked or not,
    with the text of the head it was found around."""
    return {
        text[s:e]: spans[number].text
        for text, spans in documents
        for number, found in phrase_options(text, spans, known, linked_only=False).items()
        for s, e in found
    }

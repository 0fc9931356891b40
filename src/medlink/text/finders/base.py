"""The one interface every mention finder has, and the overlap policy that merges what several finders found.

A finder reads a ``Document`` and returns ``Annotation``s (character offsets into ``Document.text``,
``source`` naming the finder, no ids yet); linking them is the annotator's job, not the finder's.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from typing import Protocol, runtime_checkable

from medlink.core import Annotation, Document

OVERLAP_POLICIES = ("longest", "all")
# How the spans of several finders are merged (the first finder leads, e.g. the tagger of --finder both):
# union: every span of every finder; confirmed: the first finder's spans that another finder's span overlaps;
# confirmed+missed: those, plus the other finders' spans where the first found nothing; learned: a span selector
# fitted on annotated documents chooses (``medlink.text.finders.selector.model``: one finder that wraps the tagger and the
# dictionary).
COMBINE_POLICIES = ("union", "confirmed", "confirmed+missed", "learned")
DEFAULT_COMBINE = "confirmed"  # NCBI Disease dev linked best with it (benchmarks/documents)
_SENTENCE_BREAK = re.compile(r"[.!?;](?:\s|$)")
_BRACKETS = {")": "(", "]": "[", "}": "{"}
_WORD = re.compile(r"\w+")


@runtime_checkable
class MentionFinder(Protocol):
    """Finds mention spans in a document."""

    name: str

    def find(self, document: Document) -> list[Annotation]:
        """Spans in ``document.text``, in text order."""
        ...


def resolve_overlaps(spans: Iterable[Annotation], policy: str = "longest") -> list[Annotation]:
    """Spans in text order: under ``longest`` no two overlap (the longer wins, then the earlier; one span per
    (start, end), the first given kept); under ``all`` every distinct (start, end) is kept as an alternative."""
    if policy not in OVERLAP_POLICIES:
        raise ValueError(f"unknown overlap policy {policy!r}; known: {', '.join(OVERLAP_POLICIES)}")
    unique: dict[tuple[int, int], Annotation] = {}
    for span in spans:
        unique.setdefault((span.start, span.end), span)
    if policy == "all":
        return sorted(unique.values(), key=lambda a: (a.start, a.end))
    kept: list[Annotation] = []
    taken: list[tuple[int, int]] = []  # the kept spans, disjoint, by start: the last one starting before a span ends
    for span in sorted(unique.values(), key=lambda a: (-(a.end - a.start), a.start)):  # is the only one it may overlap
        at = bisect.bisect_left(taken, (span.end, -1))
        if at == 0 or taken[at - 1][1] <= span.start:
            kept.append(span)
            taken.insert(at, (span.start, span.end))
    return sorted(kept, key=lambda a: a.start)


def find_all(finders: Sequence[MentionFinder], document: Document, policy: str = "longest", combine: str = "union") -> list[Annotation]:
    """What several finders found together in ``document`` (a span found twice is kept once, the first finder's),
    merged by ``combine`` (``COMBINE_POLICIES``), then overlaps resolved by ``policy``."""
    return find_all_in(finders, [document], policy, combine)[0]


def find_all_in(
    finders: Sequence[MentionFinder], documents: Sequence[Document], policy: str = "longest", combine: str = "union"
) -> list[list[Annotation]]:
    """``find_all`` for each of a batch of documents. A first finder that reads a batch faster than its documents one
    by one (the tagger: ``read_ahead``) reads them together first; under ``confirmed`` it is told where the other
    finders found spans, since nothing it finds elsewhere is kept, and reads only there."""
    if combine not in COMBINE_POLICIES:
        raise ValueError(f"unknown combine policy {combine!r}; known: {', '.join(COMBINE_POLICIES)}")
    if combine == "learned" and len(finders) > 1:
        raise ValueError(
            "the learned combination is a SelectingFinder of its own (medlink.text.finders.selector.model), not a merge of finders"
        )
    lead, rest = finders[0], finders[1:]
    found_by_rest = [[found_by(finder, document, policy) for finder in rest] for document in documents]
    read_ahead = getattr(lead, "read_ahead", None)
    if read_ahead is not None and documents:
        confirming = combine == "confirmed" and bool(rest)
        read_ahead(documents, [[a.span for spans in found for a in spans] for found in found_by_rest] if confirming else None)
    return [merged([found_by(lead, document, policy), *found], policy, combine) for document, found in zip(documents, found_by_rest)]


def merged(found: Sequence[list[Annotation]], policy: str, combine: str) -> list[Annotation]:
    """One document's spans as each finder found them (the lead first), merged by ``combine``, overlaps resolved by
    ``policy``."""
    if combine == "union" or len(found) < 2:
        return resolve_overlaps((span for spans in found for span in spans), policy)
    lead, others = found[0], [span for spans in found[1:] for span in spans]
    confirmed = overlap_test(others)
    kept = [span for span in lead if confirmed(span.start, span.end)]
    if combine == "confirmed+missed":
        in_lead = overlap_test(lead)
        kept += [span for span in others if not in_lead(span.start, span.end)]
    return resolve_overlaps(kept, policy)


def found_by(finder: MentionFinder, document: Document, policy: str) -> list[Annotation]:
    """``finder``'s spans in ``document``; a finder that resolves overlaps among its own spans (``resolves_overlaps``,
    the dictionary) is handed ``policy``, so the annotator's ``all`` reaches it (its own build-time option would
    otherwise have dropped the alternatives before the merge saw them)."""
    if getattr(finder, "resolves_overlaps", False):
        return finder.find(document, overlap=policy)  # type: ignore[call-arg]
    return finder.find(document)


def overlap_test(others: Sequence[Annotation]) -> Callable[[int, int], bool]:
    """A test "does text[start:end] share a character with any of ``others``?", prepared once (sorted starts and a running
    maximum of ends: of the spans starting before a span ends, one overlaps it exactly when the furthest-reaching does)."""
    ordered = sorted(others, key=lambda a: a.start)
    starts = [a.start for a in ordered]
    reach = list(accumulate((a.end for a in ordered), max))

    def overlaps(start: int, end: int) -> bool:
        before = bisect.bisect_left(starts, end)
        return before > 0 and reach[before - 1] > start

    return overlaps


@lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop words, read from the file that defines them: importing scikit-learn for a word list
    would cost a calibrated ``medlink link`` of one mention most of its start-up."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec("sklearn")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        source = Path(folder) / "feature_extraction" / "_stop_words.py"
        if source.is_file():
            for node in ast.parse(source.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "ENGLISH_STOP_WORDS" for t in node.targets):
                    words = ast.literal_eval(node.value.args[0]) if isinstance(node.value, ast.Call) else ast.literal_eval(node.value)
                    return frozenset(words)
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # a layout other than the one read above

    return frozenset(ENGLISH_STOP_WORDS)


def is_plausible_mention(text: str) -> bool:
    """Has ``text`` a word of two letters or more that is not a stop word? A model's stray "of", "D" or "2" is no
    mention, and propagating it through a document would multiply the mistake. A word in capitals counts ("ALL")."""
    stop = english_stop_words()
    return any(sum(c.isalpha() for c in word) >= 2 and (word.lower() not in stop or word.isupper()) for word in _WORD.findall(text))


TITLE_BEFORE = re.compile(r"\b(?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof)\.?\s+$")


def follows_title(text: str, start: int) -> bool:
    """Whether the word at ``start`` comes right after a person's title: "Dr. Parkinson's clinic", "Mrs. Wilson's" name
    people, not diseases."""
    return TITLE_BEFORE.search(text, max(0, start - 8), start) is not None


def crosses_boundary(text: str, start: int, end: int) -> bool:
    """Does ``text[start:end]`` run across a sentence break (". " inside it) or hold an unbalanced bracket? A name
    matched word by word ("disease, Canavan" in MEDIC) must not join "...disease. Canavan..." or "(HPRT) deficiency"'s
    "HPRT) deficiency"."""
    piece = text[start:end]
    if _SENTENCE_BREAK.search(piece, 0, len(piece) - 1):
        return True
    depth: dict[str, int] = {}
    for char in piece:
        if char in "([{":
            depth[char] = depth.get(char, 0) + 1
        elif char in _BRACKETS:
            opener = _BRACKETS[char]
            if depth.get(opener, 0) == 0:
                return True
            depth[opener] -= 1
    return any(depth.values())


CHEMICAL_PREFIX = re.compile(r"(?:^|\W)(?:\d+|cis|trans|[DL]|dl)-$", re.IGNORECASE)
NUMBERED = re.compile(r"-\d")  # right after a short form: "MK-801", "IL-6"


def in_chemical_name(text: str, start: int, end: int | None = None) -> bool:
    """Is the short form at ``start`` (to ``end``) part of a chemical's, a gene's or a product's name: glued by a hyphen to a
    locant or an isomer's prefix before it, or to a number after it? "5-HT" is serotonin, not hypertension; "cis-RA"
    retinoic acid; "D-MED" dexmedetomidine; "MK-801" a drug, "IL-6" a cytokine, "COX-2" an enzyme (in NCBI Disease's and
    BC5CDR's training sets, no such short form is a disease)."""
    if end is not None and NUMBERED.match(text, end):
        return True
    return start > 0 and text[start - 1] == "-" and CHEMICAL_PREFIX.search(text, max(0, start - 8), start) is not None

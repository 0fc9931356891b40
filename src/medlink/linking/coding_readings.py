"""Other readings of a mention that coding links it by: without the side or the drug it writes, or as the condition's
name it holds (its head), each reading's concepts then coded with the whole mention's words.

Why apart from ``coding``: these read the linker's results and the mention's words, no code set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from medlink.core import Document, LinkResult
from medlink.errors import MedlinkError
from medlink.linking.coding_words import without_qualifiers
from medlink.linking.contradictions import capped_result
from medlink.linking.partial import PARTIAL, discounted, names_the_modifiers


def found_heads(linker, results: Sequence[LinkResult]) -> list[str | None]:
    """For each mention, the longest KB name the index's dictionary finder meets inside it, where that is not the whole
    mention ("melanoma" in "melanoma of the right arm"): the head ``annotate`` would find and read the phrase around."""
    try:
        finder = linker.dictionary_finder()
    except MedlinkError:  # an index without a table of KB names to find them with
        return [None] * len(results)
    out: list[str | None] = []
    for result in results:
        text = result.mention.text
        sure = result.probability is not None and result.probability >= PARTIAL  # no head, discounted, could be surer
        spans = [] if result.error or sure else finder.find(Document.from_text(text))
        longest = max(spans, key=lambda span: (span.end - span.start, -span.start), default=None)
        out.append(longest.text if longest is not None and longest.text.strip() != text.strip() else None)
    return out


def surer_readings(
    linker,
    results: list[LinkResult],
    k: int,
    generators: Sequence[str] | None,
    heads: Sequence[str | None] | None = None,
    partial_heads: bool = False,
) -> list[LinkResult]:
    """Each result, or where its mention read another way links surer, that reading's concepts under the whole mention,
    whose words the coder still reads. The other ways: without the sides and a drug named as the cause it writes
    ("knee osteoarthritis" for "left knee osteoarthritis": a side is no word of a condition's names, and lowered the
    whole wording's probability), and as the head it holds ("great toe pain" in "acute R great toe pain") unless a name
    the mention's own reading matched says the words it adds to the head; ``partial_heads``: a head's concepts count as a
    partial match (``partial.discounted``), as ``annotate`` discounts the phrase it reads around a head."""
    others: dict[int, list[str]] = {}
    partial: dict[int, str] = {}  # a head whose concepts are a partial match: not the mention's words less a side
    for i, result in enumerate(results):
        if result.error:
            continue
        text, head = result.mention.text, heads[i] if heads else None
        if head and names_the_modifiers(text, head, result, linker.key):  # "psoriatic arthritis" is no arthritis
            head = None
        plain = without_qualifiers(text)
        ways = [way for way in (plain, head) if way and way != text]
        if ways:
            others[i] = list(dict.fromkeys(ways))
        if head and partial_heads and head != plain:
            partial[i] = head
    if not others:
        return results
    read = {result.mention.text: result for result in results if not result.error}  # an annotator's heads are in the batch
    texts = list(dict.fromkeys(way for ways in others.values() for way in ways if way not in read))
    read.update(zip(texts, linker.link(texts, k=k, generators=generators) if texts else []))
    out = list(results)
    for i, ways in others.items():
        text = results[i].mention.text
        readings = [  # each against the whole mention: "right ventricular thrombus" finds no Left one through "ventricular thrombus"
            (capped_result(discounted(read[way]) if way == partial.get(i) else read[way], text, linker.key), way)
            for way in ways
            if not read[way].error and read[way].candidates
        ]
        best, way = max(readings, key=lambda reading: _strength(reading[0]), default=(None, None))
        if best is not None and _strength(best) > _strength(results[i]):
            out[i] = replace(best, mention=results[i].mention, read_as=results[i].read_as or way)  # the whole mention, read that way
    return out


def _strength(result: LinkResult) -> float:
    """How sure a result is of its first candidate: its probability, else (an index without one) the score."""
    if result.probability is not None:
        return result.probability
    return result.candidates[0].score if result.candidates else float("-inf")

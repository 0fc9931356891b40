"""Names a dictionary finder should not report, learned from annotated documents.

A KB holds names that are ordinary words in running text ("found", "disease", "included",
"death": MEDIC has them all as synonyms). Where annotated documents exist, the finder's own
matches in them show which names annotators almost never mark: a name found ``min_seen`` times or
more whose matches overlap a gold mention at most ``max_rate`` of the time is excluded. A match
inside a longer gold mention ("ovarian cancer" in "breast and ovarian cancer") counts as marked,
so names that are right but shorter than the annotators' spans are kept. ``medlink train exclusions`` learns them from
any number of corpora (their gold spans of some entity types only, with ``--types``) and writes the names file
``medlink annotate --exclude-names`` reads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from medlink.core import Document
from medlink.text.finders.base import MentionFinder
from medlink.text.normalize import Normalizer
from medlink.text.plain_forms import text_forms


def rarely_annotated(
    finder: MentionFinder, documents: Iterable[Document], normalize: Normalizer, *, min_seen: int = 2, max_rate: float = 0.2
) -> list[str]:
    """Normalised strings ``finder`` finds in the gold ``documents`` but annotators seldom marked, most often found first."""
    found, marked = Counter(), Counter()
    for document in documents:
        gold = [(a.start, a.end) for a in document.annotations]
        for span in finder.find(document):
            key = normalize(span.text)
            found[key] += 1
            marked[key] += any(span.start < end and start < span.end for start, end in gold)
    excluded = [key for key, seen in found.items() if seen >= min_seen and marked[key] <= max_rate * seen]
    return sorted(excluded, key=lambda key: (-found[key], key))


EXCLUSIONS_HEADER = "# names medlink's dictionary finder leaves out, learned by 'medlink train exclusions'"


def is_exclusions_file(path: Path) -> bool:
    """Did 'medlink train exclusions' write ``path`` (its first line the header), or is it empty? Only such a file is
    replaced: a corpus or a names list of one's own named by mistake is not."""
    try:
        with open(path, encoding="utf-8") as stream:
            first = stream.readline(1 << 12)
    except (OSError, UnicodeDecodeError):
        return False
    return not first or first.startswith(EXCLUSIONS_HEADER)


def read_exclusions(lines: Iterable[str], normalize: Normalizer) -> frozenset[str]:
    """A list of names, one per line (blank lines and '#' comments skipped), normalised as the finder matches them; a
    name's other forms are left out with it (excluding "Botulism NOS" leaves out the "Botulism" the finder matches for it,
    "Fracture of hip" the "hip fracture")."""
    names = [line for line in lines if not line.lstrip().startswith("#")]
    return frozenset(key for key in (normalize(spelling) for name in names for spelling in (name, *text_forms(name))) if key)

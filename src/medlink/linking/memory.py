"""The mention memory: annotated training mentions with their concept ids, searched like names.

It is the lexical half of kNN-BioEL's datastore, kept apart from the KB (its own file in the
index, its own origin flag in the alias tables) so KB-only and with-memory results can both be
reported. Gold ids are resolved through the KB (alt ids, replaced ids). A composite mention (several parts, several
concepts) gives each part with its own concept where the corpus pairs them (BC5CDR's "hemorrhagic|cystitis" with
D006470|D003556: "hemorrhagic" is Hemorrhage); one whose parts it does not pair is counted and skipped, and so are
mentions whose gold is not in the KB, unless ``new_concepts``: then such a mention's id becomes a concept of the index,
named by its mentions (an annotated corpus newer than the KB: BC5CDR's "cardiotoxicity", D066126, is not in MEDIC's
2012 release).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from medlink.corpora.datasets import load_dataset
from medlink.kb.store import KB


@dataclass
class MemoryEntries:
    """(mention text, concept id) pairs, one per training occurrence, plus counts of what could not be used.

    ``documents``: each pair's document ("source number:document id", sources counted from 1) where its dataset names
    one, else "" (the whole list empty: none known, or an index that kept none). Cross-fitting folds by document with it
    (``linking.cross_fit``)."""

    pairs: list[tuple[str, str]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    skipped_composite: int = 0
    composite_parts: int = 0  # (part, concept) pairs taken from composite mentions whose corpus pairs them
    skipped_unknown_concept: int = 0
    new_concepts: list[str] = field(default_factory=list)  # ids the KB lacks that its mentions brought (``new_concepts=True``)
    types: list[str] = field(default_factory=list)  # the entity types its mentions were kept of (none: all)

    def summary(self) -> dict:
        return {
            "sources": self.sources,
            "entries": len(self.pairs),
            "digest": self.digest(),
            "skipped_composite": self.skipped_composite,
            **({"composite_parts": self.composite_parts} if self.composite_parts else {}),
            "skipped_unknown_concept": self.skipped_unknown_concept,
            **({"new_concepts": len(self.new_concepts)} if self.new_concepts else {}),
            **({"types": self.types} if self.types else {}),
        }

    def digest(self) -> str:
        """What the memory holds, order aside: a probability model fitted over one memory is refused with another."""
        return hashlib.sha256("\n".join(sorted(f"{t}\t{c}" for t, c in self.pairs)).encode()).hexdigest()[:16]

    def save(self, path: Path) -> None:
        documents = self.documents or [""] * len(self.pairs)
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            for (text, concept_id), document in zip(self.pairs, documents):
                handle.write(f"{' '.join(text.split())}\t{concept_id}" + (f"\t{' '.join(document.split())}\n" if document else "\n"))

    def subset(self, numbers: Iterable[int]) -> MemoryEntries:
        """The pairs ``numbers`` (and their documents), the rest of what the memory says kept: a memory without some mentions."""
        numbers = list(numbers)
        return replace(
            self, pairs=[self.pairs[n] for n in numbers], documents=[self.documents[n] for n in numbers] if self.documents else []
        )

    def document_of(self, number: int) -> str:
        """Pair ``number``'s document, "" when unknown."""
        return self.documents[number] if self.documents else ""


def read_memory(path: Path) -> MemoryEntries:
    """An index's saved memory (``MemoryEntries.save``: text TAB concept id [TAB document] a line), for work that needs
    its mentions again."""
    from medlink.errors import DamagedFileError

    memory = MemoryEntries(sources=[str(path)])
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) not in (2, 3) or not fields[0] or not fields[1]:
                raise DamagedFileError(path, ValueError(f"line {number}: expected 'mention TAB concept id', optionally 'TAB document'"))
            memory.pairs.append((fields[0], fields[1]))
            memory.documents.append(fields[2] if len(fields) == 3 else "")
    if not any(memory.documents):
        memory.documents = []
    return memory


def memory_from_datasets(kb: KB, datasets: Iterable[str], types: frozenset[str] | None = None, new_concepts: bool = False) -> MemoryEntries:
    """Read ``FORMAT:PATH`` datasets (the evaluation formats, annotated documents among them) into memory entries
    resolved against ``kb``; with ``types``, only their mentions of those entity types (``load_dataset``); with
    ``new_concepts``, a mention of one concept the KB lacks is kept under its id as written."""
    memory = MemoryEntries(types=sorted(types or ()))
    resolved: dict[str, str | None] = {}
    added: set[str] = set()

    def resolve(gold: str) -> str | None:
        if gold not in resolved:
            resolved[gold] = kb.resolve(gold)
        return resolved[gold]

    for spec in datasets:
        memory.sources.append(spec)
        for mention in load_dataset(spec, types):
            document = f"{len(memory.sources)}:{mention.doc_id}" if mention.doc_id is not None else ""
            if len(mention.parts) > 1:
                parts = [(part, resolve(part_id)) for part, part_id in zip(mention.parts, mention.part_ids)]
                parts = [(part, concept) for part, concept in parts if concept]
                if not parts:
                    memory.skipped_composite += 1
                    continue
                memory.composite_parts += len(parts)
                memory.pairs.extend(parts)
                memory.documents.extend([document] * len(parts))
                continue
            concepts = {concept for concept in map(resolve, sorted(mention.gold)) if concept}
            if not concepts and new_concepts and len(mention.gold) == 1:
                concepts = set(mention.gold)
                added |= concepts
            if not concepts:
                memory.skipped_unknown_concept += 1
                continue
            # every occurrence is kept: how often a text meant a concept ranks ambiguous texts
            memory.pairs.extend((mention.text, concept_id) for concept_id in sorted(concepts))
            memory.documents.extend([document] * len(concepts))
    memory.new_concepts = sorted(added)
    if not any(memory.documents):
        memory.documents = []
    return memory

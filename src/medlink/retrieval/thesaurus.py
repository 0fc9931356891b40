"""Names a synonym of the mention spells: "heart attack" finds a KB's "Myocardial infarction" through HPO, which says both.

A KB a user brings (SNOMED CT, a trial's adverse-event list, AskAPatient's concepts) names conditions as clinicians do;
people write "can't sleep" and "heart attack". The thesaurus (``medlink.kb.synonym_sets``: sets of names meaning one
thing) bridges them: a mention whose word stems are those of a set's member is answered by the names of this KB whose
word stems are another member's. Matching is on word-stem sets as in the exact stage's words form, so "heart
attacks" counts too. What the stage can reach is worked out once at build time and saved with the index: a mention's
word key -> the table rows its synonyms spell, leaving out those whose concepts its own words name (the exact stages
answer for those).

A user's own sets come from KB sources (``"synonyms": ["tsv:lay.tsv"]``: each concept's names one set), beside HPO's or
instead of them (``"hpo": false``). A set is left out when this KB has its concept (the default KB is HPO): the KB then
says those names itself (a user adds names for their own concepts to the KB), and the pseudo-mentions its calibration
is fitted on (names held out of a copy) would find them through the thesaurus, as no real mention of an unknown name
would.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from medlink.errors import DamagedFileError
from medlink.params import THESAURUS_PARAMS, read_params
from medlink.retrieval.base import GeneratorBase
from medlink.retrieval.exact import FUNCTION_WORDS, LEFT_OUT_IF_NEEDED, rows_by_key, word_key, word_stemmer
from medlink.retrieval.hits import Hits
from medlink.retrieval.names import NameTable, read_json, write_json
from medlink.text.normalize import Normalizer
from medlink.text.normalize import normalize as default_normalize

REACH_FILE = "thesaurus_reach.json"
REACH_VERSION = 1


def reach_by_key(table: NameTable, synonym_sets: Sequence[tuple[str, ...]], normalize: Normalizer) -> dict[str, tuple[int, ...]]:
    """Word key of a set member -> the rows (ascending) whose word keys are another member's and whose concepts the
    member's own rows do not name, where there is one."""
    if not synonym_sets:  # the default KB: it has every set's concept
        return {}
    stem = word_stemmer()
    rows_of = rows_by_key([word_key(key, stem, FUNCTION_WORDS) for key in table.keys])
    rows_of.pop("", None)

    def rows(member: str) -> set[int]:
        found = rows_of.get(member, ())
        return {found} if isinstance(found, int) else set(found)

    def concepts(found: set[int]) -> set[int]:
        return {int(concept) for row in found for concept in table.concepts_of(row)}

    reach: dict[str, set[int]] = {}
    for texts in synonym_sets:
        members = {word_key(normalize(text), stem, FUNCTION_WORDS) for text in texts} - {""}
        spelt = {member: rows(member) for member in members}
        every = set().union(*spelt.values())
        for member, own in spelt.items():
            named = concepts(own)
            other = {row for row in every - own if not concepts({row}) <= named}
            if other:
                reach.setdefault(member, set()).update(other)
    return {member: tuple(sorted(found)) for member, found in reach.items()}


class ThesaurusGenerator(GeneratorBase):
    """Score 1 for each concept a name spelt by one of the mention's synonyms names."""

    uses_normalizer = True  # the Linker passes the KB's normaliser: the synonyms are keyed as the names are

    def __init__(self, table: NameTable, concept_ids: Sequence[str], name: str, reach: dict[str, tuple[int, ...]]):
        super().__init__(table, concept_ids, name)
        self.reach = reach
        self.stem = word_stemmer()

    @classmethod
    def build(
        cls, table: NameTable, concept_ids: Sequence[str], name: str = "thesaurus", normalize: Normalizer | None = None, **params
    ) -> ThesaurusGenerator:
        from medlink.kb.synonym_sets import packaged_synonym_sets, source_synonym_sets

        settings = read_params(f"thesaurus generator {name!r}", params, THESAURUS_PARAMS)
        known = set(concept_ids)
        every = {**(packaged_synonym_sets() if settings["hpo"] else {}), **source_synonym_sets(settings["synonyms"])}
        sets = [texts for concept_id, texts in every.items() if concept_id not in known]
        return cls(table, concept_ids, name, reach_by_key(table, sets, normalize or default_normalize))

    @classmethod
    def load(cls, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> ThesaurusGenerator:
        path = directory / REACH_FILE
        saved = read_json(path)
        if not isinstance(saved, dict) or saved.get("version") != REACH_VERSION or not isinstance(saved.get("reach"), dict):
            raise DamagedFileError(path, ValueError(f'expected {{"version": {REACH_VERSION}, "reach": {{word key: [rows]}}}}'))
        n_rows = len(table.keys)
        reach = {}
        for key, rows in saved["reach"].items():
            if not (isinstance(rows, list) and all(isinstance(row, int) and 0 <= row < n_rows for row in rows)):
                raise DamagedFileError(path, ValueError(f"{key!r}: expected rows of the {n_rows} names"))
            reach[key] = tuple(rows)
        return cls(table, concept_ids, name, reach)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        write_json(directory / REACH_FILE, {"version": REACH_VERSION, "reach": {key: list(rows) for key, rows in self.reach.items()}})

    def _reached(self, mention: str) -> tuple[int, ...]:
        """The rows the mention's synonyms spell; else, for a mention that says a side, a degree or whose, those of the
        rest ("ringing in my ears" as "ringing in ears"), as the exact stage's words form reads it."""
        rows = self.reach.get(word_key(mention, self.stem, FUNCTION_WORDS), ())
        words = mention.split()
        if rows or not LEFT_OUT_IF_NEEDED.intersection(words):
            return rows
        rest = " ".join(word for word in words if word not in LEFT_OUT_IF_NEEDED)
        return self.reach.get(word_key(rest, self.stem, FUNCTION_WORDS), ()) if rest else ()

    def reading(self, mention: str) -> str | None:
        """The names the mention's synonyms spell (the first three), or None: what an explanation shows."""
        rows = self._reached(mention)
        return " | ".join(self.table.display[row] for row in rows[:3]) if rows else None

    def reading_evidence(self, mention: str, read: str) -> dict[str, str]:
        """A candidate's evidence entry for what ``reading`` said."""
        return {"synonym": f"{self.name} read '{mention}' as a synonym of '{read}'"}

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        found = [(i, row) for i, m in enumerate(mentions) for row in self._reached(m)]
        query = np.array([i for i, _ in found], dtype=np.int64)
        key = np.array([row for _, row in found], dtype=np.int64)
        return self._concept_hits(query, key, np.ones(len(found), np.float32), stage, len(mentions), k)

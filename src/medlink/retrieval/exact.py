"""Exact match on the normalised name: score 1 for every concept the mention's key names."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from medlink.params import EXACT_PARAMS, read_params
from medlink.retrieval.base import GeneratorBase
from medlink.retrieval.hits import Hits
from medlink.retrieval.names import NameTable


class ExactGenerator(GeneratorBase):
    """Dictionary lookup of normalised mentions among the table's keys."""

    def __init__(self, table: NameTable, concept_ids: Sequence[str], name: str = "exact"):
        super().__init__(table, concept_ids, name)
        self.row_of = {key: row for row, key in enumerate(table.keys)}

    @classmethod
    def build(cls, table: NameTable, concept_ids: Sequence[str], name: str = "exact", **params) -> "ExactGenerator":
        read_params(f"exact generator {name!r}", params, EXACT_PARAMS)  # it has none: any key is a mistake
        return cls(table, concept_ids, name)

    @classmethod
    def load(cls, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> "ExactGenerator":
        return cls(table, concept_ids, name)

    def save(self, directory: Path) -> None:
        """Nothing beyond the shared name table."""

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        found = [(i, self.row_of[m]) for i, m in enumerate(mentions) if m in self.row_of]
        query = np.array([i for i, _ in found], dtype=np.int64)
        key = np.array([row for _, row in found], dtype=np.int64)
        return self._concept_hits(query, key, np.ones(len(found), np.float32), stage, len(mentions), k)

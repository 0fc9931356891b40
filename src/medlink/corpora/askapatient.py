"""AskAPatient fold files: ``concept_id<TAB>concept_name<TAB>mention``, latin-1."""

from __future__ import annotations

from pathlib import Path

from medlink.corpora.mentions import LabeledMention, is_unlinked
from medlink.errors import MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import decoded_lines


def load_askapatient(path: Path | str, *, policy: InvalidLinePolicy | None = None, keep_unlinked: bool = False) -> list[LabeledMention]:
    """Mentions from an AskAPatient fold file: ``concept_id<TAB>concept_name<TAB>mention``, latin-1.

    The fold files have no document or position: ``doc_id`` is ``None``.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"AskAPatient fold file not found: {path} (no such file)")
    policy = policy or InvalidLinePolicy()
    mentions: list[LabeledMention] = []
    for lineno, line in decoded_lines(path, policy, encoding="latin-1"):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) != 3 or not fields[0] or not fields[2]:
            policy.invalid(path, lineno, f"expected 'concept_id<TAB>concept_name<TAB>mention'; found {len(fields)} tab-separated field(s)")
            continue
        concept_id, name, text = fields
        gold = frozenset({concept_id})
        if keep_unlinked or not is_unlinked(gold):
            mentions.append(LabeledMention(text, (text,), gold, gold_name=name or None))
    return mentions

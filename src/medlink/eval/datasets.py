"""Labelled evaluation mentions and the loaders for the benchmark formats (BioSyn, AskAPatient, PubTator).

Every loader returns ``LabeledMention`` records so that metrics and subpopulations never care
which format the data came from. Gold ids keep every alternative the annotators gave: ids are
split on ``|`` and ``+`` into one set, and a prediction counts when it matches any of them
(the BioSyn protocol). A composite mention ("breast and ovarian cancer") keeps its parts, each
linked separately; it is correct only when every part is.

Mentions annotated as unlinkable (id ``-1``, "CUI-less") are skipped unless ``keep_unlinked``,
as BioSyn's evaluation does; none of the bundled datasets has any. Duplicate mentions are kept:
the published NCBI Disease figures count all 960 test mentions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from medlink.core import Mention
from medlink.errors import MedlinkError, MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.eval._lines import read_lines

UNLINKED = "-1"


@dataclass(frozen=True, slots=True)
class LabeledMention:
    """One gold-annotated mention: ``parts`` are linked separately (one part unless composite)."""

    text: str
    parts: tuple[str, ...]
    gold: frozenset[str]
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None
    semantic_type: str | None = None
    gold_name: str | None = None  # the annotators' concept name, when the format gives one (AskAPatient)

    @property
    def is_composite(self) -> bool:
        return len(self.parts) > 1

    def to_mention(self) -> Mention:
        """The unlabelled mention a linker sees (whole text, position kept for context)."""
        return Mention(self.text, self.doc_id, self.start, self.end)


def split_ids(field: str, strip_prefixes: tuple[str, ...] = ()) -> frozenset[str]:
    """``"D001943|D010051"`` or ``"D007674+D006222"`` -> the set of ids (alternatives and composite ids alike)."""
    ids = set()
    for raw in field.replace("+", "|").split("|"):
        raw = raw.strip()
        for prefix in strip_prefixes:
            if raw.startswith(prefix):
                raw = raw[len(prefix):]
                break
        if raw:
            ids.add(raw)
    return frozenset(ids)


def _is_unlinked(gold: frozenset[str]) -> bool:
    return not gold or gold <= {UNLINKED}


def load_biosyn(path: Path | str, *, policy: InvalidLinePolicy | None = None, keep_unlinked: bool = False) -> list[LabeledMention]:
    """Mentions from a BioSyn ``processed_*`` directory of ``*.concept`` files (or one such file).

    Line format ``PMID||start|end||type||mention||ids``; a composite mention joins its parts
    with ``|``. Files are read in file-name order, lines in file order, so runs are repeatable.
    """
    path = Path(path)
    policy = policy or InvalidLinePolicy()
    if path.is_dir():
        files = sorted(path.glob("*.concept"), key=lambda p: p.name)
        if not files:
            raise MissingInputError(f"no *.concept files in {path} (expected a BioSyn processed_* directory)")
    elif path.is_file():
        files = [path]
    else:
        raise MissingInputError(f"BioSyn mentions not found: {path} (no such file or directory)")
    mentions: list[LabeledMention] = []
    for file in files:
        for lineno, line in read_lines(file, policy):
            if not line.strip():
                continue
            mention = _biosyn_line(line)
            if isinstance(mention, str):
                policy.invalid(file, lineno, mention)
            elif keep_unlinked or not _is_unlinked(mention.gold):
                mentions.append(mention)
    return mentions


_BIOSYN_EXPECTED = "expected 'PMID||start|end||type||mention||ids' (mention parts and ids joined by '|')"


def _biosyn_line(line: str) -> LabeledMention | str:
    """Parse one ``.concept`` line, or return why it is malformed."""
    fields = line.split("||")
    if len(fields) != 5:
        return f"{_BIOSYN_EXPECTED}; found {len(fields)} '||'-separated fields"
    doc_id, span, semantic_type, text, ids = (f.strip() for f in fields)
    start, sep, end = span.partition("|")
    if not sep or not start.strip().isdigit() or not end.strip().isdigit():
        return f"{_BIOSYN_EXPECTED}; span {span!r} is not 'start|end'"
    parts = tuple(p.strip() for p in text.split("|"))
    if not text or not all(parts):
        return f"{_BIOSYN_EXPECTED}; empty mention or mention part"
    gold = split_ids(ids)
    if not gold:
        return f"{_BIOSYN_EXPECTED}; no concept id"
    return LabeledMention(text, parts, gold, doc_id or None, int(start), int(end), semantic_type or None)


def load_askapatient(path: Path | str, *, policy: InvalidLinePolicy | None = None, keep_unlinked: bool = False) -> list[LabeledMention]:
    """Mentions from an AskAPatient fold file: ``concept_id<TAB>concept_name<TAB>mention``, latin-1.

    The fold files have no document or position: ``doc_id`` is ``None``.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"AskAPatient fold file not found: {path} (no such file)")
    policy = policy or InvalidLinePolicy()
    mentions: list[LabeledMention] = []
    for lineno, line in read_lines(path, policy, encoding="latin-1"):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("\t")]
        if len(fields) != 3 or not fields[0] or not fields[2]:
            policy.invalid(path, lineno, f"expected 'concept_id<TAB>concept_name<TAB>mention'; found {len(fields)} tab-separated field(s)")
            continue
        concept_id, name, text = fields
        gold = frozenset({concept_id})
        if keep_unlinked or not _is_unlinked(gold):
            mentions.append(LabeledMention(text, (text,), gold, gold_name=name or None))
    return mentions


def _load_pubtator(path: Path | str, **options) -> list[LabeledMention]:
    from medlink.eval.pubtator import load_pubtator

    return load_pubtator(path, **options)


DATASET_FORMATS: dict[str, tuple[Callable[..., list[LabeledMention]], str]] = {
    "biosyn": (load_biosyn, "BioSyn processed_* directory of *.concept files (or one file): PMID||start|end||type||mention||ids"),
    "askapatient": (load_askapatient, "AskAPatient fold file, latin-1: concept_id<TAB>concept_name<TAB>mention"),
    "pubtator": (_load_pubtator, "PubTator corpus: PMID|t|title, PMID|a|abstract, PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids"),
}


def load_dataset(spec: str, **options) -> list[LabeledMention]:
    """Load ``FORMAT:PATH`` (``biosyn:../shared/data/ncbi-disease/processed_test``) with that format's loader."""
    format_name, sep, path = spec.partition(":")
    if format_name not in DATASET_FORMATS or not sep or not path:
        known = "; ".join(f"{name} ({description})" for name, (_, description) in DATASET_FORMATS.items())
        problem = f"unknown dataset format {format_name!r}" if format_name not in DATASET_FORMATS else "no path given"
        raise MedlinkError(f"{problem} in {spec!r}: write FORMAT:PATH with one of the known formats: {known}")
    loader, _ = DATASET_FORMATS[format_name]
    return loader(path, **options)


def all_gold_ids(mentions: Iterable[LabeledMention]) -> set[str]:
    """Every gold id used by ``mentions`` (e.g. to check a KB covers the dataset)."""
    return {i for m in mentions for i in m.gold}

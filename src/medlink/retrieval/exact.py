"""Exact match on the normalised name: score 1 for every concept the mention's key names.

With ``words``, the match is on the set of word stems instead, function words left out ("fracture of hip", "hip
fractures" and "Fracture of hip NOS" all read {fractur, hip}): terminologies phrase a concept one way ("Fracture of
hip", "Heart failure") and people another ("hip fracture", "heart failures"); a character n-gram or BM25 score sees a
near miss there, and may rank a different concept spelt closer ("Hip contractures") above it.

With ``spelling``, the stage answers only a mention whose words a spelling correction changes (each word no name has
read as the most frequent name word one edit away, ``medlink.text.spelling``), by the names its reading spells exactly:
"pnuemonia" is Pneumonia. Why a stage of its own: a dense stage reads a misspelling poorly ("pnuemonia": Pyuria) and
can outweigh the character n-grams; the fusion can weigh this exact evidence as it needs.

With ``lay_words`` (words form), a mention whose own words match no name, and whose words read with people's words for
a symptom as names say them do (``medlink.text.lay_words``), is searched so by every stage (``lay_reading``, which the
linker's key asks): "sore knees" is *Knee pain*.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from medlink.errors import DamagedFileError
from medlink.params import EXACT_PARAMS, read_params
from medlink.retrieval.base import GeneratorBase
from medlink.retrieval.hits import Hits
from medlink.retrieval.lines import Lines
from medlink.retrieval.names import NameTable, NameWords, read_json, write_lines
from medlink.text.lay_words import lay_reading
from medlink.text.normalize import SIDES, Normalizer
from medlink.text.plain_forms import PLAIN_FORMS, plain_form
from medlink.text.spelling import SpellingIndex, query_speller

PARAMS_FILE = "medlink_params.json"
WORD_KEYS_FILE = "word_keys.txt"  # each table row's word key, in row order: stemming the names again would slow every load
PLAIN_WORD_KEYS_FILE = "plain_word_keys.txt"  # each row's plain form's word key ("" for none), in row order
SCANNED_KEYS = 32  # keys looked up by scanning the names before the key -> rows map is built (a scan costs about a 36th of the map)
# words that change neither what a name means nor how it is ordered; "NOS" (not otherwise specified) and "unspecified" are
# ICD's "unqualified": "kidney failure" is ICD-10-CM's "Unspecified kidney failure"
FUNCTION_WORDS = frozenset({"a", "an", "the", "of", "in", "on", "at", "nos", "unspecified"})
EARLIER_FUNCTION_WORDS = frozenset({"a", "an", "the", "of", "in", "on", "at", "nos"})  # an index whose params file names none
# words people add to a condition that say how bad, how often or whose it is ("very bad headaches", "my legs are
# restless"), and that a name seldom says: left out, with a side, only when no name has the mention's words
SAYS_HOW_OR_WHOSE = frozenset(
    "very so really extremely extreme severe severely mild mildly moderate moderately bad badly terrible terribly horrible "
    "horribly awful intense constant constantly frequent frequently occasional occasionally slight slightly much lot lots "
    "my his her their our your i me is are was were am be been being have has had got getting".split()
)
LEFT_OUT_IF_NEEDED = SIDES | SAYS_HOW_OR_WHOSE


def word_stemmer() -> Callable[[list[str]], list[str]]:
    import Stemmer

    return Stemmer.Stemmer("english").stemWords


def word_key(key: str, stem: Callable[[list[str]], list[str]], function_words: frozenset[str] | None = None) -> str:
    """The sorted distinct stems of a normalised name's words, function words (default: ``FUNCTION_WORDS``) left out
    ("" when none is left)."""
    leave_out = FUNCTION_WORDS if function_words is None else function_words
    return " ".join(sorted(set(stem([w for w in key.split() if w not in leave_out]))))


def saved_settings(directory: Path) -> tuple[bool, frozenset[str], int | None, bool, bool]:
    """The words setting, function words, plain forms' version, spelling and lay words settings of the exact generator
    saved at ``directory`` (no params file: whole names, no words form; no function words: ``EARLIER_FUNCTION_WORDS``; no
    version: no plain forms; a flag not saved: off)."""
    path = directory / PARAMS_FILE
    settings = read_json(path) if path.is_file() else {}
    if not isinstance(settings, dict) or not isinstance(settings.get("words", False), bool):
        raise DamagedFileError(path, ValueError('expected {"words": true or false}'))
    for flag in ("spelling", "lay_words"):
        if not isinstance(settings.get(flag, False), bool):
            raise DamagedFileError(path, ValueError(f'expected "{flag}": true or false'))
    function_words = settings.get("function_words", sorted(EARLIER_FUNCTION_WORDS))
    if not isinstance(function_words, list) or not all(isinstance(w, str) for w in function_words):
        raise DamagedFileError(path, ValueError('expected "function_words": a list of words'))
    return (
        settings.get("words", False),
        frozenset(function_words),
        settings.get("plain_forms"),
        settings.get("spelling", False),
        settings.get("lay_words", False),
    )


def word_keys_are_current(directory: Path) -> bool:
    """Were the word keys of the exact generator saved at ``directory`` made with today's function words and plain forms?
    (Not: a default index is rebuilt, so it links as this version does.)"""
    try:
        words, function_words, plain_forms, *_flags = saved_settings(directory)
    except DamagedFileError:
        return False
    return not words or (function_words == FUNCTION_WORDS and plain_forms == PLAIN_FORMS)


def plain_word_keys(
    table: NameTable, normalize: Normalizer, stem: Callable[[list[str]], list[str]], function_words: frozenset[str]
) -> list[str]:
    """Each row's word key of its name's plain form (``medlink.text.plain_forms``: "Essential (primary) hypertension" ->
    {essenti, hypertens}), "" for a name that has none."""
    plain = [plain_form(text) for text in table.display]
    return [word_key(normalize(form), stem, function_words) if form else "" for form in plain]


class ExactGenerator(GeneratorBase):
    """Dictionary lookup of normalised mentions (or their word sets) among the table's keys.

    In the words form a name also answers for its plain form's words where no name has them ("essential hypertension"
    for ICD-10-CM's "Essential (primary) hypertension"): a name that says so itself comes first."""

    uses_normalizer = True  # the Linker passes the KB's normaliser (for the plain forms' word keys)

    def __init__(
        self,
        table: NameTable,
        concept_ids: Sequence[str],
        name: str = "exact",
        words: bool = False,
        word_keys: Sequence[str] | None = None,
        function_words: frozenset[str] | None = None,
        plain_keys: Sequence[str] | None = None,
        spelling: bool = False,
        lay_words: bool = False,
    ):
        super().__init__(table, concept_ids, name)
        self.words = words
        self.spelling = spelling
        self.lay_words = lay_words and words
        self.name_words = NameWords(table.keys)  # a loaded index's saved ones (``load``)
        self._speller: SpellingIndex | None = None  # built on the first search with a word the names lack
        self.function_words = FUNCTION_WORDS if function_words is None else function_words  # an index keeps those its keys were made with
        self.plain_keys = plain_keys  # None: an index without plain forms' keys, or a table built without its normaliser
        if words:
            self.stem = word_stemmer()
            self.word_keys = word_keys if word_keys is not None else [word_key(key, self.stem, self.function_words) for key in table.keys]
            self._rows_of: dict[str, int | tuple[int, ...]] | None = None  # built when a call is large enough to pay for it
        else:
            self._row_of: dict[str, int] | None = None  # the same
        self._keys_scanned = 0

    @classmethod
    def build(
        cls, table: NameTable, concept_ids: Sequence[str], name: str = "exact", normalize: Normalizer | None = None, **params
    ) -> ExactGenerator:
        settings = read_params(f"exact generator {name!r}", params, EXACT_PARAMS)
        flags = {"spelling": settings["spelling"], "lay_words": settings["lay_words"]}
        if not (settings["words"] and normalize is not None):
            return cls(table, concept_ids, name, settings["words"], **flags)
        plain = plain_word_keys(table, normalize, word_stemmer(), FUNCTION_WORDS)
        return cls(table, concept_ids, name, True, plain_keys=plain, **flags)

    @classmethod
    def load(cls, directory: Path, table: NameTable, concept_ids: Sequence[str], name: str) -> ExactGenerator:
        words, function_words, _plain_forms, spelling, lay_words = saved_settings(directory)
        word_keys = plain_keys = None
        if words and (directory / WORD_KEYS_FILE).is_file():  # none: computed again
            word_keys = row_lines(directory / WORD_KEYS_FILE, table, "word keys")
        if words and (directory / PLAIN_WORD_KEYS_FILE).is_file():  # none: an index without plain word keys links without them
            plain_keys = row_lines(directory / PLAIN_WORD_KEYS_FILE, table, "plain forms' word keys")
        loaded = cls(table, concept_ids, name, words, word_keys, function_words, plain_keys, spelling, lay_words)
        loaded.name_words = NameWords.in_directory(table.keys, directory)
        return loaded

    def save(self, directory: Path) -> None:
        """Its setting and, in the words form, each name's word key and its plain form's (the names come from the shared
        name table)."""
        directory.mkdir(parents=True, exist_ok=True)
        settings = {"words": self.words, "function_words": sorted(self.function_words)}
        settings.update({flag: True for flag in ("spelling", "lay_words") if getattr(self, flag)})
        if self.words:
            write_lines(directory / WORD_KEYS_FILE, self.word_keys)
        if self.words and self.plain_keys is not None:
            write_lines(directory / PLAIN_WORD_KEYS_FILE, self.plain_keys)
            settings["plain_forms"] = PLAIN_FORMS
        (directory / PARAMS_FILE).write_text(json.dumps(settings), encoding="utf-8")
        if self.spelling:
            self.name_words.save(directory)

    def _word_rows(self, mention: str) -> tuple[int, ...]:
        """The rows whose words are the mention's; else, for a mention that says a side, a degree or whose it is and
        no such name says so, the rows whose words are the rest ("right hip fracture": "Fracture of hip NOS"; "very
        bad headaches": "Headache")."""
        rows = self._rows(word_key(mention, self.stem, self.function_words))
        words = mention.split()
        if rows or not LEFT_OUT_IF_NEEDED.intersection(words):
            return rows
        rest = " ".join(word for word in words if word not in LEFT_OUT_IF_NEEDED)
        return self._rows(word_key(rest, self.stem, self.function_words)) if rest else ()

    def lay_reading(self, mention: str) -> str | None:
        """With ``lay_words``, the normalised mention with people's words for a symptom read as names say them, where
        its own words match no name and that reading's do ("sore muscles": "pain muscles", *Muscle pain*'s words);
        else None. The linker searches every stage with it (``Linker.key``)."""
        if not self.lay_words:
            return None
        for limbs in (False, True):  # a limb as ICD-10-CM names it only where the lay words alone find no name
            read = lay_reading(mention.split(), limbs)
            if read is not None and self._word_rows(read):
                return None if self._word_rows(mention) else read
        return None

    @property
    def rows_of(self) -> dict[str, int | tuple[int, ...]]:
        """Word key -> its row or rows; a plain form's key where no name's own words have it."""
        if self._rows_of is None:
            rows = rows_by_key(self.word_keys)
            rows.pop("", None)
            plain_rows = rows_by_key(self.plain_keys or ())
            self._rows_of = {**{key: found for key, found in plain_rows.items() if key and key not in rows}, **rows}
        return self._rows_of

    def _rows(self, key: str) -> tuple[int, ...]:
        if self._rows_of is None and self._keys_scanned < SCANNED_KEYS:  # a few mentions: a scan costs less than the map
            self._keys_scanned += 1
            return (_positions(self.word_keys, key) or _positions(self.plain_keys or [], key)) if key else ()
        found = self.rows_of.get(key, ())
        return (found,) if isinstance(found, int) else found

    @property
    def row_of(self) -> dict[str, int]:
        """Name key -> its row (the last, of a key on several)."""
        if self._row_of is None:
            self._row_of = dict(zip(self.table.keys, range(len(self.table.keys))))
        return self._row_of

    def _row(self, key: str) -> int | None:
        if self._row_of is None and self._keys_scanned < SCANNED_KEYS:  # as ``_rows``
            self._keys_scanned += 1
            rows = _positions(self.table.keys, key)
            return rows[-1] if rows else None
        return self.row_of.get(key)

    def corrected(self, mention: str) -> str:
        """``mention`` with each word no name has read as the most frequent name word one edit away (where one is)."""
        known = self.name_words.counts
        if all(word in known for word in mention.split()):
            return mention  # what the speller would say, without building it
        if self._speller is None:
            self._speller = query_speller(known)
        return " ".join(self._speller.correct(word) or word for word in mention.split())

    def reading(self, mention: str) -> str | None:
        """What this stage searched instead of ``mention`` (its words corrected), or None: what an explanation shows."""
        if not self.spelling:
            return None
        read = self.corrected(mention)
        return read if read != mention else None

    def search_hits(self, mentions: Sequence[str], k: int, stage: int = 0) -> Hits:
        if self.spelling:  # only what a correction changes, by its reading (the exact stage answers the rest)
            mentions = [read if (read := self.corrected(m)) != m else "" for m in mentions]
        if len(mentions) > SCANNED_KEYS // 4:
            _ = self.rows_of if self.words else self.row_of  # a batch: the map pays for itself
        if self.words:
            found = [(i, row) for i, m in enumerate(mentions) for row in self._word_rows(m)]
        else:
            found = [(i, row) for i, m in enumerate(mentions) if (row := self._row(m)) is not None]
        query = np.array([i for i, _ in found], dtype=np.int64)
        key = np.array([row for _, row in found], dtype=np.int64)
        return self._concept_hits(query, key, np.ones(len(found), np.float32), stage, len(mentions), k)


def _positions(keys: Sequence[str], key: str) -> tuple[int, ...]:
    """The positions of ``key`` in ``keys``, ascending, by C-level scans (``list.index``; a loaded index's byte search)."""
    if isinstance(keys, Lines):
        return tuple(keys.positions(key))
    out, at = [], 0
    while True:
        try:
            at = keys.index(key, at)
        except ValueError:
            return tuple(out)
        out.append(at)
        at += 1


def rows_by_key(keys: Sequence[str]) -> dict[str, int | tuple[int, ...]]:
    """Key -> its row, or the rows holding it (ascending) where it is on several. Most keys are on one row: those are
    grouped by C-level dict and Counter passes, and only the repeated keys by a loop (what loading an index's word keys
    spends its time on)."""
    keys = keys if isinstance(keys, list) else list(keys)  # a loaded index's ``Lines`` decoded once, not once a pass
    rows: dict[str, int | tuple[int, ...]] = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1)))
    repeated = {key for key, count in Counter(keys).items() if count > 1}
    if repeated:
        groups: dict[str, list[int]] = defaultdict(list)
        for row, key in enumerate(keys):
            if key in repeated:
                groups[key].append(row)
        rows.update((key, tuple(found)) for key, found in groups.items())
    return rows


def row_lines(path: Path, table: NameTable, what: str) -> Sequence[str]:
    """A file of one line per table row (``write_lines`` writes a single empty line as an empty file)."""
    lines = Lines.read(path) or [""] * (len(table.keys) == 1)
    if len(lines) != len(table.keys):
        raise DamagedFileError(path, ValueError(f"{len(lines)} {what} for {len(table.keys)} names"))
    return lines

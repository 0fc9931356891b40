"""Rows of a UMLS Rich Release Format file (``|``-separated, one trailing ``|``), plain or gzipped, with malformed and
non-UTF-8 lines reported as ``file:line`` (or skipped) rather than raised from deep inside the reader."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import mover, open_bytes

_EOL = frozenset({"\n", "\r\n", ""})


def _problem(parts: list[str], nfields: int, name: str) -> str | None:
    """Why a line whose split is not ``nfields`` fields + the end of line after the final '|' is
    malformed, or None for a blank line (ignored)."""
    n = len(parts)
    if n == 1 and not parts[0].strip():
        return None
    if n == nfields and parts[-1].strip():
        return f"expected {nfields} '|'-separated fields ({name}), got {nfields} without the final '|'"
    got = n - 1 if not parts[-1].strip() else n
    return f"expected {nfields} '|'-separated fields ({name}), got {got}"


def rrf_rows(path: Path, nfields: int, name: str, policy: InvalidLinePolicy) -> Iterator[tuple[int, list[str]]]:
    """Yield (line number, fields) for each well-formed row of an RRF file (plain or ``.gz``); the
    last field is the end of line after the final '|'. Malformed lines go to ``policy``, blank ones
    are ignored. One generator step per row: this is the hot loop of MRCONSO."""
    eol = _EOL
    width = nfields + 1
    move = mover(policy)
    # surrogateescape: a byte that is not UTF-8 becomes a lone surrogate instead of a traceback; only non-ASCII lines
    # are checked for one (encode() fails on it), so the hot loop stays a split for the usual ASCII row
    with io.TextIOWrapper(open_bytes(path), encoding="utf-8", errors="surrogateescape", newline="") as handle:
        for lineno, line in enumerate(handle, 1):
            move(path, lineno)
            if not line.isascii():
                try:
                    line.encode("utf-8")
                except UnicodeEncodeError as error:
                    policy.invalid(path, lineno, f"not valid UTF-8 at character {error.start + 1} of the line (save the file as UTF-8)")
                    continue
                if lineno == 1:
                    line = line.removeprefix("\ufeff")
            parts = line.split("|")
            if len(parts) != width or parts[nfields] not in eol:
                problem = _problem(parts, nfields, name)
                if problem:
                    policy.invalid(path, lineno, problem)
                continue
            yield lineno, parts

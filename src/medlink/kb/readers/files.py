"""Small shared helpers for readers: checked paths, opening (``.gz`` decompressed on the fly where a
reader accepts it), line decoding that reports ``file:line``, and option sets."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import IO, Iterable, Iterator

from medlink.errors import InputFormatError, MissingInputError
from medlink.kb.errors_policy import InvalidLinePolicy


def require_file(path: Path | str | None, what: str) -> Path:
    """Return ``path`` as a Path, or raise MissingInputError naming it and what it should be."""
    return _require(path, what, directory=False)


def require_dir(path: Path | str | None, what: str) -> Path:
    """Return ``path`` as a Path, or raise MissingInputError naming it and what it should be."""
    return _require(path, what, directory=True)


def _require(path: Path | str | None, what: str, *, directory: bool) -> Path:
    if path is None:
        raise MissingInputError(f"no path given for the {what}")
    path = Path(path)
    if directory and not path.is_dir():
        raise MissingInputError(f"{what}: {path} is a file, not a folder" if path.exists() else f"{what} not found: {path} (no such directory)")
    if not directory and not path.is_file():
        raise not_a_file(path, what)
    return path


def not_a_file(path: Path | str, what: str) -> MissingInputError:
    """The error for a ``what`` expected at ``path`` where there is no file: a folder is called a folder, not missing."""
    path = Path(path)
    if path.is_dir():
        return MissingInputError(f"{what}: {path} is a folder, not a file; give a file")
    return MissingInputError(f"{what} not found: {path} (no such file)")


def open_bytes(path: Path) -> IO[bytes]:
    """Open a source as bytes; a ``.gz`` file is decompressed on the fly."""
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def raw_lines(handle: IO[bytes]) -> Iterator[bytes]:
    """A binary file's lines without their endings, whether they end in LF, CRLF or a lone CR (old Mac files, which
    would otherwise read as one giant line)."""
    for raw in handle:
        raw = raw.rstrip(b"\n").removesuffix(b"\r")
        if b"\r" in raw:
            yield from raw.split(b"\r")
        else:
            yield raw


def decoded_lines(path: Path, policy: InvalidLinePolicy | None, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """Yield (line number, text without line ending) of a file (``.gz`` decompressed, a BOM dropped, LF / CRLF / CR).

    Lines are decoded one by one so that a line that does not decode becomes a ``file:line``
    error for ``policy`` (default: fail) rather than a traceback, and the lines around it are kept.
    """
    policy = policy if policy is not None else InvalidLinePolicy()
    with open_bytes(path) as handle:
        for lineno, raw in enumerate(raw_lines(handle), 1):
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError as error:
                policy.invalid(path, lineno, f"not valid {encoding.upper()} at byte {error.start + 1} of the line (save the file as {encoding.upper()})")
                continue
            if lineno == 1:
                text = text.removeprefix("\ufeff")
            yield lineno, text


def parse_json(text: str, path: Path | str, line: int | None = None):
    """``json.loads`` whose failures (bad syntax, nesting deep enough to exhaust Python's stack) name the file and line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = line if line is not None else error.lineno
        raise InputFormatError(path, where, f"not valid JSON: {error.msg} (column {error.colno})") from None
    except RecursionError:
        raise InputFormatError(path, line, "JSON nested too deeply to read") from None


def as_set(values: Iterable[str] | str | None) -> frozenset[str] | None:
    """A reader option given as one value, several, or ``None`` (no filter) -> a frozenset or None."""
    if values is None:
        return None
    if isinstance(values, str):
        return frozenset({values})
    return frozenset(values)

"""Small shared helpers for readers: checked paths, opening (``.gz`` decompressed on the fly where a
reader accepts it), line decoding that reports ``file:line``, where a reader is (``LocatedPolicy``), and option sets."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

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
        raise MissingInputError(
            f"{what}: {path} is a file, not a folder" if path.exists() else f"{what} not found: {path} (no such directory)"
        )
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


# a line number, or a function finding it (asked only when an error needs it)
LineNumber = int | Callable[[], "int | None"] | None
# where a reader's records come from: one line, or a line per record field (an OBO concept's id, name and def tags; a
# derived parent's element for "tail"), ``None`` for the others
Line = LineNumber | dict[str | None, LineNumber]


@dataclass
class LocatedPolicy(InvalidLinePolicy):
    """The build's invalid-line policy plus where its reader is, so that the check of the records the reader yields
    (``readers.checked``) can name the file and line of a bad one without every record carrying them.

    ``around`` shares the counts of the policy it wraps, so the build's own policy still reports every skip. ``step``
    grows at each move: the records yielded between two moves come from one line (or stanza, XML record)."""

    path: Path | str | None = None
    line: Line = None
    step: int = 0

    @classmethod
    def around(cls, policy: InvalidLinePolicy) -> LocatedPolicy:
        if isinstance(policy, LocatedPolicy):
            return policy
        return cls(skip_invalid=policy.skip_invalid, skipped=policy.skipped, first_reasons=policy.first_reasons)

    def at(self, path: Path | str, line: Line) -> None:
        """The reader moved: the records it yields next come from ``path`` at ``line``."""
        self.path, self.line, self.step = path, line, self.step + 1

    def here(self, line: Line) -> None:
        """The next records come from ``line`` but belong with those before (one OBO stanza: skipped whole or kept)."""
        self.line = line

    def where(self, field: str | None = None) -> tuple[Path | str | None, int | None]:
        """(file, line) of the records being yielded (of their ``field``, where the reader told it); a line given as a
        function is found now."""
        line = self.line
        if isinstance(line, dict):
            line = line.get(field, line.get(None))
        return self.path, line() if callable(line) else line


def _stay(path: Path | str, line: Line) -> None:
    """A reader called without a located policy: nobody asks where it is."""


def _stay_on(line: Line) -> None:
    """A reader called without a located policy: nobody asks which line."""


def mover(policy: InvalidLinePolicy | None) -> Callable[[Path | str, Line], None]:
    """What a reader calls to say where it is: ``policy.at``, or nothing for a plain policy."""
    return policy.at if isinstance(policy, LocatedPolicy) else _stay


def liner(policy: InvalidLinePolicy | None) -> Callable[[Line], None]:
    """What a reader calls to say which line within a group of records: ``policy.here``, or nothing for a plain policy."""
    return policy.here if isinstance(policy, LocatedPolicy) else _stay_on


class TagLines:
    """The line of the n-th opening tag an XML reader met (``pattern`` matches it in a raw line), found by scanning the file
    only when asked: readers ask only when a record needs its line for an error, so a clean file costs nothing."""

    def __init__(self, path: Path, pattern: re.Pattern[str]):
        self._path = path
        self._pattern = pattern
        self._handle: IO[bytes] | None = None
        self._lines: list[int] = []  # the line of each tag found so far, in file order
        self._line = 0
        self._done = False

    def line_of(self, index: int) -> int | None:
        """The line of the ``index``-th tag (1-based), or None past the file's end."""
        while len(self._lines) < index and not self._done:
            self._read_line()
        return self._lines[index - 1] if 0 < index <= len(self._lines) else None

    def _read_line(self) -> None:
        if self._handle is None:
            self._handle = open_bytes(self._path)
        raw = self._handle.readline()
        if not raw:
            self._done = True
            self.close()
            return
        self._line += 1
        self._lines.extend([self._line] * len(self._pattern.findall(raw.decode("utf-8", "replace"))))

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def decoded_lines(path: Path, policy: InvalidLinePolicy | None, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """Yield (line number, text without line ending) of a file (``.gz`` decompressed, a BOM dropped, LF / CRLF / CR).

    Lines are decoded one by one so that a line that does not decode becomes a ``file:line``
    error for ``policy`` (default: fail) rather than a traceback, and the lines around it are kept.
    """
    policy = policy if policy is not None else InvalidLinePolicy()
    move = mover(policy)
    with open_bytes(path) as handle:
        for lineno, raw in enumerate(raw_lines(handle), 1):
            move(path, lineno)
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError as error:
                policy.invalid(
                    path,
                    lineno,
                    f"not valid {encoding.upper()} at byte {error.start + 1} of the line (save the file as {encoding.upper()})",
                )
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

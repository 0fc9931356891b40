"""The lines of a file medlink wrote (``names.write_lines``: one string a line), decoded one at a time where asked.

Why: an index's name tables and concept names hold hundreds of thousands of lines, and a warm ``medlink link`` reads a
few of them; splitting a whole file into strings costs far more than that. The file is still read, and checked to be
UTF-8, at once: a damaged file is refused when the index loads, not when a line is first asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from medlink.errors import reading

SPLIT_AFTER = 16  # one line read in this many (the lines read one at a time): the file is split into a list


class Lines(Sequence[str]):
    """A file's lines as a read-only list: by position (the line breaks found on the first such read; the whole file split
    once many lines are read), ``positions`` and ``index`` (byte searches, not scans of strings), iteration."""

    def __init__(self, data: bytes):
        self._data = data.replace(b"\r\n", b"\n") if b"\r" in data else data  # as text mode reads a file edited on Windows
        self._count = self._data.count(b"\n") + 1 if data else 0
        self._starts: np.ndarray | None = None
        self._reads = 0
        self._list: list[str] | None = None  # every line, once a long run has read many of them one at a time

    @classmethod
    def read(cls, path: Path) -> Lines:
        """The lines of ``path`` (a missing or undecodable file is a DamagedFileError naming it)."""
        with reading(path):
            data = path.read_bytes()
            data.decode("utf-8")
        return cls(data)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, at):  # an int gives a line, a slice a list of lines, as a list does
        if self._list is not None:
            return self._list[at]
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(self._count))]
        self._reads += 1
        if self._reads > self._count // SPLIT_AFTER:  # a long run: split once, then read the list
            self._list, self._starts = list(self), None
            return self._list[at]
        position = at + self._count if at < 0 else at
        if not 0 <= position < self._count:
            raise IndexError(f"line {at} of {self._count}")
        if self._starts is None:  # where each line starts, and one past the last line's end
            breaks = np.flatnonzero(np.frombuffer(self._data, np.uint8) == 10)
            self._starts = np.concatenate(([0], breaks + 1, [len(self._data) + 1]))
        return self._data[self._starts[position] : self._starts[position + 1] - 1].decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        if self._list is not None:
            return iter(self._list)
        return iter(self._data.decode("utf-8").split("\n") if self._count else [])

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._list if self._list is not None else list(self))

    def positions(self, value: str) -> list[int]:
        """Every line that is ``value``, ascending."""
        if not self._count or "\n" in value:
            return []
        line, data = value.encode("utf-8"), self._data
        out = [0] if data.startswith(line + b"\n") or data == line else []
        found, counted, breaks = data.find(b"\n" + line + b"\n"), 0, 0
        while found >= 0:
            breaks += data.count(b"\n", counted, found + 1)  # the line breaks up to this match's, counted once
            counted = found + 1
            out.append(breaks)
            found = data.find(b"\n" + line + b"\n", found + 1)
        if self._count > 1 and data.endswith(b"\n" + line):
            out.append(self._count - 1)
        return out

    def index(self, value: str, start: int = 0, stop: int | None = None) -> int:
        """The first line from ``start`` (before ``stop``) that is ``value``, as ``list.index`` finds it."""
        start, stop, _ = slice(start, stop).indices(self._count)
        found = next((line for line in self.positions(value) if start <= line < stop), None) if isinstance(value, str) else None
        if found is None:
            raise ValueError(f"{value!r} is not among the lines")
        return found

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and bool(self.positions(value))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (list, Lines)):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # a list's equality, so no hash

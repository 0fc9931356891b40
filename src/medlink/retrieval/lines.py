"""The lines of a file medlink wrote (``names.write_lines``: one string a line), decoded one at a time where asked.

Why: an index's name tables and concept names hold hundreds of thousands of lines, and a warm ``medlink link`` reads a
few of them; splitting whole files into strings took half of the default index's load. The file is still read, and
checked to be UTF-8, at once: a damaged file is refused when the index loads, not when a line is first asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from medlink.errors import reading


class Lines(Sequence[str]):
    """A file's lines as a read-only list: by position, ``index`` (a byte search, not a scan of strings), iteration."""

    def __init__(self, data: bytes):
        self._data = b"\n" + data + b"\n"  # every line stands between two line breaks
        self._breaks = np.flatnonzero(np.frombuffer(self._data, np.uint8) == 10)  # line i: after break i, before i + 1
        self._count = len(self._breaks) - 1 if data else 0

    @classmethod
    def read(cls, path: Path) -> Lines:
        """The lines of ``path`` (a missing or undecodable file is a DamagedFileError naming it)."""
        with reading(path):
            data = path.read_bytes()
            data.decode("utf-8")
        return cls(data)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, at):
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(self._count))]
        position = at + self._count if at < 0 else at
        if not 0 <= position < self._count:
            raise IndexError(f"line {at} of {self._count}")
        return self._data[self._breaks[position] + 1 : self._breaks[position + 1]].decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self._data[1:-1].decode("utf-8").split("\n") if self._count else [])

    def index(self, value: str, start: int = 0, stop: int | None = None) -> int:
        """The first line from ``start`` (before ``stop``) that is ``value``, as ``list.index`` finds it."""
        stop = self._count if stop is None else min(stop, self._count)
        if "\n" not in value and start < stop:
            found = self._data.find(b"\n" + value.encode("utf-8") + b"\n", int(self._breaks[start]))
            line = int(np.searchsorted(self._breaks, found)) if found >= 0 else stop
            if line < stop:
                return line
        raise ValueError(f"{value!r} is not among the lines")

    def __contains__(self, value: object) -> bool:
        try:
            self.index(value) if isinstance(value, str) else None
        except ValueError:
            return False
        return isinstance(value, str)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # a list's equality, so no hash

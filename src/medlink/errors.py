"""Errors a person can act on: each names the file, line and what was expected."""

from __future__ import annotations

from pathlib import Path


class MedlinkError(Exception):
    """Base class for errors that the CLI reports without a traceback."""


class InputFormatError(MedlinkError):
    """A source file has a line (or element) that does not match its format."""

    def __init__(self, path: str | Path, line: int | None, message: str):
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class MissingInputError(MedlinkError):
    """A file or directory the user named does not exist."""

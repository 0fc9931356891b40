"""Small shared helpers for readers: checked opening of files and directories."""

from __future__ import annotations

from pathlib import Path
from typing import IO

from medlink.errors import MissingInputError


def require_file(path: Path | str | None, what: str) -> Path:
    """Return ``path`` as a Path, or raise MissingInputError naming it and what it should be."""
    if path is None:
        raise MissingInputError(f"no path given for the {what}")
    path = Path(path)
    if not path.is_file():
        raise MissingInputError(f"{what} not found: {path} (no such file)")
    return path


def require_dir(path: Path | str | None, what: str) -> Path:
    """Return ``path`` as a Path, or raise MissingInputError naming it and what it should be."""
    if path is None:
        raise MissingInputError(f"no path given for the {what}")
    path = Path(path)
    if not path.is_dir():
        raise MissingInputError(f"{what} not found: {path} (no such directory)")
    return path


def open_text(path: Path, encoding: str = "utf-8") -> IO[str]:
    """Open a text source for streaming; newline='' keeps line endings out of the way of field splitting."""
    return open(path, encoding=encoding, newline="")

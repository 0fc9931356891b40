"""Errors a person can act on: each names the file, line and what was expected."""

from __future__ import annotations

import pickle
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
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


class DamagedFileError(MedlinkError):
    """A file medlink wrote (an index's arrays, tables, settings) cannot be read back: truncated, edited or replaced."""

    def __init__(self, path: str | Path, error: BaseException):
        self.path = str(path)
        reason = " ".join(str(error).split())[:200] or type(error).__name__
        super().__init__(
            f"{self.path}: damaged or incomplete ({type(error).__name__}: {reason}); rebuild it "
            "(an index: medlink index build --kb KB --out INDEX)"
        )


# what reading a file raises when its bytes are damaged or not in the expected format (JSON, numpy, zip, UTF-8 text)
READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, pickle.UnpicklingError)
# what looking up the fields of a JSON document raises when it was cut or edited into another shape
SHAPE_ERRORS = (KeyError, IndexError, TypeError, AttributeError)


@contextmanager
def reading(path: str | Path, also: tuple[type[Exception], ...] = ()) -> Iterator[None]:
    """A read or parse failure of ``path`` becomes a DamagedFileError naming it: one line for the user, not a traceback.
    ``also``: what else the reader raises for bad bytes (``SHAPE_ERRORS`` for a JSON document's lookups, RuntimeError
    from FAISS). Anything else is a bug in medlink, and is left to surface as one (``cli.main`` asks for a report)."""
    try:
        yield
    except MedlinkError:
        raise
    except READ_ERRORS + also as error:
        raise DamagedFileError(path, error) from error

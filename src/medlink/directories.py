"""Replacing a whole file or directory so that readers see the old one or the new one, never half of each."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

from medlink.errors import MedlinkError


def replace_directory(built: Path, final: Path) -> None:
    """Move the finished directory ``built`` to ``final``; an existing ``final`` is set aside first, then removed."""
    if final.exists():
        old = final.with_name(f".{final.name}.{os.getpid()}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
        os.replace(built, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(built, final)


def require_replaceable(final: Path, marker: str, what: str) -> None:
    """Refuse to overwrite anything but an earlier output of the same kind (a folder holding ``marker``) or an empty folder.

    Why: ``--out`` naming a KB file or someone's folder by mistake must not delete it.
    """
    final = Path(final)
    if not final.exists():
        return
    if not final.is_dir():
        raise MedlinkError(f"{final} is a file, not {what}; give --out a new folder name (nothing was written)")
    if any(final.iterdir()) and not (final / marker).is_file():
        raise MedlinkError(f"{final} is a folder that is not {what} (no {marker}); it is left as it is: give --out a new "
                           f"or empty folder (nothing was written)")


def _current_umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


_UMASK = _current_umask()  # read once, at import: setting it later would race with other threads creating files


def with_default_mode(*paths: Path) -> None:
    """Give files the permissions ``open()`` would (0666 less the umask): temporary files and some savers
    create them 0600, which other users and tools sharing a model or pairs folder then cannot read."""
    for path in paths:
        if Path(path).is_file():
            os.chmod(path, 0o666 & ~_UMASK)


def is_staging(name: str) -> bool:
    """Names medlink gives what it writes aside before moving it in (``.NAME....tmp``)."""
    return name.startswith(".") and name.endswith(".tmp")


@contextmanager
def atomic_file(path: Path, binary: bool = False) -> Iterator[IO]:
    """Write a file next to ``path`` then rename it over ``path``, with the permissions ``open()`` would give;
    on error nothing changes and no temporary file is left."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") if binary else os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            yield out
        with_default_mode(Path(temp))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_atomic(path: Path, data: str | bytes) -> Path:
    """``data`` to ``path`` through ``atomic_file``."""
    with atomic_file(path, binary=isinstance(data, bytes)) as out:
        out.write(data)
    return Path(path)

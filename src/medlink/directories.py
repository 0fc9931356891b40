"""Replacing a whole file or directory so that readers see the old one or the new one, never half of each."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterable, Iterator

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


@contextmanager
def staged_directory(final: Path, *, staging: Path | None = None, merge: bool | Iterable[str] = False) -> Iterator[Path]:
    """Build a folder aside, then move it in: yields an empty staging folder (``staging``; by default ``.NAME.PID.tmp``
    beside ``final``, or inside ``final`` when merging).

    When the block succeeds, the staging folder replaces ``final`` whole (readers see the old folder or the new one);
    with ``merge``, its files (True: all of them; else the names given) are moved into ``final`` one by one, the rest
    of ``final`` kept, and what else was staged is dropped. When the block fails, the staging folder is removed and
    ``final`` is as it was. A staging folder left by a killed process is recognised by ``is_staging``."""
    final = Path(final)
    if staging is None:
        staging = final / f".staging.{os.getpid()}.tmp" if merge else final.with_name(f".{final.name}.{os.getpid()}.tmp")
    staging = Path(staging)
    shutil.rmtree(staging, ignore_errors=True)
    staging.parent.mkdir(parents=True, exist_ok=True)
    try:
        staging.mkdir()
        yield staging
        if merge is False:
            replace_directory(staging, final)
            return
        names = [path.name for path in staging.iterdir()] if merge is True else list(merge)
        for name in names:
            os.replace(staging / name, final / name)
        shutil.rmtree(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


@contextmanager
def staged_file(final: Path) -> Iterator[Path]:
    """A path beside ``final`` (``.NAME.PID.tmp``) to build a file at (a KB's SQLite database): renamed over ``final``
    when the block succeeds, removed when it fails."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    staging.unlink(missing_ok=True)
    try:
        yield staging
        os.replace(staging, final)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise


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

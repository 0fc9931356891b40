"""Replacing a whole file or directory so that readers see the old one or the new one, never half of each."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import IO

from medlink.errors import MedlinkError
from medlink.inventory import (
    INVENTORY,
    changed_files,
    claim,
    file_checksum,
    files_below,
    foreign_files,
    recorded_files,
    say_foreign,
    write_inventory,
)
from medlink.locks import build_once, is_alive, make_parent, output_lock

__all__ = [
    "atomic_file",
    "build_once",
    "clean_stale",
    "file_checksum",
    "make_parent",
    "output_lock",
    "replace_directory",
    "replaced_file",
    "refuse_foreign",
    "require_replaceable",
    "require_replaceable_file",
    "staged_directory",
    "staged_file",
    "write_atomic",
    "write_replaced",
]


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where the system or file system cannot."""
    if sys.platform != "linux":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0


def replace_directory(built: Path, final: Path) -> None:
    """Move the finished directory ``built`` to ``final``. An existing ``final`` is swapped with ``built`` in one step
    where the system can (a kill at any moment leaves the old folder or the new one at ``final``), else set aside as
    ``.NAME.PID.old`` first, which ``clean_stale`` puts back if the process died before the new one was in."""
    if not final.exists():
        os.replace(built, final)
    elif _exchange(built, final):
        shutil.rmtree(built, ignore_errors=True)  # the old folder, now at the staging name
    else:
        old = final.with_name(f".{final.name}.{os.getpid()}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
        os.replace(built, final)
        shutil.rmtree(old, ignore_errors=True)


def clean_stale(final: Path) -> None:
    """What killed runs left beside ``final``: their staging copies (``.NAME.PID.tmp``) are removed, and a previous
    ``final`` set aside (``.NAME.PID.old``) is put back if nothing replaced it. Another live process's are left alone."""
    final = Path(final)
    if not final.parent.is_dir():
        return
    for leftover in final.parent.glob(f".{glob_escape(final.name)}.*"):
        rest = leftover.name[len(final.name) + 2 :]  # PID.tmp, PID.old or PID.RANDOM.tmp (an atomic_file's)
        pid, kind = rest.split(".", 1)[0], rest.rsplit(".", 1)[-1]
        if kind not in ("tmp", "old") or not pid.isdigit() or is_alive(int(pid)):
            continue
        if kind == "old" and not final.exists() and not final.is_symlink():
            os.replace(leftover, final)
        elif leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


def glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


@contextmanager
def staged_directory(final: Path, *, staging: Path | None = None, merge: bool | Iterable[str] = False) -> Iterator[Path]:
    """Build a folder aside, then move it in: yields an empty staging folder (``staging``; by default ``.NAME.PID.tmp``
    beside ``final``, or inside ``final`` when merging).

    When the block succeeds, the staging folder replaces ``final`` whole (readers see the old folder or the new one);
    with ``merge``, its files (True: all of them; else the names given) are moved into ``final`` one by one, the rest
    of ``final`` kept, and what else was staged is dropped. When the block fails, the staging folder is removed and
    ``final`` is as it was. A staging folder left by a killed process is recognised by ``is_staging``."""
    final = Path(final)
    whole = staging is None and merge is False  # a whole output replaced: serialise writers, clean what killed ones left
    if staging is None:
        staging = final / f".staging.{os.getpid()}.tmp" if merge else final.with_name(f".{final.name}.{os.getpid()}.tmp")
    staging = Path(staging)
    with output_lock(final) if whole else nullcontext():
        if whole:
            clean_stale(final)
        elif merge is not False and final.is_dir():
            clean_stale(final / "staging")  # a killed merge's .staging.PID.tmp inside final
        yield from _staged(final, staging, merge)


def _staged(final: Path, staging: Path, merge: bool | Iterable[str]) -> Iterator[Path]:
    shutil.rmtree(staging, ignore_errors=True)
    staging.parent.mkdir(parents=True, exist_ok=True)
    try:
        staging.mkdir()
        yield staging
        if merge is False:
            write_inventory(staging)
            if recorded_files(final) is not None:  # files a user put there while this was built (an unrecorded folder was judged before)
                refuse_foreign(final)
            replace_directory(staging, final)
            return
        names = [path.name for path in staging.iterdir()] if merge is True else list(merge)
        for name in names:
            claim(final / name, directory=(staging / name).is_dir(), create=True)
            os.replace(staging / name, final / name)
        shutil.rmtree(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


@contextmanager
def staged_file(final: Path) -> Iterator[Path]:
    """A path beside ``final`` (``.NAME.PID.tmp``) to build a file at (a KB's SQLite database): renamed over ``final``
    when the block succeeds, removed when it fails. One writer at a time; what killed writers left is removed first."""
    final = Path(final)
    make_parent(final)
    staging = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    with output_lock(final):
        clean_stale(final)
        staging.unlink(missing_ok=True)
        try:
            yield staging
            os.replace(staging, final)
        except BaseException:
            staging.unlink(missing_ok=True)
            raise


def json_has_keys(path: Path, keys: Iterable[str]) -> bool:
    """Is ``path`` a JSON object holding ``keys``? How an output medlink wrote is recognised by content, not by its name."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and set(keys) <= set(data)


def refuse_symlink(path: Path) -> None:
    """An output that is a symbolic link would send the write (or the replacement) somewhere else: refuse it."""
    if Path(path).is_symlink():
        raise MedlinkError(f"{path} is a symbolic link; give the real path ({Path(path).resolve()}) or a new name (nothing was written)")


def require_replaceable(
    final: Path, marker: str, what: str, signed: Callable[[Path], bool] | None = None, layout: Iterable[str] | None = None
) -> None:
    """Refuse to overwrite anything but an earlier output of the same kind or an empty folder. An earlier output is a
    folder holding ``marker`` that ``signed(marker path)`` recognises as medlink's (a file merely named so is not), and
    nothing but the files medlink recorded writing there (``inventory``); a folder without such records holds
    nothing outside the ``layout`` names its kind has at its top.

    Why: ``--out`` naming a KB file or someone's folder by mistake must not delete it, nor a file a user kept inside an
    index folder; nor may a symlink lead the replacement somewhere else.
    """
    final = Path(final)
    refuse_symlink(final)
    if not final.exists():
        return
    if not final.is_dir():
        raise MedlinkError(f"{final} is a file, not {what}; give --out a new folder name (nothing was written)")
    if not any(final.iterdir()):
        return
    if not (final / marker).is_file():
        why = f"no {marker}"
    elif signed is not None and not signed(final / marker):
        why = f"its {marker} was not written by medlink"
    elif recorded_files(final) is None and files_below(final) == [marker]:
        why = f"it holds only a {marker}, with no record of medlink writing it there: a copy, or what is left of one"
    else:
        refuse_foreign(final, layout)
        return
    raise MedlinkError(
        f"{final} is a folder that is not {what} ({why}); it is left as it is: give --out a new or empty folder (nothing was written)"
    )


def refuse_foreign(final: Path, layout: Iterable[str] | None = None) -> None:
    """Refuse to replace ``final`` if it holds a file medlink did not write there (see ``require_replaceable``)."""
    if not final.is_dir():
        return
    own = recorded_files(final)
    foreign = foreign_files(final, own, layout or ())
    if foreign and own is None and layout is None:
        raise MedlinkError(
            f"{final} holds no record of the files medlink wrote there ({INVENTORY}): it was written by an older "
            f"medlink, or its marker was copied there, and it holds {len(foreign)} file(s) ({', '.join(foreign[:5])}"
            f"{', ...' if len(foreign) > 5 else ''}); it is left as it is: remove the folder yourself, or give --out a "
            "new one (nothing was written)"
        )
    if foreign:
        raise MedlinkError(
            f"{say_foreign(final, foreign)}; it is left as it is: move them elsewhere, or give --out a new folder (nothing was written)"
        )
    changed = changed_files(final)
    if changed:
        raise MedlinkError(
            f"{final}: {len(changed)} file(s) medlink wrote there changed size since ({', '.join(changed[:5])}"
            f"{', ...' if len(changed) > 5 else ''}): your edits, or damage; it is left as it is: keep what you want "
            "elsewhere and remove the folder, or give --out a new one (nothing was written)"
        )


def require_replaceable_file(final: Path, what: str, signed: Callable[[Path], bool], sources: Iterable[Path] = ()) -> None:
    """The file counterpart: ``final`` may be replaced only if ``signed`` recognises it and it is none of ``sources``."""
    final = Path(final)
    refuse_symlink(final)
    if any(Path(source).exists() and Path(source).resolve() == final.resolve() for source in sources):
        raise MedlinkError(f"{final} is one of the sources being read; write the output under another name (nothing was written)")
    if final.is_dir():
        raise MedlinkError(f"{final} is a folder, not {what}; give a file name (nothing was written)")
    if final.exists() and not signed(final):
        raise MedlinkError(f"{final} exists and is not {what}; it is left as it is: give a new name or remove it (nothing was written)")


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
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") if binary else os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            yield out
        with_default_mode(Path(temp))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


@contextmanager
def replaced_file(final: Path, binary: bool = False) -> Iterator[IO]:
    """``atomic_file`` for an output a command replaces whole (``--out``): one writer at a time, and the temporary files
    of writers killed before their rename (``.NAME.PID.RANDOM.tmp``) removed first, as ``staged_file`` does for a KB."""
    with output_lock(final):
        clean_stale(final)
        with atomic_file(final, binary) as out:
            yield out


def write_atomic(path: Path, data: str | bytes) -> Path:
    """``data`` to ``path`` through ``atomic_file``; recorded in its folder's inventory, if the folder has one."""
    claim(Path(path))
    with atomic_file(path, binary=isinstance(data, bytes)) as out:
        out.write(data)
    return Path(path)


def write_replaced(path: Path, data: str | bytes) -> Path:
    """``data`` to ``path`` through ``replaced_file``: for an output a command replaces whole."""
    with replaced_file(path, binary=isinstance(data, bytes)) as out:
        out.write(data)
    return Path(path)

"""One writer per output: a lock file beside it, taken when a command starts and held until it ends.

Why at the start: two ``index build`` runs to one folder would otherwise both work for minutes and the second would
replace the first's result. Why ``flock``: the system drops the lock when its process dies however it dies, so a lock
file a killed run left is taken over, not waited for.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from medlink.errors import MedlinkError

log = logging.getLogger("medlink")

try:
    import fcntl
except ImportError:  # Windows: no advisory locks
    fcntl = None

_held: dict[tuple[str, int], int] = {}  # (lock path, thread) -> depth: a command's lock, taken again inside it, is its own
_held_guard = threading.Lock()


def make_parent(final: Path) -> None:
    """The folder an output goes in, created if missing, and said so: a mistyped folder would otherwise hold it unnoticed."""
    if not final.parent.is_dir():
        log.warning("created the folder %s for %s", final.parent, final.name)
        final.parent.mkdir(parents=True, exist_ok=True)


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lock_path(final: Path) -> Path:
    return Path(final).with_name(f".{Path(final).name}.lock")


def _holder(lock: Path) -> tuple[int | None, str]:
    """Who wrote the lock file: its process id and a description ('medlink index build ..., since 12:03:04')."""
    try:
        pid, started, command = lock.read_text(encoding="utf-8").split("\t", 2)
        return int(pid), f"process {pid} ({command.strip()}, since {started})"
    except (OSError, ValueError):
        return None, "another medlink process"


def _sign(handle) -> None:
    """Write who holds the lock into it, for the message a second writer gets."""
    handle.seek(0)
    handle.truncate()
    command = " ".join([Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python", *sys.argv[1:]])
    command = command[:300].replace("\n", " ").replace("\t", " ")
    handle.write(f"{os.getpid()}\t{time.strftime('%Y-%m-%d %H:%M:%S')}\t{command}\n")
    handle.flush()


def _acquire(lock: Path, final: Path):
    """An open, locked handle on ``lock`` (the file on disk now, not one a finishing holder just removed)."""
    while True:
        left_by, _ = _holder(lock) if lock.exists() else (None, "")
        handle = open(lock, "a+", encoding="utf-8")
        if fcntl is None:
            return handle
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            _, who = _holder(lock)
            raise MedlinkError(f"{who} is writing {final}; wait for it to finish or choose another output (nothing was written)") from None
        try:
            same = os.fstat(handle.fileno()).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            handle.close()
            continue
        if left_by is not None and left_by != os.getpid() and not is_alive(left_by):
            log.info("taking over the lock on %s that process %s left (it is no longer running)", final, left_by)
        _sign(handle)
        return handle


@contextmanager
def output_lock(final: Path) -> Iterator[None]:
    """Hold ``.NAME.lock`` beside ``final`` while writing it: a second process writing the same output is refused
    at once, naming the first. Taken again by the same thread (a command's lock, then its final write's), it is kept."""
    final = Path(final)
    make_parent(final)
    lock = lock_path(final)
    key = (os.path.realpath(lock), threading.get_ident())
    with _held_guard:
        depth = _held.get(key, 0)
        if depth:
            _held[key] = depth + 1
    if depth:
        try:
            yield
        finally:
            with _held_guard:
                _held[key] -= 1
        return
    handle = _acquire(lock, final)
    with _held_guard:
        _held[key] = 1
    try:
        yield
    finally:
        with _held_guard:
            del _held[key]
        lock.unlink(missing_ok=True)  # still held: no clutter beside the user's files once the write is over
        handle.close()


def build_once(final: Path, what: str, is_current: Callable[[], bool], build: Callable[[], object]) -> None:
    """Build a cache made on first use (the default KB, a default index) unless ``is_current()``, holding
    ``.NAME.first-use.lock`` beside it and *waiting* for another process that holds it, then asking again: two medlink
    commands started at once on a new machine build it once, the second using the first's result, instead of the
    second being refused. The lock file stays (0 bytes)."""
    if is_current():
        return
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.with_name(f".{final.name}.first-use.lock"), "a") as handle:
        if fcntl is not None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.info("waiting for another medlink process building %s", what)
                fcntl.flock(handle, fcntl.LOCK_EX)
        if not is_current():
            build()

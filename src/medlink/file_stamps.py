"""A file's checksum remembered against its stat, so an unchanged file is not read again to check or hash it.

Why: loading an index checks its files' checksums, and reading a few hundred MB for that was a large part of a warm
``medlink link``'s start. A file whose device, inode, size, modification and change times are all what they were when
its checksum was last read has not been written since: the kernel sets the change time on every write, and no tool
can set it back (``touch`` sets only the modification time). What a stamp cannot see is damage below the file system
(a failing disk); ``medlink index verify`` reads every file whatever the stamps say.

A file changed within ``RACY_SECONDS`` of its check is not stamped: a write in the same clock tick as the change time
the stamp holds would leave that time as it was. The stamps live in the cache directory (``medlink_home``), at most
``KEPT`` files; a cache directory that cannot be written only means the files are read each time.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from medlink.settings import medlink_home

STAMPS = "file-stamps.json"
_CHECKED: dict[str, list[int]] = {}  # absolute path -> its stat when this process found its checksum right
KEPT = 4_096  # files remembered; the oldest stamps go first
RACY_SECONDS = 2.0


def _stat_key(path: Path) -> list[int]:
    status = os.stat(path)
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]


class FileStamps:
    """Checksums by kind and absolute path, each with the stat it was read under."""

    def __init__(self, place: Path | None = None):
        self.place = place
        self.stamps: dict[str, list] = {}
        self.changed = False
        if place is not None:
            try:
                loaded = json.loads(place.read_text(encoding="utf-8"))
                self.stamps = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self.stamps = {}  # none yet, or unreadable: every file is read once more

    @classmethod
    def in_cache(cls) -> FileStamps:
        try:
            return cls(medlink_home() / STAMPS)
        except OSError:
            return cls(None)

    def recalled(self, path: Path, kind: str) -> str | None:
        """The ``kind`` checksum last read of ``path``, if it has not been written since; else None."""
        stamp = self.stamps.get(f"{kind}:{Path(path).resolve()}")
        if not isinstance(stamp, list) or stamp[1:] != _stat_key(path):
            return None  # none, another stat, or an entry damaged in the file: read the file again
        return stamp[0]

    def remember(self, path: Path, kind: str, checksum: str) -> None:
        """Record that ``path`` was just read and has this ``kind`` of checksum (not if it changed too recently to tell)."""
        key = _stat_key(path)
        if time.time_ns() - max(key[3], key[4]) < RACY_SECONDS * 1e9:
            return
        name = f"{kind}:{Path(path).resolve()}"
        self.stamps.pop(name, None)
        self.stamps[name] = [checksum, *key]
        while len(self.stamps) > KEPT:
            del self.stamps[next(iter(self.stamps))]
        self.changed = True

    def save(self) -> None:
        """Write the stamps, if any changed, replacing the file in one step (a concurrent writer's stamps may be lost:
        their files are only read again)."""
        if self.place is None or not self.changed:
            return
        staging = self.place.with_name(f".{STAMPS}.{os.getpid()}.{threading.get_ident()}.tmp")  # a scratch name (inventory._is_scratch)
        try:
            staging.write_text(json.dumps(self.stamps), encoding="utf-8")
            os.replace(staging, self.place)
            self.changed = False
        except OSError:
            staging.unlink(missing_ok=True)  # a read-only cache directory: the files are read again next time


def mark_checked(path: Path) -> None:
    """Record that this process found ``path``'s checksum right (``was_checked``)."""
    _CHECKED[str(Path(path).resolve())] = _stat_key(path)


def was_checked(path: Path) -> bool:
    """Did this process find ``path``'s checksum right, and has it not been written since? Then its content is what
    medlink wrote, and a reader may skip checks of its structure that read it whole."""
    key = _CHECKED.get(str(Path(path).resolve()))
    return key is not None and key == _stat_key(path)

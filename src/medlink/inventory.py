"""What a folder medlink wrote holds: each file's size and checksum, recorded when it was written.

Why: a folder is replaced whole by a rebuild, so it must hold nothing but what medlink wrote there (a user's notes
kept inside an index folder, or a manifest copied into someone's project, must not make it disposable); and a file
damaged after it was written must be refused by name when it is loaded, not used.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from medlink.errors import DamagedFileError, MedlinkError
from medlink.file_stamps import FileStamps, mark_checked

INVENTORY = ".medlink-files.json"  # in every folder medlink replaces whole: the files it wrote there, with their sizes
SMALL_FILE = 64 << 20  # bytes: files up to this size are checksummed each time they are loaded; every file by 'index verify'
FOREIGN_SHOWN = 5


def file_checksum(path: Path) -> str:
    """sha256 of a file's bytes, read in blocks."""
    return _checksums(path, sha256=True)["sha256"]


def _checksums(path: Path, sha256: bool) -> dict[str, str]:
    """The file's CRC-32 (what loading checks: fast enough to read every small file each time) and, with ``sha256``,
    its sha256 (what 'medlink index verify' checks: no change goes unseen), in one read."""
    crc, digest = 0, hashlib.sha256() if sha256 else None
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            crc = zlib.crc32(block, crc)
            if digest is not None:
                digest.update(block)
    return {"crc32": f"{crc:08x}", **({"sha256": digest.hexdigest()} if digest is not None else {})}


def _is_scratch(name: str) -> bool:
    """What medlink itself leaves beside or inside an output while writing it: staging copies and lock files."""
    return name.startswith(".") and (name.endswith(".tmp") or name.endswith(".lock"))


def files_below(folder: Path) -> list[str]:
    """Every file below ``folder`` (symbolic links included, not followed), as sorted POSIX paths relative to it;
    medlink's own scratch files and the inventory itself are left out."""
    folder = Path(folder)
    found = []
    for root, directories, files in os.walk(folder):
        directories[:] = [d for d in directories if not _is_scratch(d) or Path(root, d).is_symlink()]
        for name in files + [d for d in directories if Path(root, d).is_symlink()]:
            relative = Path(root, name).relative_to(folder).as_posix()
            if relative != INVENTORY and not _is_scratch(name):
                found.append(relative)
    return sorted(found)


def describe_files(folder: Path, checksums: bool = True, skip: Iterable[str] = ()) -> dict[str, dict]:
    """Relative path -> {"size", "crc32", "sha256"} for every file below ``folder`` but ``skip``."""
    skipped = set(skip)
    described = {}
    for relative in files_below(folder):
        if relative in skipped:
            continue
        path = Path(folder) / relative
        described[relative] = {"size": path.stat().st_size, **(_checksums(path, sha256=True) if checksums else {})}
    return described


def write_inventory(folder: Path) -> None:
    """Record what ``folder`` holds now (the last step before it is moved in)."""
    listing = {"files": describe_files(folder, checksums=False)}
    (Path(folder) / INVENTORY).write_text(json.dumps(listing, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def claim(path: Path, directory: bool = False, create: bool = False) -> None:
    """Record in its folder's inventory, *before* writing it, that medlink writes ``path`` there (a span selector in its
    tagger's folder; a checkpoint folder, ``directory``, and all below it): a rebuild may then replace it with the rest,
    and a kill after the write cannot leave it unrecorded. A folder without an inventory gets one only with ``create``
    and only if it holds nothing but ``path`` (a folder medlink is starting): never a user's files."""
    path = Path(path)
    folder, entry = path.parent, path.name + ("/" if directory else "")
    listing_path = folder / INVENTORY
    try:
        listing = json.loads(listing_path.read_text(encoding="utf-8"))
        files = listing["files"]
        if not isinstance(files, dict):
            return
    except FileNotFoundError:
        if not create or any(not _below(f, entry) for f in (files_below(folder) if folder.is_dir() else [])):
            return
        folder.mkdir(parents=True, exist_ok=True)
        listing, files = {"files": {}}, None
    except (OSError, ValueError, RecursionError, KeyError, TypeError):
        return  # unreadable: the folder is judged without it
    if files is not None and files.get(entry) == {}:
        return
    listing["files"][entry] = {}  # rewritten: its size is no longer the one recorded
    staging = listing_path.with_name(f"{INVENTORY}.{os.getpid()}.tmp")
    staging.write_text(json.dumps(listing, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(staging, listing_path)


def _below(relative: str, entry: str) -> bool:
    """Is the file ``relative`` the inventory's ``entry``, or under it (an entry ending in '/' is a whole folder)?"""
    return relative == entry or (entry.endswith("/") and relative.startswith(entry))


def recorded_files(folder: Path) -> set[str] | None:
    """The files medlink recorded writing in ``folder`` (None: no readable inventory, as in an output written without one)."""
    try:
        listing = json.loads((Path(folder) / INVENTORY).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    files = listing.get("files") if isinstance(listing, dict) else None
    return set(files) if isinstance(files, (dict, list)) else None


def changed_files(folder: Path) -> list[str]:
    """Files medlink recorded writing in ``folder`` whose size is no longer the one recorded: edited since (or damaged)."""
    try:
        files = json.loads((Path(folder) / INVENTORY).read_text(encoding="utf-8"))["files"]
        return sorted(
            name
            for name, facts in files.items()
            if isinstance(facts, dict)
            and isinstance(facts.get("size"), int)
            and (Path(folder) / name).is_file()
            and (Path(folder) / name).stat().st_size != facts["size"]
        )
    except (OSError, ValueError, RecursionError, KeyError, TypeError, AttributeError):
        return []


def foreign_files(folder: Path, own: set[str] | None, layout: Iterable[str] = ()) -> list[str]:
    """Files in ``folder`` that medlink did not write there: neither in ``own`` (the inventory) nor, for a folder
    without an inventory, under one of the ``layout`` names the kind of folder has at its top."""
    tops = set(layout)
    if own is None:
        return [f for f in files_below(folder) if f.split("/", 1)[0] not in tops]
    folders = tuple(entry for entry in own if entry.endswith("/"))
    return [f for f in files_below(folder) if f not in own and not f.startswith(folders)]


def say_foreign(folder: Path, foreign: list[str]) -> str:
    shown = ", ".join(foreign[:FOREIGN_SHOWN]) + (f" and {len(foreign) - FOREIGN_SHOWN} more" if len(foreign) > FOREIGN_SHOWN else "")
    return f"{folder} holds {len(foreign)} file(s) medlink did not write there ({shown})"


def check_files(folder: Path, recorded: Mapping[str, Mapping], full: bool = False) -> None:
    """Refuse, naming the file, any recorded file that is missing, of another size, or of another checksum: CRC-32 for
    files up to ``SMALL_FILE`` (sha256 where no CRC-32 was recorded), not read again while its stamp says it has not been
    written since its last check (``file_stamps``); with ``full``, sha256 for every file, read whatever the stamps say,
    and every damaged file named, not only the first."""
    folder = Path(folder)
    damaged = []
    stamps = FileStamps() if full else FileStamps.in_cache()  # 'index verify' reads every file
    try:
        for relative, facts in sorted(recorded.items()):
            try:
                _check_file(folder, relative, facts, full, stamps)
            except DamagedFileError as error:
                if not full:
                    raise
                damaged.append(error)
    finally:
        stamps.save()
    if len(damaged) == 1:
        raise damaged[0]
    if damaged:
        raise MedlinkError(f"{folder}: {len(damaged)} damaged files:\n" + "\n".join(f"  {error}" for error in damaged))


def _check_file(folder: Path, relative: str, facts: Mapping, full: bool, stamps: FileStamps) -> None:
    path = folder / relative
    if not isinstance(facts, Mapping) or not isinstance(facts.get("size"), int):
        raise MedlinkError(f"{folder}: its record of {relative} is damaged; rebuild it")
    if not path.is_file():
        raise DamagedFileError(path, FileNotFoundError("missing (or not a file): the index was built with it"))
    size = path.stat().st_size
    if size != facts["size"]:
        raise DamagedFileError(path, ValueError(f"{size:,} bytes, written with {facts['size']:,}"))
    if full or size <= SMALL_FILE:
        kind = "sha256" if full or not facts.get("crc32") else "crc32"
        if not facts.get(kind):
            return
        if stamps.recalled(path, kind) != facts[kind]:
            if _checksums(path, sha256=kind == "sha256")[kind] != facts[kind]:
                raise DamagedFileError(path, ValueError(f"its content changed since it was written ({kind} checksum differs)"))
            stamps.remember(path, kind, facts[kind])
        mark_checked(path)

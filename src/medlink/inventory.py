"""What a folder medlink wrote holds: each file's size and checksum, recorded when it was written.

Why: a folder is replaced whole by a rebuild, so it must hold nothing but what medlink wrote there (a user's notes
kept inside an index folder, or a manifest copied into someone's project, must not make it disposable); and a file
damaged after it was written must be refused by name when it is loaded, not used.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Iterable, Mapping

from medlink.errors import DamagedFileError, MedlinkError

INVENTORY = ".medlink-files.json"  # in every folder medlink replaces whole: the files it wrote there, with their sizes
SMALL_FILE = 64 << 20  # bytes: files up to this size are checksummed every time they are loaded; larger ones by 'index verify'
FOREIGN_SHOWN = 5


def file_checksum(path: Path) -> str:
    """sha256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
    """Relative path -> {"size", "sha256"} for every file below ``folder`` but ``skip``."""
    skipped = set(skip)
    described = {}
    for relative in files_below(folder):
        if relative in skipped:
            continue
        path = Path(folder) / relative
        described[relative] = {"size": path.stat().st_size, **({"sha256": file_checksum(path)} if checksums else {})}
    return described


def write_inventory(folder: Path) -> None:
    """Record what ``folder`` holds now (the last step before it is moved in)."""
    listing = {"files": describe_files(folder, checksums=False)}
    (Path(folder) / INVENTORY).write_text(json.dumps(listing, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def note_written(path: Path) -> None:
    """A file medlink wrote into a folder it had written (a span selector in its tagger's folder): add it to the
    folder's inventory, so that a rebuild may replace it with the rest."""
    path = Path(path)
    listing_path = path.parent / INVENTORY
    try:
        listing = json.loads(listing_path.read_text(encoding="utf-8"))
        listing["files"][path.name] = {"size": path.stat().st_size}
    except (OSError, ValueError, RecursionError, KeyError, TypeError):
        return  # no inventory (a folder of the user's, or an older medlink's): nothing to add to
    staging = listing_path.with_name(f"{INVENTORY}.{os.getpid()}.tmp")
    staging.write_text(json.dumps(listing, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(staging, listing_path)


def recorded_files(folder: Path) -> set[str] | None:
    """The files medlink recorded writing in ``folder`` (None: no readable inventory, an output of an older medlink)."""
    try:
        listing = json.loads((Path(folder) / INVENTORY).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    files = listing.get("files") if isinstance(listing, dict) else None
    return set(files) if isinstance(files, (dict, list)) else None


def foreign_files(folder: Path, own: set[str] | None, layout: Iterable[str] = ()) -> list[str]:
    """Files in ``folder`` that medlink did not write there: neither in ``own`` (the inventory) nor, for a folder
    written before inventories, under one of the ``layout`` names the kind of folder has at its top."""
    tops = set(layout)
    return [f for f in files_below(folder) if (f not in own if own is not None else f.split("/", 1)[0] not in tops)]


def say_foreign(folder: Path, foreign: list[str]) -> str:
    shown = ", ".join(foreign[:FOREIGN_SHOWN]) + (f" and {len(foreign) - FOREIGN_SHOWN} more" if len(foreign) > FOREIGN_SHOWN else "")
    return f"{folder} holds {len(foreign)} file(s) medlink did not write there ({shown})"


def check_files(folder: Path, recorded: Mapping[str, Mapping], full: bool = False) -> None:
    """Refuse, naming the file, any recorded file that is missing, of another size, or (for files up to
    ``SMALL_FILE``, or every file with ``full``) of another checksum."""
    folder = Path(folder)
    for relative, facts in sorted(recorded.items()):
        path = folder / relative
        if not isinstance(facts, Mapping) or not isinstance(facts.get("size"), int):
            raise MedlinkError(f"{folder}: its record of {relative} is damaged; rebuild it")
        try:
            size = path.stat().st_size
        except OSError as error:
            raise DamagedFileError(path, FileNotFoundError("missing: the index was built with it")) from error
        if size != facts["size"]:
            raise DamagedFileError(path, ValueError(f"{size:,} bytes, written with {facts['size']:,}"))
        if facts.get("sha256") and (full or size <= SMALL_FILE) and file_checksum(path) != facts["sha256"]:
            raise DamagedFileError(path, ValueError("its content changed since it was written (checksum differs)"))

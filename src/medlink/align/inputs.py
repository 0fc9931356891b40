"""The two KBs an alignment reads, checked before any work: each must exist, they must differ, the source must have
concepts and the target names. Why here: every entry point (CLI, benchmarks, training) refuses the same mistakes with
the same message."""

from __future__ import annotations

from pathlib import Path

from medlink.errors import MedlinkError, MissingInputError
from medlink.kb.store import KB


def open_side(path: str | Path, side: str) -> KB:
    """A KB file (or ``default``) for one side of an alignment; a missing file names the side and the option."""
    if str(path) != "default" and not Path(path).is_file():
        raise MissingInputError(f"--{side} {path}: no such KB file (build one with 'medlink kb build {path} FORMAT:PATH')")
    try:
        return KB.open(path)
    except MedlinkError as error:
        raise MedlinkError(f"--{side}: {error}") from None


def open_pair(source: str | Path, target: str | Path) -> tuple[KB, KB]:
    """Source and target KBs, refused when they are one file, the source has no concept or the target no name."""
    if str(source) != "default" and str(target) != "default" and Path(source).exists() and Path(target).exists() \
            and Path(source).resolve() == Path(target).resolve():
        raise MedlinkError(f"--source and --target are the same file ({source}); aligning a KB to itself maps every concept to itself")
    source_kb, target_kb = open_side(source, "source"), open_side(target, "target")
    if source_kb.checksum == target_kb.checksum:
        raise MedlinkError(f"--source {source} and --target {target} hold the same KB (checksum {source_kb.checksum}); give two different KBs")
    if len(source_kb) == 0:
        raise MedlinkError(f"--source {source}: the KB has no concepts to align")
    if next(target_kb.iter_names(batch=1), None) is None:
        raise MedlinkError(f"--target {target}: the KB has no names to align to")
    return source_kb, target_kb

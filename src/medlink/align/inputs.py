"""The two KBs an alignment reads, checked before any work: each must exist, they must differ, the source must have
concepts and the target names. Why here: every entry point (CLI, benchmarks, training) refuses the same mistakes with
the same message."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from medlink.errors import MedlinkError, MissingInputError
from medlink.kb.store import KB


@dataclass(frozen=True)
class Sides:
    """How a command names its two KBs and the mistakes refused, so each error speaks the command's own words."""

    source: str = "--source"
    target: str = "--target"
    itself: str = "aligning a KB to itself maps every concept to itself"
    no_concepts: str = "the KB has no concepts to align"
    no_names: str = "the KB has no names to align to"


ALIGN = Sides()
AUGMENT = Sides(
    "KB",
    "--with",
    "augmenting a KB from itself carries nothing new",
    "the KB has no concepts to augment",
    "the KB has no names to carry from",
)


def _is_source_spec(text: str) -> bool:
    from medlink.kb.readers import READERS

    head, sep, _ = text.partition(":")
    return bool(sep) and head.partition("=")[0] in READERS


def _built_from_spec(text: str) -> Path:
    """A KB built from a source spec (``obo:doid.obo``) into a temporary folder removed when the process ends, named
    after the spec's file (``doid.sqlite``): the SSSOM output names each side and its CURIE prefix after it."""
    import atexit
    import shutil
    import tempfile

    from medlink.kb.build import build_kb

    folder = Path(tempfile.mkdtemp(prefix="medlink-align-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    file = Path(text.partition(":")[2])
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in Path(file.name.removesuffix(".gz")).stem) or "kb"
    path = folder / f"{stem}.sqlite"
    build_kb(path, [text], progress=False, extra_meta={"name": file.name})  # the SSSOM output's subject / object source
    return path


def open_side(path: str | Path, label: str) -> KB:
    """A KB file, ``default``, or a source spec FORMAT:PATH (built for this run) for one side; a missing file names the
    side as the command calls it (``label``: "--source", "KB", "--with")."""
    if str(path) != "default" and not Path(path).is_file():
        if _is_source_spec(str(path)):
            try:
                return KB.open(_built_from_spec(str(path)))
            except MedlinkError as error:
                raise MedlinkError(f"{label}: {error}") from None
        raise MissingInputError(
            f"{label} {path}: no such KB file (build one with 'medlink kb build {path} FORMAT:PATH', or give a source FORMAT:PATH)"
        )
    try:
        return KB.open(path)
    except MedlinkError as error:
        raise MedlinkError(f"{label}: {error}{_spec_hint(Path(path))}") from None


SUFFIX_FORMATS = {".tsv": "tsv", ".jsonl": "jsonl", ".obo": "obo"}  # suffixes one reader alone reads (an .xml may be MeSH or ICD-10-CM)


def _spec_hint(path: Path) -> str:
    """For a file that is not a KB database at all: how to have this run build a KB from it (``tsv:PATH``)."""
    if not path.is_file():
        return ""
    with path.open("rb") as handle:
        if handle.read(16) == b"SQLite format 3\x00":
            return ""
    from medlink.kb.readers import READERS

    guess = SUFFIX_FORMATS.get(path.suffix.lower())
    spec = f"{guess}:{path}" if guess else f"FORMAT:{path}"
    return f"; to build a KB from it for this run, give {spec} (FORMAT one of {', '.join(READERS)})"


def open_pair(source: str | Path, target: str | Path, sides: Sides = ALIGN) -> tuple[KB, KB]:
    """Source and target KBs, refused when they are one file, the source has no concept or the target no name."""
    s, t = sides.source, sides.target
    if (
        str(source) != "default"
        and str(target) != "default"
        and Path(source).exists()
        and Path(target).exists()
        and Path(source).resolve() == Path(target).resolve()
    ):
        raise MedlinkError(f"{s} and {t} are the same file ({source}); {sides.itself}")
    if str(source) == str(target):
        raise MedlinkError(f"{s} and {t} are the same ({source}); {sides.itself}")
    source_kb, target_kb = open_side(source, s), open_side(target, t)
    if source_kb.checksum == target_kb.checksum:
        raise MedlinkError(f"{s} {source} and {t} {target} hold the same KB (checksum {source_kb.checksum}); give two different KBs")
    if len(source_kb) == 0:
        raise MedlinkError(f"{s} {source}: {sides.no_concepts}")
    if next(target_kb.iter_names(batch=1), None) is None:
        raise MedlinkError(f"{t} {target}: {sides.no_names}")
    return source_kb, target_kb

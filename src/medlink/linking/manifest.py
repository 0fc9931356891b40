"""An index directory's layout (every file name in one place) and its ``manifest.json``: what it was built from,
so loading can check it."""

from __future__ import annotations

import json
import time
from pathlib import Path

from medlink.directories import json_has_keys
from medlink.errors import MedlinkError
from medlink.inventory import check_files
from medlink.retrieval.names import NAME_TABLES
from medlink.versions import package_versions

INDEX_FORMAT_VERSION = "4"  # 4: TF-IDF matrices as .npy files; 3: rerankers/ (an ordered list), alt_ids.tsv; 2: name-table counts
READABLE_VERSIONS = ("2", "3", "4")  # a version-2 index loads: its one reranker folder and its KB's alt ids are found in version 2's layout
MANIFEST = "manifest.json"  # written last: a folder with a manifest is a complete index
CONCEPT_IDS = "concept_ids.txt"
CONCEPT_NAMES = "concept_names.txt"
ALT_IDS = "alt_ids.tsv"  # concept id, then its other ids, tab-separated; concepts without any are left out
TABLES = "tables"  # tables/<source>/: one alias table per name source (kb, memory, kb+memory)
GENERATORS = "generators"  # generators/<name>/
RERANKERS = "rerankers"  # rerankers/<position>-<type>/
MEMORY = "memory.tsv"  # the mention memory, for inspection
DICTIONARY = "finders/dictionary"  # the dictionary finder over the KB's names (what ``medlink annotate`` finds mentions with)
LEGACY_RERANKER_DIRS = {"knn": "knn", "cross-encoder": "cross_encoder"}  # where a version-2 index kept its one reranker


MANIFEST_KEYS = ("format_version", "kb", "config", "normalizer")  # what makes a manifest.json an index's
FILES = "files"  # the manifest's record of every other file: relative path -> {"size", "crc32", "sha256"}
# what an index folder holds at its top, for one whose manifest lists no files
LAYOUT = (
    MANIFEST,
    CONCEPT_IDS,
    CONCEPT_NAMES,
    ALT_IDS,
    TABLES,
    GENERATORS,
    RERANKERS,
    MEMORY,
    DICTIONARY.split("/")[0],
    *LEGACY_RERANKER_DIRS.values(),
)


def is_index_manifest(path: Path) -> bool:
    """Did medlink write this manifest? (What an index rebuild checks before replacing a folder: a file merely named
    manifest.json in someone's project is not an index.)"""
    return json_has_keys(path, MANIFEST_KEYS)


def reranker_dir(position: int, type_name: str) -> str:
    return f"{RERANKERS}/{position}-{type_name}"


def new_manifest(kb_path: Path, kb_checksum: str, concepts: int, config: dict, normalizer: str, memory: dict | None) -> dict:
    return {
        "format_version": INDEX_FORMAT_VERSION,
        "kb": {"path": str(Path(kb_path).resolve()), "checksum": kb_checksum, "concepts": concepts},
        "normalizer": normalizer,
        "config": config,
        "memory": memory,
        "packages": package_versions(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "name_tables": NAME_TABLES,
    }


def read_manifest(directory: Path) -> dict:
    """Read and check an index's manifest; a missing or foreign directory gets a message saying how to rebuild."""
    path = Path(directory) / MANIFEST
    rebuild = (
        "build one with 'medlink index build --kb KB --out INDEX_DIR'"
        if Path(directory).is_file()
        else f"build one with 'medlink index build --kb KB --out {directory}'"
    )
    if not Path(directory).exists():
        raise MedlinkError(f"no index folder {directory}; {rebuild}")
    if not path.is_file():
        raise MedlinkError(f"{directory}: not a medlink index (no {MANIFEST}); {rebuild}")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise MedlinkError(f"{path}: unreadable manifest ({error.msg.removesuffix(' at')}, line {error.lineno}); {rebuild}") from error
    except (UnicodeDecodeError, RecursionError, OSError) as error:
        raise MedlinkError(f"{path}: unreadable manifest ({type(error).__name__}); {rebuild}") from error
    if not isinstance(manifest, dict) or not set(MANIFEST_KEYS) <= set(manifest):  # the parsed manifest: no second read
        raise MedlinkError(f"{path}: not an index manifest medlink wrote (format_version, kb, config, normalizer expected); {rebuild}")
    if manifest.get("format_version") not in READABLE_VERSIONS:
        raise MedlinkError(
            f"{directory}: index format version {manifest.get('format_version')!r}, this medlink reads {INDEX_FORMAT_VERSION!r}; {rebuild}"
        )
    return manifest


def check_index_files(directory: Path, manifest: dict, full: bool = False) -> bool:
    """Refuse an index whose files are not the ones it was built with, naming the first that differs (sizes always;
    checksums of small files, or of every file with ``full``). False for an index whose manifest records no files."""
    recorded = manifest.get(FILES)
    if recorded is None:
        return False
    if not isinstance(recorded, dict):
        raise MedlinkError(f"{Path(directory) / MANIFEST}: '{FILES}' is damaged; rebuild the index")
    check_files(directory, recorded, full)
    return True


def index_memory_sources(directory: Path) -> list[str]:
    """The FORMAT:PATH specs whose mentions an index holds as memory (none for an index without memory)."""
    memory = read_manifest(directory).get("memory") or {}
    sources = memory.get("sources") if isinstance(memory, dict) else None
    return [str(source) for source in sources] if isinstance(sources, list) else []

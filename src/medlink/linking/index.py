"""Building an index directory from a KB (+ mention memory), and the embedded default index."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

from medlink.errors import MedlinkError
from medlink.kb.store import KB
from medlink.linking.config import LinkerConfig
from medlink.linking.linker import Linker
from medlink.linking.manifest import read_manifest
from medlink.linking.memory import memory_from_datasets
from medlink.settings import medlink_home

log = logging.getLogger(__name__)
DEFAULT_INDEX_NAME = "default-index"


def build_index(kb: KB | str | Path, out: Path | str, config: LinkerConfig | Path | str | None = None, memory: Sequence[str] = ()) -> Linker:
    """Build and save an index; ``memory`` lists ``FORMAT:PATH`` annotated datasets to memorise."""
    kb = kb if isinstance(kb, KB) else KB.open(kb)
    if config is not None and not isinstance(config, LinkerConfig):
        config = LinkerConfig.from_file(Path(config))
    entries = memory_from_datasets(kb, memory) if memory else None
    linker = Linker.build(kb, config, entries)
    linker.save(out)
    return linker


def default_index_dir() -> Path:
    """The default KB's index, built on first use and rebuilt when the default KB changes."""
    from medlink.kb.default import default_kb_path

    kb = KB.open(default_kb_path())
    directory = medlink_home() / DEFAULT_INDEX_NAME
    try:
        current = read_manifest(directory)["kb"]["checksum"] == kb.checksum
    except (MedlinkError, KeyError):  # missing, unreadable or an older format: rebuild
        current = False
    if not current:
        log.info("building the default index in %s", directory)
        build_index(kb, directory)
    return directory


def resolve_index(index: str | Path) -> Path:
    """``default`` -> the default index directory; anything else is a path."""
    return default_index_dir() if str(index) == "default" else Path(index)

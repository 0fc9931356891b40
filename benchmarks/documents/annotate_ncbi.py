"""Linking in running text on NCBI Disease (PubTator documents, MEDIC as the KB): one row per stage of the annotator.

    python benchmarks/documents/annotate_ncbi.py [--workdir DIR] [--tagger DIR] [--name documents_ncbi]

Each row adds one idea to the row above it (the rows of paper 002's ablation that medlink has): the dictionary
finder over MEDIC's names; + the NCBI train split's mentions (memory: they join the linker's names and the
dictionary's); + names excluded because annotators seldom marked them in the train documents; + Schwartz-Hearst
abbreviations; + per-document consistency (propagation and voting); + composite mentions (a coordination takes its
spelt-out parts' concepts); then the same with the trained tagger
(``--tagger``, from ``medlink train tagger``) alone and beside the dictionary (``--combine``: every span of both; the
tagger's spans a dictionary match confirms; those plus the dictionary's where the tagger found nothing; the spans a
selector fitted on dev's documents chooses, scored on dev out of fold); last,
a trained bi-encoder (``--bi-encoder``, from ``medlink train bi-encoder``) fused into the linker beside the lexical
generators over the best row so far, one row per weight (``DENSE_WEIGHTS``; the report shows dev's choice); then
paper 002's backoff over the best row so far (probabilities fitted on dev's gold mentions; under the threshold the
closest-spelt candidate goes first; one row per threshold); last, the best row without backoff again with the train
and dev splits' mentions as memory, its settings carried over from dev (test only: dev cannot judge it), as
published systems train their final model on train + dev; and, when that row uses the tagger and ``--traindev-tagger``
exists (trained on train + dev with dev's epoch count), once more with that tagger. Every option is chosen on dev (the row with the best dev
end-to-end F1 is the "chosen" one); test is reported for every row and chooses nothing.
Measures (``medlink.eval.documents``): mention finding P/R/F1 (strict span), end-to-end strict P/R/F1 (span and
concept), document-level concept P/R/F1; abstracts/s of the annotation alone (median of ``--repeats``, warm,
in this process) and the process's peak RSS. Writes benchmarks/results/<name>.json.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, write_results  # noqa: E402
from benchmarks.documents.medlink_system import BI_ENCODER, TAGGER, TAGGER_TRAINDEV, medic_kb, medlink_annotate, span_selector  # noqa: E402

from medlink.corpora.pubtator import read_pubtator  # noqa: E402
from medlink.eval.documents import evaluate_documents  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402

SPLITS = {"dev": "NCBIdevelopset_corpus.txt", "test": "NCBItestset_corpus.txt"}
BASE = {"memory": False, "exclude": False, "abbreviations": False, "consistency": "off", "composites": False}
ALL = {"memory": True, "exclude": True, "abbreviations": True, "consistency": "both", "composites": True}
STAGES = [
    ("dictionary (MEDIC names)", {}),
    ("+ train mentions", {"memory": True}),
    ("+ exclusions learned on train", {"memory": True, "exclude": True}),
    ("+ abbreviations", {"memory": True, "exclude": True, "abbreviations": True}),
    ("+ consistency (propagate + vote)", {"memory": True, "exclude": True, "abbreviations": True, "consistency": "both"}),
    ("+ composite mentions", ALL),
    ("  consistency: vote only", {**ALL, "consistency": "vote"}),
    ("  abbreviations: better-scoring form", {**ALL, "abbreviation_choice": "best"}),
]
SPAN_THRESHOLDS = (None, 0.5, 0.6, 0.7)  # the selector's own (best span F1 on dev), and higher ones: dev chooses by linking F1
TAGGER_STAGES = [
    ("tagger alone", {"finder": "tagger", "memory": True}),
    ("  tagger alone: each word's argmax", {"finder": "tagger", "memory": True, "decoding": "argmax"}),
    ("tagger + abbreviations + consistency + composites", {"finder": "tagger", "memory": True, "abbreviations": True, "consistency": "both",
                                                          "composites": True}),
    ("tagger + dictionary, union, + all", {"finder": "both", "combine": "union", **ALL}),
    ("tagger + dictionary, confirmed, + all", {"finder": "both", "combine": "confirmed", **ALL}),
    ("  tagger: each word's argmax (not the best label sequence)", {"finder": "both", "combine": "confirmed", **ALL, "decoding": "argmax"}),
    ("tagger + dictionary, confirmed + missed, + all", {"finder": "both", "combine": "confirmed+missed", **ALL}),
    *((f"tagger + dictionary, learned span selector{'' if t is None else f' at {t}'}, + all",
       {"finder": "both", "combine": "learned", "span_threshold": t, **ALL}) for t in SPAN_THRESHOLDS),
]
SELECTOR_FOLDS = 5  # the learned selector is fitted on dev: dev's figure is out of fold (each fifth by a fit on the rest)
DENSE_WEIGHTS = (1.0, 2.0, 4.0, 8.0)  # the bi-encoder's fusion weight beside exact 1, TF-IDF 1, BM25 0.25
BACKOFFS = (0.3, 0.5, 0.7)  # "+ backoff" rows over the best row so far: probabilities fitted on dev's gold mentions


def gold(split: str):
    from benchmarks._common.harness import SHARED_DATA

    return read_pubtator(SHARED_DATA / "ncbi-disease-pubtator" / SPLITS[split])


def measure(name: str, options: dict, documents: dict, workdir: Path, equivalent, repeats: int, splits=SPLITS) -> dict:
    row = {"stage": name, "options": options}
    for split, gold_documents in ((split, documents[split]) for split in splits):
        runs = []
        for _ in range(repeats if split == "test" else 1):
            timings: dict = {}
            if split == "dev" and options.get("combine") == "learned":
                predicted = out_of_fold(gold_documents, workdir, equivalent, options)
            else:
                predicted = medlink_annotate(gold_documents, workdir, timings=timings, equivalent=equivalent, **{**BASE, **options})
                runs.append(timings["annotate_seconds"])
        scores = evaluate_documents(gold_documents, predicted, equivalent_ids=equivalent).to_dict()
        row[split] = {measure: {k: round(v, 4) if isinstance(v, float) else v for k, v in values.items()}
                      for measure, values in scores.items() if isinstance(values, dict)}
        if split == "test":
            row["abstracts_per_second"] = round(len(gold_documents) / statistics.median(runs), 1)
            row["seconds_all"] = [round(r, 3) for r in runs]
    print(f"{name:42s} dev F1 {row['dev']['linking']['f1'] if 'dev' in row else float('nan'):.4f}  test F1 {row['test']['linking']['f1']:.4f} "
          f"mentions {row['test']['mentions']['f1']:.4f} concepts {row['test']['concepts']['f1']:.4f}  {row['abstracts_per_second']}/s", flush=True)
    return row


def out_of_fold(documents: list, workdir: Path, equivalent, options: dict) -> list:
    """The dev documents annotated with span selectors fitted on the other dev folds (``span_selector``'s folds)."""
    predicted: list = [None] * len(documents)
    for fold in range(SELECTOR_FOLDS):
        positions = [i for i in range(len(documents)) if i % SELECTOR_FOLDS == fold]
        selector = span_selector(workdir, Path(options.get("tagger") or TAGGER), fold, SELECTOR_FOLDS)
        annotated = medlink_annotate([documents[i] for i in positions], workdir, equivalent=equivalent, selector=selector, **{**BASE, **options})
        for i, document in zip(positions, annotated):
            predicted[i] = document
    return predicted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench-documents")
    parser.add_argument("--tagger", type=Path, default=TAGGER)
    parser.add_argument("--traindev-tagger", type=Path, default=TAGGER_TRAINDEV, help="a tagger trained on train + dev (dev's epochs), "
                        "for the last carried-over row")
    parser.add_argument("--bi-encoder", type=Path, default=BI_ENCODER, help="a bi-encoder trained on the NCBI train mentions "
                        "(docs/training-recipes.md: ncbi-ft), fused into the linker over the best row; skipped when absent")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch threads for the tagger (1 is steadier on a CPU shared with other work)")
    parser.add_argument("--name", default="documents_ncbi")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    equivalent = equivalent_ids_from_kb(medic_kb(args.workdir))
    documents = {split: gold(split) for split in SPLITS}
    stages = STAGES + ([(n, {**o, "tagger": str(args.tagger)}) for n, o in TAGGER_STAGES] if (args.tagger / "medlink_tagger.json").exists() else [])
    started = time.perf_counter()
    rows = [measure(name, options, documents, args.workdir, equivalent, args.repeats) for name, options in stages]
    best = max(rows, key=lambda r: (r["dev"]["linking"]["f1"], r["dev"]["concepts"]["f1"]))
    if (args.bi_encoder / "config.json").exists():
        # over the best row of the fixed policies and over the best learned-selector row: what suits one linker need not suit the other
        for learned in (False, True):
            family = [r for r in rows if (r["options"].get("combine") == "learned") == learned and "bi_encoder" not in r["options"]]
            if not family:
                continue
            base = max(family, key=lambda r: (r["dev"]["linking"]["f1"], r["dev"]["concepts"]["f1"]))
            prefix = f"{base['stage'].removesuffix(', + all')} " if learned else ""
            rows += [measure(f"{prefix}+ bi-encoder {args.bi_encoder.name} fused at weight {weight:g}",
                             {**base["options"], "bi_encoder": str(args.bi_encoder), "dense_weight": weight}, documents, args.workdir, equivalent, args.repeats)
                     for weight in DENSE_WEIGHTS]
        best = max(rows, key=lambda r: (r["dev"]["linking"]["f1"], r["dev"]["concepts"]["f1"]))
    rows += [measure(f"+ backoff below {below}", {**best["options"], "backoff": below}, documents, args.workdir, equivalent, args.repeats)
             for below in BACKOFFS]
    chosen = max(rows, key=lambda r: (r["dev"]["linking"]["f1"], r["dev"]["concepts"]["f1"]))
    without_backoff = max((r for r in rows if "backoff" not in r["options"]), key=lambda r: (r["dev"]["linking"]["f1"], r["dev"]["concepts"]["f1"]))
    carried = {**without_backoff["options"], "memory": "traindev"}
    rows.append(measure(f"{without_backoff['stage'].strip()}, memory train + dev (carried over; test only)",
                        carried, documents, args.workdir, equivalent, args.repeats, ("test",)))
    # a span selector belongs to the tagger it was fitted with, and the train + dev tagger leaves no documents to fit one on
    if "tagger" in carried and carried.get("combine") != "learned" and (args.traindev_tagger / "medlink_tagger.json").exists():
        rows.append(measure(f"{without_backoff['stage'].strip()}, memory and tagger train + dev (carried over; test only)",
                            {**carried, "tagger": str(args.traindev_tagger)}, documents, args.workdir, equivalent, args.repeats, ("test",)))
    payload = {"task": "NCBI Disease documents (PubTator), KB MEDIC", "rows": rows, "chosen_on_dev": chosen["stage"],
               "documents": {split: len(d) for split, d in documents.items()}, "torch_threads": args.threads, "tagger": str(args.tagger) if len(stages) > len(STAGES) else None,
               "seconds": round(time.perf_counter() - started, 1), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
               "command": command_line(__file__, sys.argv[1:])}
    print(f"chosen on dev: {chosen['stage']}; wrote {write_results(args.name, payload)}")


if __name__ == "__main__":
    main()

"""Does the cross-encoder link running text better when it reads the mention in its context? NCBI Disease documents, MEDIC.

    python benchmarks/documents/context_rerank.py --without DIR --with DIR [--workdir DIR] [--repeats 3]

``--without``: a cross-encoder trained on the mentions alone (``medlink train cross-encoder ... --train
pubtator:NCBItrainset_corpus.txt``); ``--with``: the same recipe with ``--context N`` (docs/training-recipes.md).
Three rows, each the annotator of annotate_ncbi.py's "+ composite mentions" row (dictionary finder over MEDIC's names and
the NCBI train mentions, names excluded as learned on train, abbreviations, propagation and voting, composites): no
cross-encoder; + the cross-encoder without context; + the one with context (the annotator then gives each mention
the model's N characters either side, and the linker reranks every occurrence of a string in its own context).
Each cross-encoder reranks the lexical index's candidates (an index with a ``rerankers`` entry); its top and weight
(> 0: the row measures the reranker at work) are chosen on dev and written into that index, so test chooses nothing;
``dev_prefers_off`` says when dev liked weight 0 (no reranking) better still. Measures: end-to-end strict
P/R/F1, mention finding F1, document-level concept F1 (``medlink.eval.documents``, alternative ids of one MEDIC
concept equivalent), abstracts/s of the annotation (median of ``--repeats`` on test, warm, in this process) and the
reranker's milliseconds per mention. Beside them, linking alone: Acc@1 of the gold spans (every annotation with its
context, linked by the same index; right when the top concept is one of the annotation's ids), where the reranker
decides more often than on the spans the dictionary finds (most of those are exact names, and the cross-encoders
agree with an exact match). The dev choice is by end-to-end F1, then gold-span Acc@1. Writes
benchmarks/results/documents_context.json.
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
from benchmarks.documents.annotate_ncbi import SPLITS, gold  # noqa: E402
from benchmarks.documents.medlink_system import exclusions, medic_kb, ncbi_index, reranked_index  # noqa: E402

from medlink.encoders.cross import recorded_settings  # noqa: E402
from medlink.eval.documents import evaluate_documents  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.annotator import AnnotateOptions, Annotator  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.index import apply_config  # noqa: E402
from medlink.linking.manifest import read_manifest  # noqa: E402

OPTIONS = {"abbreviations": True, "consistency": "both"}  # with the train memory and the exclusions: the "+ consistency" row
TOPS = (16, 8, 4)  # the widest first: its scores serve the narrower ones (the reranker keeps scored pairs)
# the lexical fusion puts an exact name ~1.1-1.3 above the next candidate and the cross-encoders' scores span ~3.5:
# below ~0.3 the reranker only orders ties (a name of several concepts), above 1 it can overrule an exact match
WEIGHTS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)


class TimedReranker:
    """A reranker that counts the time it takes and the mentions it is given (the linker's distinct queries)."""

    def __init__(self, inner):
        self.inner = inner
        self.seconds = 0.0
        self.queries = 0

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def rerank(self, mentions, results):
        started = time.perf_counter()
        out = self.inner.rerank(mentions, results)
        self.seconds += time.perf_counter() - started
        self.queries += len(mentions)
        return out


def annotator(index: Path, excluded: Path, context: int) -> tuple[Annotator, TimedReranker | None]:
    """The index's annotator (loaded anew: nothing scored yet) and its reranker, timed."""
    loaded = Annotator.load(index, "dictionary", None, AnnotateOptions(context=context, **OPTIONS), excluded)
    if not loaded.linker.rerankers:
        return loaded, None
    timed = TimedReranker(loaded.linker.rerankers[0])
    loaded.linker.rerankers = [timed]
    return loaded, timed


def scores(gold_documents, predicted, equivalent) -> dict:
    result = evaluate_documents(gold_documents, predicted, equivalent_ids=equivalent).to_dict()
    return {measure: {k: round(v, 4) if isinstance(v, float) else v for k, v in values.items()}
            for measure, values in result.items() if isinstance(values, dict)}


def gold_spans(documents, context: int) -> list:
    """(mention with ``context`` characters each side, gold ids) of every linked gold annotation."""
    spans = []
    for document in documents:
        text = document.text
        spans += [(document.mention(a, context, text), set(a.ids)) for a in document.annotations if a.ids]
    return spans


def span_accuracy(linker, spans) -> float:
    """How often the top concept of a gold span is one of its gold ids (a concept's alternative ids count)."""
    results = linker.link([mention for mention, _ in spans], k=1)
    return round(statistics.mean(bool(r.best and set(r.best.ids) & ids) for r, (_, ids) in zip(results, spans)), 4)


def tune(index: Path, excluded: Path, context: int, dev, equivalent) -> dict:
    """The reranker's (top, weight) with the best dev end-to-end F1, then gold-span Acc@1 (ties: the smaller weight and top)."""
    loaded, timed = annotator(index, excluded, context)
    spans = gold_spans(dev, context)
    trials = []
    for top in TOPS:
        for weight in WEIGHTS if top == TOPS[0] else WEIGHTS[1:]:  # weight 0 is the same whatever the top
            loaded.linker.rerankers = [timed.inner.with_settings(top=top, weight=weight)]
            trial = Annotator(loaded.linker, loaded.finders, loaded.options)  # a new one: an annotator remembers its link results
            result = scores(dev, list(trial.annotate(dev)), equivalent)
            trials.append({"top": top, "weight": weight, "f1": result["linking"]["f1"], "concepts_f1": result["concepts"]["f1"],
                           "gold_spans_acc@1": span_accuracy(loaded.linker, spans)})
    def rank(t: dict) -> tuple:
        return (t["f1"], t["gold_spans_acc@1"], t["concepts_f1"], -t["weight"], -t["top"])

    best = max((t for t in trials if t["weight"] > 0), key=rank)  # the reranker on: what the row measures
    off = trials[0]  # weight 0: the reranker's order is not used
    print(f"  dev choice for {index.name}: top {best['top']}, weight {best['weight']} (F1 {best['f1']}, gold spans {best['gold_spans_acc@1']}); "
          f"off: F1 {off['f1']}, gold spans {off['gold_spans_acc@1']}", flush=True)
    return {"top": best["top"], "weight": best["weight"], "dev_prefers_off": rank(off) > rank(best), "trials": trials}


def choose(index: Path, excluded: Path, context: int, dev, equivalent) -> dict:
    """Tune on dev and write the choice into the index's config, as 'medlink tune --apply' would."""
    choice = tune(index, excluded, context, dev, equivalent)
    config = LinkerConfig.from_dict(read_manifest(index)["config"])
    config.rerankers = [{**config.rerankers[0], "top": choice["top"], "weight": choice["weight"]}]
    apply_config(index, config)
    return choice


def measure(name: str, index: Path, excluded: Path, context: int, documents: dict, equivalent, repeats: int) -> dict:
    row: dict = {"variant": name, "index": index.name, "annotator_context": context}
    for split, gold_documents in documents.items():
        runs = []
        for _ in range(repeats if split == "test" else 1):
            loaded, timed = annotator(index, excluded, context)
            started = time.perf_counter()
            predicted = list(loaded.annotate(gold_documents))
            mentions = sum(len(d.annotations) for d in predicted)
            runs.append({"seconds": time.perf_counter() - started, "mentions": mentions,
                         "rerank_seconds": timed.seconds if timed else 0.0, "reranked": timed.queries if timed else 0})
        row[split] = scores(gold_documents, predicted, equivalent)
        row[split]["gold_spans_acc@1"] = span_accuracy(loaded.linker, gold_spans(gold_documents, context))
        median = statistics.median(r["seconds"] for r in runs)
        rerank = statistics.median(r["rerank_seconds"] for r in runs)
        row[split]["speed"] = {"abstracts_per_second": round(len(gold_documents) / median, 1), "seconds_all": [round(r["seconds"], 3) for r in runs],
                               "mentions": runs[0]["mentions"], "reranked_queries": runs[0]["reranked"], "rerank_seconds": round(rerank, 3),
                               "rerank_ms_per_mention": round(1000 * rerank / max(1, runs[0]["mentions"]), 3)}
    test = row["test"]
    print(f"{name:40s} dev F1 {row['dev']['linking']['f1']:.4f}  test F1 {test['linking']['f1']:.4f} mentions {test['mentions']['f1']:.4f} "
          f"concepts {test['concepts']['f1']:.4f} gold spans {test['gold_spans_acc@1']:.4f}  {test['speed']['abstracts_per_second']}/s, rerank {test['speed']['rerank_ms_per_mention']} ms/mention",
          flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--without", type=Path, required=True, help="cross-encoder folder trained without context")
    parser.add_argument("--with", dest="with_context", type=Path, required=True, help="cross-encoder folder trained with --context N")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench-documents")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--name", default="documents_context")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    context = int(recorded_settings(args.with_context).get("context", 0))
    if context <= 0 or recorded_settings(args.without).get("context", 0):
        parser.error("--with needs a model trained with --context N (N > 0), --without one trained without it")
    equivalent = equivalent_ids_from_kb(medic_kb(args.workdir))
    documents = {split: gold(split) for split in SPLITS}
    started = time.perf_counter()
    excluded = exclusions(args.workdir, ncbi_index(args.workdir))  # learned on train with the dictionary every row shares
    indexes = {"without": reranked_index(args.workdir, args.without), "with": reranked_index(args.workdir, args.with_context)}
    choices = {"without": choose(indexes["without"], excluded, 0, documents["dev"], equivalent),
               "with": choose(indexes["with"], excluded, context, documents["dev"], equivalent)}
    rows = [measure("no cross-encoder", ncbi_index(args.workdir), excluded, 0, documents, equivalent, args.repeats),
            measure("+ cross-encoder, mention alone", indexes["without"], excluded, 0, documents, equivalent, args.repeats),
            measure(f"+ cross-encoder, mention in {context} chars of context", indexes["with"], excluded, context, documents, equivalent, args.repeats)]
    for row, key in zip(rows[1:], ("without", "with")):
        row["chosen_on_dev"] = {k: choices[key][k] for k in ("top", "weight", "dev_prefers_off")}
    payload = {"task": "NCBI Disease documents (PubTator), KB MEDIC: the cross-encoder with and without context",
               "rows": rows, "dev_trials": {key: choice["trials"] for key, choice in choices.items()}, "context": context,
               "models": {"without": args.without.name, "with": args.with_context.name},
               "training": {key: training_summary(path) for key, path in (("without", args.without), ("with", args.with_context))},
               "documents": {split: len(d) for split, d in documents.items()}, "machine_note": "shared CPU (other jobs running): timings are noisy",
               "seconds": round(time.perf_counter() - started, 1), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
               "command": command_line(__file__, sys.argv[1:])}
    print(f"wrote {write_results(args.name, payload)}")


def training_summary(model: Path) -> dict | None:
    """What the model folder's training.json says about its run (settings, per-epoch dev accuracy, minutes)."""
    import json

    path = model / "training.json"
    if not path.is_file():
        return None
    report = json.loads(path.read_text())
    return {"config": report.get("config"), "examples": report.get("examples"), "minutes": round(report.get("seconds", 0) / 60, 1),
            "dev_acc@1_per_epoch": [e.get("dev_acc@1") for e in report.get("epochs", [])], "precision": report.get("precision")}


if __name__ == "__main__":
    main()

"""Assertion status of clinical mentions (present, absent, possible, conditional, hypothetical, someone_else; historical):
medlink's ConText rules beside negspaCy (NegEx) and medspaCy's ConText, on the same gold spans, in one run.

    python benchmarks/install/get_medspacy.py                  # once: medspaCy's own environment (its default folder)
    python benchmarks/documents/assertion_status.py [--splits dev,test,heldout,notes,heldout2] [--medspacy-env DIR] [--repeats 5]

Data: ``benchmarks/assertion_data/{dev,test}.jsonl``, clinical snippets invented for this benchmark by a writer who did
not see medlink's rules (its README gives the labels, i2b2 2010's, and the decisions), and ``heldout.jsonl``, by a
second writer who saw neither the rules nor those sets, written once the rules were final and scored once. medlink's
lexicon was tuned on dev; test and heldout are reported. ``notes.jsonl``: 16 whole notes (ED, discharge, radiology,
echo, oncology ... nursing) a third writer wrote as an acceptance test, their 235 conditions marked before medlink ran;
the default KB's shorthand and the finder's rules were then changed after its misses, so it is a tuning set like dev
(historical null where that writer had no firm answer: not scored). ``heldout2.jsonl``: 16 more notes (260 conditions)
by a fourth writer who saw none of the rules, lists or sets, written after those changes: held out, scored once. Each system marks the gold spans: medlink through ``medlink.text.assertion.assertions``;
negspaCy (in this process: ``spacy.blank("en")`` with the gold spans as entities, its ``en_clinical`` terms) says
negated or not; medspaCy's ConText (``medspacy.load`` with PyRuSH sentences, its default rules; in its own virtual
environment, made by ``benchmarks/install/get_medspacy.py``, because medspaCy pins an older spaCy than the peers' extra) gives
negated / possible / hypothetical / family / historical modifiers, read as the i2b2 classes the same way (it has no
conditional). Measures: accuracy over the six classes, macro F1, per-class F1, absent (negation) P / R / F1 (the one
measure all three give), historical F1; snippets/s (the median of ``--repeats`` passes; each system's own loop).

End to end: the default annotator (``medlink annotate`` on the default index, dictionary finder) over the same snippets;
per split, the share of gold mentions a found span overlaps (and matches exactly), and of those, the share whose
found span carries the gold status. The writers marked conditions only, so a span on no gold mention is not counted
wrong (drugs, tests); recall is the measure.

The step's cost inside ``medlink annotate``: the NCBI Disease test abstracts (PubTator, when ``../shared/data`` has them)
annotated with the default index's dictionary pipeline, assertion on and off in turns (``--repeats`` rounds, medians).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import ROOT, command_line, publish, scratch  # noqa: E402

from medlink.text.assertion import ABSENT, STATUSES, assertions  # noqa: E402

DATA = ROOT / "benchmarks" / "assertion_data"
MEDSPACY_DRIVER = Path(__file__).resolve().with_name("medspacy_context_driver.py")


def load(split: str) -> list[dict]:
    with open(DATA / f"{split}.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def spans_of(record: dict) -> list[tuple[int, int]]:
    return [(t["start"], t["end"]) for t in record["targets"]]


def medlink_labels(records: list[dict]) -> list[tuple[str, bool]]:
    return [(a.status, a.historical) for r in records for a in assertions(r["text"], spans_of(r))]


def negspacy_labels(records: list[dict]):
    """negspaCy's NegEx over the gold spans: (absent or present, None): it says nothing of the other classes or the past."""
    import spacy
    from negspacy.negation import Negex  # noqa: F401  (registers the "negex" factory)

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("negex", config={"ent_types": ["PROBLEM"]})

    def run() -> list[tuple[str, None]]:
        out = []
        for record in records:
            doc = nlp.make_doc(record["text"])
            doc.ents = [doc.char_span(s, e, label="PROBLEM", alignment_mode="expand") for s, e in spans_of(record)]
            for _name, pipe in nlp.pipeline:
                doc = pipe(doc)
            out += [(ABSENT if ent._.negex else "present", None) for ent in doc.ents]
        return out
    return run


def medspacy_labels(records: list[dict], python: str, repeats: int) -> tuple[list[tuple[str, bool]], list[float]]:
    """medspaCy's ConText, run in its own environment by ``medspacy_context_driver.py``."""
    payload = json.dumps({"records": [{"text": r["text"], "spans": spans_of(r)} for r in records], "repeats": repeats})
    out = subprocess.run([python, str(MEDSPACY_DRIVER)], input=payload, capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    return [tuple(label) for label in result["labels"]], result["seconds"]


def timed(run, repeats: int) -> tuple[list, list[float]]:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        labels = run()
        seconds.append(time.perf_counter() - started)
    return labels, seconds


def prf(gold: list[bool], predicted: list[bool]) -> dict:
    tp = sum(g and p for g, p in zip(gold, predicted))
    fp = sum(p and not g for g, p in zip(gold, predicted))
    fn = sum(g and not p for g, p in zip(gold, predicted))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(2 * precision * recall / (precision + recall), 4) if tp else 0.0, "support": tp + fn}


def scores(records: list[dict], labels: list[tuple[str, bool | None]]) -> dict:
    gold = [(t["assertion"], t["historical"]) for r in records for t in r["targets"]]
    statuses = [status for status, _ in labels]
    out = {"targets": len(gold), "absent": prf([g == ABSENT for g, _ in gold], [s == ABSENT for s in statuses])}
    if any(s not in (ABSENT, "present") for s in statuses) or all(h is not None for _, h in labels):
        per_class = {c: prf([g == c for g, _ in gold], [s == c for s in statuses]) for c in STATUSES}
        out.update({"accuracy": round(sum(g == s for (g, _), s in zip(gold, statuses)) / len(gold), 4),
                    "macro_f1": round(statistics.mean(v["f1"] for v in per_class.values()), 4), "per_class": per_class})
    if all(h is not None for _, h in labels):
        judged = [(g, h) for (_, g), (_, h) in zip(gold, labels) if g is not None]  # a writer may have had no firm answer
        out["historical"] = prf([g for g, _ in judged], [bool(h) for _, h in judged])
    out["errors"] = [[r["id"], t["text"], t["assertion"], status] for r in records for t in r["targets"]
                     for status in [statuses.pop(0)] if status != t["assertion"]]
    return out


def end_to_end(records: list[dict], annotator) -> dict:
    """Gold mentions the default annotator finds (a span overlaps; exactly), and the status right on those it finds."""
    from medlink.core import Document

    found = exact = right = 0
    targets = [t for r in records for t in r["targets"]]
    documents = annotator.annotate(Document.from_text(r["text"], r["id"]) for r in records)
    for record, document in zip(records, documents):
        for target in record["targets"]:
            hits = [a for a in document.annotations if a.start < target["end"] and target["start"] < a.end]
            if hits:
                found += 1
                exact += any((a.start, a.end) == (target["start"], target["end"]) for a in hits)
                right += hits[0].assertion is not None and hits[0].assertion.status == target["assertion"]
    return {"targets": len(targets), "found": round(found / len(targets), 4), "found_exactly": round(exact / len(targets), 4),
            "status_right_when_found": round(right / found, 4) if found else None}


def default_annotator():
    from medlink.linking.annotator import Annotator
    from medlink.linking.index import resolve_index

    return Annotator.load(resolve_index("default"))


def pipeline_cost(repeats: int) -> dict | None:
    """Abstracts/s of the default annotator with and without the assertion step, taken in turns."""
    from dataclasses import replace

    from benchmarks._common.harness import SHARED_DATA
    from medlink.corpora.document_files import read_documents
    from medlink.linking.annotator import AnnotateOptions, Annotator

    path = SHARED_DATA / "ncbi-disease-pubtator" / "NCBItestset_corpus.txt"
    if not path.exists():
        return None
    documents = [replace(d, annotations=[]) for d in read_documents(path, "pubtator")]
    loaded = default_annotator()
    annotators = {on: Annotator(loaded.linker, loaded.finders, AnnotateOptions(assertion=on)) for on in (True, False)}
    for annotator in annotators.values():  # warm: each annotator remembers its linking results; pages mapped
        list(annotator.annotate(documents))
    rates: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(repeats):
        for on, annotator in annotators.items():
            started = time.perf_counter()
            list(annotator.annotate(documents))
            rates[on].append(len(documents) / (time.perf_counter() - started))
    with_step, without = statistics.median(rates[True]), statistics.median(rates[False])
    print(f"annotate, default index, {len(documents)} NCBI test abstracts: {with_step:.0f}/s with assertion, {without:.0f}/s without", flush=True)
    return {"documents": len(documents), "index": "default", "abstracts_per_second_with": round(with_step, 1),
            "abstracts_per_second_without": round(without, 1), "repeats": repeats}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", default="dev,test,heldout,notes,heldout2")
    parser.add_argument("--medspacy-env", type=Path, default=scratch("medlink-bench-medspacy"), help="medspaCy's environment (benchmarks/install/get_medspacy.py)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-publish", action="store_true", help="print only (while tuning on dev)")
    args = parser.parse_args()
    rows, whole = [], {}
    annotator = default_annotator()
    for split in args.splits.split(","):
        records = load(split)
        whole[split] = end_to_end(records, annotator)
        print(split, "end to end, default annotator:", whole[split], flush=True)
        systems = {"medlink (ConText rules)": timed(lambda: medlink_labels(records), args.repeats)}
        try:
            systems["negspaCy 1.1.0 (NegEx, en_clinical)"] = timed(negspacy_labels(records), args.repeats)
        except ImportError as error:
            print(f"negspaCy not run: {error} (pip install -e '.[peers]')", file=sys.stderr)
        if (args.medspacy_env / ".complete").exists():
            systems["medspaCy 1.3.1 ConText"] = medspacy_labels(records, str(args.medspacy_env / "bin" / "python"), args.repeats)
        else:
            print(f"medspaCy not run: no environment at {args.medspacy_env} (python benchmarks/install/get_medspacy.py)", file=sys.stderr)
        for system, (labels, seconds) in systems.items():
            row = {"split": split, "system": system, "records": len(records), **scores(records, labels),
                   "records_per_second": round(len(records) / statistics.median(seconds), 1), "seconds_all": [round(s, 4) for s in seconds]}
            rows.append(row)
            summary = {k: row[k] for k in ("accuracy", "macro_f1") if k in row}
            print(split, system, summary, "absent", row["absent"], "historical", row.get("historical"), f"{row['records_per_second']}/s", flush=True)
    cost = pipeline_cost(args.repeats)
    if not args.no_publish:
        publish("assertion_status", {"assertion_rows": rows, "pipeline_cost": cost, "end_to_end": whole, "data": "benchmarks/assertion_data", "command": command_line(__file__, sys.argv[1:])})


if __name__ == "__main__":
    main()

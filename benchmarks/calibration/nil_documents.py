"""Do NIL decisions help linking in running text? NCBI Disease abstracts, medlink's chosen document pipeline.

    python benchmarks/calibration/nil_documents.py [--workdir DIR]

The index of the documents benchmark (MEDIC + the train split's mentions, exclusions learned on train, abbreviations)
gets probabilities fitted on the dev split's gold mentions ('medlink tune --calibrate'); the dev and test abstracts are
then annotated with NIL spans dropped, under the index's own threshold and a grid of others. The threshold is chosen on
dev by linking F1; test is reported for every row.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._common.harness import command_line, publish, scratch  # noqa: E402
from benchmarks.documents.medlink_system import PUBTATOR, calibrated_index, exclusions, medic_kb, ncbi_index  # noqa: E402

from medlink.corpora.pubtator import read_pubtator  # noqa: E402
from medlink.eval.documents import evaluate_documents  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.annotator import AnnotateOptions, Annotator  # noqa: E402

SPLITS = {"dev": "NCBIdevelopset_corpus.txt", "test": "NCBItestset_corpus.txt"}
THRESHOLDS = (None, 0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)  # None: the index's own (chosen on dev mentions for linking F1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-bench-nil-documents"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    equivalent = equivalent_ids_from_kb(medic_kb(args.workdir))
    index, fitted = calibrated_index(args.workdir, equivalent)
    excluded = exclusions(args.workdir, ncbi_index(args.workdir))
    gold = {split: read_pubtator(PUBTATOR / name) for split, name in SPLITS.items()}
    rows = []
    for threshold in THRESHOLDS:
        annotator = Annotator.load(index, "dictionary", None, AnnotateOptions(abbreviations=True), excluded, nil_threshold=threshold)
        row = {"threshold": threshold if threshold is not None else f"index's own ({fitted['chosen']['nil_threshold']:.2f})"}
        for split, documents in gold.items():
            predicted = list(annotator.annotate([replace(d, annotations=[]) for d in documents]))
            for document in predicted:
                document.annotations = [a for a in document.annotations if a.result is None or not a.result.nil]
            scores = evaluate_documents(documents, predicted, equivalent_ids=equivalent).to_dict()
            row[split] = {measure: scores[measure] for measure in ("mentions", "linking", "concepts")}
        rows.append(row)
        print(row["threshold"], {s: round(row[s]["linking"]["f1"], 4) for s in SPLITS}, flush=True)
    chosen = max(rows, key=lambda r: r["dev"]["linking"]["f1"])
    publish("nil_documents", {"thresholds": rows, "chosen_threshold_on_dev": chosen["threshold"], "calibration": fitted,
                              "seconds": time.perf_counter() - started, "command": command_line(__file__, sys.argv[1:])})


if __name__ == "__main__":
    main()

"""What an aligner's cross-encoder gets right by itself: top 1 of the first ``depth`` candidates by its logit alone,
without the calibration that weighs it with the lexical, hierarchy and bi-encoder evidence (DO -> ICD-10-CM, dev and
test of ``align_do.py``'s split). A diagnostic for comparing trainings (a loss, extra queries): it prints, saves nothing.

    python benchmarks/align/cross_alone.py --workdir /tmp/alignwork2 ALIGNER_FOLDER [ALIGNER_FOLDER ...]

Every folder must come from ``align_do.py --train`` in that work directory (the same KBs); the candidates are the
first folder's (its bi-encoder and substitutions), so compare aligners trained with the same ones.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks.align import data  # noqa: E402

from medlink.align.aligner import load_aligner, target_index_for  # noqa: E402
from medlink.align.candidates import SourceQueries, generate  # noqa: E402
from medlink.align.inputs import open_pair  # noqa: E402
from medlink.align.scoring import cross_logits  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("aligners", type=Path, nargs="+")
    args = parser.parse_args()
    source, target = open_pair(data.do_without_xrefs(args.workdir), data.icd10cm(args.workdir))
    gold = data.gold(args.workdir, "icd10cm", target.path)
    splits = data.split(gold)
    aligners = [(folder, *load_aligner(folder)) for folder in args.aligners]
    index = target_index_for(target, aligners[0][2])  # the candidates as the first aligner was trained with them
    queries = SourceQueries.from_kb(source, target.normalize)
    position = {c: i for i, c in enumerate(queries.concept_ids)}
    for split in ("dev", "test"):
        subset = queries.subset([position[s] for s in splits[split]])
        candidates = generate(index, aligners[0][2].queries(subset, target.normalize))  # read as the first aligner reads them
        for folder, model, calibration in aligners:
            logits = cross_logits(model, candidates, calibration.depth)
            right = 0
            for i, concept in enumerate(subset.concept_ids):
                row = candidates.hits.row(i)
                first = candidates.hits.concepts[row][: calibration.depth][int(np.argmax(logits[row][: calibration.depth]))]
                right += index.concept_ids[int(first)] in gold[concept]
            print(f"{split}\t{folder}\ttop 1 of {calibration.depth} by the cross-encoder alone\t{right / len(subset.concept_ids):.4f}", flush=True)


if __name__ == "__main__":
    main()

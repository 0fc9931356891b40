"""How ``medlink align`` calls its first targets: skos:exactMatch, broadMatch or narrowMatch (``align.predicates``).

    python benchmarks/align/predicate_counts.py [--workdir DIR] [--target icd10cm|medic] [--aligner DIR ...]

The Disease Ontology (xrefs removed) onto ICD-10-CM 2026 or MEDIC, every DO concept's first target at any confidence
(``mappings(ranking, 0.0)``: the predicate the names give, whatever threshold a user then keeps), lexical and with each
``--aligner``; counted, with a seeded sample of each kind in the JSON to read. Beside the counts, how many first
targets are the DO term's own xref (the gold the accuracy tables use) within each kind.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._common.harness import command_line, publish, scratch  # noqa: E402
from benchmarks.align import data  # noqa: E402

from medlink.align.aligner import AlignOptions, align, mappings  # noqa: E402
from medlink.align.inputs import open_pair  # noqa: E402


def counted(ranking, gold: dict[str, set[str]], seed: int = 13) -> dict:
    firsts = [m for m in mappings(ranking, 0.0) if m.comment.startswith("rank 1")]
    kinds = Counter(m.predicate_id for m in firsts)
    right = Counter(m.predicate_id for m in firsts if m.object_id in gold.get(m.subject_id, ()))
    rng = random.Random(seed)
    samples = {kind: [[m.subject_label, m.object_label] for m in rng.sample([m for m in firsts if m.predicate_id == kind],
                                                                           min(20, kinds[kind]))] for kind in kinds}
    return {"first_targets": len(firsts), "by_predicate": dict(kinds), "gold_by_predicate": dict(right), "samples": samples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-align-bench"))
    parser.add_argument("--target", choices=("icd10cm", "medic"), default="icd10cm")
    parser.add_argument("--aligner", type=Path, action="append", default=[])
    parser.add_argument("--name", default="align_predicates")
    args = parser.parse_args()
    target = data.icd10cm(args.workdir) if args.target == "icd10cm" else data.medic(args.workdir)
    gold = data.gold(args.workdir, args.target, target)
    source, target_kb = open_pair(data.do_without_xrefs(args.workdir), target)
    rows = []
    for aligner in [None, *args.aligner]:
        ranking = align(source, target_kb, AlignOptions(aligner=aligner), progress=False)
        rows.append({"system": f"medlink + aligner {aligner.name}" if aligner else "medlink lexical", **counted(ranking, gold)})
        print({k: v for k, v in rows[-1].items() if k != "samples"}, flush=True)
    publish(args.name, {"alignment_predicates": {"pair": f"Disease Ontology -> {args.target}", "rows": rows},
                        "command": command_line(__file__, sys.argv[1:])})


if __name__ == "__main__":
    main()

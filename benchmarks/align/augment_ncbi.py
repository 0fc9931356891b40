"""What metadata transfer does to linking: MEDIC (NCBI Disease's KB-only dictionary) augmented from the Disease
Ontology through a lexical alignment, NCBI Disease dev and test Acc@1 before and after.

    python benchmarks/align/augment_ncbi.py [--workdir DIR] [--name align_augment_ncbi]

MEDIC (train_dictionary.txt) is aligned onto DO (xrefs removed) with ``medlink align`` (lexical, top 1); ``medlink kb
augment`` carries DO's synonyms (by default only through DO concepts one MEDIC concept maps to; the "shared
targets too" rows carry them through every mapping), and definitions, types, ancestors: they change no lexical score, the ablation rows
show it) into MEDIC for mappings at or above a confidence; the linker is the tuned NCBI lexical config
(benchmarks/configs/ncbi_lexical.json), KB names only (no mention memory). The confidence is chosen on NCBI dev;
test chooses nothing.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import ROOT, command_line, publish, scratch  # noqa: E402
from benchmarks.align import data  # noqa: E402

from medlink.align.aligner import align, mappings, write_mappings  # noqa: E402
from medlink.align.augment import augment_kb  # noqa: E402
from medlink.align.inputs import open_pair  # noqa: E402
from medlink.eval import evaluate, load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.kb.store import KB  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402

CONFIG = ROOT / "benchmarks" / "configs" / "ncbi_lexical.json"


def accuracy(kb_path: Path, datasets: dict) -> dict:
    with KB.open(kb_path) as kb:
        linker = Linker.build(kb, LinkerConfig.from_file(CONFIG))
        equivalent = equivalent_ids_from_kb(kb)
        return {split: round(evaluate(lambda texts: linker.link(texts, k=5), mentions, equivalent_ids=equivalent, records=False,
                                      subpopulations=False)["acc@1"], 4) for split, mentions in datasets.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-align-bench"))
    parser.add_argument("--confidences", default="0.8,0.9,1.0")
    parser.add_argument("--name", default="align_augment_ncbi")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    medic = Path(ncbi_kb(args.workdir, "train").path)
    do = data.do_without_xrefs(args.workdir)
    datasets = {"dev": load_dataset(ncbi_split("dev")), "test": load_dataset(ncbi_split("test"))}
    started = time.perf_counter()
    source, target = open_pair(medic, do)
    ranking = align(source, target, progress=False)
    sssom_path = write_mappings(args.workdir / "medic-to-do.sssom.tsv", mappings(ranking, 0.0), source, target)
    align_seconds = time.perf_counter() - started
    rows = [{"variant": "MEDIC (train_dictionary.txt), as it is", **{f"{k}_acc@1": v for k, v in accuracy(medic, datasets).items()}}]
    print(rows[-1], flush=True)
    for confidence in [float(c) for c in args.confidences.split(",")]:
        for carry, shared in ((["synonyms"], False), (["synonyms"], True), (["definitions", "types", "ancestors"], False)):
            out = args.workdir / f"medic-aug-{confidence}-{'-'.join(carry)}{'-shared' * shared}.sqlite"
            report = augment_kb(medic, sssom_path, do, out, min_confidence=confidence, carry=carry, progress=False, shared_synonyms=shared)
            rows.append({"variant": f"+ DO {', '.join(carry)}{' (shared targets too)' * shared} (confidence >= {confidence:g})",
                         "confidence": confidence, "carry": carry, "shared_synonyms": shared, "report": report.summary(),
                         **{f"{k}_acc@1": v for k, v in accuracy(out, datasets).items()}})
            print(rows[-1], flush=True)
    synonym_rows = [r for r in rows[1:] if r["carry"] == ["synonyms"] and not r["shared_synonyms"]]
    chosen = max(synonym_rows, key=lambda r: r["dev_acc@1"])
    payload = {"augmentation": {"rows": rows, "chosen_on_dev": chosen["variant"], "align_seconds": round(align_seconds, 1),
                                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)},
               "command": command_line(__file__, sys.argv[1:])}
    publish(args.name, payload)


if __name__ == "__main__":
    main()

"""Probabilities an index fits on its own KB (pseudo-mentions), with and without names asked about misspelt.

    python benchmarks/calibration/pseudo_variants.py [--variants 0,750] [--name calibration_variants]

NCBI dev only (a trial of what ``linking.pseudo_mentions`` draws, chosen on dev): MEDIC (BioSyn's train_dictionary.txt)
indexed with (a) the default config over KB names only, what an index built for a user's KB with no dev data gets, and
(b) benchmarks/configs/ncbi_lexical.json with the train mentions as memory. For each number of misspelt-name
pseudo-mentions the index's build fits its probabilities on the KB; the dev mentions are then linked and scored: ECE of
the first candidates' probabilities (10 bins), and the precision / recall / F1 of the links kept at the fitted NIL
threshold.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import ROOT, command_line, publish, scratch  # noqa: E402

import medlink.linking.pseudo_mentions as pseudo_mentions  # noqa: E402
from medlink.eval import load_dataset  # noqa: E402
from medlink.eval.harness import evaluate_rankings  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.config import default_config, load_config  # noqa: E402
from medlink.linking.index import build_index  # noqa: E402

CONFIGS = {"default config, KB names only": (None, ()),
           "ncbi_lexical.json, train mentions as memory": (ROOT / "benchmarks" / "configs" / "ncbi_lexical.json", ("train",))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-bench"))
    parser.add_argument("--variants", default=f"0,{pseudo_mentions.VARIANTS}")
    parser.add_argument("--name", default="calibration_variants")
    args = parser.parse_args()
    kb = ncbi_kb(args.workdir)
    dev = load_dataset(ncbi_split("dev"))
    draw = pseudo_mentions.draw_pseudo_mentions
    rows, started = [], time.perf_counter()
    for label, (config, memory) in CONFIGS.items():
        for variants in map(int, args.variants.split(",")):
            pseudo_mentions.draw_pseudo_mentions = functools.partial(draw, variants=variants)  # what the index build draws
            with tempfile.TemporaryDirectory() as folder:
                linker = build_index(kb, Path(folder) / "index", load_config(config) if config else default_config(),
                                     memory=[ncbi_split(split) for split in memory])
            results = linker.link([part for m in dev for part in m.parts], k=10)
            report = evaluate_rankings(results, dev, equivalent_ids=equivalent_ids_from_kb(kb), subpopulations=False, records=False)
            rows.append({"config": label, "variants": variants, "ece": report.calibration["ece"], "acc@1": report.metrics["acc@1"],
                         "linked": report.nil})
            print(rows[-1], flush=True)
    pseudo_mentions.draw_pseudo_mentions = draw
    publish(args.name, {"variants_trial": {"dataset": "NCBI Disease dev", "kb": "MEDIC (train_dictionary.txt)", "rows": rows,
                                           "seconds": round(time.perf_counter() - started, 1)},
                        "command": command_line(__file__, sys.argv[1:])})


if __name__ == "__main__":
    main()

"""Probabilities an index fits on its own KB (pseudo-mentions), with and without names asked about misspelt or shortened.

    python benchmarks/calibration/pseudo_variants.py [--variants 0,750] [--shortened 0,500] [--name calibration_variants]

NCBI dev only (a trial of what ``linking.pseudo_mentions`` draws, chosen on dev): MEDIC (BioSyn's train_dictionary.txt)
indexed with (a) the default config over KB names only, what an index built for a user's KB with no dev data gets, and
(b) benchmarks/configs/ncbi_lexical.json with the train mentions as memory. For each number of misspelt-name
pseudo-mentions and of names asked about without their generic head (each pair of the two lists) the index's build fits
its probabilities on the KB; the dev mentions are then linked and scored: ECE of the first candidates' probabilities (10
bins), and the precision / recall / F1 of the links kept at the fitted NIL threshold. Then the default KB's own index is
built under each number of shortened names and asked about head words and eponyms ("diabetes", "crohn", "parkinson's")
and organ words ("heart", "liver"; no right answer): linked or NIL, right, at what probability.
"""

from __future__ import annotations

import argparse
import functools
import itertools
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
from medlink.kb.default import default_kb_path  # noqa: E402
from medlink.kb.store import KB  # noqa: E402
from benchmarks._common.interleaved import default_index_decisions  # noqa: E402
from benchmarks.lexical.completion_stage import PROBE  # noqa: E402

# head words and eponyms people type for a disease, and their right ids in the default KB (completion_stage's probe)
HEAD_WORDS = [*PROBE, ("parkinson's", "ICD10CM:G20|ICD10CM:G20.A1"), ("huntington", "ICD10CM:G10"),
              ("tourette", "ICD10CM:F95.2"), ("down", "ICD10CM:Q90|ICD10CM:Q90.9")]
ORGAN_WORDS = [("heart", ""), ("kidney", ""), ("liver", ""), ("lung", "")]  # a disease linker should rather say NIL
CONFIGS = {"default config, KB names only": (None, ()),
           "ncbi_lexical.json, train mentions as memory": (ROOT / "benchmarks" / "configs" / "ncbi_lexical.json", ("train",))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-bench"))
    parser.add_argument("--variants", default=f"0,{pseudo_mentions.VARIANTS}")
    parser.add_argument("--shortened", default=f"0,{pseudo_mentions.SHORTENED}")
    parser.add_argument("--name", default="calibration_variants")
    args = parser.parse_args()
    kb = ncbi_kb(args.workdir)
    dev = load_dataset(ncbi_split("dev"))
    draw = pseudo_mentions.draw_pseudo_mentions
    rows, started = [], time.perf_counter()
    for label, (config, memory) in CONFIGS.items():
        for variants, shortened in itertools.product(map(int, args.variants.split(",")), map(int, args.shortened.split(","))):
            pseudo_mentions.draw_pseudo_mentions = functools.partial(draw, variants=variants, shortened=shortened)  # what the build draws
            with tempfile.TemporaryDirectory() as folder:
                linker = build_index(kb, Path(folder) / "index", load_config(config) if config else default_config(),
                                     memory=[ncbi_split(split) for split in memory])
            results = linker.link([part for m in dev for part in m.parts], k=10)
            report = evaluate_rankings(results, dev, equivalent_ids=equivalent_ids_from_kb(kb), subpopulations=False, records=False)
            rows.append({"config": label, "variants": variants, "shortened": shortened, "ece": report.calibration["ece"], "acc@1": report.metrics["acc@1"],
                         "linked": report.nil})
            print(rows[-1], flush=True)
    probes = []
    for shortened in map(int, args.shortened.split(",")):  # the default KB's own index under each draw: what the probe gets
        pseudo_mentions.draw_pseudo_mentions = functools.partial(draw, shortened=shortened)
        with tempfile.TemporaryDirectory() as folder:
            linker = build_index(KB.open(default_kb_path()), Path(folder) / "index", default_config())
        probes.append({"shortened": shortened, "decisions": default_index_decisions(HEAD_WORDS + ORGAN_WORDS, linker),
                       "organ_words": [word for word, _ in ORGAN_WORDS]})
        print(probes[-1], flush=True)
    pseudo_mentions.draw_pseudo_mentions = draw
    publish(args.name, {"variants_trial": {"dataset": "NCBI Disease dev", "kb": "MEDIC (train_dictionary.txt)", "rows": rows,
                                           "default_kb_probe": probes,
                                           "seconds": round(time.perf_counter() - started, 1)},
                        "command": command_line(__file__, sys.argv[1:])})


if __name__ == "__main__":
    main()

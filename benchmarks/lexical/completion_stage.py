"""The completion stage (names holding the mention's words, the most expected completion first) on and off, in one run.

    python benchmarks/lexical/completion_stage.py [--repeats 3] [--choose 0,0.25,0.5,1,2]

The default lexical config (exact + words + completion + char n-gram TF-IDF + BM25) with the completion stage at its
weight (0.25, chosen on NCBI dev, AskAPatient fold-0 validation and the default KB's pseudo-mentions of seed 2) and left
out (weight 0: the stage is not searched), over the sets of ``tfidf_rescore.py`` (seed 1's pseudo-mentions): Acc@1,
Acc@5 and mentions/s (median of ``--repeats``, the two settings interleaved); each index is built once. Then a probe
of head words and eponyms people write for concepts the default KB names at more length ("diabetes", "crohn"), each
with the codes a coder would pick (first candidate with and without the stage; no gold set), and what the default
index itself decides for them (its probability and NIL threshold, fitted on the KB's pseudo-mentions). ``--choose``
first links the dev sets (seed 2's pseudo-mentions) at each of those weights: the choice behind the preset's.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks._common.interleaved import default_index_decisions, setting_runs, with_stage_weight  # noqa: E402
from benchmarks._common.pseudo import accuracy_at  # noqa: E402
from benchmarks.lexical.tfidf_rescore import datasets  # noqa: E402

from medlink.linking.config import LEXICAL_WEIGHTS  # noqa: E402

SETTINGS = {"without": 0.0, "with": LEXICAL_WEIGHTS["completion"]}
# head words and eponyms for concepts the default KB names at more length, with the codes a coder would choose
PROBE = [("diabetes", "HP:0000819|ICD10CM:E08-E13|ICD10CM:E11.9"), ("lupus", "ICD10CM:L93|ICD10CM:L93.0|ICD10CM:M32.9|HP:0002725"),
         ("crohn", "HP:0100280|ICD10CM:K50.90|ICD10CM:K50.9|ICD10CM:K50"), ("hodgkin", "HP:0012189|ICD10CM:C81|ICD10CM:C81.9"),
         ("alzheimer", "HP:0002511|ICD10CM:G30|ICD10CM:G30.9"), ("hashimoto", "HP:0000872|ICD10CM:E06.3"),
         ("graves", "HP:0100647|ICD10CM:E05.0|ICD10CM:E05.00"), ("celiac", "HP:0002608|ICD10CM:K90.0"),
         ("insulin dependent diabetes", "HP:0100651|ICD10CM:E10|ICD10CM:E10.9"), ("herpes", "ICD10CM:B00|ICD10CM:B00.9"),
         ("sickle cell", "ICD10CM:D57|ICD10CM:D57.1"), ("asthma", "HP:0002099|ICD10CM:J45|ICD10CM:J45.909|ICD10CM:J45.90"),
         ("multiple sclerosis", "ICD10CM:G35|ICD10CM:G35.D"), ("kidney failure", "HP:0000083|ICD10CM:N19")]



def weight_choice(workdir: Path, weights: list[float]) -> list[dict]:
    """Acc@1 / Acc@5 of each dev set (seed 2's pseudo-mentions) at each completion weight."""
    rows = []
    for name, linker, texts, golds in datasets(workdir, seed=2, splits=("dev",)):
        for weight in weights:
            with_stage_weight(linker, "completion", weight)
            rows.append({"set": name, "weight": weight, **accuracy_at(linker.link(texts, k=5, rerank=False), golds)})
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--choose", type=lambda text: [float(w) for w in text.split(",")], default=None,
                        help="weights to link the dev sets at first (comma-separated): the choice behind the preset's")
    args = parser.parse_args()
    choice = weight_choice(args.workdir, args.choose) if args.choose else []
    rows, probed, _ = setting_runs(datasets(args.workdir), lambda linker: {label: partial(with_stage_weight, linker, "completion", weight) for label, weight in SETTINGS.items()},
                                   args.repeats, PROBE)
    publish("completion_stage", {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "completion_rows": rows, "probe": probed,
                                 "default_index": default_index_decisions(PROBE), "weight_choice": choice,
                                 "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})


if __name__ == "__main__":
    main()

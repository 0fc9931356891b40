"""The exact generator's word-set form ("words") in the default lexical config, on and off in one run.

    python benchmarks/lexical/words_form.py [--repeats 3]

The default lexical config (exact + words + char n-gram TF-IDF + BM25) with the words stage at its weight (1) and left
out (weight 0: the stage is not searched), over the sets of ``tfidf_rescore.py``: MEDIC for NCBI dev and test,
AskAPatient's ontology for fold-0 validation and test, the default KB for its pseudo-mentions (seed 1; the weight was
chosen on seed 2's, NCBI dev and AskAPatient validation). Acc@1, Acc@5 and mentions/s (median of ``--repeats``, the
two settings interleaved) for each; the index is built once. Then a probe of lay and reordered phrasings over the
default KB, each with the code a coder would pick (the first candidate with and without the stage; no gold set), and
what the default index itself decides for them (its probability and NIL threshold, fitted on the KB's pseudo-mentions).
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
from benchmarks.lexical.tfidf_rescore import datasets  # noqa: E402

from medlink.linking.config import LEXICAL_WEIGHTS  # noqa: E402

SETTINGS = {"without": 0.0, "with": LEXICAL_WEIGHTS["words"]}
# phrasings people write for concepts the default KB names otherwise, with the concept a coder would choose
PROBE = [("hip fractures", "ICD10CM:S72.00"), ("fracture of hip", "ICD10CM:S72.00"), ("heart failures", "HP:0001635|ICD10CM:I50"),
         ("pain in chest", "HP:0100749"), ("stones in kidney", "HP:0000787|ICD10CM:N20.0"), ("cancer of lung", "HP:0100526|ICD10CM:C34.90"),
         ("failure of kidney", "HP:0000083|ICD10CM:N19"), ("ulcers of stomach", "HP:0002592|ICD10CM:K25.9"),
         ("infection of urinary tract", "HP:0000010|ICD10CM:N39.0"), ("diabetes mellitus type 2", "HP:0005978|ICD10CM:E11.9"),
         ("kidney failure", "HP:0000083|ICD10CM:N19")]



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    rows, probed, _ = setting_runs(datasets(args.workdir), lambda linker: {label: partial(with_stage_weight, linker, "words", weight) for label, weight in SETTINGS.items()},
                                   args.repeats, PROBE)
    publish("words_form", {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "words_rows": rows, "probe": probed,
                           "default_index": default_index_decisions(PROBE),
                           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})


if __name__ == "__main__":
    main()

"""BM25's spelling correction (a query word no name has, read as the most frequent name word one edit away), off and on.

    python benchmarks/lexical/bm25_spelling.py [--repeats 3]

The default lexical config (exact + words + char n-gram TF-IDF + BM25) with BM25's ``spelling`` off and on, over the
sets of ``tfidf_rescore.py`` (MEDIC for NCBI dev and test, AskAPatient's ontology for fold-0 validation and test, the
default KB for its pseudo-mentions, seed 1, a third of them names with one edit): Acc@1, Acc@5 and mentions/s (median
of ``--repeats``, the settings interleaved); each index is built once. The default's setting is chosen on the dev
sets (NCBI dev, AskAPatient validation, the pseudo-mentions); test only reports. Then a probe of misspellings over the
default KB, each with the code a coder would pick (first candidate off and on), and how long the correction's
vocabulary takes to build on the default KB's names.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks._common.interleaved import setting_runs  # noqa: E402
from benchmarks.lexical.tfidf_rescore import datasets  # noqa: E402

from medlink.linking.linker import Linker  # noqa: E402

SETTINGS = {"off": False, "on": True}
# misspellings people type for concepts of the default KB, with the concepts a coder would choose
PROBE = [("migrane", "HP:0002076|ICD10CM:G43|ICD10CM:G43.909|ICD10CM:G43.9"), ("diabetis", "HP:0000819|ICD10CM:E08-E13"),
         ("pnuemonia", "HP:0002090|ICD10CM:J18.9|ICD10CM:J18"), ("asthama", "HP:0002099|ICD10CM:J45|ICD10CM:J45.909|ICD10CM:J45.90"),
         ("hypertention", "HP:0000822|ICD10CM:I10"), ("arthritus", "HP:0001369|ICD10CM:M19.90|ICD10CM:M13.9"),
         ("epilepsey", "HP:0001250|ICD10CM:G40|ICD10CM:G40.909|ICD10CM:G40.9"), ("anemia", "HP:0001903|ICD10CM:D64.9"),
         ("osteoporsis", "HP:0000939|ICD10CM:M81.0|ICD10CM:M81"), ("hepatitus", "HP:0012115|ICD10CM:K75.9"),
         ("colitus", "HP:0002583|ICD10CM:K52.9"), ("alzheimers disease", "HP:0002511|ICD10CM:G30.9|ICD10CM:G30"),
         ("parkinsons disease", "ICD10CM:G20|ICD10CM:G20.A1|ICD10CM:G20.C"), ("bronchitus", "HP:0012387|ICD10CM:J40"),
         ("glaucomma", "HP:0000501|ICD10CM:H40-H42|ICD10CM:H40.9|ICD10CM:H40"), ("depresion", "HP:0000716|ICD10CM:F32.A|ICD10CM:F32.9")]


def bm25_generators(linker: Linker) -> list:
    return [g for g in linker.generators.values() if type(g).__name__ == "BM25Generator"]


def with_spelling(linker: Linker, on: bool) -> None:
    for generator in bm25_generators(linker):
        generator.params = {**generator.params, "spelling": on}


def vocabulary_seconds(linker: Linker) -> float:
    """Seconds to build the correction's vocabulary over this linker's BM25 names (done once, on the first query)."""
    [generator] = bm25_generators(linker)
    with_spelling(linker, True)
    generator._speller, generator._corrections = None, {}
    started = time.perf_counter()
    generator.prepare()
    return round(time.perf_counter() - started, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    rows, probed, default = setting_runs(datasets(args.workdir), lambda linker: {label: partial(with_spelling, linker, on) for label, on in SETTINGS.items()},
                                         args.repeats, PROBE)
    extra = {"default_kb_names": len(default.generators["bm25"].table), "vocabulary_seconds": vocabulary_seconds(default)} if default else {}
    publish("bm25_spelling", {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "spelling_rows": rows,
                              "probe": probed, **extra, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})


if __name__ == "__main__":
    main()

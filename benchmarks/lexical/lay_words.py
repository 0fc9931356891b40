"""The words stage's lay words (``text.lay_words``: "sore knees" read as "knee pain") in the default lexical config, off
and on in one run.

    python benchmarks/lexical/lay_words.py [--repeats 3]

The default lexical config over the sets of ``tfidf_rescore.py`` (MEDIC for NCBI dev and test, AskAPatient's ontology
for fold-0 validation and test, the default KB for its pseudo-mentions, seed 1), with the words stage reading lay words
and not: Acc@1, Acc@5 and mentions/s (median of ``--repeats``, the two settings interleaved); the index is built once.
Then a probe of lay phrasings over the default KB, with the concept a coder would pick. What the default index itself
decides for people's own words (its probabilities and NIL threshold) is ``lay_wording.py``'s.
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
from benchmarks._common.interleaved import default_index_decisions, setting_runs  # noqa: E402
from benchmarks.lexical.tfidf_rescore import datasets  # noqa: E402

PROBE = [("sore knees", "HP:0030839"), ("my hip hurts", "HP:0030838"), ("swollen ankles", "HP:0001785|HP:0010741"), ("achy joints", "HP:0002829"),
         ("hard to fall asleep", "HP:0031354"), ("fingers hurt", "HP:0030837"), ("weak muscles", "HP:0001324"), ("pressure sore", "HP:0012399|ICD10CM:L89"),
         ("can't sleep", "HP:0100785"), ("unable to walk", "HP:0002540")]


def with_lay_words(linker, on: bool) -> None:
    """Put ``linker`` in one setting: its words stage reads lay words or not."""
    linker.generators["words"].lay_words = on


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    settings = lambda linker: {"without": partial(with_lay_words, linker, False), "with": partial(with_lay_words, linker, True)}  # noqa: E731
    rows, probed, _ = setting_runs(datasets(args.workdir), settings, args.repeats, PROBE)
    publish("lay_words", {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "lay_words_rows": rows, "probe": probed,
                          "default_index": default_index_decisions(PROBE),
                          "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})


if __name__ == "__main__":
    main()

"""Readings of a mention in the default lexical config, each off and on in one run: lay words ("sore knees" read
as "knee pain" by the words stage, ``text.lay_words``), shortened words ("breast ca" read as "breast cancer" by the
linker's key, ``text.finders.word_shorthand``) and long words two edits from a name's ("diabeetus" read as "diabetes"
by the spelling stages, ``text.spelling``).

    python benchmarks/lexical/readings.py --reading lay_words|shorthand|two_edits [--repeats 3]

The default lexical config over the sets of ``tfidf_rescore.py`` (MEDIC for NCBI dev and test, AskAPatient's ontology
for fold-0 validation and test, the default KB for its pseudo-mentions, seed 1), with the reading and without: Acc@1,
Acc@5 and mentions/s (median of ``--repeats``, the two settings interleaved); the index is built once. Then a probe of
such wordings over the default KB, with the concept a coder would pick. What the default index itself decides for
people's own words (its probabilities and NIL threshold) is ``lay_wording.py``'s.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
import medlink.linking.readings  # noqa: E402
import medlink.text.spelling  # noqa: E402
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks._common.interleaved import default_index_decisions, setting_runs  # noqa: E402
from benchmarks.lexical.tfidf_rescore import datasets  # noqa: E402
from medlink.text.finders.word_shorthand import shorthand_reading  # noqa: E402
from medlink.text.spelling import TWO_EDITS_FROM  # noqa: E402

PROBES = {
    "lay_words": [("sore knees", "HP:0030839"), ("my hip hurts", "HP:0030838"), ("swollen ankles", "HP:0001785|HP:0010741"),
                  ("achy joints", "HP:0002829"), ("hard to fall asleep", "HP:0031354"), ("fingers hurt", "HP:0030837"),
                  ("weak muscles", "HP:0001324"), ("pressure sore", "HP:0012399|ICD10CM:L89"), ("can't sleep", "HP:0100785"),
                  ("unable to walk", "HP:0002540")],
    "shorthand": [("breast ca", "HP:0003002|ICD10CM:C50.919"), ("hip fx", "ICD10CM:S72.00|HP:0002637"), ("L knee pain", "ICD10CM:M25.562"),
                  ("brain mets", "ICD10CM:C79.31|HP:0100010"), ("pulmonary HTN", "HP:0002092|ICD10CM:I27.20"), ("abd pain", "HP:0002027|ICD10CM:R10.9"),
                  ("bipolar d/o", "HP:0007302|ICD10CM:F31.9")],
    "two_edits": [("diabeetus", "HP:0000819|ICD10CM:E11.9"), ("hypertensoin", "HP:0000822|ICD10CM:I10"),
                  ("hypothyrodism", "HP:0000821|ICD10CM:E03.9"), ("osteoporisis", "HP:0000939|ICD10CM:M81.0"),
                  ("schizophrena", "HP:0100753|ICD10CM:F20.9"), ("anaemiaa", "HP:0001903|ICD10CM:D64.9")],
}


def with_lay_words(linker, on: bool) -> None:
    """The words stage reads lay words, or not."""
    linker.generators["words"].lay_words = on


def with_shorthand(linker, on: bool) -> None:
    """The linker's key writes shortened words out, or not (this process's linkers all; one linker is measured at a time)."""
    medlink.linking.readings.shorthand_reading = shorthand_reading if on else (lambda text, normalize: None)


def with_two_edits(linker, on: bool) -> None:
    """The spelling stages read a long word two edits from a name's word, or one edit only (spellers built later too;
    their memos emptied)."""
    reach = TWO_EDITS_FROM if on else None
    medlink.text.spelling.TWO_EDITS_FROM = reach
    for generator in linker.generators.values():
        if getattr(generator, "_speller", None) is not None:
            generator._speller.two_edits_from = reach
        if hasattr(generator, "forget_words"):
            generator.forget_words()


SWITCHES = {"lay_words": with_lay_words, "shorthand": with_shorthand, "two_edits": with_two_edits}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reading", choices=sorted(SWITCHES), required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    switch, probe = SWITCHES[args.reading], PROBES[args.reading]
    settings = lambda linker: {"without": partial(switch, linker, False), "with": partial(switch, linker, True)}  # noqa: E731
    rows, probed, _ = setting_runs(datasets(args.workdir), settings, args.repeats, probe)
    publish(args.reading, {"command": command_line(__file__, sys.argv[1:]), "reading": args.reading, "repeats": args.repeats,
                           "reading_rows": rows, "probe": probed, "default_index": default_index_decisions(probe),
                           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})


if __name__ == "__main__":
    main()

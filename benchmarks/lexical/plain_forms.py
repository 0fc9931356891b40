"""The words stage's plain forms in the default lexical config, on and off in one run.

    python benchmarks/lexical/plain_forms.py [--repeats 3]

The exact generator's words form also answers for a name's plain form where no name has its words
(``medlink.text.plain_forms``: without words in parentheses or brackets, a trailing "NOS" or ", unspecified", an
eponym's generic head), so "essential hypertension" meets ICD-10-CM's *Essential (primary) hypertension*. With the
plain forms and without them (the words stage then matching the names' own word sets only), over the sets of
``tfidf_rescore.py``: MEDIC for NCBI dev and test, AskAPatient's ontology for fold-0 validation and test, the default
KB for its pseudo-mentions (seed 1). Acc@1, Acc@5 and mentions/s (median of ``--repeats``, the two settings
interleaved) for each; the index is built once. Then a probe of phrasings clinicians write for default-KB concepts
whose names carry such asides, each with the code a coder would pick, and what the default index itself decides with
them and, its probability model unchanged, without them.
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

import medlink  # noqa: E402
from medlink.retrieval.exact import ExactGenerator  # noqa: E402

# phrasings without the classification's asides, with the concept a coder would choose
PROBE = [("essential hypertension", "ICD10CM:I10"), ("systolic heart failure", "ICD10CM:I50.2"), ("diastolic heart failure", "ICD10CM:I50.3"),
         ("acute on chronic systolic heart failure", "ICD10CM:I50.23"), ("heart failure with reduced ejection fraction", "ICD10CM:I50.2"),
         ("heart failure with preserved ejection fraction", "ICD10CM:I50.3"), ("acute obstructive laryngitis", "ICD10CM:J05.0"),
         ("chronic kidney disease stage 2", "HP:0012624|ICD10CM:N18.2"), ("long term use of insulin", "ICD10CM:Z79.4"),
         ("insect bite of elbow", "ICD10CM:S50.36"), ("focal acute ischemia of large intestine", "ICD10CM:K55.031")]


def plain_form_settings(linker) -> dict:
    """"without" / "with": the words stage's lookup without and with its names' plain forms."""
    words = next(g for g in linker.generators.values() if isinstance(g, ExactGenerator) and g.words)
    without = ExactGenerator(words.table, words.concept_ids, words.name, True, words.word_keys, words.function_words).rows_of
    return {"without": partial(setattr, words, "rows_of", without), "with": partial(setattr, words, "rows_of", words.rows_of)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    rows, probed, _ = setting_runs(datasets(args.workdir), plain_form_settings, args.repeats, PROBE)
    default = medlink.load_index("default")
    decided = {}
    for label, apply in plain_form_settings(default).items():  # its probability model was fitted with them: "without" shows what they add
        apply()
        decided[label] = default_index_decisions(PROBE, default)
    publish("plain_forms", {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "plain_rows": rows, "probe": probed,
                            "default_index": decided["with"], "default_index_without": decided["without"],
                            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})


if __name__ == "__main__":
    main()

"""The thesaurus stage (the names a synonym of the mention spells, through HPO's lay and clinical names) on and off.

    python benchmarks/lexical/thesaurus_stage.py [--repeats 3] [--choose 0,1,1.5,2,2.5]

The default lexical config with the thesaurus stage at its weight and left out (weight 0: not searched), over the sets
of ``tfidf_rescore.py`` (NCBI over MEDIC, AskAPatient over its ontology's names, both without a mention memory; the
default KB's pseudo-mentions, where the stage has nothing to add: that KB is HPO): Acc@1, Acc@5 and mentions/s (median of
``--repeats``, the two settings interleaved); each index is built once. ``--choose`` first links the dev sets at each of
those weights: NCBI dev, and every AskAPatient fold's validation set, over the ontology alone and with the fold's train
mentions as memory (lay wording that the ontology's names do not say, and that a memory mostly does): the choice behind
the preset's.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import aap_kb, aap_split, ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks._common.interleaved import setting_runs, with_stage_weight  # noqa: E402
from benchmarks._common.pseudo import accuracy_at  # noqa: E402
from benchmarks.lexical.tfidf_rescore import datasets  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.linking.config import LEXICAL_WEIGHTS, default_config  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402

SETTINGS = {"without": 0.0, "with": LEXICAL_WEIGHTS["thesaurus"]}
FOLDS = range(10)


def dev_sets(workdir: Path):
    """(name, linker, mention texts, gold id sets): NCBI dev over MEDIC, then each AskAPatient validation fold without
    and with its train mentions as memory."""
    mentions = load_dataset(ncbi_split("dev"))
    yield "NCBI dev", Linker.build(ncbi_kb(workdir), default_config()), [p for m in mentions for p in m.parts], [m.gold for m in mentions for _ in m.parts]
    kb = aap_kb(workdir)
    for fold in FOLDS:
        mentions = load_dataset(aap_split(fold, "validation"))
        texts, golds = [p for m in mentions for p in m.parts], [m.gold for m in mentions for _ in m.parts]
        yield f"AskAPatient fold-{fold} validation, ontology only", Linker.build(kb, default_config()), texts, golds
        memory = memory_from_datasets(kb, [aap_split(fold, "train")])
        yield f"AskAPatient fold-{fold} validation, + memory", Linker.build(kb, default_config(), memory), texts, golds


def weight_choice(workdir: Path, weights: list[float]) -> dict:
    """Acc@1 / Acc@5 of each dev set at each weight, and the AskAPatient folds' means per weight."""
    rows = []
    for name, linker, texts, golds in dev_sets(workdir):
        for weight in weights:
            with_stage_weight(linker, "thesaurus", weight)
            rows.append({"set": name, "weight": weight, **accuracy_at(linker.link(texts, k=5, rerank=False), golds)})
            print(rows[-1], flush=True)
    means = [{"sets": f"AskAPatient validation, {kind} (mean of {len(FOLDS)} folds)", "weight": weight,
              "acc@1": round(statistics.mean(r["acc@1"] for r in rows if r["weight"] == weight and r["set"].endswith(kind)), 4)}
             for kind in ("ontology only", "+ memory") for weight in weights]
    return {"rows": rows, "askapatient_means": means}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--choose", type=lambda text: [float(w) for w in text.split(",")], default=None,
                        help="weights to link the dev sets at first (comma-separated): the choice behind the preset's")
    args = parser.parse_args()
    choice = weight_choice(args.workdir, args.choose) if args.choose else {}
    rows, _, _ = setting_runs(datasets(args.workdir), lambda linker: {label: partial(with_stage_weight, linker, "thesaurus", weight) for label, weight in SETTINGS.items()},
                              args.repeats, [])
    publish("thesaurus_stage", {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "thesaurus_rows": rows,
                                "weight_choice": choice, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})


if __name__ == "__main__":
    main()

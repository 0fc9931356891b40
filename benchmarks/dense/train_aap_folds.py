"""Fine-tune one model per AskAPatient fold, on that fold's train file only (issue 4).

    python benchmarks/dense/train_aap_folds.py --out DIR [--folds 10] [--base MODEL] [--kind cross-encoder] [--with-validation] -- [medlink train options]

A model shared by all folds would have seen every other fold's test mentions; so each fold gets
its own, trained on ``AskAPatient.fold-N.train.txt`` with the fold's validation file for the
per-epoch dev figure. The recipe (options after ``--``) was chosen on fold-0 validation. Folds
whose model folder already holds a ``training.json`` are skipped, so an interrupted run resumes;
``--only 1,3,5`` splits the folds between processes (two processes with OMP_NUM_THREADS=1 train
faster than one with two threads on a 2-core machine).
``{fold}`` in the options becomes the fold number, and a relative ``--candidates-model`` is under
$MEDLINK_BENCH_MODELS (a cross-encoder trains against its own fold's bi-encoder).
``--with-validation`` trains the final models on train + validation with the recipe fold-0 validation chose
(the AskAPatient counterpart of training on NCBI's traindev); they have no dev figure, and fold-0
validation can no longer judge them.
Then: ``python benchmarks/dense/dense_linking.py --model NAME=DIR/fold-{fold}`` (or rerank_linking.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import aap_kb, aap_split  # noqa: E402
from benchmarks._common.harness import MODELS, command_line, publish  # noqa: E402


def fold_recipe(recipe: list[str], fold: int) -> list[str]:
    """The training options for one fold: ``{fold}`` filled in, a relative candidates model under $MEDLINK_BENCH_MODELS."""
    options = [a.replace("{fold}", str(fold)) for a in recipe]
    for i, option in enumerate(options[:-1]):
        if option == "--candidates-model" and not Path(options[i + 1]).is_absolute():
            options[i + 1] = str(MODELS / options[i + 1])
    return options


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder for fold-N models (relative: under $MEDLINK_BENCH_MODELS)")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--only", default=None, help="comma-separated folds to train in this process (e.g. two processes with 1 thread each)")
    parser.add_argument("--base", default=None, help="base model folder (default: packaged all-MiniLM-L6-v2; relative: under $MEDLINK_BENCH_MODELS)")
    parser.add_argument("--kind", choices=("bi-encoder", "cross-encoder"), default="bi-encoder")
    parser.add_argument("--with-validation", action="store_true", help="train on the fold's train + validation files (final models)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--section", default=None, help="results name (default: train_aap_folds[_cross][_trainval]); "
                                                        "give pilots their own, or they replace the recorded folds")
    parser.add_argument("recipe", nargs=argparse.REMAINDER, help="options passed to 'medlink train bi-encoder' (after --)")
    args = parser.parse_args()
    recipe = [a for a in args.recipe if a != "--"]
    out_root = MODELS / args.out
    kb = aap_kb(args.workdir)
    mine = [int(f) for f in args.only.split(",")] if args.only else range(args.folds)
    for fold in mine:
        out = out_root / f"fold-{fold}"
        if not (out / "training.json").is_file():
            data = (["--train", aap_split(fold, "train"), "--train", aap_split(fold, "validation")] if args.with_validation
                    else ["--train", aap_split(fold, "train"), "--dev", aap_split(fold, "validation")])
            command = ["medlink", "train", args.kind, "--kb", str(kb.path), *data, "--out", str(out), *(["--model", str(MODELS / args.base)] if args.base else []),
                       *fold_recipe(recipe, fold)]
            print(" ".join(command), flush=True)
            started = time.perf_counter()
            subprocess.run(command, check=True)
            print(f"fold {fold}: {(time.perf_counter() - started) / 60:.1f} min", flush=True)
    folds = []  # every fold trained so far, by this process or another
    for fold in range(args.folds):
        report_path = out_root / f"fold-{fold}" / "training.json"
        if report_path.is_file():
            report = json.loads(report_path.read_text())
            folds.append({"fold": fold, "seconds": report["seconds"], "epochs": report["epochs"]})
    section = args.section or ("train_aap_folds" if args.kind == "bi-encoder" else "train_aap_folds_cross") + ("_trainval" if args.with_validation else "")
    publish(section, {"command": command_line(__file__, sys.argv[1:]), "recipe": recipe, "folds": folds})


if __name__ == "__main__":
    main()

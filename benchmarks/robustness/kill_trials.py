"""kill -9 at random moments of kb build, index build, training, annotate --out and align --out: what is left at the
output must be the old artefact, the new one, or (training) a checkpoint to resume from: never a broken or partial one;
the rerun must succeed and leave no staging file of the killed run beside the output.

    python benchmarks/robustness/kill_trials.py [--trials 20] [--only NAME]

Each command first runs to completion once (the "old" artefact and the time it takes); each trial starts it again on the
same output, kills it (and its children) after a random share of that time or, every other trial of the commands that
write one file, the moment its staging file appears (mid-write), checks what is there, then runs it to completion again.
Data: MEDIC (../shared/data/medic) for kb build, index build and annotate (300 NCBI Disease train abstracts, to
PubTator, JSONL and BioC XML); align: the Disease Ontology (../shared/data/disease-ontology) onto the test fixtures'
ICD-10-CM target; training: a bi-encoder on the test fixtures. ``--only`` runs the commands whose name holds NAME
(a trial run: nothing is published).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* and tests.* imports
from benchmarks._common.harness import SHARED_DATA, command_line, publish  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402

from medlink.directories import glob_escape  # noqa: E402

ABSTRACTS = 300  # NCBI Disease train abstracts annotated per run (about 3 s of writing)


def medlink(*args) -> list[str]:
    return [sys.executable, "-m", "medlink", *map(str, args)]


def check_kb(path: Path) -> str:
    from medlink.kb.store import KB

    if not path.exists():
        return "none"
    KB.open(path).stats()  # raises on a broken file
    return "complete"


def check_index(path: Path) -> str:
    from medlink.linking.linker import Linker

    if not path.exists():
        return "none"
    Linker.load(path).link(["colorectal cancer"], k=1)
    return "complete"


def check_model(path: Path) -> str:
    if (path / "training.json").is_file():
        json.loads((path / "training.json").read_text())
        from medlink.encoders import Encoder

        Encoder(path, precision="fp32")
        return "complete"
    return "checkpoint" if (path / "checkpoint" / "state.json").is_file() else "none"


def check_documents(fmt: str, count: int):
    """An annotate output: none, or every one of the ``count`` documents (it reads back whole, in its format)."""
    def check(path: Path) -> str:
        from medlink.corpora.document_files import read_documents

        if not path.exists():
            return "none"
        found = sum(1 for _ in read_documents(path, fmt))  # raises on a cut record
        if found != count:
            raise ValueError(f"{found} of {count} documents")
        return "complete"
    return check


def check_sssom(rows: int):
    """An align output: none, or the SSSOM file with all its ``rows``."""
    def check(path: Path) -> str:
        from medlink.align.sssom import read_sssom

        if not path.exists():
            return "none"
        found = sum(1 for _ in read_sssom(path))
        if found != rows:
            raise ValueError(f"{found} of {rows} rows")
        return "complete"
    return check


def staging(out: Path) -> list[str]:
    """What sits beside ``out`` under medlink's staging names (``.NAME.*``): a killed run's, if a rerun left it."""
    return sorted(p.name for p in out.parent.glob(f".{glob_escape(out.name)}.*"))


def kill_moment(process: subprocess.Popen, out: Path, seconds: float, rng: random.Random, mid_write: bool) -> None:
    """Wait a random share of ``seconds`` or, ``mid_write``, until a staging file appears beside ``out`` (at most 2x)."""
    if not mid_write:
        time.sleep(rng.uniform(0.05, 1.0) * seconds)
        return
    deadline = time.perf_counter() + 2 * seconds
    while time.perf_counter() < deadline and process.poll() is None and not any(n.endswith(".tmp") for n in staging(out)):
        time.sleep(0.002)


def trial(command: list[str], check, out: Path, seconds: float, rng: random.Random, rerun, mid_write: bool = False) -> str:
    """Start ``command``, kill it (and its children) at a random moment, check ``out``, run ``rerun(out)``, look for leftovers."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    kill_moment(process, out, seconds, rng, mid_write)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    try:
        state = check(out)
    except Exception as error:  # noqa: BLE001 - a broken artefact is what this counts
        return f"broken ({type(error).__name__})"
    done = subprocess.run(rerun(out), capture_output=True, text=True)
    if done.returncode != 0:
        return f"rerun failed ({done.stderr.strip().splitlines()[-1][:120] if done.stderr.strip() else done.returncode})"
    left = staging(out)
    return f"left {state}, rerun ok" + (f", staging left ({left[0]})" if left else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--only", default=None, help="Run only the commands whose name holds this (nothing is published).")
    args = parser.parse_args()
    rng = random.Random(0)
    medic = SHARED_DATA / "medic" / "medic_06Jul2012.txt"
    results: dict[str, collections.Counter] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="medlink-kill-") as root:
        work = Path(root)
        jobs = commands(work, medic)
        for name, (command, check, out, resume, single_file) in jobs.items():
            if args.only and args.only not in name:
                continue
            began = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            seconds = time.perf_counter() - began
            results[name] = collections.Counter()
            for number in range(args.trials):
                if resume:
                    subprocess.run(["rm", "-rf", str(out)], check=True)  # each training trial starts anew; a checkpoint is resumed

                def rerun(target: Path, command=command, resume=resume) -> list[str]:
                    return resume if resume and (target / "checkpoint" / "state.json").is_file() else command

                results[name][trial(command, check, out, seconds, rng, rerun, mid_write=single_file and number % 2 == 1)] += 1
            print(name, f"({seconds:.1f}s a run)", dict(results[name]), flush=True)
    if args.only:
        return
    broken = sum(n for c in results.values() for outcome, n in c.items() if not outcome.endswith("rerun ok"))
    publish("kill_trials", {"command": command_line(__file__, sys.argv[1:]), "trials_per_command": args.trials,
                            "outcomes": {k: dict(v) for k, v in results.items()}, "broken_or_failed": broken, "seconds": time.perf_counter() - started})


def commands(work: Path, medic: Path) -> dict[str, tuple]:
    """name -> (command, check, output, resume command or None, whether it writes one file); inputs prepared in ``work``."""
    kb, index, model = work / "medic.sqlite", work / "index", work / "model"
    train = ["train", "bi-encoder", "--kb", work / "fixture.sqlite", "--train", f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}",
             "--out", model, "--epochs", "2", "--batch-size", "4", "--precision", "fp32"]
    subprocess.run(medlink("kb", "build", work / "fixture.sqlite", f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}", "-q"), check=True)
    subprocess.run(medlink("kb", "build", work / "annotate-kb.sqlite", f"biosyn:{medic}", "-q"), check=True)
    subprocess.run(medlink("index", "build", "--kb", work / "annotate-kb.sqlite", "--out", work / "annotate-index"), check=True, capture_output=True)
    corpus = work / "ncbi300.pubtator"
    blocks = [b for b in (SHARED_DATA / "ncbi-disease-pubtator" / "NCBItrainset_corpus.txt").read_text(encoding="utf-8").split("\n\n") if b.strip()]
    corpus.write_text("\n\n".join(blocks[:ABSTRACTS]) + "\n\n", encoding="utf-8")
    subprocess.run(medlink("kb", "build", work / "do.sqlite", f"obo:{SHARED_DATA / 'disease-ontology' / 'doid_2016-09-01.obo'}", "-q"), check=True)
    subprocess.run(medlink("kb", "build", work / "icd.sqlite", f"tsv=ICD10CM:{FIXTURES / 'align' / 'target.tsv'}", "-q"), check=True)
    from medlink.kb.store import KB

    do_concepts = KB.open(work / "do.sqlite").stats()["concepts"]
    jobs = {
        "kb build (MEDIC)": (medlink("kb", "build", kb, f"biosyn:{medic}", "-q"), check_kb, kb, None, True),
        "index build (MEDIC, lexical)": (medlink("index", "build", "--kb", kb, "--out", index), check_index, index, None, False),
        "train bi-encoder (fixtures)": (medlink(*train), check_model, model, medlink(*train, "--resume"), False),
    }
    for fmt, suffix in (("pubtator", "pubtator"), ("jsonl", "jsonl"), ("bioc", "xml")):
        out = work / f"annotated.{suffix}"
        jobs[f"annotate --out ({ABSTRACTS} NCBI abstracts to {fmt})"] = (
            medlink("annotate", "--index", work / "annotate-index", "--input", corpus, "--format", "pubtator", "--output-format", fmt, "--out", out),
            check_documents(fmt, ABSTRACTS), out, None, True)
    out = work / "do-icd.sssom.tsv"
    jobs["align --out (DO onto the ICD-10-CM fixture)"] = (
        medlink("align", "--source", work / "do.sqlite", "--target", work / "icd.sqlite", "--out", out, "-q"), check_sssom(do_concepts), out, None, True)
    return jobs


if __name__ == "__main__":
    main()

"""Every command that writes an output, run through the CLI (``python -m medlink ...``) with the output pointed at
something a user would lose: how many are refused with nothing changed, how many replace their own earlier output,
and every case that loses or changes a user's file, ends in a traceback, or is refused naming nothing.

    python benchmarks/robustness/output_paths.py [--workers 4] [--cpu-limit 30] [--commit REV] [--only NAME]

Commands: kb build / augment / unaugment, index build, annotate, score --errors, eval, tune, align and every
``train`` sub-command (pairs, bi-encoder, cross-encoder, ranker, tagger, selector, aligner with and without its
cross-encoder), on the test fixtures (tests/fixtures) with a few steps or one epoch. Targets (as many as apply):

  1  each input of the same run (a file, a folder, a file inside an input folder)
  2  an existing user text file; 2b one that starts with a blank line; 2c a user's own file in the output's format
  3  a user folder holding files
  4  a user folder holding a marker copied from a real output of that kind, beside the user's own files
  5  a real output folder of that kind in which the user also keeps MY_NOTES.txt (at its top and in a subfolder)
  6  a symlink to a user file (6a) or to a user folder (6b)
  7  an earlier output of the same command (the expected case: it must be replaced)

Each case runs in a fresh sandbox holding copies of the inputs and the user's files; every file below it is
checksummed (sha256) before and after. Outcomes: "refused, nothing changed" (a non-zero exit, no traceback, a
message that names the target), "replaced own output" (case 7), and the failures "user data lost or changed",
"traceback", "refused naming nothing", "refused, but wrote files", "own output refused"; a run that succeeds
without losing anything but writes into a user's folder is counted apart ("accepted, wrote beside user files").
A command whose first run costs more than ``--cpu-limit`` CPU seconds (user + system) is skipped with a note.
``--commit REV`` runs a clean ``git archive`` of REV's src/ (PYTHONPATH) instead of the installed medlink;
``--only`` runs the commands whose name holds NAME (nothing is published, nor with ``--no-publish``).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import ROOT, command_line, publish  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
TIMEOUT = 600.0  # seconds per command
OK = ("refused, nothing changed", "replaced own output")
ACCEPTED = "accepted, wrote beside user files"
SCRATCH = re.compile(r"^\..*\.(lock|tmp)$")  # medlink's lock and staging names: ignored when they appear

USER_TEXT = "My notes: call the lab on Monday.\nNothing here is medlink's.\n"
USER_FOLDER = {"MY_NOTES.txt": USER_TEXT, "config.json": '{"theme": "dark", "mine": true}\n',
               "data/records.csv": "id,value\n1,42\n2,43\n"}
EXACT_CONFIG = {"generators": [{"name": "exact", "type": "exact"}, {"name": "words", "type": "exact", "params": {"words": True}}]}
USER_SSSOM = ("# curie_map:\n#   DOID: http://purl.obolibrary.org/obo/DOID_\n#   ICD10CM: http://purl.bioontology.org/ontology/ICD10CM/\n"
              "# mapping_set_id: https://example.org/my-curated-mappings\n# license: https://creativecommons.org/licenses/by/4.0/\n"
              "subject_id\tpredicate_id\tobject_id\tmapping_justification\n"
              "DOID:9352\tskos:exactMatch\tICD10CM:E11\tsemapv:ManualMappingCuration\n")


# ---------------------------------------------------------------------------------------------------------------- specs

@dataclass
class Input:
    """An input of a command: where it comes from (``fixture:REL``, ``prep:NAME`` or ``base:SPEC``), where its copy
    sits in the sandbox, and how the case list names it."""
    origin: str
    rel: str
    label: str


@dataclass
class Spec:
    name: str
    kind: str  # "file" or "folder"
    inputs: list[Input]
    argv: Callable[[Callable[[str], str], str], list[str]]  # (sandbox path of an input's rel, output) -> arguments
    marker: str | None = None  # a folder output's file that marks it as medlink's (case 4 copies it)
    inner: list[tuple[str, str]] = field(default_factory=list)  # (label, rel): files inside input folders, as targets
    own_format: tuple[str, Callable[[Path], None]] | None = None  # case 2c: (label, writer of the user's file)


def user_sqlite(path: Path) -> None:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE expenses (day TEXT, amount REAL)")
    connection.execute("INSERT INTO expenses VALUES ('2026-01-02', 12.5)")
    connection.commit()
    connection.close()


def writer(text: str) -> Callable[[Path], None]:
    return lambda path: path.write_text(text, encoding="utf-8")


def copier(source: Path) -> Callable[[Path], None]:
    return lambda path: shutil.copyfile(source, path)


def specs() -> list[Spec]:
    dictionary = Input("fixture:eval/dictionary.txt", "in/dictionary.txt", "--source biosyn:PATH")
    fx = Input("prep:fx.sqlite", "in/kb.sqlite", "--kb (a KB file)")
    mentions = Input("fixture:eval/biosyn_processed", "in/mentions", "biosyn:FOLDER of mentions")
    index = Input("prep:index", "in/index", "--index (an index folder)")
    dev_docs = Input("fixture:tagger/dev.pubtator", "in/dev.pubtator", "documents (PubTator)")
    names = Input("prep:names.txt", "in/names.txt", "--exclude-names FILE")
    src, tgt = Input("prep:src.sqlite", "in/source.sqlite", "--source KB"), Input("prep:tgt.sqlite", "in/target.sqlite", "--target KB")
    gold_map = Input("fixture:align/gold.tsv", "in/gold.tsv", "--gold mappings TSV")
    small_jsonl = copier(FIXTURES / "documents" / "small.jsonl")
    quick_bi = ["--epochs", "1", "--batch-size", "2", "--max-steps-per-epoch", "1", "--precision", "fp32", "-q"]
    return [
        Spec("kb build", "file", [dictionary], lambda p, out: ["kb", "build", "--out", out, f"biosyn:{p('in/dictionary.txt')}", "-q"],
             own_format=("a user's own SQLite database", user_sqlite)),
        Spec("kb augment", "file", [Input("prep:src.sqlite", "in/source.sqlite", "KB (augmented)"),
                                    Input("base:align", "in/map.sssom.tsv", "--from SSSOM"), Input("prep:tgt.sqlite", "in/target.sqlite", "--with KB")],
             lambda p, out: ["kb", "augment", p("in/source.sqlite"), "--from", p("in/map.sssom.tsv"), "--with", p("in/target.sqlite"), "--out", out, "-q"],
             own_format=("a user's own SQLite database", user_sqlite)),
        Spec("kb unaugment", "file", [Input("base:kb augment", "in/augmented.sqlite", "KB (augmented)")],
             lambda p, out: ["kb", "unaugment", p("in/augmented.sqlite"), "--out", out],
             own_format=("a user's own SQLite database", user_sqlite)),
        Spec("index build", "folder", [fx, Input("prep:exact.json", "in/config.json", "--config FILE"), mentions],
             lambda p, out: ["index", "build", "--kb", p("in/kb.sqlite"), "--out", out, "--config", p("in/config.json"), "--memory",
                             f"biosyn:{p('in/mentions')}", "--calibrate", "none", "-q"], marker="manifest.json"),
        Spec("annotate", "file", [index, dev_docs, names],
             lambda p, out: ["annotate", "--index", p("in/index"), "--input", p("in/dev.pubtator"), "--format", "pubtator",
                             "--output-format", "jsonl", "--exclude-names", p("in/names.txt"), "--out", out, "-q"],
             inner=[("a file inside --index (manifest.json)", "in/index/manifest.json")],
             own_format=("a user's JSONL documents (not this run's input)", small_jsonl)),
        Spec("score --errors", "file", [Input("fixture:tagger/dev.pubtator", "in/gold.pubtator", "--gold"),
                                        Input("prep:predicted.pubtator", "in/predicted.pubtator", "--predicted"), fx,
                                        Input("prep:baseline.jsonl", "in/baseline.jsonl", "--baseline")],
             lambda p, out: ["score", "--gold", f"pubtator:{p('in/gold.pubtator')}", "--predicted", f"pubtator:{p('in/predicted.pubtator')}",
                             "--kb", p("in/kb.sqlite"), "--baseline", f"jsonl:{p('in/baseline.jsonl')}", "--errors", out],
             own_format=("a user's JSONL documents (not this run's input)", small_jsonl)),
        Spec("eval", "folder", [index, mentions, fx, Input("prep:report", "in/baseline-report", "--baseline (an eval report folder)")],
             lambda p, out: ["eval", "--index", p("in/index"), "--dataset", f"biosyn:{p('in/mentions')}", "--train", f"biosyn:{p('in/mentions')}",
                             "--kb", p("in/kb.sqlite"), "--baseline", p("in/baseline-report"), "--out", out, "-q"], marker="report.json"),
        Spec("tune", "file", [index, mentions, fx],
             lambda p, out: ["tune", "--index", p("in/index"), "--dev", f"biosyn:{p('in/mentions')}", "--kb", p("in/kb.sqlite"), "--out", out, "-q"],
             inner=[("a file inside --index (manifest.json)", "in/index/manifest.json")],
             own_format=("a user's hand-written index config (JSON with generators)", writer(json.dumps(EXACT_CONFIG, indent=1) + "\n"))),
        Spec("align", "file", [src, Input("fixture:align/target.tsv", "in/target.tsv", "--target tsv=ICD10CM:PATH")],
             lambda p, out: ["align", "--source", p("in/source.sqlite"), "--target", f"tsv=ICD10CM:{p('in/target.tsv')}", "--out", out, "-q"],
             own_format=("a user's hand-curated SSSOM TSV", writer(USER_SSSOM))),
        Spec("train pairs", "folder", [fx], lambda p, out: ["train", "pairs", "--kb", p("in/kb.sqlite"), "--out", out, "-q"], marker="pairs.json"),
        Spec("train bi-encoder", "folder", [fx, mentions],
             lambda p, out: ["train", "bi-encoder", "--kb", p("in/kb.sqlite"), "--train", f"biosyn:{p('in/mentions')}", "--out", out, *quick_bi],
             marker="training.json"),
        Spec("train cross-encoder", "folder", [fx, mentions, Input("base:train bi-encoder", "in/bi-encoder", "--candidates-model (a bi-encoder folder)")],
             lambda p, out: ["train", "cross-encoder", "--kb", p("in/kb.sqlite"), "--train", f"biosyn:{p('in/mentions')}", "--candidates-model",
                             p("in/bi-encoder"), "--out", out, "--epochs", "1", "--batch-size", "2", "--candidates", "2", "--precision", "fp32", "-q"],
             marker="training.json"),
        Spec("train ranker", "folder", [Input("prep:aap-index", "in/index", "--index (an index folder)"),
                                        Input("fixture:eval/askapatient/AskAPatient.fold-0.train.txt", "in/train.txt", "--train askapatient:PATH")],
             lambda p, out: ["train", "ranker", "--index", p("in/index"), "--train", f"askapatient:{p('in/train.txt')}", "--out", out, "--epochs", "1",
                             "--threads", "1", "-q"], marker="medlink_ranker.json"),
        Spec("train tagger", "folder", [Input("fixture:tagger/train.pubtator", "in/train.pubtator", "--train pubtator:PATH")],
             lambda p, out: ["train", "tagger", "--train", f"pubtator:{p('in/train.pubtator')}", "--out", out, "--epochs", "1", "--layers", "1",
                             "--precision", "fp32", "-q"], marker="medlink_tagger.json"),
        Spec("train selector", "file", [Input("base:train tagger", "in/tagger", "--tagger (a tagger folder)"), index, dev_docs, names],
             lambda p, out: ["train", "selector", "--tagger", p("in/tagger"), "--index", p("in/index"), "--documents", f"pubtator:{p('in/dev.pubtator')}",
                             "--exclude-names", p("in/names.txt"), "--out", out, "--folds", "2", "-q"],
             inner=[("a file inside --tagger (medlink_tagger.json)", "in/tagger/medlink_tagger.json"),
                    ("a file inside --tagger (config.json)", "in/tagger/config.json")],
             own_format=("a user's own JSON settings file", writer('{"format": "my-settings", "threshold": 0.5}\n'))),
        Spec("train aligner (calibration only)", "folder", [src, tgt, gold_map],
             lambda p, out: ["train", "aligner", "--source", p("in/source.sqlite"), "--target", p("in/target.sqlite"), "--gold", p("in/gold.tsv"),
                             "--out", out, "--no-cross-encoder", "-q"], marker="medlink_aligner.json"),
        Spec("train aligner (cross-encoder)", "folder", [src, tgt, gold_map],
             lambda p, out: ["train", "aligner", "--source", p("in/source.sqlite"), "--target", p("in/target.sqlite"), "--gold", p("in/gold.tsv"),
                             "--out", out, "--bi-encoder", "none", "--epochs", "1", "--max-steps-per-epoch", "1", "--batch-size", "2",
                             "--layers", "1", "--precision", "fp32", "-q"], marker="medlink_aligner.json"),
    ]


# ----------------------------------------------------------------------------------------------------------- running

@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str
    seconds: float
    cpu_seconds: float


class Runner:
    def __init__(self, work: Path, source: Path | None, workers: int):
        self.work = work
        self.env = {**os.environ, "MEDLINK_HOME": str(work / "home"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    "PYTHONWARNINGS": "ignore"}
        if workers > 1:  # torch's threads would otherwise fight over the cores the parallel cases share
            self.env.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
        if source is not None:
            self.env["PYTHONPATH"] = os.pathsep.join([str(source), *filter(None, [os.environ.get("PYTHONPATH")])])
        self.logs = work / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self._count = 0
        self._lock = threading.Lock()

    def medlink(self, args: list[str], cwd: Path) -> Ran:
        """Run ``python -m medlink ARGS``; wall and CPU (user + system) seconds of the child and what it wrote."""
        with self._lock:
            self._count += 1
            stem = self.logs / str(self._count)
        began = time.perf_counter()
        with open(f"{stem}.out", "wb") as out, open(f"{stem}.err", "wb") as err:
            process = subprocess.Popen([sys.executable, "-m", "medlink", *map(str, args)], stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                       cwd=cwd, env=self.env, start_new_session=True)
            timer = threading.Timer(TIMEOUT, lambda: os.killpg(process.pid, signal.SIGKILL))
            timer.start()
            try:
                _, status, usage = os.wait4(process.pid, 0)
            finally:
                timer.cancel()
            process.returncode = os.waitstatus_to_exitcode(status)
        read = lambda suffix: Path(f"{stem}.{suffix}").read_text(encoding="utf-8", errors="replace")  # noqa: E731
        return Ran(process.returncode, read("out"), read("err"), time.perf_counter() - began, usage.ru_utime + usage.ru_stime)


def snapshot(root: Path) -> dict[str, str]:
    """Every entry below ``root``: a file's sha256, a symlink's target (not followed), a folder's presence."""
    found = {}
    for folder, directories, files in os.walk(root):
        for name in list(directories):
            path = Path(folder, name)
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[relative] = "symlink -> " + os.readlink(path)
                directories.remove(name)
            else:
                found[relative + "/"] = "folder"
        for name in files:
            path = Path(folder, name)
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[relative] = "symlink -> " + os.readlink(path)
            else:
                digest = hashlib.sha256()
                with open(path, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
                found[relative] = digest.hexdigest()
    return found


def copy_in(origin: Path, destination: Path) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    if origin.is_dir():
        shutil.copytree(origin, destination, symlinks=True)
    else:
        shutil.copy2(origin, destination)


def user_folder(path: Path, extra: dict[str, str] | None = None) -> None:
    for relative, text in {**USER_FOLDER, **(extra or {})}.items():
        (path / relative).parent.mkdir(parents=True, exist_ok=True)
        (path / relative).write_text(text, encoding="utf-8")


# ------------------------------------------------------------------------------------------------------------ suite

class Suite:
    def __init__(self, work: Path, runner: Runner, cpu_limit: float, chosen: list[Spec], keep: bool):
        self.work, self.runner, self.cpu_limit, self.keep = work, runner, cpu_limit, keep
        self.cpu_seconds = 0.0  # the children's, user + system: what the suite costs on an idle machine
        self.specs = {spec.name: spec for spec in chosen}
        self.prep_dir, self.base_dir, self.cases_dir = work / "prep", work / "base", work / "cases"
        for folder in (self.prep_dir, self.base_dir, self.cases_dir):
            folder.mkdir(parents=True, exist_ok=True)
        self.base: dict[str, Path] = {}  # spec -> its real output
        self.base_runs: dict[str, dict] = {}
        self.skipped: dict[str, str] = {}
        self.records: list[dict] = []
        self._lock = threading.Lock()

    # -- inputs built once
    def prep_jobs(self) -> dict[str, tuple[list[str], Callable[[], None]]]:
        p, fixture = self.prep_dir, FIXTURES

        def cli(*args):
            def run():
                ran = self.runner.medlink(list(args), p)
                with self._lock:
                    self.cpu_seconds += ran.cpu_seconds
                if ran.code != 0:
                    raise RuntimeError(f"prep: medlink {' '.join(map(str, args))} failed ({ran.code}):\n{ran.stderr[-1500:]}")
            return run

        def files():
            (p / "exact.json").write_text(json.dumps(EXACT_CONFIG, indent=1) + "\n", encoding="utf-8")
            (p / "names.txt").write_text("renal\n", encoding="utf-8")

        return {
            "files": ([], files),
            "fx.sqlite": ([], cli("kb", "build", "--out", p / "fx.sqlite", f"biosyn:{fixture / 'eval' / 'dictionary.txt'}", "-q")),
            "src.sqlite": ([], cli("kb", "build", "--out", p / "src.sqlite", f"obo:{fixture / 'align' / 'source.obo'}", "-q")),
            "tgt.sqlite": ([], cli("kb", "build", "--out", p / "tgt.sqlite", f"tsv=ICD10CM:{fixture / 'align' / 'target.tsv'}", "-q")),
            "aap.sqlite": ([], cli("kb", "build", "--out", p / "aap.sqlite", f"askapatient:{fixture / 'eval' / 'askapatient' / 'ontology.json'}", "-q")),
            "index": (["files", "fx.sqlite"], cli("index", "build", "--kb", p / "fx.sqlite", "--out", p / "index", "--config", p / "exact.json",
                                                  "--calibrate", "none", "-q")),
            "aap-index": (["aap.sqlite"], cli("index", "build", "--kb", p / "aap.sqlite", "--out", p / "aap-index", "--calibrate", "none", "-q")),
            "predicted.pubtator": (["index"], cli("annotate", "--index", p / "index", "--input", fixture / "tagger" / "dev.pubtator", "--format",
                                                  "pubtator", "--output-format", "pubtator", "--out", p / "predicted.pubtator", "-q")),
            "baseline.jsonl": (["index"], cli("annotate", "--index", p / "index", "--input", fixture / "tagger" / "dev.pubtator", "--format",
                                              "pubtator", "--output-format", "jsonl", "--out", p / "baseline.jsonl", "-q")),
            "report": (["index"], cli("eval", "--index", p / "index", "--dataset", f"biosyn:{fixture / 'eval' / 'biosyn_processed'}", "--out",
                                      p / "report", "-q")),
        }

    def origin(self, origin: str) -> Path:
        kind, _, name = origin.partition(":")
        if kind == "fixture":
            return FIXTURES / name
        if kind == "prep":
            return self.prep_dir / name
        return self.base[name]

    def sandbox(self, spec: Spec, folder: Path) -> Callable[[str], str]:
        """A fresh folder with copies of ``spec``'s inputs and a user's files; how to name an input's path in it."""
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for item in spec.inputs:
            copy_in(self.origin(item.origin), folder / item.rel)
        user = folder / "user"
        user.mkdir()
        (user / "notes.txt").write_text(USER_TEXT, encoding="utf-8")
        return lambda relative: str(folder / relative)

    def base_job(self, spec: Spec) -> None:
        """The command's real output (cases 5 and 7 copy it); a command too costly for the suite is skipped."""
        folder = self.base_dir / slug(spec.name)
        path = self.sandbox(spec, folder)
        out = folder / ("output" if spec.kind == "folder" else "output.out")
        ran = self.runner.medlink(spec.argv(path, str(out)), folder)
        with self._lock:
            self.cpu_seconds += ran.cpu_seconds
        print(f"     first run of {spec.name}: exit {ran.code} ({ran.seconds:.1f} s, {ran.cpu_seconds:.1f} CPU s)", flush=True)
        self.base_runs[spec.name] = {"seconds": round(ran.seconds, 1), "cpu_seconds": round(ran.cpu_seconds, 1), "exit": ran.code}
        if ran.code != 0 or not out.exists():
            raise RuntimeError(f"{spec.name}: its own run failed ({ran.code}):\n{ran.stderr[-1500:]}")
        if ran.cpu_seconds > self.cpu_limit:
            self.skipped[spec.name] = (f"its first run took {ran.cpu_seconds:.0f} CPU seconds ({ran.seconds:.0f} s wall), over --cpu-limit "
                                       f"{self.cpu_limit:g}")
        self.base[spec.name] = out

    # -- the cases of one command
    def cases(self, spec: Spec) -> list[tuple[str, str]]:
        """(case id, description) in order."""
        found = []
        for item in spec.inputs:
            found.append(("1 input: " + item.label, item.rel))
        for label, relative in spec.inner:
            found.append(("1 input: " + label, relative))
        found.append(("2 user text file", ""))
        if spec.kind == "file":  # a file an output file's content check might take for its own; a folder output refuses any file
            found.append(("2b user text file starting with a blank line", ""))
        if spec.own_format:
            found.append(("2c " + spec.own_format[0], ""))
        found.append(("3 user folder holding files", ""))
        if spec.kind == "folder":
            found += [(f"4 user folder with a copied {spec.marker} and own files", ""),
                      ("5 real output folder + the user's MY_NOTES.txt (top and subfolder)", "")]
        found += [("6a symlink to a user file", ""), ("6b symlink to a user folder", ""), ("7 earlier output of the same command", "")]
        return found

    def case_job(self, spec: Spec, case: str, relative: str) -> None:
        folder = self.cases_dir / slug(spec.name) / slug(case)
        path = self.sandbox(spec, folder)
        number = case.split(" ", 1)[0]
        exempt: Callable[[str], bool] = lambda entry: False  # noqa: E731 - entries that may change (the command's own output)
        if number == "1":
            target = folder / relative
        elif number in ("2", "2b", "2c"):
            target = folder / "user" / ("my-file.dat" if number == "2c" else "notes-blank-first.txt" if number == "2b" else "notes.txt")
            if number == "2b":
                target.write_text("\n" + USER_TEXT, encoding="utf-8")
            elif number == "2c":
                spec.own_format[1](target)
        elif number == "3":
            target = folder / "user" / "project"
            user_folder(target)
        elif number == "4":
            target = folder / "user" / "project"
            user_folder(target)
            shutil.copy2(self.base[spec.name] / spec.marker, target / spec.marker)
        elif number == "5":
            target = folder / "output"
            copy_in(self.base[spec.name], target)
            subfolders = sorted(p for p in target.rglob("*") if p.is_dir() and not p.name.startswith("."))
            inner = subfolders[0] if subfolders else target / "notes"
            inner.mkdir(exist_ok=True)
            (target / "MY_NOTES.txt").write_text(USER_TEXT, encoding="utf-8")
            (inner / "MY_NOTES.txt").write_text(USER_TEXT, encoding="utf-8")
            top = target.relative_to(folder).as_posix()
            exempt = lambda entry: entry.startswith(top + "/") and not entry.endswith("MY_NOTES.txt") and entry != inner.relative_to(folder).as_posix() + "/"  # noqa: E731
        elif number in ("6a", "6b"):
            if number == "6b":
                user_folder(folder / "user" / "project")
            target = folder / ("link-to-notes.txt" if number == "6a" else "link-to-project")
            target.symlink_to(Path("user") / ("notes.txt" if number == "6a" else "project"))
        else:  # 7
            target = folder / ("output" if spec.kind == "folder" else "output.out")
            copy_in(self.base[spec.name], target)
            top = target.relative_to(folder).as_posix()
            exempt = lambda entry: entry == top or entry == top + "/" or entry.startswith(top + "/")  # noqa: E731
        before = snapshot(folder)
        args = spec.argv(path, str(target))
        ran = self.runner.medlink(args, folder)
        after = snapshot(folder)
        record = judge(spec, case, number, folder, target, before, after, exempt, ran)
        record["command"] = "medlink " + " ".join(str(a).replace(str(folder), "$CASE") for a in args)
        if not self.keep:
            shutil.rmtree(folder, ignore_errors=True)
        with self._lock:
            self.records.append(record)
            self.cpu_seconds += ran.cpu_seconds
            print(f"{len(self.records):4d} {record['outcome']:<34} {spec.name} / {case} ({ran.seconds:.1f} s, {ran.cpu_seconds:.1f} CPU s)", flush=True)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def refusal_message(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith("error")]
    return (errors or lines or [""])[-1]


def judge(spec: Spec, case: str, number: str, folder: Path, target: Path, before: dict, after: dict, exempt, ran: Ran) -> dict:
    protected = [entry for entry in before if not exempt(entry)]
    lost = sorted(entry for entry in protected if entry not in after)
    changed = sorted(entry for entry in protected if entry in after and after[entry] != before[entry])
    added = sorted(entry for entry in after if entry not in before and not SCRATCH.match(entry.rstrip("/").rsplit("/", 1)[-1]))
    message = refusal_message(ran.stderr)
    traceback = "Traceback (most recent call last)" in ran.stderr
    names_target = target.name in message or str(target) in message
    if traceback:
        outcome = "traceback"
    elif lost or changed:
        outcome = "user data lost or changed"
    elif ran.code != 0:
        outcome = ("own output refused" if number == "7" else "refused, but wrote files" if added and number != "7"
                   else "refused, nothing changed" if names_target else "refused naming nothing")
    elif number == "7":
        outcome = "replaced own output" if target.exists() else "own output not written"
    else:
        outcome = ACCEPTED
    return {"spec": spec.name, "case": case, "target": target.relative_to(folder).as_posix(), "exit": ran.code, "outcome": outcome,
            "message": message[:400], "lost": lost[:20], "changed": changed[:20], "added": added[:20],
            "seconds": round(ran.seconds, 1), "cpu_seconds": round(ran.cpu_seconds, 1),
            **({"stderr": ran.stderr[-1500:]} if outcome not in OK else {})}


# ----------------------------------------------------------------------------------------------------------- DAG

def run_jobs(jobs: dict[str, tuple[list[str], Callable[[], None], float]], workers: int) -> dict[str, str]:
    """Run ``name -> (dependencies, function, priority)`` in a thread pool, each once its dependencies have succeeded,
    the highest priority first; a job whose dependency failed is not run. Returns name -> error for what failed."""
    done: set[str] = set()
    failed: dict[str, str] = {}
    running = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        while True:
            for name, (needs, _, _) in jobs.items():
                if name not in done and name not in failed and name not in running.values() and any(n in failed for n in needs):
                    failed[name] = "not run: " + ", ".join(n for n in needs if n in failed) + " failed"
            ready = sorted((name for name, (needs, _, _) in jobs.items() if name not in done and name not in failed
                            and name not in running.values() and all(n in done for n in needs)), key=lambda n: -jobs[n][2])
            for name in ready[: max(0, workers - len(running))]:
                running[pool.submit(jobs[name][1])] = name
            if not running:
                break
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in finished:
                name = running.pop(future)
                error = future.exception()
                if error is None:
                    done.add(name)
                else:
                    failed[name] = str(error)[-2000:]
                    print(f"FAILED {name}: {str(error)[-600:]}", flush=True)
    return failed


PREP_MADE_BY = {"prep:names.txt": "prep:files", "prep:exact.json": "prep:files"}  # prep outputs not named after their job
HEAVY = {"train bi-encoder": 9, "train cross-encoder": 10, "train aligner (cross-encoder)": 10, "train tagger": 8, "train selector": 7,
         "train ranker": 6, "align": 5, "index build": 4, "eval": 4}  # scheduling order: the long runs first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=4, help="Cases run at once (each medlink process on one thread).")
    parser.add_argument("--cpu-limit", type=float, default=30.0, help="Skip a command whose first run takes more CPU seconds than this.")
    parser.add_argument("--commit", default=None, help="Run a clean export of this commit's src/ instead of the installed medlink.")
    parser.add_argument("--only", default=None, help="Run only the commands whose name holds this (nothing is published).")
    parser.add_argument("--no-publish", action="store_true", help="Print the outcomes only.")
    parser.add_argument("--keep", default=None, help="Work in this folder and keep every case's sandbox (default: a temporary folder, removed).")
    args = parser.parse_args()
    started = time.perf_counter()
    chosen = [spec for spec in specs() if not args.only or args.only in spec.name]
    names = {spec.name for spec in chosen}
    for spec in list(chosen):  # what the chosen ones read from other commands' outputs
        for item in spec.inputs:
            kind, _, name = item.origin.partition(":")
            if kind == "base" and name not in names:
                chosen.append(next(s for s in specs() if s.name == name))
                names.add(name)
    with tempfile.TemporaryDirectory(prefix="medlink-output-paths-") as temporary:
        work = Path(args.keep) if args.keep else Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        source, tested = None, None
        if args.commit:
            tested = subprocess.run(["git", "rev-parse", "--short", args.commit], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
            source = work / "source"
            shutil.rmtree(source, ignore_errors=True)
            source.mkdir(parents=True)
            archive = subprocess.run(["git", "archive", args.commit, "src"], cwd=ROOT, capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
            source = source / "src"
        runner = Runner(work, source, args.workers)
        suite = Suite(work, runner, args.cpu_limit, chosen, bool(args.keep))
        jobs: dict[str, tuple[list[str], Callable[[], None], float]] = {}
        for name, (needs, function) in suite.prep_jobs().items():
            jobs["prep:" + name] = (["prep:" + n for n in needs], function, 20)
        for spec in chosen:
            needs = sorted({PREP_MADE_BY.get(item.origin, item.origin) for item in spec.inputs if not item.origin.startswith("fixture:")})
            jobs["base:" + spec.name] = (needs + ["prep:files"], lambda spec=spec: suite.base_job(spec), 15 + HEAVY.get(spec.name, 0))

        def case_job(spec: Spec, case: str, relative: str) -> Callable[[], None]:
            def run():
                if spec.name in suite.skipped:
                    return
                suite.case_job(spec, case, relative)
            return run

        for spec in chosen:
            if args.only and args.only not in spec.name:  # run only for what the chosen ones read: no cases
                continue
            for case, relative in suite.cases(spec):
                jobs[f"case:{spec.name}:{case}"] = (["base:" + spec.name], case_job(spec, case, relative), HEAVY.get(spec.name, 0))
        failed = run_jobs(jobs, args.workers)
        seconds = time.perf_counter() - started

    order = {spec.name: i for i, spec in enumerate(specs())}
    records = sorted(suite.records, key=lambda r: (order[r["spec"]], r["case"]))
    by_command: dict[str, dict[str, str]] = {}
    for record in records:
        by_command.setdefault(record["spec"], {})[record["case"]] = record["outcome"]
    totals = collections.Counter(record["outcome"] for record in records)
    failures = [record for record in records if record["outcome"] not in OK and record["outcome"] != ACCEPTED]
    accepted = [record for record in records if record["outcome"] == ACCEPTED]
    for record in records:
        if record["outcome"] not in OK:
            print(f"[{record['outcome']}] {record['spec']} / {record['case']}: exit {record['exit']}; lost {record['lost']} changed "
                  f"{record['changed']} added {record['added'][:6]}\n    {record['command']}\n    {record['message']}", flush=True)
    for name, cases in by_command.items():
        print(f"{name}: {dict(collections.Counter(cases.values()))}", flush=True)
    print(f"{len(records)} cases: {dict(totals)}; {len(failures)} failures; {seconds:.0f} s ({suite.cpu_seconds:.0f} CPU s in medlink runs)", flush=True)
    if failed:
        print("jobs that failed:", json.dumps(failed, indent=1), flush=True)
    if args.only or args.no_publish:
        return
    by_case: dict[str, collections.Counter] = {}
    for record in records:
        by_case.setdefault(record["case"].split(" ", 1)[0], collections.Counter())[record["outcome"]] += 1
    publish("output_paths", {
        **({"commit": tested} if tested else {}),  # what ran: the clean export, not the working tree's HEAD
        "command": command_line(__file__, sys.argv[1:]),
        "tested_source": f"git archive {tested} src (clean)" if tested else "the installed medlink (working tree)",
        "cases": len(records), "total": dict(totals), "failure_count": len(failures),
        "by_command": {name: {"outcomes": dict(collections.Counter(cases.values())), "cases": cases} for name, cases in by_command.items()},
        "by_case": {number: dict(counts) for number, counts in sorted(by_case.items())},
        "failures": failures, "accepted": accepted, "skipped": suite.skipped, "first_runs": suite.base_runs,
        "jobs_failed": failed, "workers": args.workers, "cpu_limit": args.cpu_limit, "seconds": round(seconds, 1),
        "medlink_cpu_seconds": round(suite.cpu_seconds, 1), "load_average_at_end": os.getloadavg(),
        "records": [{k: v for k, v in record.items() if k != "stderr"} for record in records],
    })


if __name__ == "__main__":
    main()

"""CPU cost of dense linking: encoding throughput and end-to-end dense linking speed.

    python benchmarks/scale/dense_speed.py [--model PATH] [--repeats 3] [--avx2-only --section dense_speed_avx2]
    python benchmarks/scale/dense_speed.py --avx2-only --first-use fp32,auto --startup 5 [--code-at COMMIT] --skip-encoding --section NAME
    python benchmarks/scale/dense_speed.py --startup 5 --startup-index default --skip-encoding --skip-linking --section NAME

Encoding: 10,000 MEDIC names (BioSyn train dictionary) with precision auto (what this machine's probe
chose), bf16 and fp32, 1 and 2 threads, batches of 64, 128 (the default) and 256 texts grouped by token
count, medians over repeats; with each row, its ratio to auto / 2 threads / batch 128 measured in the
same run. Linking: a dense-only index over the same KB (vectors from the encode cache), the 960 NCBI
test mentions linked in one call after loading (fresh process for the peak RSS). ``--avx2-only`` runs
every child with MKL, oneDNN and ATen limited to AVX2 (MKL_ENABLE_INSTRUCTIONS, ONEDNN_MAX_CPU_ISA,
ATEN_CPU_CAPABILITY): what a CPU without AVX-512 or bf16 instructions does, on this one.

``--first-use P,...``: for each precision, the default-dense index's first use in a fresh ``MEDLINK_HOME`` (default KB,
lexical stages, encoding ~150k names, calibration fit), ``medlink link --index default-dense --precision P``: wall time
and the build's phases as it logs them. ``--startup N``: then, with the last of those homes (warm), N fresh processes of
``medlink link --index default-dense "heart attack"`` (wall time) and N of a child that times the same steps one by one
(imports, default-index check, model load, FAISS read, the rest of the index, first link). ``--code-at COMMIT`` runs
the startup children on that commit's code too (a temporary git worktree), interleaved: a before/after.
``--startup-index default`` times the lexical default index's warm start instead (a first run builds it if missing).
``--skip-encoding`` / ``--skip-linking`` leave out the encoding grid / the MEDIC linking run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
import medlink  # noqa: E402
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import THROUGHPUT, command_line, measure_in_fresh_process, publish  # noqa: E402
from medlink.eval import load_dataset  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.settings import medlink_home  # noqa: E402

# (threads, precision, batch); the first is the baseline
ENCODINGS = [(2, "auto", 128), (2, "fp32", 128), (2, "bf16", 128), (2, "int8", 128), (2, "auto", 64), (2, "auto", 256), (1, "fp32", 128),
             (1, "bf16", 128), (1, "int8", 128)]
AVX2_ONLY = {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}

ENCODE = """
import json, statistics, sys, time, torch
from medlink.encoders import Encoder
names = json.loads(open(sys.argv[1]).read()); threads, precision, repeats, batch = int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[6])
torch.set_num_threads(threads)
encoder = Encoder(sys.argv[5] or None, precision=precision)
encoder.encode(names[:512])
rates = []
for _ in range(repeats):
    started = time.perf_counter(); encoder.encode(names, batch_size=batch); rates.append(len(names) / (time.perf_counter() - started))
print(json.dumps({"names_per_second": statistics.median(rates), "resolved": encoder.precision, "capability": torch.backends.cpu.get_cpu_capability()}))
"""

STARTUP = """
import time
T0 = time.perf_counter()
import json, sys
marks = {}
def mark(name, since):
    marks[name] = round(time.perf_counter() - since, 4)
INDEX = sys.argv[1]
DENSE = INDEX == "default-dense"  # the lexical default index needs neither torch nor faiss: not imported for it
for module in ("medlink.cli", "torch", "faiss") if DENSE else ("medlink.cli",):  # transformers only if the encoder imports it
    t = time.perf_counter(); __import__(module); mark("import " + module, t)
spent = {"model load": 0.0, "FAISS read": 0.0} if DENSE else {}
def timed(key, fn):
    def wrapper(*a, **k):
        s = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spent[key] += time.perf_counter() - s
    return wrapper
if DENSE:
    from medlink.encoders import transformer
    from medlink.retrieval import dense
    transformer.Encoder.__init__ = timed("model load", transformer.Encoder.__init__)
    dense.read_index = timed("FAISS read", dense.read_index)
from medlink.linking.index import resolve_index
from medlink.linking.linker import Linker
t = time.perf_counter(); directory = resolve_index(INDEX); mark("default index check", t)
t = time.perf_counter(); linker = Linker.load(directory); load = time.perf_counter() - t
marks.update({k: round(v, 4) for k, v in spent.items()}); marks["rest of index load"] = round(load - sum(spent.values()), 4)
t = time.perf_counter(); top = linker.link(["heart attack"], k=5)[0].candidates[0].concept_id; mark("first link", t)
marks["in process"] = round(time.perf_counter() - T0, 4)
print(json.dumps({"marks": marks, "precisions": linker.precisions(), "top": top}))
"""


def first_use(precision: str, env: dict, workdir: Path) -> dict:
    """The default-dense index's first use in a fresh MEDLINK_HOME: wall time and the phases the build logs."""
    home = Path(tempfile.mkdtemp(prefix=f"first-use-{precision}-", dir=workdir))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "medlink", "link", "--index", "default-dense", "--precision", precision, "can't sleep"],
                         capture_output=True, text=True, check=True, env={**env, "MEDLINK_HOME": str(home)})
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime  # the machine is shared: CPU time is steadier than wall
    phases = {m.group(1): float(m.group(2)) for m in re.finditer(r"medlink: (.+?): done in ([\d.]+) s", out.stderr)}
    dense = next((v for k, v in phases.items() if k.startswith("index: dense")), None)
    names = re.search(r"index: dense \(dense\) over ([\d,]+) names", out.stderr)
    row = {"precision": precision, "seconds": seconds, "cpu_seconds": cpu, "load_average_before": os.getloadavg()[0], "phases": phases, "home": home,
           "dense_names": int(names.group(1).replace(",", "")) if names else None, "dense_seconds": dense}
    print({k: v for k, v in row.items() if k != "home"}, flush=True)
    return row


def startup(home: Path, env: dict, repeats: int, codes: dict[str, Path | None], index: str = "default-dense") -> list[dict]:
    """Warm start of ``medlink link --index INDEX "heart attack"`` (default-dense or the lexical default) with each code
    ({label: worktree, None: this checkout}), interleaved (load drifts on a shared machine): wall time, and each step in
    a timing child. One untimed run first builds the index if the home lacks it."""
    env = {**env, "MEDLINK_HOME": str(home)}
    for code in codes.values():  # as pip installs it: bytecode written beforehand (PYTHONDONTWRITEBYTECODE would recompile at every start)
        source = code / "src" if code else Path(medlink.__file__).parent
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], check=True, capture_output=True)
    command = [sys.executable, "-m", "medlink", "link", "--index", index, "heart attack"]
    subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    walls, children = {label: [] for label in codes}, {label: [] for label in codes}
    for _ in range(repeats):
        for label, code in codes.items():
            run_env = {**env, "PYTHONPATH": str(code / "src")} if code is not None else env
            started = time.perf_counter()
            subprocess.run(command, capture_output=True, text=True, check=True, env=run_env)
            walls[label].append(time.perf_counter() - started)
            out = subprocess.run([sys.executable, "-c", STARTUP, index], capture_output=True, text=True, check=True, env=run_env)
            children[label].append(json.loads(out.stdout.strip().splitlines()[-1]))
    results = []
    for label in codes:
        runs = children[label]
        steps = {key: statistics.median(c["marks"][key] for c in runs) for key in runs[0]["marks"]}
        results.append({"code": label, "index": index, "cli_seconds_median": statistics.median(walls[label]), "cli_seconds_all": [round(w, 3) for w in walls[label]],
                        "steps_median": steps, "precisions": runs[0]["precisions"], "top": runs[0]["top"], "repeats": repeats})
        print(results[-1], flush=True)
    return results


@contextmanager
def code_at(commit: str | None):
    """A temporary git worktree of ``commit`` (None: nothing made)."""
    if commit is None:
        yield None
        return
    root = Path(__file__).resolve().parents[2]
    folder = Path(tempfile.mkdtemp(prefix="medlink-code-")) / "tree"
    subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(folder), commit], check=True, capture_output=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(folder)], check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--avx2-only", action="store_true", help="limit MKL, oneDNN and ATen to AVX2 in every child process")
    parser.add_argument("--section", default="dense_speed")
    parser.add_argument("--names", type=int, default=10_000, help="how many MEDIC names each encoding row encodes")
    parser.add_argument("--first-use", default="", help="comma-separated precisions: time default-dense's first use with each")
    parser.add_argument("--startup", type=int, default=0, help="fresh warm-start processes of medlink link --index default-dense")
    parser.add_argument("--code-at", default=None, help="also run the startup children on this commit's code (the before)")
    parser.add_argument("--startup-index", default="default-dense", choices=("default-dense", "default"), help="the index --startup times")
    parser.add_argument("--skip-encoding", action="store_true")
    parser.add_argument("--skip-linking", action="store_true")
    args = parser.parse_args()
    env = {**os.environ, **(AVX2_ONLY if args.avx2_only else {})}
    args.workdir.mkdir(parents=True, exist_ok=True)
    first_uses = [first_use(p, env, args.workdir) for p in args.first_use.split(",") if p]
    started_up = None
    if args.startup:
        with code_at(args.code_at) as code:
            codes = {**({args.code_at: code} if code else {}), "this commit": None}
            started_up = startup(first_uses[-1]["home"] if first_uses else medlink_home(), env, args.startup, codes, args.startup_index)
    for row in first_uses:
        shutil.rmtree(row.pop("home"), ignore_errors=True)
    kb = ncbi_kb(args.workdir, "train")
    names = [kb.normalize(text) for _, text, _ in kb.iter_names()][:: 7][: args.names]
    names_file = args.workdir / "speed-names.json"
    names_file.write_text(json.dumps(names))
    encoding = []
    for threads, precision, batch in ENCODINGS if not args.skip_encoding else ():
        out = subprocess.run([sys.executable, "-c", ENCODE, str(names_file), str(threads), precision, str(args.repeats), args.model,
                              str(batch)], capture_output=True, text=True, check=True, env=env)
        encoding.append({"threads": threads, "precision": precision, "batch": batch, **json.loads(out.stdout.strip().splitlines()[-1])})
        encoding[-1]["ratio"] = encoding[-1]["names_per_second"] / encoding[0]["names_per_second"]
        print(encoding[-1], flush=True)
    linking = None if args.skip_linking else link_speed(args, kb, env)
    publish(args.section, {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "encoded_names": len(names),
                           "isa_limit": "AVX2 (MKL, oneDNN, ATen limited; simulated on this CPU)" if args.avx2_only else None,
                           "kb_names": kb.stats()["names"], "encoding": encoding, "linking": linking,
                           "first_use": first_uses, "startup": started_up})


def link_speed(args, kb, env) -> dict:
    """A dense-only index over MEDIC (built in a child), then NCBI test's mention parts linked in a fresh process."""
    index = args.workdir / "dense-speed-index"
    config = LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "names": "kb", "params": {"model": args.model or None}}],
                                     "k_per_generator": 32})
    config_file = args.workdir / "dense-speed-config.json"
    config_file.write_text(json.dumps(config.to_dict()))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "medlink", "index", "build", "--kb", str(kb.path), "--config", str(config_file), "--out", str(index)],
                   check=True, env=env, capture_output=True)
    build = time.perf_counter() - started
    mentions = args.workdir / "ncbi-test-mentions.txt"
    mentions.write_text("\n".join(p for m in load_dataset(ncbi_split("test")) for p in m.parts) + "\n")
    link = measure_in_fresh_process([sys.executable, str(THROUGHPUT), str(index), str(mentions), str(args.repeats), "10"], 1,
                                    env=AVX2_ONLY if args.avx2_only else None)
    linking = {**json.loads(link["stdout"]), "peak_rss_mb": link["peak_rss_mb_median"], "index_build_seconds": build}
    print(linking, flush=True)
    return linking


if __name__ == "__main__":
    main()

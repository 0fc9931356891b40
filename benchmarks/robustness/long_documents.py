"""One long document through ``medlink annotate``, as a user runs it: wall time, peak RSS and the progress lines it
writes, at 1, 2 and 10 MB, to show that memory stays bounded by the annotator's window rather than the document.

    python benchmarks/robustness/long_documents.py [--sizes 1,2,10] [--corpora abstracts,dense] [--label after]
                                                   [--code COMMIT] [--timeout 1800] [--workdir DIR]

Documents (one each, ``MB`` = 1,048,576 characters, cut at the size):

- ``abstracts``: the NCBI Disease abstracts (train, dev, test; ../shared/data/ncbi-disease-pubtator) as plain text, title
  and abstract on one line, documents parted by blank lines, repeated as needed (about 7 mentions per 1,000 characters);
- ``dense``: per NCBI abstract one line ``Problems: m1; m2; ...`` of its gold mentions, lines parted by single line breaks
  (no blank line: the windows must be cut at sentence ends), repeated (about 43 mentions per 1,000 characters).

Command: ``python -m medlink annotate --index MEDIC --finder dictionary --input DOC --out OUT`` under ``/usr/bin/time -v``
(its wall time and maximum resident set size), the index MEDIC's lexical one without memory (``ncbi_index`` of
``benchmarks/documents/medlink_system.py``, built once in --workdir). Each run also records the output's SHA-256, so runs
under different labels (the code before and after a change) show whether the output stayed identical, and the progress
lines on stderr (stderr is a pipe here: a line every 30 s after the first 5 s). ``--label`` keeps runs of earlier labels
in the results file, each with its own commit; ``--code COMMIT`` runs medlink's ``src`` as that commit has it (``git
archive`` into the work directory, first on ``PYTHONPATH``) instead of the working tree's, to measure the code before a
change beside the code after it.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import signal
import subprocess
import tarfile
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import RESULTS, ROOT, command_line, git_commit, publish, scratch  # noqa: E402

SPLITS = ("NCBItrainset_corpus.txt", "NCBIdevelopset_corpus.txt", "NCBItestset_corpus.txt")
MB = 1 << 20
NAME = "long_documents"


def corpus_text(corpus: str) -> str:
    """One round of the corpus (see the module docstring), to be repeated up to a size."""
    from benchmarks.documents.medlink_system import PUBTATOR
    from medlink.corpora.pubtator import read_pubtator

    documents = [document for split in SPLITS for document in read_pubtator(PUBTATOR / split)]
    if corpus == "abstracts":
        return "\n\n".join(document.text for document in documents) + "\n\n"
    lines = ["Problems: " + "; ".join(a.text for a in document.annotations) + "." for document in documents if document.annotations]
    return "\n".join(lines) + "\n"


def document(workdir: Path, corpus: str, megabytes: int) -> Path:
    """The document of ``megabytes`` MB of ``corpus``, written once into ``workdir``."""
    path = workdir / f"{corpus}-{megabytes}mb.txt"
    if not path.exists():
        one = corpus_text(corpus)
        path.write_text((one * (megabytes * MB // len(one) + 1))[:megabytes * MB], encoding="utf-8")
    return path


def code_at(commit: str, workdir: Path) -> Path:
    """medlink's ``src`` folder as ``commit`` has it, extracted once into ``workdir``."""
    out = workdir / f"code-{commit}"
    if not (out / "src" / "medlink").is_dir():
        archive = subprocess.run(["git", "archive", commit, "src"], cwd=ROOT, capture_output=True, check=True).stdout
        tarfile.open(fileobj=io.BytesIO(archive)).extractall(out)
    return out / "src"


def measure(index: Path, path: Path, timeout: float, source: Path | None = None) -> dict:
    """``medlink annotate`` on ``path`` under /usr/bin/time -v: seconds, peak RSS, mentions, progress lines, output hash
    (medlink imported from ``source`` when given)."""
    out = path.with_suffix(".out.txt")
    out.unlink(missing_ok=True)
    command = ["/usr/bin/time", "-v", sys.executable, "-m", "medlink", "annotate", "--index", str(index), "--finder", "dictionary",
               "--input", str(path), "--out", str(out)]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(source or ""), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child = child_pid(process.pid)
        peak_so_far = peak_rss_mb(child) if child else None
        if child:
            os.kill(child, signal.SIGKILL)  # medlink itself: killing /usr/bin/time alone would leave it running
        process.kill()
        process.communicate()
        return {"timed_out_after_s": timeout, "peak_rss_mb_when_stopped": peak_so_far}
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{stderr[-3000:]}")
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)[1])
    summary = re.search(r"(\d+) document\(s\), (\d+) mention\(s\), (\d+) linked", stderr)
    progress = [line for line in stderr.splitlines() if re.match(r"annotate \S+: ", line)]
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(peak_kb / 1024), "mentions": int(summary[2]), "linked": int(summary[3]),
            "progress_lines": len(progress), "last_progress_line": progress[-1] if progress else None,
            "output_sha256": hashlib.sha256(out.read_bytes()).hexdigest()}


def child_pid(pid: int) -> int | None:
    """The process /usr/bin/time runs as ``pid``'s child (medlink), or None."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return None


def peak_rss_mb(pid: int) -> int | None:
    """The peak RSS so far (VmHWM) of process ``pid``: what a run stopped at its timeout had reached."""
    try:
        found = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    except OSError:
        return None
    return round(int(found[1]) / 1024) if found else None


def cpu_model() -> str:
    """``lscpu``'s model name, as every figure of this benchmark is quoted with it."""
    listed = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    found = re.search(r"Model name:\s*(.+)", listed)
    return found[1].strip() if found else "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,2,10", help="Document sizes in MB (1,048,576 characters), comma-separated.")
    parser.add_argument("--corpora", default="abstracts,dense", help="Which documents: abstracts, dense (comma-separated).")
    parser.add_argument("--label", default="after", help="What these runs measure (e.g. the code 'before' or 'after' a change).")
    parser.add_argument("--code", help="Run medlink as this commit has it (default: the working tree).")
    parser.add_argument("--timeout", type=float, default=1800, help="Seconds a run may take before it is recorded as too slow.")
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-long-documents"), help="Where MEDIC's index and the documents are made once.")
    args = parser.parse_args()
    from benchmarks.documents.medlink_system import ncbi_index

    args.workdir.mkdir(parents=True, exist_ok=True)
    index = ncbi_index(args.workdir, memory=False)
    source = code_at(args.code, args.workdir) if args.code else None
    rows = []
    for corpus in args.corpora.split(","):
        for megabytes in (int(size) for size in args.sizes.split(",")):
            row = {"corpus": corpus, "mb": megabytes, "characters": megabytes * MB,
                   **measure(index, document(args.workdir, corpus, megabytes), args.timeout, source)}
            rows.append(row)
            print(row, flush=True)
    previous = RESULTS / f"{NAME}.json"
    by_label = json.loads(previous.read_text()).get("by_label", {}) if previous.exists() else {}
    arguments = [a for a in sys.argv[1:] if not a.startswith("--workdir") and a != str(args.workdir)]
    commit = args.code or git_commit()
    by_label[args.label] = {"command": command_line(__file__, arguments), "commit": commit, "cpu": cpu_model(), "load_average": os.getloadavg(),
                            "rows": rows}
    publish(NAME, {"index": "MEDIC lexical (benchmarks/documents/medlink_system.py ncbi_index, no memory)",
                   "annotate": "medlink annotate --index MEDIC --finder dictionary --input DOC --out OUT (text output, default options)",
                   "by_label": by_label})


if __name__ == "__main__":
    main()

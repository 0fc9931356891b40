"""One long document through ``medlink annotate``'s pipeline: seconds, characters/s and peak RSS at 64 KB, 256 KB, 1 MB
and 4 MB, to show whether throughput holds as a document grows (a linear pipeline keeps characters/s flat; anything
quadratic in the document, such as a scan of every span for every span, makes it fall with size).

    python benchmarks/documents/long_document.py [--sizes 64,256,1024,4096] [--timeout 300] [--workdir DIR]

Documents: NCBI Disease abstracts (train, dev, test; ../shared/data/ncbi-disease-pubtator) joined by blank lines, cut at
the size in characters (KB = 1,024 characters). Annotator: ``medlink.linking.annotator.Annotator`` with the dictionary
finder on MEDIC's lexical index (``benchmarks/documents/medlink_system.py``'s ``ncbi_index``, no memory), default
options (abbreviations, consistency both). Each size runs in a fresh process (its own peak RSS), after one warm-up
abstract; a size still running after --timeout seconds is recorded as such (its throughput is below size / timeout).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, publish, scratch  # noqa: E402

SPLITS = ("NCBItrainset_corpus.txt", "NCBIdevelopset_corpus.txt", "NCBItestset_corpus.txt")


def long_text(characters: int) -> str:
    """NCBI abstracts joined by blank lines, repeated as needed, cut at ``characters``."""
    from benchmarks.documents.medlink_system import PUBTATOR
    from medlink.corpora.pubtator import read_pubtator

    texts = [document.text for split in SPLITS for document in read_pubtator(PUBTATOR / split)]
    parts, length = [], 0
    while length < characters:
        parts.append(texts[len(parts) % len(texts)])
        length += len(parts[-1]) + 2
    return "\n\n".join(parts)[:characters]


def child(kb: int, workdir: Path) -> dict:
    """Annotate one document of ``kb`` KB in this process: what the parent records."""
    from benchmarks.documents.medlink_system import ncbi_index
    from medlink.core import Document
    from medlink.linking.annotator import Annotator

    annotator = Annotator.load(ncbi_index(workdir, memory=False))
    text = long_text(kb * 1024)
    annotator.annotate_text(text[:2000])  # warm-up: lazy loads and first-call costs are not the document's
    started = time.perf_counter()
    document = annotator.annotate_text(Document.from_text(text, f"long-{kb}k"))
    seconds = time.perf_counter() - started
    linked = sum(a.result is not None and a.result.best is not None for a in document.annotations)
    return {"kb": kb, "characters": len(text), "seconds": round(seconds, 3), "chars_per_s": round(len(text) / seconds),
            "mentions": len(document.annotations), "linked": linked, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def measure(kb: int, workdir: Path, timeout: float) -> dict:
    """``child`` in a fresh process, or a record that it was still running after ``timeout`` seconds."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(kb), "--workdir", str(workdir)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout + 120)  # + index load and warm-up
    except subprocess.TimeoutExpired:
        return {"kb": kb, "characters": kb * 1024, "timed_out_after_s": timeout}
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result if result["seconds"] <= timeout else {"kb": kb, "characters": kb * 1024, "timed_out_after_s": timeout}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="64,256,1024,4096", help="Document sizes in KB (1,024 characters), comma-separated.")
    parser.add_argument("--timeout", type=float, default=300, help="Seconds a size may take before it is recorded as too slow.")
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-long-document"), help="Where MEDIC's KB and index are built once.")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.workdir)))
        return
    from benchmarks.documents.medlink_system import ncbi_index

    args.workdir.mkdir(parents=True, exist_ok=True)
    ncbi_index(args.workdir, memory=False)  # built once, outside every measured process
    rows = []
    for kb in (int(size) for size in args.sizes.split(",")):
        rows.append(measure(kb, args.workdir, args.timeout))
        print(rows[-1], flush=True)
    by_kb = {row["kb"]: row for row in rows}
    ratio = (by_kb[1024]["chars_per_s"] / by_kb[64]["chars_per_s"]
             if "chars_per_s" in by_kb.get(1024, {}) and "chars_per_s" in by_kb.get(64, {}) else None)
    arguments = [a for a in sys.argv[1:] if not a.startswith("--workdir") and a != str(args.workdir)]
    publish("long_document", {"command": command_line(__file__, arguments), "annotator": "dictionary finder, MEDIC lexical index, default options",
                              "sizes": rows, "throughput_ratio": {"1MB/64KB": round(ratio, 3) if ratio else None}})


if __name__ == "__main__":
    main()

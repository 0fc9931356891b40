"""An independent check of 'medlink link --json': score its output with nothing but the JSON and the raw test files.

    python benchmarks/lexical/json_scorer.py [--config benchmarks/configs/ncbi_lexical.json]

NCBI Disease test (BioSyn's processed_test) against MEDIC (the train dictionary, KB names only). This
script reads the .concept files itself (mention parts joined by '|', gold ids by '|' or '+'), links
every part with ``medlink link --json --input``, and counts a mention right when each part's top
candidate has *any* of its ids (``id`` or ``alt_ids``) among the gold ids. Beside it, ``medlink eval`` on
the same index and data. The two must agree within 0.5 points: the JSON carries every id a user needs.
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
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import ROOT, command_line, publish  # noqa: E402


def read_concept_files(folder: Path) -> list[tuple[list[str], set[str]]]:
    """(mention parts, gold ids) per line of every ``*.concept`` file, read without medlink."""
    mentions = []
    for path in sorted(folder.glob("*.concept")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            fields = line.split("||")
            text, ids = fields[3], fields[4]
            mentions.append(([part.strip() for part in text.split("|")], set(ids.replace("+", "|").split("|"))))
    return mentions


def medlink(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "medlink", *map(str, args)], capture_output=True, text=True, check=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "benchmarks" / "configs" / "ncbi_lexical.json")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    kb = ncbi_kb(args.workdir, "train")
    index = args.workdir / "json-scorer-index"
    medlink("index", "build", "--kb", kb.path, "--config", args.config, "--out", index)
    test_folder = Path(ncbi_split("test").split(":", 1)[1])
    mentions = read_concept_files(test_folder)
    parts = args.workdir / "json-scorer-parts.txt"
    parts.write_text("".join(f"{part}\n" for texts, _ in mentions for part in texts), encoding="utf-8")
    started = time.perf_counter()
    lines = medlink("link", "--index", index, "--json", "--k", "1", "--input", parts, "--format", "lines").splitlines()
    seconds = time.perf_counter() - started
    results = iter(json.loads(line) for line in lines)
    correct = 0
    for texts, gold in mentions:
        tops = [next(results)["candidates"][:1] for _ in texts]
        correct += all(top and gold & {top[0]["id"], *top[0]["alt_ids"]} for top in tops)
    independent = correct / len(mentions)
    report = json.loads(medlink("eval", "--index", index, "--dataset", ncbi_split("test"), "--json", "--k", "64"))
    difference = abs(independent - report["acc@1"])
    print(f"independent scorer Acc@1 {independent:.4f} ({correct}/{len(mentions)}); medlink eval Acc@1 {report['acc@1']:.4f}; "
          f"difference {100 * difference:.2f} points", flush=True)
    publish("json_scorer", {"command": command_line(__file__, sys.argv[1:]), "dataset": "NCBI Disease", "split": "test",
                            "kb": "MEDIC (BioSyn train dictionary), KB names only", "config": str(args.config.relative_to(ROOT)),
                            "independent_acc@1": independent, "eval_acc@1": report["acc@1"], "difference_points": 100 * difference,
                            "mentions": len(mentions), "link_seconds": seconds})
    if difference > 0.005:
        sys.exit("the independent scorer and medlink eval disagree by more than 0.5 points")


if __name__ == "__main__":
    main()

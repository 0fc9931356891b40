"""Every file of real index folders damaged every way, then loaded and used: how many are used, refused by name, or end
in anything else (a traceback, a bare 'Aborted.', a refusal naming nothing inside the index).

    python benchmarks/robustness/damaged_index.py

Indexes: lexical (exact + TF-IDF + BM25 over KB names + a mention memory) and dense + kNN (the packaged MiniLM over the
same), both on the test fixtures' dictionary. Damages: the file deleted, emptied, cut in half, overwritten with random bytes,
ten bytes flipped (the size kept). The folder's inventory (``.medlink-files.json``) is read by a rebuild only: damaged, the
index must still link and a rebuild over it succeed.
"""

from __future__ import annotations

import argparse
import collections
import random
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* and tests.* imports
from benchmarks._common.harness import command_line, publish  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402
from tests.test_damaged_index import DAMAGES, LEXICAL, damage, index_files, load_and_link  # noqa: E402

from medlink.inventory import INVENTORY  # noqa: E402
from medlink.kb.build import build_kb  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.index import build_index  # noqa: E402

DENSE_KNN = {"generators": [{"name": "dense", "type": "dense", "params": {"precision": "fp32"}}], "rerankers": [{"type": "knn", "generator": "dense"}]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args()
    started = time.perf_counter()
    counts: dict[str, collections.Counter] = {}
    failures: list[dict] = []
    rng = random.Random(0)
    with tempfile.TemporaryDirectory(prefix="medlink-damaged-") as root:
        work = Path(root)
        build_kb(work / "kb.sqlite", [f"biosyn:{FIXTURES / 'eval' / 'dictionary.txt'}"], progress=False)
        memory = [f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}"]
        for name, config in (("lexical", LEXICAL), ("dense + kNN", DENSE_KNN)):
            built = work / name.replace(" ", "").replace("+", "-")
            build_index(work / "kb.sqlite", built, LinkerConfig.from_dict(config), memory)
            counts[name] = collections.Counter()
            for file in index_files(built):
                for kind in DAMAGES:
                    copy = work / "copy"
                    shutil.rmtree(copy, ignore_errors=True)
                    shutil.copytree(built, copy)
                    damage(copy / file.relative_to(built), kind, rng)
                    try:
                        outcome = load_and_link(copy)
                        if file.name == INVENTORY:  # what a rebuild reads, never linking: the rebuild must still go
                            build_index(work / "kb.sqlite", copy, LinkerConfig.from_dict(config), memory)
                            outcome = "inventory damaged: linking unaffected, rebuild ok"
                    except AssertionError as error:
                        outcome = "refusal naming nothing"
                        failures.append({"index": name, "file": str(file.relative_to(built)), "damage": kind, "what": str(error)[:300]})
                    except BaseException:  # noqa: BLE001 - counting exactly these is the point
                        outcome = "traceback"
                        failures.append({"index": name, "file": str(file.relative_to(built)), "damage": kind, "what": traceback.format_exc(limit=3)[-500:]})
                    counts[name][outcome] += 1
            print(name, dict(counts[name]), flush=True)
    total = sum((c for c in counts.values()), collections.Counter())
    publish("damaged_index", {"command": command_line(__file__, sys.argv[1:]), "cases": sum(total.values()), "by_index": {k: dict(v) for k, v in counts.items()},
                              "total": dict(total), "failures": failures[:50], "seconds": time.perf_counter() - started})


if __name__ == "__main__":
    main()

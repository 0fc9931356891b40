"""How many NCBI dev errors of the tuned lexical linker are score ties that include the gold concept (issue 3).

    python benchmarks/lexical/lexical_ties.py

Lexical config = benchmarks/configs/ncbi_lexical.json (dev-chosen), memory = processed_train, single-part
dev mentions. For each error whose gold concept shares the top score, it also counts whether preferring
the concept with more KB names would have picked the gold: the size of what a tie-break rule could win.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import ROOT, command_line, publish  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    kb = ncbi_kb(Path(tempfile.gettempdir()) / "medlink-bench", "train")
    linker = Linker.build(kb, LinkerConfig.from_file(ROOT / "benchmarks" / "configs" / "ncbi_lexical.json"),
                          memory_from_datasets(kb, [ncbi_split("train")]))
    single = [m for m in load_dataset(ncbi_split("dev")) if len(m.parts) == 1]
    name_count = Counter(concept for concept, _, _ in kb.iter_names())
    errors = ties = fixed = 0
    for mention, ranking in zip(single, linker.link([m.parts[0] for m in single], k=10)):
        gold = {kb.resolve(g) for g in mention.gold} - {None}
        if not ranking or ranking[0].concept_id in gold:
            continue
        errors += 1
        tied = [c for c in ranking if abs(c.score - ranking[0].score) < 1e-6]
        if any(c.concept_id in gold for c in tied):
            ties += 1
            fixed += max(tied, key=lambda c: name_count[c.concept_id]).concept_id in gold
    result = {"single_part_dev_mentions": len(single), "errors": errors, "ties_with_gold": ties, "fixed_by_more_names": fixed}
    print(result)
    publish("lexical_ties", {"command": command_line(__file__, sys.argv[1:]), **result})


if __name__ == "__main__":
    main()

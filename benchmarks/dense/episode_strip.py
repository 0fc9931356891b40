"""What default-dense's ``strip`` (ICD-10-CM's episode-of-care qualifiers left out of the dense stage) saves and costs.

    python benchmarks/dense/episode_strip.py [--seed 1] [--workdir DIR]

Saves: the default KB's names and their tokens (the encoder's work) with and without the qualifiers. Costs: accuracy on
pseudo-mentions drawn from the default KB (``medlink.linking.pseudo_mentions`` with another seed than the index's own
calibration draws: held-out synonyms, names as they stand, names with one edit; NIL mentions left out), linked by the
default-dense config (no calibration) over the KB without the held-out names, with ``strip`` and without it: Acc@1 and
Acc@5 of the fused ranking and Acc@1 of the dense stage alone, over every in-KB mention and over those whose concept
has a qualified name. The first build (with strip) runs in a fresh MEDLINK_HOME and is timed: its encoding is the
dense stage's cost at first use; the second reuses the cached vectors of the names the two share. Also counted: the
names the expression matches in the KBs of default-dense's published accuracy (MEDIC, AskAPatient's ontology).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import aap_kb, ncbi_kb  # noqa: E402
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks._common.pseudo import accuracy_at, default_kb_pseudo_mentions  # noqa: E402


def token_counts(texts: list[str]) -> int:
    from tokenizers import Tokenizer

    from medlink.encoders.transformer import default_model_dir

    tokenizer = Tokenizer.from_file(str(default_model_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(32)
    return sum(len(e.ids) for e in tokenizer.encode_batch(texts))


def accuracy(linker, mentions, generators=None) -> dict[str, float]:
    """Acc@1 and Acc@5 of ``mentions`` (gold: the concept each names)."""
    results = linker.link([m.text for m in mentions], k=5, generators=generators, rerank=False)
    return accuracy_at(results, [frozenset({m.concept_id}) for m in mentions])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1, help="pseudo-mention draw (the index's calibration uses 0)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    os.environ["MEDLINK_HOME"] = tempfile.mkdtemp(prefix="episode-strip-", dir=args.workdir)  # a cold encode cache

    from medlink.linking.config import EPISODE_OF_CARE, default_dense_config
    from medlink.linking.linker import Linker

    kb, in_kb, held_out_kb = default_kb_pseudo_mentions(seed=args.seed)
    keys = sorted({kb.normalize(text) for _cid, text, _kind in kb.iter_names()} - {""})
    pattern = re.compile(EPISODE_OF_CARE)
    stripped = sorted({pattern.sub("", key).strip() or key for key in keys})
    qualified = {cid for cid, text, _kind in kb.iter_names() if pattern.search(kb.normalize(text))}
    # the KBs of default-dense's published accuracy (benchmarks/dense/default_dense.py): names the expression changes
    unchanged = {name: sum(bool(pattern.search(other.normalize(text))) for _cid, text, _kind in other.iter_names())
                 for name, other in (("MEDIC (train_dictionary)", ncbi_kb(args.workdir)), ("AskAPatient ontology", aap_kb(args.workdir)))}
    groups = {"in-KB": in_kb, "qualified": [m for m in in_kb if m.concept_id in qualified]}  # qualified: the concept has a qualified name

    rows = []
    for strip in (EPISODE_OF_CARE, None):
        config = default_dense_config()
        dense = config.generators[-1]
        config.generators[-1] = replace(dense, params={**dense.params, "strip": strip})
        started = time.perf_counter()
        linker = Linker.build(held_out_kb, config, dictionary=False)
        built = time.perf_counter() - started
        row = {"strip": strip is not None, "build_seconds": round(built, 1), "cache": "cold" if strip else "names shared with the first build cached"}
        for group, members in groups.items():
            row[group] = {"mentions": len(members), **accuracy(linker, members), "dense acc@1": accuracy(linker, members, ["dense"])["acc@1"]}
        rows.append(row)
        print(row, flush=True)
        del linker

    publish("episode_strip", {
        "command": command_line(__file__, sys.argv[1:]), "seed": args.seed, "pattern": EPISODE_OF_CARE,
        "names": len(keys), "texts_after_strip": len(stripped), "tokens": token_counts(keys), "tokens_after_strip": token_counts(stripped),
        "qualified_concepts": len(qualified), "names_matched_elsewhere": unchanged, "rows": rows,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    })


if __name__ == "__main__":
    main()

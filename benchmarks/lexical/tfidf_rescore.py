"""TF-IDF's stage 2 rescoring RESCORED x shortlist names (4) against the shortlist alone (1), in one run.

    python benchmarks/lexical/tfidf_rescore.py [--repeats 3]

The default lexical config (exact + char n-gram TF-IDF + BM25) over: MEDIC (BioSyn's train_dictionary) for NCBI
dev and test, AskAPatient's ontology for fold-0 validation and test, and the default KB (ICD-10-CM + HPO) for
pseudo-mentions drawn from it (``medlink.linking.pseudo_mentions``, seed 1, in-KB ones, linked over the KB without
their held-out names). Acc@1 and Acc@5 of the fused ranking, and mentions/s of one call over all of them (median of
``--repeats``, the two settings interleaved), for each setting; the index is built once, RESCORED set at query time.
``--scale-index DIR --scale-queries FILE`` adds the speed of an index already built (benchmarks/scale/lexical_scale.py's
5M-name synthetic one and its perturbed queries; no gold, so no accuracy), and how many first candidates differ.
"""

from __future__ import annotations

import argparse
import itertools
from functools import partial
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import aap_kb, aap_split, ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks._common.interleaved import interleaved_row  # noqa: E402
from benchmarks._common.pseudo import default_kb_pseudo_mentions  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.linking.config import default_config  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.retrieval import tfidf  # noqa: E402

SETTINGS = (1, 4)


def datasets(workdir: Path, config=None, seed: int = 1, splits: tuple[str, ...] = ("dev", "test")):
    """(name, linker, mention texts, gold id sets) per evaluation set; ``config`` (default: the default config) for every
    linker, ``seed`` the pseudo-mentions', ``splits`` which of dev (NCBI dev, AskAPatient validation) and test to give."""
    config = config or default_config()
    sets = [("NCBI dev", ncbi_kb(workdir), ncbi_split("dev")), ("NCBI test", ncbi_kb(workdir), ncbi_split("test")),
            ("AskAPatient fold-0 validation", aap_kb(workdir), aap_split(0, "validation")),
            ("AskAPatient fold-0 test", aap_kb(workdir), aap_split(0, "test"))]
    chosen = [(name, kb, split) for name, kb, split in sets if ("test" if name.endswith("test") else "dev") in splits]
    for name, kb, split in chosen:
        mentions = load_dataset(split)
        yield name, Linker.build(kb, config), [p for m in mentions for p in m.parts], [m.gold for m in mentions for _ in m.parts]
    _, in_kb, held_out_kb = default_kb_pseudo_mentions(seed=seed)
    yield (f"default KB pseudo-mentions (seed {seed})", Linker.build(held_out_kb, config, dictionary=False), [m.text for m in in_kb],
           [frozenset({m.concept_id}) for m in in_kb])


def scale_set(index: Path | None, queries: Path | None):
    """The index built before and its queries (no gold), loaded only when its turn comes (it may take gigabytes)."""
    if index is not None:
        texts = [line.strip() for line in queries.read_text(encoding="utf-8").splitlines() if line.strip()]
        yield f"{index.name} (perturbed names, no gold)", Linker.load(index), texts, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--scale-index", type=Path, help="an index folder built before (speed only)")
    parser.add_argument("--scale-queries", type=Path, help="its queries, one per line")
    args = parser.parse_args()
    rows = []
    for name, linker, texts, golds in itertools.chain(datasets(args.workdir), scale_set(args.scale_index, args.scale_queries)):
        row = interleaved_row(name, linker, texts, golds, {f"rescored_{s}": partial(setattr, tfidf, "RESCORED", s) for s in SETTINGS}, args.repeats)
        rows.append(row)
        print(row, flush=True)
    publish("tfidf_rescore", {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "rescore_rows": rows,
                              "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})


if __name__ == "__main__":
    main()

"""Metadata carried from another KB, read the way paper 002 reads it: a cross-encoder over "name [SEP] types [SEP]
definition", before and after MEDIC is augmented from the Disease Ontology.

    python benchmarks/align/augment_entity_text.py [--workdir DIR] [--confidence 0.9] [--epochs 2] [--name align_entity_text]

Run ``benchmarks/align/augment_ncbi.py --workdir DIR`` first: it aligns MEDIC (NCBI's train_dictionary.txt) onto DO and
writes the augmented KBs this script reads (``medic-aug-C-definitions-types-ancestors.sqlite``: DO's definitions, and its
ancestors as types, carried through the mappings at confidence >= C). A lexical names-only linker alone
(benchmarks/configs/ncbi_lexical.json, KB names only, as augment_ncbi.py) stays as it is: types and definitions change no
string score. So two cross-encoders are trained on NCBI train (``medlink train cross-encoder``, the same recipe and seed):
one on MEDIC reading names (*before*), one on the augmented MEDIC reading entity texts (*after*); each reranks that
linker's candidates, its top and weight chosen on NCBI dev (``medlink tune --search cross-encoder``), then NCBI test is
scored once. The rows: the linker alone, + the cross-encoder before, + the cross-encoder after (and how many concepts
have an entity text longer than their name); beside each cross-encoder, its own ranking of the linker's first 16
("alone"), which shows what reading entity texts does even where dev keeps the reranker's weight at 0.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import ROOT, command_line, publish, scratch  # noqa: E402

from medlink.eval import evaluate, load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.kb.store import KB  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.text.concept_text import entity_texts  # noqa: E402
from medlink.tuning import tune  # noqa: E402

CONFIG = ROOT / "benchmarks" / "configs" / "ncbi_lexical.json"
ALONE_TOP = 16


def train(kb: Path, concept_text: str, out: Path, epochs: int) -> float:
    """``medlink train cross-encoder`` on NCBI train (dev: NCBI dev, for its per-epoch figure only); seconds, 0 if reused."""
    if (out / "config.json").exists():
        return 0.0
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "medlink", "train", "cross-encoder", "--kb", str(kb), "--train", ncbi_split("train"),
                    "--dev", ncbi_split("dev"), "--candidates", "4", "--epochs", str(epochs), "--concept-text", concept_text,
                    "--out", str(out), "-q"], check=True)
    return time.perf_counter() - started


def reranked(kb_path: Path, model: Path | None, text: str, datasets: dict) -> dict:
    """Dev-tuned Acc@1 (dev, test) of the names-only lexical linker, with ``model`` reranking (reading ``text``) or alone."""
    with KB.open(kb_path) as kb:
        config = LinkerConfig.from_file(CONFIG)
        if model is not None:
            config = LinkerConfig.from_dict({**config.to_dict(), "rerankers": [{"type": "cross-encoder", "model": str(model), "text": text}]})
        linker = Linker.build(kb, config, dictionary=False)
        equivalent = equivalent_ids_from_kb(kb)
        def acc1(linker: Linker) -> dict:
            return {f"{split}_acc@1": round(evaluate(lambda texts: linker.link(texts, k=ALONE_TOP), mentions, equivalent_ids=equivalent,
                                                     records=False, subpopulations=False)["acc@1"], 4) for split, mentions in datasets.items()}

        if model is None:
            return {**acc1(linker), "chosen_on_dev": None}
        tuned, _ = tune(linker, datasets["dev"], ["cross-encoder"], equivalent, "ncbi dev")
        chosen = {k: v for k, v in tuned.rerankers[0].items() if k in ("top", "weight")}
        out = {**acc1(Linker.build(kb, tuned, dictionary=False)), "chosen_on_dev": chosen}
        # the model's own ranking of the linker's first ALONE_TOP (its weight so large the linker's scores only break ties):
        # what reading names or entity texts does, whether or not dev lets it change the linker's answers
        alone = LinkerConfig.from_dict({**tuned.to_dict(), "rerankers": [{**tuned.rerankers[0], "top": ALONE_TOP, "weight": 1000.0}]})
        return {**out, "alone": acc1(Linker.build(kb, alone, dictionary=False))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-align-bench"))
    parser.add_argument("--confidence", default="0.9", help="the augmented KB's confidence (augment_ncbi.py's dev choice for synonyms)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--name", default="align_entity_text")
    args = parser.parse_args()
    medic = Path(ncbi_kb(args.workdir, "train").path)
    augmented = args.workdir / f"medic-aug-{float(args.confidence)}-definitions-types-ancestors.sqlite"
    if not augmented.is_file():
        sys.exit(f"{augmented} is missing: run benchmarks/align/augment_ncbi.py --workdir {args.workdir} first")
    with KB.open(augmented) as kb:
        described = len(entity_texts(kb))
    datasets = {"dev": load_dataset(ncbi_split("dev")), "test": load_dataset(ncbi_split("test"))}
    started = time.perf_counter()
    before, after = args.workdir / "ce-medic-names", args.workdir / f"ce-medic-aug-{args.confidence}-entity"
    seconds = {"before": train(medic, "name", before, args.epochs), "after": train(augmented, "entity", after, args.epochs)}
    rows = [{"variant": "lexical linker alone (MEDIC names)", **reranked(medic, None, "name", datasets)},
            {"variant": "+ cross-encoder reading names (MEDIC as it is)", **reranked(medic, before, "name", datasets)},
            {"variant": f"+ cross-encoder reading 'name [SEP] types [SEP] definition' (MEDIC + DO definitions and ancestors, "
                        f"confidence >= {args.confidence})", **reranked(augmented, after, "entity", datasets)}]
    for row in rows:
        print(row, flush=True)
    publish(args.name, {"entity_text": {"rows": rows, "concepts_described": described, "training_seconds": seconds,
                                        "seconds": round(time.perf_counter() - started, 1), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)},
                        "command": command_line(__file__, sys.argv[1:])})


if __name__ == "__main__":
    main()

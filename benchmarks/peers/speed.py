"""Linking speed beside scispaCy: the same dictionary, the same mentions, the same run.

    python benchmarks/install/get_scispacy.py                 # once: scispaCy 0.6.2 in its own environment
    python benchmarks/peers/speed.py [--repeats 3] [--edited 10000]

The dictionary is NCBI Disease's test dictionary (MEDIC + the train and dev mentions, the published setting). Mentions:
NCBI test's distinct mention parts, and ``--edited`` distinct MEDIC names with one random edit each (a letter dropped,
doubled, swapped or replaced; seeded), both linked as distinct strings. medlink: the default lexical config with its
calibration stage (fitted on the KB's pseudo-mentions, as ``index build`` does) at k 30 and the CLI's k 5, the same
index without its calibration stage, and its TF-IDF stage alone. scispaCy 0.6.2: its candidate generator (char_wb
3-gram TF-IDF + HNSW, ``scispacy_driver.py``) at k 30, as its linker queries it; Gilda 1.6.1's grounder over the
same names (a string grounder: exact and near-exact matches, no fuzzy search). For each: index build seconds, load
seconds, distinct mentions per second (median of ``--repeats``; the memos of words read, BM25's corrections and
TF-IDF's n-grams, emptied before each run), Acc@1 (a first concept that is, or shares an id with, the gold one), peak
memory; and medlink's throughput as a multiple of scispaCy's.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import command_line, publish, scratch  # noqa: E402

HERE = Path(__file__).resolve().parent
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def scispacy_names(kb, path: Path) -> None:
    """The KB as scispaCy's KnowledgeBase JSONL: concept_id, canonical_name, aliases."""
    aliases: dict[str, list[str]] = {}
    for concept_id, text, _kind in kb.iter_names():
        aliases.setdefault(concept_id, []).append(text)
    with path.open("w", encoding="utf-8") as out:
        for concept_id, name in kb.iter_concepts():
            out.write(json.dumps({"concept_id": concept_id, "canonical_name": name, "aliases": aliases.get(concept_id, [])}) + "\n")


def one_edit(text: str, rng: random.Random) -> str:
    """``text`` with one letter dropped, doubled, swapped with the next or replaced."""
    at = rng.randrange(len(text))
    kind = rng.choice(("drop", "double", "swap", "replace"))
    if kind == "drop" and len(text) > 3:
        return text[:at] + text[at + 1 :]
    if kind == "double":
        return text[:at] + text[at] + text[at:]
    if kind == "swap" and at + 1 < len(text):
        return text[:at] + text[at + 1] + text[at] + text[at + 2 :]
    return text[:at] + rng.choice(LETTERS) + text[at + 1 :]


def mention_sets(kb, edited: int, seed: int = 7) -> dict[str, list[tuple[str, set[str]]]]:
    """Distinct strings with their gold concepts: NCBI test's single-part mentions, and MEDIC names with one edit."""
    from medlink.corpora.datasets import load_dataset

    gold: dict[str, set[str]] = {}
    for mention in load_dataset(ncbi_split("test")):
        if len(mention.parts) == 1:  # the ids as annotated: a concept matches through its alt ids (eval.metrics.id_matches)
            gold.setdefault(mention.parts[0], set()).update(mention.gold)
    rng = random.Random(seed)
    names = sorted({(text, concept_id) for concept_id, text, _kind in kb.iter_names() if len(text) >= 5})
    rng.shuffle(names)
    edits: dict[str, set[str]] = {}
    for text, concept_id in names:
        if len(edits) >= edited:
            break
        changed = one_edit(text, rng)
        if changed != text:
            edits.setdefault(changed, set()).add(concept_id)
    return {"ncbi_test_parts": sorted(gold.items()), "medic_one_edit": sorted(edits.items())}


def accuracy(firsts: list[str | None], gold: list[set[str]], equivalent: dict) -> float:
    """Acc@1 as ``medlink eval`` counts it: the first concept is a gold id, or has one among its alt ids."""
    from medlink.eval.metrics import id_matches

    return round(sum(f is not None and id_matches(f, frozenset(want), equivalent) for f, want in zip(firsts, gold)) / len(gold), 4)


def medlink_rates(index: Path, texts: list[str], repeats: int) -> dict:
    """Distinct mentions per second for each setting, and the first concepts at k 30 with calibration."""
    from medlink.linking.linker import Linker
    from medlink.retrieval.compiled import COMPILED_FROM
    from medlink.retrieval.compiled import load as load_compiled

    started = time.perf_counter()
    linker = Linker.load(index)
    loaded = time.perf_counter() - started
    settings = {
        "calibrated_k30": {"k": 30},
        "calibrated_k5": {"k": 5},
        "uncalibrated_k30": {"k": 30, "rerank": False},
        "tfidf_only_k30": {"k": 30, "generators": ["tfidf"], "rerank": False},
    }
    load_compiled()  # warm, as a long run is: the compiled stages loaded, whatever the set's size
    linker.link(texts[:COMPILED_FROM], k=30)
    rates: dict[str, list[float]] = {name: [] for name in settings}
    for _ in range(repeats):
        for name, options in settings.items():
            for generator in linker.generators.values():  # each repeat reads its words anew, as distinct mentions
                getattr(generator, "forget_words", lambda: None)()
            started = time.perf_counter()
            linker.link(texts, **options)
            rates[name].append(len(texts) / (time.perf_counter() - started))
    firsts = [r.best.concept_id if r.best is not None else (r.candidates[0].concept_id if r.candidates else None) for r in linker.link(texts, k=30)]
    return {"load_seconds": round(loaded, 3), "per_second": {n: round(statistics.median(v)) for n, v in rates.items()}, "firsts": firsts}


def gilda_rates(kb, texts: list[str], repeats: int) -> dict:
    """Gilda 1.6.1's grounder over the same names (its own normalisation; exact and near-exact matches only): its
    grounder's build seconds, distinct mentions per second (median of ``repeats``) and each mention's first match."""
    from medlink.kb.records import PREFERRED

    from benchmarks.peers.drivers import gilda_grounder

    started = time.perf_counter()
    grounder = gilda_grounder((concept, text, kind == PREFERRED) for concept, text, kind in kb.iter_names())
    built = time.perf_counter() - started
    grounder.ground(texts[0])  # warm
    seconds, found = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        found = [grounder.ground(text) for text in texts]
        seconds.append(time.perf_counter() - started)
    return {"per_second": round(len(texts) / statistics.median(seconds)), "build_seconds": round(built, 1),
            "firsts": [matches[0].term.id if matches else None for matches in found]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--edited", type=int, default=10_000)
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-bench-speed"))
    parser.add_argument("--scispacy-python", default=str(scratch("medlink-bench-scispacy") / "bin" / "python"))
    args = parser.parse_args()
    from medlink.linking.index import build_index

    args.workdir.mkdir(parents=True, exist_ok=True)
    kb = ncbi_kb(args.workdir, "test")
    from medlink.eval.metrics import equivalent_ids_from_kb

    same = equivalent_ids_from_kb(kb)
    index = args.workdir / "medlink-index"
    started = time.perf_counter()
    build_index(kb, index)
    medlink_build = time.perf_counter() - started
    names = args.workdir / "scispacy-kb.jsonl"
    scispacy_names(kb, names)
    rows = []
    for set_name, items in mention_sets(kb, args.edited).items():
        texts, gold = [t for t, _ in items], [g for _, g in items]
        ours = medlink_rates(index, texts, args.repeats)
        mentions_file = args.workdir / f"{set_name}.txt"
        mentions_file.write_text("\n".join(texts) + "\n", encoding="utf-8")
        done = subprocess.run(
            [args.scispacy_python, str(HERE / "scispacy_driver.py"), str(names), str(mentions_file), str(args.workdir / "scispacy-index"), "30", str(args.repeats)],
            capture_output=True, text=True, check=True,
        )
        theirs = json.loads(done.stdout.strip().splitlines()[-1])
        gilda = gilda_rates(kb, texts, args.repeats)
        scispacy_rate = round(len(texts) / statistics.median(theirs["seconds"]))
        rows.append({
            "mentions": set_name, "distinct": len(texts),
            "medlink": {**{k: v for k, v in ours.items() if k != "firsts"}, "acc1_k30": accuracy(ours["firsts"], gold, same),
                        "build_seconds": round(medlink_build, 1)},
            "scispacy": {"per_second": scispacy_rate, "acc1": accuracy(theirs["firsts"], gold, same),
                         "build_seconds": theirs["build_seconds"] and round(theirs["build_seconds"], 1), "load_seconds": round(theirs["load_seconds"], 2),
                         "peak_rss_mb": theirs["peak_rss_mb"]},
            "ratio_calibrated_k30": round(ours["per_second"]["calibrated_k30"] / scispacy_rate, 2),
            "gilda": {"per_second": gilda["per_second"], "acc1": accuracy(gilda["firsts"], gold, same), "build_seconds": gilda["build_seconds"]},
            "ratio_gilda_k30": round(ours["per_second"]["calibrated_k30"] / gilda["per_second"], 2),
        })
        print(json.dumps(rows[-1]), flush=True)
    publish("peer_speed", {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "rows": rows,
                           "medlink_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})


if __name__ == "__main__":
    main()

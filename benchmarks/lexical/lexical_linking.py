"""Lexical linking accuracy and speed: NCBI Disease and AskAPatient, with and without the mention memory.

    python benchmarks/lexical/lexical_linking.py [--folds 10] [--repeats 5]
    python benchmarks/lexical/lexical_linking.py --bc5cdr     # BC5CDR-disease only, to results/lexical_linking_bc5cdr.json

Configs come from benchmarks/configs/*_lexical.json (chosen on dev by tune_lexical.py). Each
figure is reported for TF-IDF alone, BM25 alone and the fused config (the generators of one index,
selected at query time). NCBI settings:
- published protocol: KB = BioSyn's test_dictionary.txt (MEDIC + train and dev mentions, as the
  published numbers use), no separate memory;
- memory: KB = train_dictionary.txt (MEDIC) + mention memory of processed_traindev;
- KB only: KB = train_dictionary.txt, nothing from training.
AskAPatient: KB = the ontology (1,036 concepts); with memory = fold train file; mean over folds of
the test split. Speed: a fresh process loads the NCBI index built on the full MEDIC file and links
the 960 NCBI test mentions (median of the repeats); peak RSS is that process's.
BC5CDR-disease (``--bc5cdr``, issue 53): BioSyn's protocol on dev (its test set is kept out of the shared data), the
default lexical config (nothing chosen on this corpus); settings as NCBI's: dev_dictionary.txt (MEDIC + the train
mentions), train_dictionary.txt (MEDIC) + memory(train), and KB only. Its own results file (``lexical_datasets``), so
the NCBI / AskAPatient run and its speed stand as measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import aap_kb, aap_split, cached_kb, ncbi_kb, ncbi_split, require  # noqa: E402
from benchmarks._common.harness import ROOT, SHARED_DATA, THROUGHPUT, command_line, measure_in_fresh_process, publish  # noqa: E402

from medlink.eval import evaluate, load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.config import LinkerConfig, default_config  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402

CONFIGS = ROOT / "benchmarks" / "configs"
BC5CDR = SHARED_DATA / "bc5cdr-disease"
VARIANTS = {"TF-IDF": ["tfidf"], "BM25": ["bm25"], "fused": None}


def run_variants(linker: Linker, kb, test, setting: dict) -> list[dict]:
    equivalent = equivalent_ids_from_kb(kb)
    rows = []
    for variant, generators in VARIANTS.items():
        report = evaluate(lambda texts: linker.link(texts, k=64, generators=generators), test, equivalent_ids=equivalent,
                          records=False, subpopulations=False)
        rows.append({**setting, "variant": variant, "n": report["n"], "acc@1": report["acc@1"], "acc@5": report["acc@5"],
                     "mrr": report["mrr"], "recall@64": report["recall@64"], "predict_seconds": report.timing["predict_seconds"]})
        print(f"  {setting['dataset']} | {setting['setting']} | {variant}: acc@1 {report['acc@1']:.4f} acc@5 {report['acc@5']:.4f}", flush=True)
    return rows


def ncbi_rows(workdir: Path) -> list[dict]:
    config = LinkerConfig.from_file(CONFIGS / "ncbi_lexical.json")
    test = load_dataset(ncbi_split("test"))
    rows = []
    for setting, kb, memory in (
        ("published protocol: test_dictionary.txt", ncbi_kb(workdir, "test"), None),
        ("train_dictionary.txt + memory(traindev)", ncbi_kb(workdir, "train"), [ncbi_split("traindev")]),
        ("KB only: train_dictionary.txt", ncbi_kb(workdir, "train"), None),
    ):
        started = time.perf_counter()
        linker = Linker.build(kb, config, memory_from_datasets(kb, memory) if memory else None)
        build = time.perf_counter() - started
        rows += run_variants(linker, kb, test, {"dataset": "NCBI Disease", "split": "test", "setting": setting, "build_seconds": build})
    return rows


def bc5cdr_rows(workdir: Path) -> list[dict]:
    """BC5CDR's disease mentions, dev split: the default lexical config over its dictionaries, as ``ncbi_rows``."""
    test = load_dataset(f"biosyn:{require(BC5CDR / 'processed_dev')}")
    rows = []
    for setting, dictionary, memory in (
        ("published protocol on dev: dev_dictionary.txt", "dev", None),
        ("train_dictionary.txt + memory(train)", "train", [f"biosyn:{require(BC5CDR / 'processed_train')}"]),
        ("KB only: train_dictionary.txt", "train", None),
    ):
        kb = cached_kb(workdir, f"bc5cdr-{dictionary}-dictionary", [f"biosyn:{require(BC5CDR / f'{dictionary}_dictionary.txt')}"])
        started = time.perf_counter()
        linker = Linker.build(kb, default_config(), memory_from_datasets(kb, memory) if memory else None)
        build = time.perf_counter() - started
        rows += run_variants(linker, kb, test, {"dataset": "BC5CDR-disease", "split": "dev", "setting": setting, "build_seconds": build})
    return rows


def aap_rows(workdir: Path, folds: int) -> list[dict]:
    config = LinkerConfig.from_file(CONFIGS / "askapatient_lexical.json")
    kb = aap_kb(workdir)
    per_fold = []
    for fold in range(folds):
        test = load_dataset(aap_split(fold, "test"))
        for setting, memory in (("ontology + memory(fold train)", [aap_split(fold, "train")]), ("KB only: ontology names", None)):
            linker = Linker.build(kb, config, memory_from_datasets(kb, memory) if memory else None)
            per_fold += run_variants(linker, kb, test, {"dataset": "AskAPatient", "split": f"fold-{fold} test", "setting": setting, "fold": fold})
    rows = []
    for setting in ("ontology + memory(fold train)", "KB only: ontology names"):
        for variant in VARIANTS:
            group = [r for r in per_fold if r["setting"] == setting and r["variant"] == variant]
            rows.append({"dataset": "AskAPatient", "split": f"test, mean of {len(group)} folds", "setting": setting, "variant": variant,
                         "n": sum(r["n"] for r in group), **{m: statistics.mean(r[m] for r in group) for m in ("acc@1", "acc@5", "mrr", "recall@64")},
                         "acc@1_std": statistics.pstdev(r["acc@1"] for r in group)})
    return rows + [dict(r, per_fold=True) for r in per_fold]


def speed(workdir: Path, repeats: int) -> dict:
    """Index build on the full MEDIC file, then load time and throughput in a fresh process."""
    kb = cached_kb(workdir, "medic", [f"biosyn:{require(SHARED_DATA / 'medic' / 'medic_06Jul2012.txt')}"])
    config = LinkerConfig.from_file(CONFIGS / "ncbi_lexical.json")
    builds = []
    for _ in range(3):
        started = time.perf_counter()
        Linker.build(kb, config).save(workdir / "medic-index")
        builds.append(time.perf_counter() - started)
    mentions = workdir / "ncbi-test-mentions.txt"
    mentions.write_text("\n".join(p for m in load_dataset(ncbi_split("test")) for p in m.parts) + "\n")
    size = sum(f.stat().st_size for f in (workdir / "medic-index").rglob("*") if f.is_file())
    measured = measure_in_fresh_process([sys.executable, str(THROUGHPUT), str(workdir / "medic-index"), str(mentions), str(repeats), "10"], 1)
    child = json.loads(measured["stdout"])
    return {"kb": "MEDIC (medic_06Jul2012.txt)", "names": kb.stats()["names"], "build_seconds_median": statistics.median(builds),
            "index_size_mb": round(size / 2**20, 1), "peak_rss_mb": measured["peak_rss_mb_median"], **child}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--bc5cdr", action="store_true", help="BC5CDR-disease's rows only, to lexical_linking_bc5cdr.json")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if args.bc5cdr:
        publish("lexical_linking_bc5cdr", {"command": command_line(__file__, sys.argv[1:]), "rows": bc5cdr_rows(args.workdir),
                                           "lexical_datasets": ["BC5CDR-disease"], "seconds": time.perf_counter() - started})
        return
    rows = ncbi_rows(args.workdir) + aap_rows(args.workdir, args.folds)
    throughput = speed(args.workdir, args.repeats)
    print(throughput, flush=True)
    publish("lexical_linking", {"command": command_line(__file__, sys.argv[1:]), "rows": rows, "speed": {**throughput, "repeats": args.repeats},
                                "seconds": time.perf_counter() - started})


if __name__ == "__main__":
    main()

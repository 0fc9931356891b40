"""TF-IDF index on a UMLS-scale KB: build time, peak RSS and linking throughput.

    python benchmarks/scale/lexical_scale.py [--rows 5000000]

Uses the synthetic MRCONSO KB of kb_build.py (generated if missing). The index is a TF-IDF-only
linker (``configs/tfidf_only.json``) built by ``medlink index build`` in a fresh process; the
queries are 2,000 KB names with a character dropped and words shuffled (no exact hits).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import ROOT, THROUGHPUT, command_line, measure_in_fresh_process, publish  # noqa: E402

from medlink.kb.build import build_kb  # noqa: E402
from medlink.kb.store import KB  # noqa: E402

CONFIG = ROOT / "benchmarks" / "configs" / "tfidf_only.json"


def perturbed_queries(kb: KB, count: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    total = kb.stats()["names"]
    wanted = set(rng.sample(range(total), count))
    queries = []
    for i, (_, name, _) in enumerate(kb.iter_names(batch=100_000)):
        if i in wanted:
            words = name.split()
            rng.shuffle(words)
            text = " ".join(words)
            cut = rng.randrange(len(text))
            queries.append(text[:cut] + text[cut + 1 :])
            if len(queries) == count:
                break
    return queries


def exhaustive_agreement(index: Path, queries: list[str]) -> dict:
    """How often the fast path's best name scores as high as scoring every name (impact postings off)."""
    from medlink.linking.linker import Linker

    linker = Linker.load(index)
    generator = linker.generators["tfidf"]
    keys = [linker.normalize(q) for q in queries]
    without_selective = int(((generator.vectorizer.transform(keys) @ generator.postings).getnnz(axis=1) == 0).sum())
    fast = linker.link(queries, k=1)
    generator.impact = None
    exhaustive = linker.link(queries, k=1)
    same = sum(bool(a.candidates) and bool(b.candidates) and abs(a.candidates[0].score - b.candidates[0].score) < 1e-5
               for a, b in zip(fast, exhaustive))
    return {"agreement_queries": len(queries), "without_selective_ngram": without_selective, "top1_score_as_exhaustive": same / len(queries)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    meta = args.workdir / f"synthetic-umls-{args.rows}"
    kb_path = args.workdir / f"synthetic-{args.rows}.sqlite"
    if not kb_path.exists():
        if not (meta / "META" / "MRCONSO.RRF").exists():
            from benchmarks.scale.synthetic_umls import write_meta

            write_meta(meta, args.rows)
        build_kb(kb_path, [f"umls:{meta / 'META'}"], progress=False)
    kb = KB.open(kb_path)
    index = args.workdir / f"synthetic-{args.rows}-tfidf-index"
    build = measure_in_fresh_process([sys.executable, "-m", "medlink", "index", "build", "--kb", str(kb_path), "--out", str(index), "--config", str(CONFIG)], 1)
    print("build", {k: v for k, v in build.items() if k != "stdout"}, flush=True)
    queries = args.workdir / "synthetic-queries.txt"
    queries.write_text("\n".join(perturbed_queries(kb, 2000)) + "\n")
    link = measure_in_fresh_process([sys.executable, str(THROUGHPUT), str(index), str(queries), "3", "10"], 1)
    child = json.loads(link["stdout"])
    size = sum(f.stat().st_size for f in index.rglob("*") if f.is_file())
    agreement = exhaustive_agreement(index, queries.read_text().splitlines()[:500])
    print(agreement, flush=True)
    result = {**agreement, "kb": kb_path.name, "concepts": len(kb), "names": kb.stats()["names"], "build_seconds": build["seconds_median"],
              "build_peak_rss_mb": build["peak_rss_mb_median"], "index_size_mb": round(size / 2**20), "link_peak_rss_mb": link["peak_rss_mb_median"], **child}
    print(result, flush=True)
    publish("lexical_scale", {"command": command_line(__file__, sys.argv[1:]), **result})


if __name__ == "__main__":
    main()

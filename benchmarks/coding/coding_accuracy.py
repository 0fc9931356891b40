"""ICD-10-CM codes for common clinical phrases: the default index with and without ``--target-namespace ICD10CM``.

    python benchmarks/coding/coding_accuracy.py [--index default] [--repeats 5]

AskAPatient and NCBI Disease are not coded in ICD-10-CM, so this reads benchmarks/coding/phrases.tsv: 51 common clinical
phrases (lay and clinical wording, abbreviations, a side) with the ICD-10-CM category and full code a coder would write,
written down before the coding mode was measured on them. For each phrase, the first candidate (None when NIL) of
``medlink.link`` (k 5) and of ``medlink.link(..., target_namespace="ICD10CM")``: category accuracy (its first three
characters), full-code accuracy, how many answers are ICD-10-CM codes at all, how many are NIL. Time: the coder's
first-use build, then the median over --repeats of linking every phrase, with and without coding (the index loaded and
warm), per mention.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks._common.harness import command_line, publish  # noqa: E402

PHRASES = Path(__file__).resolve().with_name("phrases.tsv")


def read_phrases(path: Path = PHRASES) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def scored(results, phrases: list[dict[str, str]]) -> dict:
    """Category and full-code accuracy of the first candidates, and what each phrase got."""
    rows, category, code, icd, nil = [], 0, 0, 0, 0
    for result, phrase in zip(results, phrases):
        best = result.best
        got = best.concept_id.removeprefix("ICD10CM:") if best is not None and best.concept_id.startswith("ICD10CM:") else None
        category += got is not None and got[:3] == phrase["category"]
        code += got == phrase["code"]
        icd += got is not None
        nil += best is None
        rows.append({"phrase": phrase["phrase"], "expected": phrase["code"], "first": best.concept_id if best else None})
    n = len(phrases)
    return {
        "category_accuracy": round(category / n, 4),
        "code_accuracy": round(code / n, 4),
        "icd10cm_first": icd,
        "nil": nil,
        "mentions": n,
        "answers": rows,
    }


def median_seconds(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", default="default")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--name", default="coding_phrases")
    args = parser.parse_args()
    import medlink
    from medlink.linking.coding import coder_for
    from medlink.linking.index import resolve_index
    from medlink.linking.linker import Linker

    phrases = read_phrases()
    texts = [p["phrase"] for p in phrases]
    linker = Linker.load(resolve_index(args.index)).prepare()
    started = time.perf_counter()
    coder = coder_for(linker, "ICD10CM")
    build_seconds = time.perf_counter() - started
    medlink._loaded[str(args.index)] = linker  # medlink.link below uses this loaded linker, not a second copy
    plain = medlink.link(texts, index=args.index, k=5)
    coded = medlink.link(texts, index=args.index, k=5, target_namespace="ICD10CM")
    plain_seconds = median_seconds(lambda: medlink.link(texts, index=args.index, k=5), args.repeats)
    coded_seconds = median_seconds(lambda: medlink.link(texts, index=args.index, k=5, target_namespace="ICD10CM"), args.repeats)
    without, with_coding = scored(plain, phrases), scored(coded, phrases)
    for row, other in zip(with_coding["answers"], without["answers"]):
        print(f"{row['phrase']:<34} expected {row['expected']:<8} coded {row['first']!s:<16} plain {other['first']}")
    print(
        f"category accuracy: {without['category_accuracy']:.3f} without, {with_coding['category_accuracy']:.3f} with --target-namespace; "
        f"full code {without['code_accuracy']:.3f} / {with_coding['code_accuracy']:.3f}; "
        f"{(coded_seconds - plain_seconds) / len(texts) * 1000:.2f} ms more per mention; coder built in {build_seconds:.1f} s"
    )
    publish(
        args.name,
        {
            "command": command_line(__file__, sys.argv[1:]),
            "index": args.index,
            "dataset": "benchmarks/coding/phrases.tsv",
            "mappings": coder.sources,
            "without": without,
            "with_target_namespace": with_coding,
            "seconds": {
                "coder_build": round(build_seconds, 2),
                "link_per_mention_ms": round(plain_seconds / len(texts) * 1000, 3),
                "coded_link_per_mention_ms": round(coded_seconds / len(texts) * 1000, 3),
                "overhead_per_mention_ms": round((coded_seconds - plain_seconds) / len(texts) * 1000, 3),
                "repeats": args.repeats,
            },
        },
    )


if __name__ == "__main__":
    main()

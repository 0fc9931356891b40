"""Score medlink on the clinical-note acceptance set (notes.jsonl), through the public API only.

Spans: precision, recall and F1 by exact offsets, and by overlap (one gold to one predicted span, largest overlap first).
Codes, on the gold mentions found (overlap): medlink's code is the first candidate whose id starts with "ICD10CM:";
accuracy at category level (first 3 characters) and on the full code; the rate at which the first candidate is an
ICD-10-CM concept. Assertion status and the historical flag on the found mentions. Wrong codes given with
probability >= 0.95 (the ICD-10-CM candidate's own probability), wrong codes linked at all (the mention not NIL), the
expected calibration error of the code probabilities against the full code being right, and spurious spans linked with
probability >= 0.95.

``--target-namespace ICD10CM`` scores coding mode (``medlink.annotate(..., target_namespace=...)``): each span's
candidates are then codes of that namespace first; a span no code is reachable from is NIL for coding (counted).

Run: python benchmarks/clinical_notes/score.py --split dev|test|all [--index default] [--target-namespace ICD10CM]
Writes benchmarks/results/clinical_notes_<split>.json, in coding mode clinical_notes_<split>_<namespace>.json
(``clinical_notes_test_icd10cm``), so both modes are kept; ``--publish`` also regenerates BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._common.harness import command_line, publish, write_results  # noqa: E402
from medlink.eval.calibration import expected_calibration_error  # noqa: E402

CONFIDENT = 0.95
ICD = "ICD10CM:"


def load(split: str) -> list[dict]:
    records = [json.loads(line) for line in (HERE / "notes.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return [record for record in records if split == "all" or record["split"] == split]


def prf(matched_predicted: int, predicted: int, matched_gold: int, gold: int) -> dict:
    precision = matched_predicted / predicted if predicted else 0.0
    recall = matched_gold / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
            "tp_predicted": matched_predicted, "predicted": predicted, "tp_gold": matched_gold, "gold": gold}


def overlap_pairs(gold: list[dict], predicted: list[dict]) -> dict[int, int]:
    """gold index -> predicted index: one to one, the largest overlaps first."""
    options = []
    for g, mention in enumerate(gold):
        for p, span in enumerate(predicted):
            shared = min(mention["end"], span["end"]) - max(mention["start"], span["start"])
            if shared > 0:
                options.append((-shared, g, p))
    pairs, used = {}, set()
    for _, g, p in sorted(options):
        if g not in pairs and p not in used:
            pairs[g] = p
            used.add(p)
    return pairs


def predicted_span(annotation) -> dict:
    """What the score needs of one medlink annotation (public fields only)."""
    result = annotation.result
    candidates = list(result.candidates) if result is not None else []
    icd = next((candidate for candidate in candidates if candidate.concept_id.startswith(ICD)), None)
    icd_probability = None
    if icd is not None:
        icd_probability = icd.probability
        if icd_probability is None and candidates and candidates[0] is icd:
            icd_probability = result.probability
    assertion = annotation.assertion
    return {
        "start": annotation.start, "end": annotation.end, "text": annotation.text,
        "first_id": candidates[0].concept_id if candidates else None,
        "first_name": candidates[0].name if candidates else None,
        "probability": result.probability if result is not None else None,
        "nil": result.nil if result is not None else None,
        "icd10cm": icd.concept_id[len(ICD):] if icd is not None else None,
        "icd10cm_name": icd.name if icd is not None else None,
        "icd10cm_probability": icd_probability,
        "icd10cm_rank": candidates.index(icd) + 1 if icd is not None else None,
        "assertion": assertion.status if assertion is not None else None,
        "historical": assertion.historical if assertion is not None else None,
        "error": result.error if result is not None else None,
    }


def rate(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def score(records: list[dict], documents: list) -> dict:
    exact_pred = exact_gold = overlap_pred = n_pred = n_gold = 0
    coded = category_ok = full_ok = first_icd = found = 0
    assertion_ok = historical_ok = 0
    confident_wrong_full = confident_wrong_category = confident_spurious = no_code = linked_wrong_full = 0
    code_probabilities: list[float] = []  # each found mention's code probability, and whether the full code is right (ECE)
    code_right: list[bool] = []
    confusion: dict[str, Counter] = defaultdict(Counter)
    by_kind: dict[str, Counter] = defaultdict(Counter)
    details = []
    for record, document in zip(records, documents):
        gold = record["mentions"]
        predicted = [predicted_span(annotation) for annotation in document.annotations]
        n_gold += len(gold)
        n_pred += len(predicted)
        exact = {(span["start"], span["end"]) for span in predicted}
        exact_gold += sum((mention["start"], mention["end"]) in exact for mention in gold)
        gold_offsets = {(mention["start"], mention["end"]) for mention in gold}
        exact_pred += sum((span["start"], span["end"]) in gold_offsets for span in predicted)
        pairs = overlap_pairs(gold, predicted)
        overlap_pred += len(pairs)
        kind = by_kind[record["kind"]]
        kind["gold"] += len(gold)
        kind["found"] += len(pairs)
        rows = []
        for g, mention in enumerate(gold):
            span = predicted[pairs[g]] if g in pairs else None
            row = {"gold": mention, "predicted": span}
            rows.append(row)
            if span is None:
                continue
            found += 1
            first_icd += bool(span["first_id"] and span["first_id"].startswith(ICD))
            no_code += span["icd10cm"] is None
            status = span["assertion"] or "none"
            confusion[mention["assertion"]][status] += 1
            assertion_ok += status == mention["assertion"]
            historical_ok += bool(span["historical"]) == mention["historical"]
            if mention["icd10cm"] is None:
                continue
            coded += 1
            kind["coded"] += 1
            guess = span["icd10cm"] or ""
            category = guess[:3] == mention["icd10cm"][:3]
            full = guess == mention["icd10cm"]
            category_ok += category
            full_ok += full
            kind["category_ok"] += category
            kind["full_ok"] += full
            probability = span["icd10cm_probability"] or 0.0
            code_probabilities.append(probability)
            code_right.append(full)
            linked_wrong_full += (not full) and span["nil"] is False
            confident_wrong_full += (not full) and probability >= CONFIDENT
            confident_wrong_category += (not category) and probability >= CONFIDENT
        matched = set(pairs.values())
        spurious = [span for p, span in enumerate(predicted) if p not in matched]
        confident_spurious += sum((span["probability"] or 0.0) >= CONFIDENT for span in spurious)
        details.append({"id": record["id"], "kind": record["kind"], "mentions": rows, "spurious": spurious})
    return {
        "snippets": len(records),
        "spans_exact": prf(exact_pred, n_pred, exact_gold, n_gold),
        "spans_overlap": prf(overlap_pred, n_pred, overlap_pred, n_gold),
        "found_mentions": found,
        "found_with_code": coded,
        "icd10cm_category_accuracy": rate(category_ok, coded),
        "icd10cm_full_accuracy": rate(full_ok, coded),
        "first_candidate_icd10cm_rate": rate(first_icd, found),
        "found_without_icd10cm_candidate": no_code,
        "assertion_accuracy": rate(assertion_ok, found),
        "historical_accuracy": rate(historical_ok, found),
        "assertion_confusion": {status: dict(row) for status, row in sorted(confusion.items())},
        "confident_wrong_full_code": confident_wrong_full,
        "confident_wrong_category": confident_wrong_category,
        "confident_spurious_spans": confident_spurious,
        "linked_wrong_full_code": linked_wrong_full,
        "code_ece": round(expected_calibration_error(code_probabilities, code_right), 4) if code_probabilities else None,
        "confidence_threshold": CONFIDENT,
        "by_kind": {kind: {"gold": c["gold"], "recall_overlap": rate(c["found"], c["gold"]),
                           "category_accuracy": rate(c["category_ok"], c["coded"]), "full_accuracy": rate(c["full_ok"], c["coded"])}
                    for kind, c in sorted(by_kind.items())},
        "details": details,
    }


def table(split: str, result: dict, target_namespace: str | None = None) -> str:
    exact, overlap = result["spans_exact"], result["spans_overlap"]
    mode = f", coding mode ({target_namespace})" if target_namespace else ""
    lines = [
        f"clinical notes, split {split}{mode}: {result['snippets']} snippets, {exact['gold']} gold mentions, {exact['predicted']} predicted spans",
        f"{'metric':<40}{'value':>10}",
        f"{'span P / R / F1 (exact)':<40}{exact['precision']:.3f} / {exact['recall']:.3f} / {exact['f1']:.3f}",
        f"{'span P / R / F1 (overlap)':<40}{overlap['precision']:.3f} / {overlap['recall']:.3f} / {overlap['f1']:.3f}",
        f"{'found mentions (with a gold code)':<40}{result['found_mentions']:>6} ({result['found_with_code']})",
    ]
    for label, key in [("ICD-10-CM category accuracy (3 chars)", "icd10cm_category_accuracy"),
                       ("ICD-10-CM full-code accuracy", "icd10cm_full_accuracy"),
                       ("first candidate is ICD-10-CM", "first_candidate_icd10cm_rate"),
                       ("assertion status accuracy", "assertion_accuracy"),
                       ("historical flag accuracy", "historical_accuracy")]:
        value = result[key]
        lines.append(f"{label:<40}{'n/a' if value is None else f'{value:.3f}':>10}")
    lines += [f"{'found, no ICD-10-CM candidate':<40}{result['found_without_icd10cm_candidate']:>10}",
              f"{'wrong full code, p >= 0.95':<40}{result['confident_wrong_full_code']:>10}",
              f"{'wrong category, p >= 0.95':<40}{result['confident_wrong_category']:>10}",
              f"{'spurious spans, p >= 0.95':<40}{result['confident_spurious_spans']:>10}",
              f"{'wrong full code, linked (not NIL)':<40}{result['linked_wrong_full_code']:>10}",
              f"{'ECE of the code probabilities':<40}{'n/a' if result['code_ece'] is None else format(result['code_ece'], '.3f'):>10}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    parser.add_argument("--index", default="default", help="medlink index name or folder (default: the packaged default)")
    parser.add_argument("--target-namespace", metavar="NS",
                        help="coding mode: medlink.annotate(..., target_namespace=NS), e.g. ICD10CM (default: plain linking)")
    parser.add_argument("--name", help="results file name (default: clinical_notes_<split>, in coding mode clinical_notes_<split>_<ns>)")
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    parser.add_argument("--publish", action="store_true", help="also regenerate BENCHMARKS.md (benchmarks/report.py)")
    args = parser.parse_args()

    import medlink

    records = load(args.split)
    started = time.perf_counter()
    options = {"target_namespace": args.target_namespace} if args.target_namespace else {}
    documents = medlink.annotate([medlink.Document.from_text(record["text"], doc_id=record["id"]) for record in records], index=args.index,
                                 **options)
    seconds = time.perf_counter() - started
    for record, document in zip(records, documents):
        assert document.text == record["text"], record["id"]
    result = score(records, documents)
    print(table(args.split, result, args.target_namespace))
    if args.no_write:
        return
    payload = {"clinical_notes": {"split": args.split, "index": args.index, "target_namespace": args.target_namespace,
                                  "seconds": round(seconds, 2), "medlink_version": getattr(medlink, "__version__", None), **result},
               "command": command_line(__file__, sys.argv[1:])}
    (publish if args.publish else write_results)(args.name or results_name(args.split, args.target_namespace), payload)


def results_name(split: str, target_namespace: str | None = None) -> str:
    """clinical_notes_<split>, and in coding mode clinical_notes_<split>_<namespace> (lower case): both modes kept."""
    return f"clinical_notes_{split}" + (f"_{target_namespace.lower()}" if target_namespace else "")


if __name__ == "__main__":
    main()

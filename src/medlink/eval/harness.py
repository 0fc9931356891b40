"""Run a linker over labelled mentions and score it: one batched ``predict`` call, then metrics.

``predict(texts) -> results`` gets every part of every mention in one list (composite mentions
contribute one text per part), so a linker can batch its work; it returns one ``LinkResult`` (or
one ranked candidate list) per text. ``evaluate_rankings`` scores rankings computed elsewhere (cached runs, folds).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from medlink.core import Candidate, LinkResult
from medlink.corpora.mentions import LabeledMention
from medlink.errors import MedlinkError
from medlink.eval.metrics import (
    ACC_KS,
    NOT_FOUND,
    RECALL_KS,
    EquivalentIds,
    candidate_id,
    candidate_matches,
    compute_metrics,
    mention_rank,
    part_rank,
)
from medlink.eval.report import EvalReport
from medlink.eval.subpopulations import subpopulation_masks

Predict = Callable[[list[str]], Sequence[LinkResult | Sequence[Candidate]]]
RECORD_TOP = 5


def evaluate(predict: Predict, mentions: Sequence[LabeledMention], **options: Any) -> EvalReport:
    """Link every part of every mention with one ``predict`` call and score the result (``options``: as
    ``evaluate_rankings`` takes them), with the time ``predict`` took."""
    texts = [part for m in mentions for part in m.parts]
    started = time.perf_counter()
    rankings = predict(texts)
    seconds = time.perf_counter() - started
    report = evaluate_rankings(rankings, mentions, **options)
    report.timing["predict_seconds"] = seconds
    report.timing["parts_per_second"] = len(texts) / seconds if seconds > 0 else None
    return report


def evaluate_rankings(
    rankings: Sequence[Sequence[Any]],
    mentions: Sequence[LabeledMention],
    *,
    equivalent_ids: EquivalentIds | None = None,
    train: Sequence[LabeledMention] | None = None,
    kb: Any = None,
    acc_ks: Sequence[int] = ACC_KS,
    recall_ks: Sequence[int] = RECALL_KS,
    subpopulations: bool = True,
    records: bool = True,
) -> EvalReport:
    """Score rankings (link results or candidate lists) given per part, in the order ``[part for m in mentions for part in m.parts]``.

    ``kb`` (optional) gives concept names in the records and the direct-match subpopulation;
    ``train`` (optional) gives the seen / unseen / frequency subpopulations.
    """
    judged_nil = [bool(getattr(result, "nil", None)) for result in rankings]
    decided = any(getattr(result, "nil", None) is not None for result in rankings)  # the index has a NIL threshold
    rankings = [ranking_of(result) for result in rankings]
    expected = sum(len(m.parts) for m in mentions)
    if len(rankings) != expected:
        raise MedlinkError(f"the linker returned {len(rankings)} rankings for {expected} mention parts (one ranked list per part expected)")
    ks = tuple(sorted(set(acc_ks) | set(recall_ks)))
    ranks: list[float] = []
    mention_records: list[dict[str, Any]] = []
    position = 0
    for mention in mentions:
        parts = rankings[position : position + len(mention.parts)]
        position += len(mention.parts)
        rank = mention_rank(parts, mention.gold, equivalent_ids)
        ranks.append(rank)
        if records:
            mention_records.append(_record(mention, parts, rank, equivalent_ids, kb))
    metrics = compute_metrics(ranks, ks).to_dict(acc_ks, recall_ks)
    by_subpopulation: dict[str, dict[str, Any]] = {}
    if subpopulations:
        masks = subpopulation_masks(mentions, train=train, kb=kb, equivalent_ids=equivalent_ids)
        for name, mask in masks.items():
            by_subpopulation[name] = compute_metrics([r for r, inside in zip(ranks, mask) if inside], ks).to_dict(acc_ks, recall_ks)
        if records:
            for i, record in enumerate(mention_records):
                record["subpopulations"] = [name for name, mask in masks.items() if mask[i]]
    report = EvalReport(metrics, by_subpopulation, mention_records)
    if decided:
        nil = per_mention(judged_nil, mentions)
        report.nil = nil_decisions(ranks, nil)
        for record, unlinked in zip(mention_records, nil):
            record["nil"] = unlinked
    report.first_candidates = first_candidate_points(rankings, mentions, equivalent_ids)
    if report.first_candidates:
        from medlink.eval.calibration import expected_calibration_error, reliability

        probabilities, right = zip(*report.first_candidates)
        report.calibration = {
            "ece": expected_calibration_error(probabilities, right),
            "n": len(right),
            "bins": reliability(probabilities, right),
        }
    report.intervals = ranking_intervals(ranks, mentions, acc_ks, report.first_candidates)
    return report


def ranking_intervals(
    ranks: Sequence[float], mentions: Sequence[LabeledMention], acc_ks: Sequence[int], first_candidates: Sequence[tuple[float, bool]] = ()
) -> dict[str, Any]:
    """95% intervals of Acc@k, MRR and (calibrated indexes) ECE, whole documents resampled (``eval.intervals``; each
    mention its own unit when the dataset names no documents)."""
    from medlink.eval import intervals

    documents = [m.doc_id for m in mentions]
    out: dict[str, Any] = {"resampled": intervals.resampled_unit(documents)}
    out.update(intervals.rank_intervals(ranks, documents, acc_ks))
    if first_candidates and len(first_candidates) == sum(len(m.parts) for m in mentions):
        probabilities, right = zip(*first_candidates)
        part_documents = [m.doc_id for m in mentions for _ in m.parts]
        out["ece"] = intervals.rounded(intervals.interval(intervals.calibration_error(probabilities, right), part_documents))
    return out


def per_mention(judged_nil: Sequence[bool], mentions: Sequence[LabeledMention]) -> list[bool]:
    """Per mention, whether it was left unlinked (a composite when any of its parts was)."""
    out, position = [], 0
    for mention in mentions:
        out.append(any(judged_nil[position : position + len(mention.parts)]))
        position += len(mention.parts)
    return out


def nil_decisions(ranks: Sequence[float], nil: Sequence[bool]) -> dict[str, Any]:
    """What the index's NIL threshold did: how many mentions it left unlinked, how many of those its first candidate had
    right, and the links a user gets: precision over the linked mentions, recall and F1 over all of them (Acc@1 ignores
    the threshold: it scores the ranking)."""
    right = [rank <= 1 for rank in ranks]
    linked = sum(1 for n in nil if not n)
    linked_right = sum(1 for n, r in zip(nil, right) if r and not n)
    precision = linked_right / linked if linked else 0.0
    recall = linked_right / len(ranks) if ranks else 0.0
    return {
        "n": len(ranks),
        "nil": len(ranks) - linked,
        "nil_first_right": sum(1 for n, r in zip(nil, right) if r and n),
        "linked_precision": precision,
        "linked_recall": recall,
        "linked_f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
    }


def first_candidate_points(
    rankings: Sequence[Sequence[Any]], mentions: Sequence[LabeledMention], equivalent_ids: EquivalentIds | None
) -> list[tuple[float, bool]]:
    """(probability, right) of each part's first candidate, when a calibrated index gave it one."""
    owners = [m for m in mentions for _ in m.parts]
    points = []
    for mention, ranking in zip(owners, rankings):
        top = ranking[0] if ranking else None
        if getattr(top, "probability", None) is not None:
            points.append((float(top.probability), candidate_matches(top, mention.gold, equivalent_ids)))
    return points


def gold_outside_kb(mentions: Sequence[LabeledMention], kb: Any) -> str | None:
    """A warning when some mentions have no gold id the KB knows (they can only count as wrong), or None. All of them
    is most often an id spelling the KB does not share ("C002" for "MYT:C002", MeSH ids against another KB): it says so."""
    outside = [m for m in mentions if m.gold and not any(kb.resolve(g) for g in m.gold)]
    if not outside:
        return None
    example = sorted(outside[0].gold)[0]
    if len(outside) < len(mentions):
        return f"{len(outside):,} of {len(mentions):,} mentions have no gold id in the KB (e.g. {example}): they count as wrong"
    kb_example = next((cid for cid, _ in kb.iter_concepts()), None)
    prefix = kb_example.split(":", 1)[0] + ":" if kb_example and ":" in kb_example else ""
    hint = (
        f"; with the KB's prefix, {prefix}{example} is in it: give the KB without a prefix, or the dataset's ids with it"
        if prefix and kb.resolve(prefix + example)
        else f"; the KB's ids look like {kb_example}"
        if kb_example
        else ""
    )
    return f"none of the {len(mentions):,} mentions has a gold id in the KB (e.g. {example}){hint}: every figure will be 0"


def ranking_of(result: LinkResult | Sequence[Candidate]) -> Sequence[Candidate]:
    """A link result's candidates (a plain ranked list is its own)."""
    return result.candidates if isinstance(result, LinkResult) else result


def _record(
    mention: LabeledMention, parts: Sequence[Sequence[Any]], rank: float, equivalent_ids: EquivalentIds | None, kb: Any
) -> dict[str, Any]:
    """What an error analysis needs for one mention: gold, rank, each part's top predictions."""
    predictions = []
    for text, ranking in zip(mention.parts, parts):
        top = []
        for candidate in list(ranking)[:RECORD_TOP]:
            cid = candidate_id(candidate)
            top.append(
                {
                    "id": cid,
                    "alt_ids": list(getattr(candidate, "alt_ids", ())),
                    "name": getattr(candidate, "name", None) or _name(kb, cid),
                    "matched_name": getattr(candidate, "matched_name", None),
                    "score": _score(candidate),
                    "correct": candidate_matches(candidate, mention.gold, equivalent_ids),
                }
            )
        part = part_rank(ranking, mention.gold, equivalent_ids)
        predictions.append({"part": text, "rank": None if part == NOT_FOUND else int(part), "top": top})
    return {
        "text": mention.text,
        "gold": sorted(mention.gold),
        "gold_names": {g: _name(kb, g) for g in sorted(mention.gold)} if kb is not None else None,
        "doc_id": mention.doc_id,
        "start": mention.start,
        "end": mention.end,
        "semantic_type": mention.semantic_type,
        "rank": None if rank == NOT_FOUND else int(rank),
        "correct@1": rank <= 1,
        "parts": predictions,
    }


def cuiless_records(mentions: Sequence[LabeledMention], results: Sequence[LinkResult], kb: Any = None) -> list[dict[str, Any]]:
    """Records of mentions annotated without a concept (id -1), each linked as one string: what the linker offered and
    whether it said NIL (the right answer for them), for records.jsonl beside the annotated mentions'."""
    out = []
    for mention, result in zip(mentions, results):
        record = _record(mention, [ranking_of(result)], NOT_FOUND, None, kb)
        out.append({**record, "correct@1": bool(result.nil), "nil": result.nil, "cuiless": True})
    return out


def _name(kb: Any, concept_id: str) -> str | None:
    """Preferred name of a concept (alt ids resolve), or None without a KB."""
    if kb is None:
        return None
    resolved = kb.resolve(concept_id)
    return kb.name_of(resolved) if resolved else None


def _score(candidate: Any) -> float | None:
    score = getattr(candidate, "score", None)
    return None if score is None else float(score)

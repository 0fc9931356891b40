"""How good an alignment is against gold mappings: ranking measures (recall@k, MRR, Rahimi et al. (2020)'s normalised recall)
and the OAEI measure (precision / recall / F1 of the mappings kept above a threshold).

Gold is a set of target ids per source concept (a DO term may cross-reference several ICD-10-CM codes: any of them
counts as a hit at rank r). Normalised recall@k (Rahimi et al. 2020) leaves out the source concepts whose gold the candidate
generator did not retrieve at all, so it measures the reranker alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from medlink.errors import MedlinkError


def gold_ranks(ranked: Mapping[str, Sequence[str]], gold: Mapping[str, set[str]]) -> dict[str, int | None]:
    """The 1-based rank of the first gold target in each gold source concept's ranking (None: not retrieved)."""
    ranks: dict[str, int | None] = {}
    for source, targets in gold.items():
        ranks[source] = next((r for r, t in enumerate(ranked.get(source, ()), 1) if t in targets), None)
    return ranks


def ranking_measures(ranks: Mapping[str, int | None], ks: Sequence[int] = (1, 4, 64)) -> dict[str, float]:
    """recall@k for each k, MRR, and normalised recall@1 / @4 (queries whose gold was retrieved only)."""
    values = list(ranks.values())
    n = len(values)
    found = [r for r in values if r is not None]
    out: dict[str, float] = {"queries": n}
    for k in ks:
        out[f"recall@{k}"] = sum(r <= k for r in found) / n if n else 0.0
    out["mrr"] = sum(1.0 / r for r in found) / n if n else 0.0
    for k in (1, 4):
        out[f"normalised_recall@{k}"] = sum(r <= k for r in found) / len(found) if found else 0.0
    out["retrieved"] = len(found) / n if n else 0.0
    return out


def mapping_prf(kept: Mapping[str, Sequence[str]], gold: Mapping[str, set[str]]) -> dict[str, float]:
    """OAEI precision / recall / F1 of the kept (source, target) mappings over the gold sources.

    A kept mapping is right when its target is one of the source's gold targets; recall counts gold sources with at
    least one right mapping kept (one gold mapping per source is what an aligner is asked to find)."""
    predicted = [(s, t) for s in gold for t in kept.get(s, ())]
    correct = sum(t in gold[s] for s, t in predicted)
    found = sum(any(t in gold[s] for t in kept.get(s, ())) for s in gold)
    precision = correct / len(predicted) if predicted else 0.0
    recall = found / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "kept": len(predicted)}


def best_threshold(
    top: Mapping[str, tuple[str, float]], gold: Mapping[str, set[str]], target: str = "f1"
) -> tuple[float, dict[str, float]]:
    """The confidence threshold on each source's top mapping for ``target`` (``calibration_core``: the best mapping F1,
    or the lowest threshold reaching "precision=P"); call it on dev only."""
    from medlink.calibration_core import choose_threshold, score_thresholds

    if target == "nil-f1":
        raise MedlinkError("the threshold target nil-f1 scores NIL decisions, which an alignment does not make: f1 or precision=P")

    def measures(threshold: float) -> dict[str, float]:
        return mapping_prf({s: [t] for s, (t, score) in top.items() if score >= threshold}, gold)

    chosen = choose_threshold(score_thresholds(score for _, score in top.values()), measures, target, option="the threshold target")
    if chosen is None:
        raise MedlinkError(f"no confidence threshold reaches mapping precision {target.partition('=')[2]} on these mappings")
    return chosen


def mapping_rank_intervals(ranks: Mapping[str, int | None], ks: Sequence[int] = (1, 4, 64)) -> dict[str, list[float] | None]:
    """95% intervals of ``ranking_measures``' recall@k and MRR, the source concepts resampled (``eval.intervals``)."""
    from medlink.eval.intervals import rank_intervals

    return rank_intervals(list(ranks.values()), list(ranks), ks, "recall")


def mapping_intervals(kept: Mapping[str, Sequence[str]], gold: Mapping[str, set[str]]) -> dict[str, list[float] | None]:
    """95% intervals of ``mapping_prf``'s precision / recall / F1, the gold sources resampled."""
    from medlink.eval.intervals import harmonic_mean, interval, rate, ratio, rounded

    sources = list(gold)
    correct = [sum(t in gold[s] for t in kept.get(s, ())) for s in sources]
    claimed = [len(kept.get(s, ())) for s in sources]
    found = [float(any(t in gold[s] for t in kept.get(s, ()))) for s in sources]
    precision, recall = ratio(correct, claimed), rate(found)
    return {
        "precision": rounded(interval(precision, sources)),
        "recall": rounded(interval(recall, sources)),
        "f1": rounded(interval(harmonic_mean(precision, recall), sources)),
    }

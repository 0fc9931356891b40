"""Is one index better than another on the same mentions? Acc@k and MRR differences with paired 95% intervals.

Why: two configurations scored on the same thousand mentions often differ by a point, about what another sample of
mentions would move either of them. Scored on the same resampled documents, what the two share cancels out, and the
interval of the difference says whether these mentions can tell them apart (``eval.intervals``). The baseline is a
folder an earlier ``medlink eval --out`` wrote: its ``records.jsonl`` holds each mention's rank, in dataset order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from medlink.corpora.mentions import LabeledMention
from medlink.errors import MedlinkError

RECORDS = "records.jsonl"


def baseline_ranks(folder: Path, mentions: Sequence[LabeledMention]) -> list[float]:
    """Each mention's rank in an earlier report of the same mentions (inf: not found), checked mention by mention."""
    path = Path(folder) / RECORDS
    if not path.is_file():
        raise MedlinkError(f"--baseline {folder}: no {RECORDS} in it (give a folder an earlier 'medlink eval --out' wrote)")
    records = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in zip(range(1, len(mentions) + 1), handle):
            try:
                records.append(json.loads(line))
            except ValueError as error:
                raise MedlinkError(f"--baseline {path}:{number}: not a JSON record ({error.msg})") from None
    if len(records) < len(mentions):
        raise MedlinkError(
            f"--baseline {folder}: {len(records):,} mentions where this evaluation has {len(mentions):,}; evaluate the "
            "baseline on the same --dataset"
        )
    for number, (record, mention) in enumerate(zip(records, mentions), 1):
        if record.get("text") != mention.text or record.get("doc_id") != mention.doc_id:
            raise MedlinkError(
                f"--baseline {folder}: its mention {number} is {record.get('text')!r}, this dataset's {mention.text!r}; "
                "evaluate the baseline on the same --dataset"
            )
    return [np.inf if record.get("rank") is None else float(record["rank"]) for record in records]


def rank_differences(
    ranks: Sequence[float], baseline: Sequence[float], mentions: Sequence[LabeledMention], acc_ks: Sequence[int]
) -> dict[str, Any]:
    """Acc@k and MRR of ``ranks`` minus the baseline's, each with its paired 95% interval (documents resampled)."""
    from medlink.eval.intervals import paired_difference, rate, resampled_unit, rounded

    ours, theirs = np.asarray(ranks, np.float64), np.asarray(baseline, np.float64)
    documents = [m.doc_id for m in mentions]
    pairs = {f"acc@{k}": (ours <= k, theirs <= k) for k in acc_ks}
    pairs["mrr"] = (1.0 / ours, 1.0 / theirs)
    out: dict[str, Any] = {
        "resampled": resampled_unit(documents),
        "better": int(((ours <= 1) & (theirs > 1)).sum()),
        "worse": int(((ours > 1) & (theirs <= 1)).sum()),
    }
    for name, (a, b) in pairs.items():
        a, b = a.astype(np.float64), b.astype(np.float64)
        out[name] = {
            "difference": float(a.mean() - b.mean()) if len(a) else 0.0,
            "interval": rounded(paired_difference(rate(a), rate(b), documents)),
        }
    return out

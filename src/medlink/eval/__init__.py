"""Evaluation harness: load labelled mentions, run a linker once over all of them, report metrics.

``from medlink.eval import load_dataset, evaluate, equivalent_ids_from_kb`` is the whole workflow;
matplotlib is imported only when a chart is drawn (``EvalReport.plot``). The loaders live in
``medlink.corpora`` and are re-exported here.
"""

from medlink.corpora import (
    DATASET_FORMATS,
    LabeledDocument,
    LabeledMention,
    load_askapatient,
    load_biosyn,
    load_dataset,
    load_pubtator,
    load_pubtator_documents,
)
from medlink.eval.harness import evaluate, evaluate_rankings
from medlink.eval.metrics import Metrics, compute_metrics, equivalent_ids_from_kb, mention_rank, part_rank
from medlink.eval.report import EvalReport, mean_over_folds
from medlink.eval.subpopulations import subpopulation_masks

__all__ = [
    "DATASET_FORMATS",
    "LabeledDocument",
    "EvalReport",
    "LabeledMention",
    "Metrics",
    "compute_metrics",
    "equivalent_ids_from_kb",
    "evaluate",
    "evaluate_rankings",
    "load_askapatient",
    "load_biosyn",
    "load_dataset",
    "load_pubtator",
    "load_pubtator_documents",
    "mean_over_folds",
    "mention_rank",
    "part_rank",
    "subpopulation_masks",
]

"""Corpora: labelled mentions in the benchmark formats (BioSyn, AskAPatient, PubTator) and files of mentions to link.

``load_dataset("FORMAT:PATH")`` reads any labelled format into ``LabeledMention`` records; evaluation, the mention
memory and training read them from here. ``read_mentions`` reads plain lines, TSV or JSONL for ``medlink link``.
"""

from medlink.corpora.askapatient import load_askapatient
from medlink.corpora.biosyn import load_biosyn
from medlink.corpora.datasets import DATASET_FORMATS, load_dataset
from medlink.corpora.mention_files import read_mentions
from medlink.corpora.mentions import LabeledMention, all_gold_ids, split_ids
from medlink.corpora.pubtator import LabeledDocument, load_pubtator, load_pubtator_documents

__all__ = [
    "DATASET_FORMATS",
    "LabeledDocument",
    "LabeledMention",
    "all_gold_ids",
    "load_askapatient",
    "load_biosyn",
    "load_dataset",
    "load_pubtator",
    "load_pubtator_documents",
    "read_mentions",
    "split_ids",
]

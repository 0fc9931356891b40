"""Training: mining pairs from a KB (Kong et al. (2021)'s synonym, graph, ICD-10 and comb tasks) and training encoders on them."""

from medlink.training.pairs import PairsReport, mine_pairs
from medlink.training.pairs_io import Negative, Pair, read_negatives, read_pairs

__all__ = ["Negative", "Pair", "PairsReport", "mine_pairs", "read_negatives", "read_pairs"]

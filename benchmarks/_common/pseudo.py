"""What the default-KB benchmarks share: pseudo-mentions drawn from the default KB, and Acc@k of a linker's results.

The pseudo-mentions are ``medlink.linking.pseudo_mentions``' (held-out synonyms, names as they stand, names with one
edit), drawn with another seed than the default index's own calibration (0), NIL ones left out; they are linked
against the KB without their held-out names. Acc@k follows the evaluation's rule (``medlink.eval.metrics.part_rank``).
"""

from __future__ import annotations

from typing import Sequence

from medlink.core import LinkResult
from medlink.eval.metrics import part_rank


def default_kb_pseudo_mentions(seed: int = 1):
    """(the default KB, the in-KB pseudo-mentions drawn from it, the KB without their held-out names)."""
    from medlink.kb.default import default_kb_path
    from medlink.kb.store import KB
    from medlink.linking.pseudo_mentions import draw_pseudo_mentions

    kb = KB.open(default_kb_path())
    mentions, held_out_kb = draw_pseudo_mentions(kb, seed=seed)
    return kb, [m for m in mentions if not m.nil], held_out_kb


def accuracy_at(results: Sequence[LinkResult], golds: Sequence[frozenset[str]], ks: Sequence[int] = (1, 5)) -> dict[str, float]:
    """Acc@k for each k: the share of results whose first k candidates hold a gold concept."""
    ranks = [part_rank(result.candidates, gold) for result, gold in zip(results, golds)]
    n = max(1, len(ranks))
    return {f"acc@{k}": round(sum(rank <= k for rank in ranks) / n, 4) for k in ks}

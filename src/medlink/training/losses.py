"""Contrastive loss over in-batch and hard negatives (papers 000 and 004).

Each anchor's positive is its own row of ``positives``; every other positive in the batch is an
in-batch negative, and ``negatives`` adds p hard negatives per anchor. Candidates that belong to
the anchor's own concept (two mentions of one concept in a batch) are masked out, not counted as
negatives: punishing the model for a correct match is what makes in-batch training noisy.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def contrastive_loss(
    anchors: torch.Tensor,
    positives: torch.Tensor,
    positive_ids: list[str],
    tau: float,
    negatives: torch.Tensor | None = None,
    negative_ids: list[list[str]] | None = None,
) -> torch.Tensor:
    """InfoNCE: ``-log exp(s(a,p)/tau) / sum over p and all negatives``; inputs are unit vectors."""
    batch = anchors.shape[0]
    logits = anchors @ positives.T / tau  # (B, B): column j is positive j
    same = torch.tensor([[positive_ids[i] == positive_ids[j] and i != j for j in range(batch)] for i in range(batch)], device=logits.device)
    logits = logits.masked_fill(same, float("-inf"))
    if negatives is not None and negatives.numel():
        per_anchor = negatives.shape[0] // batch
        hard = torch.einsum("bd,bpd->bp", anchors, negatives.view(batch, per_anchor, -1)) / tau
        if negative_ids is not None:
            own = torch.tensor([[nid == positive_ids[i] for nid in negative_ids[i]] for i in range(batch)], device=logits.device)
            hard = hard.masked_fill(own, float("-inf"))
        logits = torch.cat([logits, hard], dim=1)
    return F.cross_entropy(logits, torch.arange(batch, device=logits.device))


def adaptive_hinge_loss(
    positive: torch.Tensor, negatives: torch.Tensor, margin: float = 1.0, mask: torch.Tensor | None = None
) -> torch.Tensor:
    """Schumacher et al. (2020)'s adaptive hinge loss (after Dehghani et al. 2017): ``max(0, margin - (s+ - max_j s-_j))``, mean over rows.

    Only the hardest of the n sampled negatives counts: the others are already beaten, and pushing on them would spend
    the gradient on easy cases. ``positive``: (B,); ``negatives``: (B, n); ``mask`` (B, n) true where a negative is real
    (a mention with fewer than n candidates pads its row); a row with no real negative adds no loss.
    """
    if mask is not None:
        negatives = negatives.masked_fill(~mask, float("-inf"))
    hardest = negatives.max(dim=1).values
    losses = torch.clamp(margin - (positive - hardest), min=0.0)
    return torch.where(torch.isfinite(hardest), losses, torch.zeros_like(losses)).mean()

"""Cutting a transformer to its first layers before fine-tuning: the tagger and the aligner's cross-encoder.

Why: a transformer's forward time is proportional to its layers, and on a CPU without fast bf16 (an AVX2-only AMD
EPYC) the full MiniLM tags and reranks far more slowly than on one with it (docs/training-recipes.md). The cut is
made on the model before training, and its config says so, so the saved folder loads as the smaller model it is.
"""

from __future__ import annotations

from medlink.errors import MedlinkError


def check_layers(layers: int | None) -> None:
    """Refuse a layer count no model has (a config read from a file skips the CLI's own check)."""
    if layers is not None and (isinstance(layers, bool) or not isinstance(layers, int) or layers < 1):
        raise MedlinkError(f"layers (--layers) must be a whole number, 1 or more, not {layers!r}")


def keep_layers(model, layers: int | None) -> None:
    """Cut ``model`` (a transformers model, BERT-like: ``base_model.encoder.layer``) to its first ``layers`` layers, its
    config too (None: all kept)."""
    if layers is None:
        return
    encoder = getattr(model.base_model, "encoder", None)
    stack = getattr(encoder, "layer", None)
    if stack is None:
        raise MedlinkError(
            f"--layers: the base model ({type(model.base_model).__name__}) has no encoder layer stack medlink can cut; leave out --layers"
        )
    if layers > len(stack):
        raise MedlinkError(f"--layers {layers}: the base model has only {len(stack)} layers")
    encoder.layer = stack[:layers]
    model.config.num_hidden_layers = layers

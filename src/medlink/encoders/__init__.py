"""Text encoders on the CPU from local Hugging Face folders: a bi-encoder (pooled, L2-normalised) and a cross-encoder (pair scores)."""

from medlink.encoders.cross import CrossEncoder
from medlink.encoders.transformer import Encoder, EncoderSpec, default_model_dir

__all__ = ["CrossEncoder", "Encoder", "EncoderSpec", "default_model_dir"]

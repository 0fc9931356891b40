"""Text encoders: a local Hugging Face transformer folder, pooled and L2-normalised, on the CPU."""

from medlink.encoders.transformer import Encoder, EncoderSpec, default_model_dir

__all__ = ["Encoder", "EncoderSpec", "default_model_dir"]

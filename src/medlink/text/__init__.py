"""Text handling shared by KB names and mentions."""

from medlink.text.normalize import Normalizer, normalize

__all__ = ["Normalizer", "normalize"]

"""Rerankers that compose with any linker: kNN interpolation with a memory of training mentions, and a cross-encoder."""

from medlink.rerank.cross_encoder import CrossEncoderReranker
from medlink.rerank.knn import KnnReranker

__all__ = ["CrossEncoderReranker", "KnnReranker"]

"""Rerankers that compose with any linker: kNN interpolation with a memory of training mentions."""

from medlink.rerank.knn import KnnReranker

__all__ = ["KnnReranker"]

"""Candidate generators behind one protocol (``search(mentions, k)``), the alias table they
search, and fusion of several generators' rankings."""

from medlink.retrieval.base import GENERATORS, CandidateGenerator, build_generator, load_generator
from medlink.retrieval.names import NameTable

__all__ = ["CandidateGenerator", "GENERATORS", "NameTable", "build_generator", "load_generator"]

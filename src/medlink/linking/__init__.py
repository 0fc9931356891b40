"""The Linker: candidate generators + fusion, built from a config, saved as an index directory."""

from medlink.linking.linker import Linker

__all__ = ["Linker"]

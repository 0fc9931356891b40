"""Knowledge bases: concept records, one reader per source format, and the SQLite store."""

from medlink.kb.build import build_kb
from medlink.kb.records import Concept
from medlink.kb.store import KB

__all__ = ["KB", "Concept", "build_kb"]

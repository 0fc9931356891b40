"""``medlink annotate``'s engines: one process (``local``), or Ray Data over an actor pool (``ray``).

Both read the input in the driver with the same readers, and give the same output byte for byte. ``engines`` picks
one; ``job`` holds what the command line asked for and the steps both take (documents in, each annotated document
finished and counted); ``render`` turns one annotated document into its output text; ``local`` runs in this process,
``ray_engine`` on Ray (local by default, a cluster with an address), resumable through ``resume``.
"""

from __future__ import annotations

from medlink.batch.engines import ENGINES, run
from medlink.batch.job import AnnotateJob

__all__ = ["ENGINES", "AnnotateJob", "run"]

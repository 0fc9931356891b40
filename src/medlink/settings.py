"""Where medlink keeps its caches: ``$MEDLINK_HOME``, else ``$XDG_CACHE_HOME/medlink``, else ``~/.cache/medlink``."""

from __future__ import annotations

import os
from pathlib import Path


def medlink_home() -> Path:
    """The user cache directory (created on demand)."""
    if os.environ.get("MEDLINK_HOME"):
        home = Path(os.environ["MEDLINK_HOME"])
    else:
        home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "medlink"
    home.mkdir(parents=True, exist_ok=True)
    return home

"""Replacing a whole directory so that readers see the old one or the new one, never half of each."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def replace_directory(built: Path, final: Path) -> None:
    """Move the finished directory ``built`` to ``final``; an existing ``final`` is set aside first, then removed."""
    if final.exists():
        old = final.with_name(f".{final.name}.{os.getpid()}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
        os.replace(built, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(built, final)

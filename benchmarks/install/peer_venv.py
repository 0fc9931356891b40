"""A peer's own virtual environment, made once: a peer whose pins this environment cannot share runs there.

The environment is usable once ``DIR/.complete`` exists (written last), so an interrupted install is redone. PyPI only.
"""

from __future__ import annotations

import shutil
import subprocess
import venv
from pathlib import Path


def peer_environment(folder: Path, packages: list[str]) -> Path:
    """The python of ``folder``'s environment holding ``packages``, made now if it is not complete."""
    marker = folder / ".complete"
    if marker.exists():
        print(f"{folder} already holds {marker.read_text().strip()}")
    else:
        shutil.rmtree(folder, ignore_errors=True)  # a half-made environment from an interrupted run
        venv.EnvBuilder(with_pip=True).create(folder)
        subprocess.run([str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet", *packages], check=True)
        marker.write_text(" ".join(packages) + "\n")
    return folder / "bin" / "python"

"""Installed versions of the packages an artefact depends on, recorded so results can be reproduced."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata

CORE_PACKAGES = ("medlink", "numpy", "scipy", "scikit-learn", "bm25s")
DENSE_PACKAGES = ("torch", "transformers", "faiss-cpu")


def package_versions(packages: Iterable[str] = CORE_PACKAGES + DENSE_PACKAGES) -> dict[str, str]:
    """``{package: version}``, "absent" for packages not installed (e.g. the optional dense extra)."""
    versions = {}
    for package in packages:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "absent"
    return versions

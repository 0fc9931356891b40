"""How BENCHMARKS.md shows a figure's 95% interval (``medlink.eval.intervals``): beside the figure, in brackets."""

from __future__ import annotations


def interval_cell(bounds, digits: int = 3) -> str:
    """`` [low-high]`` for a results file's ``[low, high]`` pair; nothing for a run that recorded none (older files)."""
    if not bounds or any(b is None for b in bounds):
        return ""
    return f" [{bounds[0]:.{digits}f}-{bounds[1]:.{digits}f}]"

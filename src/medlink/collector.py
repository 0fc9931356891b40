"""Python's cyclic garbage collector paused while a batch makes objects that outlive it.

Why: linking a batch makes several objects per candidate (the candidate, its stage scores, its evidence), and every
one of them survives to the result. The collector counts those allocations and runs its full passes over every live
object again and again, the index's millions of names included: at k 30 that is about as long as the whole
calibration stage. The candidates hold no reference cycles, so nothing is left for the collector to find afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """Collector off inside the block, back on after it if it was on (a caller who turned it off keeps it off; of
    threads that overlap, one that found it on turns it back on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

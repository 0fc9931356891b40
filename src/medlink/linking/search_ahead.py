"""A long batch searched in chunks, each next chunk searched in a background thread while the caller decides on the
one before.

Why: the compiled searches (``retrieval.compiled``) release the GIL, so their kernels run on one core while the
calibration's Python runs on the other; one search of the whole batch, then one calibration, leaves a core idle in
each. Every key's hits depend on that key alone, so chunks give the same hits as one search. Only the worker touches
the state a search changes (spelling memos, lazy maps); the caller's decision reads the tables alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from medlink.retrieval.compiled import LOAD_FROM

Found = TypeVar("Found")
CHUNK = LOAD_FROM  # keys per chunk, at least: each chunk's search takes the compiled path


def chunk_bounds(n: int, size: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of equal chunks of ``n`` keys, each at least ``size`` (default ``CHUNK``) long: one chunk when
    ``n`` is under twice that."""
    count = max(1, n // (size or CHUNK))
    edges = [n * i // count for i in range(count + 1)]
    return list(zip(edges[:-1], edges[1:]))


def searched_ahead(
    search: Callable[[Sequence[str]], Found], keys: Sequence[str], size: int | None = None
) -> Iterator[tuple[Sequence[str], Found]]:
    """Each chunk of ``keys`` with ``search``'s answer for it, in order; the next chunk's search runs in a background
    thread while the caller reads one (a failure in it is raised here, when its chunk is reached)."""
    bounds = chunk_bounds(len(keys), size)
    if len(bounds) == 1:
        yield keys, search(keys)
        return
    with ThreadPoolExecutor(1, thread_name_prefix="medlink-search-ahead") as ahead:
        pending = ahead.submit(search, keys[bounds[0][0] : bounds[0][1]])
        for i, (start, end) in enumerate(bounds):
            found = pending.result()
            if i + 1 < len(bounds):
                pending = ahead.submit(search, keys[bounds[i + 1][0] : bounds[i + 1][1]])
            yield keys[start:end], found

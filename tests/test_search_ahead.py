"""A batch searched in chunks, the next one in the background: every key once, in order, failures raised."""

from __future__ import annotations

import threading

import pytest

from medlink.linking.search_ahead import chunk_bounds, searched_ahead


@pytest.mark.parametrize("n, size", [(0, 4), (3, 4), (7, 4), (8, 4), (9, 4), (1003, 10)])
def test_chunks_cover_every_key_once_and_each_is_at_least_the_size(n, size):
    bounds = chunk_bounds(n, size)
    assert [start for start, _ in bounds] == [0] + [end for _, end in bounds[:-1]] and bounds[-1][1] == n
    assert len(bounds) == 1 or all(end - start >= size for start, end in bounds)
    assert len(bounds) == max(1, n // size)


def test_each_chunk_comes_with_its_own_answer_the_next_searched_in_another_thread():
    threads = []

    def search(keys):
        threads.append(threading.current_thread())
        return [key.upper() for key in keys]

    keys = [f"k{i}" for i in range(10)]
    out = list(searched_ahead(search, keys, 3))
    assert [part for part, _ in out] == [keys[0:3], keys[3:6], keys[6:10]]
    assert all(found == [key.upper() for key in part] for part, found in out)
    assert threading.main_thread() not in threads


def test_a_failure_in_the_background_search_is_raised_to_the_caller():
    def search(keys):
        if "bad" in keys:
            raise ValueError("damaged postings")
        return keys

    with pytest.raises(ValueError, match="damaged postings"):
        list(searched_ahead(search, ["a", "b", "c", "bad", "e", "f"], 2))


def test_a_short_batch_is_searched_in_the_callers_thread():
    threads = []
    assert list(searched_ahead(lambda keys: threads.append(threading.current_thread()) or keys, ["a", "b"], 4)) == [
        (["a", "b"], ["a", "b"])
    ]
    assert threads == [threading.main_thread()]

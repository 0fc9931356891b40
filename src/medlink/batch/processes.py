"""``medlink annotate --workers N`` without Ray: N worker processes on this machine, each with the index loaded once.

Why: a laptop's or a server's cores, with nothing more installed than medlink. The driver reads the input and hands
the pool a few chunks of pickled documents at a time (never the corpus whole); it appends each chunk's rows in input
order through the resumable output the Ray engine writes (``driver.run_ordered``), so a killed run continues where it
stopped. Workers start fresh (``spawn``): nothing of the driver's threads or loaded libraries is forked into them.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

from medlink.batch.chunks import ChunkAnnotator, Row
from medlink.batch.driver import pickled_chunks, run_ordered, take
from medlink.batch.job import AnnotateJob
from medlink.errors import MedlinkError

CHUNKS_AHEAD = 2  # chunks each worker has in hand or queued: it never waits for the driver, which never reads far ahead
DRIVER_CHECK_SECONDS = 1.0
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

_worker: ChunkAnnotator | None = None  # the annotator a worker process loads once


def run_processes(job: AnnotateJob, workers: int) -> int:
    """Run ``job`` on ``workers`` processes (``engines.run`` checked the count); the exit status (0, or 1 when records
    failed and the output holds the others)."""

    def pipeline(held, rearm, index_dir, documents, output, progress):
        pool = ProcessPoolExecutor(workers, get_context("spawn"), initializer=_start, initargs=(job, index_dir, _environment(workers)))
        held.callback(pool.shutdown, wait=True, cancel_futures=True)
        first, chunks = _annotated_in_order(pool, workers, job, documents, output, progress)
        return first, min(workers, max(chunks, 1))  # the pool starts a worker for each chunk up to ``workers``

    return run_ordered(job, "processes", pipeline)


def _environment(workers: int) -> dict[str, str]:
    """The driver's MEDLINK_* settings (precision, home), and the cores shared out: a worker's torch or FAISS call runs
    as many threads as its share, not one a core each."""
    share = str(max(1, (os.cpu_count() or 1) // workers))
    return {
        **{key: value for key, value in os.environ.items() if key.startswith("MEDLINK_")},
        **{key: os.environ.get(key, share) for key in THREAD_VARIABLES},
    }


def _start(job: AnnotateJob, index_dir: Path, environment: dict[str, str]) -> None:
    """A worker's start: Ctrl-C is the driver's to handle (it stops the pool), a driver killed outright takes its workers
    with it, then the index loaded."""
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(os.getppid(),), name="medlink-driver-watch", daemon=True).start()
    os.environ.update(environment)
    _worker = ChunkAnnotator(job, index_dir)


def _exit_with(driver: int) -> None:
    """Ends this worker once its driver is gone (``kill -9`` of the driver gives no worker a signal: they would wait on
    the pool's queue for ever, each holding an index)."""
    while os.getppid() == driver:
        time.sleep(DRIVER_CHECK_SECONDS)
    os._exit(1)


def _chunk(pickled: list[bytes]) -> list[Row]:
    assert _worker is not None, "a worker's chunk before its start"
    return _worker.chunk(pickled)


def _annotated_in_order(pool: ProcessPoolExecutor, workers: int, job: AnnotateJob, documents, output, progress) -> tuple[float | None, int]:
    """Feed the documents not done yet to ``pool`` and append its rows in input order; when the first rows came
    (``time.perf_counter()``, None when there was nothing to do) and how many chunks there were. An input error is raised
    once the documents read before it are written."""
    from medlink.progress import bar

    size = job.options.batch_documents
    pending: deque = deque()
    first = None
    failure: BaseException | None = None
    submitted = 0
    chunks = pickled_chunks(documents, progress.documents, size)
    with bar(
        enabled=not job.texts and not job.quiet, desc=f"annotate ({workers} processes)", unit="doc", initial=progress.documents
    ) as shown:
        while True:
            if failure is None and len(pending) < CHUNKS_AHEAD * workers:
                try:
                    pending.append(pool.submit(_chunk, next(chunks)[1]))
                    submitted += 1
                    continue
                except StopIteration:
                    failure = StopIteration()
                except Exception as error:  # noqa: BLE001 - the input's; raised after the documents before it
                    failure = error
            if not pending:
                break
            try:
                rows = pending.popleft().result()
            except BrokenProcessPool as error:
                raise MedlinkError(f"a worker process stopped ({error}); run the same command again to continue") from error
            first = first if first is not None else time.perf_counter()
            for row in rows:
                take(row, output, progress)
            shown.update(len(rows))
            output.save()
    if failure is not None and not isinstance(failure, StopIteration):
        raise failure
    return first, submitted

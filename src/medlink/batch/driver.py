"""The driver's side of a run over several workers (Ray actors, or processes on this machine): the input read in chunks,
the workers' rows appended in input order to a resumable output, the throughput and summary lines.

Why apart from the engines: both engines lock and check ``--out``, resume a killed run, count failed documents and
report alike; only how chunks reach a worker and come back differs (``Pipeline``).
"""

from __future__ import annotations

import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import typer

from medlink.batch.counts import AnnotationCounts
from medlink.batch.job import AnnotateJob, say_notes, summary
from medlink.batch.local import require_replaceable_output
from medlink.batch.render import Renderer
from medlink.batch.resume import Progress, ResumableOutput, StreamOutput
from medlink.core import Document

# (held, rearm, index directory, documents, output, progress) -> (when the first rows came, or None; workers): the
# engine starts its workers (their clean-up on ``held``), feeds them, and appends their rows with ``take``
Pipeline = Callable[[ExitStack, Callable[[], None], Path, Iterator[Document], StreamOutput, Progress], tuple[float | None, int]]


def run_ordered(job: AnnotateJob, engine: str, pipeline: Pipeline) -> int:
    """Run ``job`` through ``pipeline``; the exit status (0, or 1 when records failed and the output holds the others)."""
    from medlink.corpora.annotate_output import is_annotate_output
    from medlink.corpora.document_io import NamedSkips
    from medlink.directories import output_lock
    from medlink.linking.index import resolve_index

    begun = time.perf_counter()  # the throughput line counts the index check and the workers' start from here
    with ExitStack() as held:
        rearm = held.enter_context(terminate_as_interrupt())  # from the start: a kill during the workers' start too
        if job.out is not None:
            held.enter_context(output_lock(job.out))
            require_replaceable_output(job, is_annotate_output)
        index_dir = resolve_index(job.index)  # a default index is built here, once, not by each worker
        say_notes(job.load_annotator(index_dir), job)  # settings checked here, with the local engine's messages
        policy = NamedSkips(skip_invalid=job.skip_invalid)
        documents = job.documents(policy)
        renderer = Renderer(job.output_format)
        output = ResumableOutput(job.out, job.settings(index_dir), renderer) if job.out is not None else StreamOutput(sys.stdout, renderer)
        progress = output.open()
        held.callback(output.close)
        first, workers = pipeline(held, rearm, index_dir, documents, output, progress)
        output.finish()
    if not job.quiet:
        say_throughput(engine, progress.documents - output.resumed_from, begun, first, workers, output.resumed_from)
    for failure in progress.failures:
        typer.echo(f"  failed: {failure}", err=True)
    if progress.failed > len(progress.failures):
        typer.echo(f"  failed: {progress.failed - len(progress.failures):,} more record(s)", err=True)
    counts = AnnotationCounts(documents=progress.written, mentions=progress.mentions, linked=progress.linked)
    summary(job, counts, policy, progress.given, progress.failed)
    return 1 if progress.failed else 0


def pickled_chunks(documents: Iterable[Document], done: int, size: int) -> Iterator[tuple[int, list[bytes]]]:
    """``(first document's number, pickled documents)``, ``size`` at a time, after the ``done`` first documents (written
    by an earlier run)."""
    pending: list[bytes] = []
    first = done
    for seq, document in enumerate(documents):
        if seq < done:
            continue
        pending.append(pickle.dumps(document, protocol=pickle.HIGHEST_PROTOCOL))
        if len(pending) == size:
            yield first, pending
            first, pending = seq + 1, []
    if pending:
        yield first, pending


def take(row: tuple, output: StreamOutput, progress: Progress) -> None:
    """One document's output appended (or its failure counted), in input order."""
    doc_id, text, error, mentions, linked, given = row
    seq = progress.documents
    if error is not None:
        progress.fail(f"document {doc_id} (document {seq + 1} of the input): {error}")
        typer.echo(f"medlink: document {doc_id} (document {seq + 1} of the input) failed: {error}", err=True)
    else:
        output.append(text)
        progress.mentions += mentions
        progress.linked += linked
    progress.given += given
    progress.documents += 1


@contextmanager
def terminate_as_interrupt():
    """SIGTERM (``kill PID``) stops the run as Ctrl-C does, the documents done kept for the same command to continue
    (Ray's driver would otherwise die on it with a C++ stack dump); yields what puts the handler back after a library
    replaced it. Only the main thread may set a handler."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield lambda: signal.signal(signal.SIGTERM, interrupt)
    finally:
        signal.signal(signal.SIGTERM, before)


def say_throughput(engine: str, documents: int, begun: float, first: float | None, workers: int, resumed_from: int) -> None:
    """The throughput line: the whole run's seconds, those before the first output (the index checked here, the workers
    started and their index loads), then documents a second after that, and per worker."""
    resumed = f", resumed after document {resumed_from:,}" if resumed_from else ""
    if not documents or first is None:
        typer.echo(f"{engine}: no document left to annotate{resumed}", err=True)
        return
    seconds, starting = time.perf_counter() - begun, first - begun
    working = max(seconds - starting, 1e-9)
    started = f"start Ray and {workers} actor(s)" if engine == "ray" else f"start {workers} worker process(es)"
    per = "actor" if engine == "ray" else "process"
    typer.echo(
        f"{engine}: {documents:,} document(s) in {seconds:.1f} s ({starting:.1f} s to check the index and {started}{resumed}); "
        f"{documents / working:,.1f} documents/s after that, {documents / working / workers:,.1f} per {per}",
        err=True,
    )

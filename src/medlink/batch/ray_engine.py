"""``medlink annotate --engine ray``: Ray Data ``map_batches`` over a pool of actors, each with the index loaded once.

The driver reads the input and feeds it, in chunks, to a queue Ray Data reads (``ray_worker.QueueFeed``); the actors
annotate and render a chunk at a time; the driver takes their output in input order (Ray Data's ``preserve_order``)
and appends it to ``--out`` through ``resume.ResumableOutput`` (or to stdout). Ray runs on this machine unless ``--address`` names a
cluster: started for the run, without its dashboard, its workers' logs kept out of the terminal, and stopped at the end.
A document whose annotation fails is reported with its id and counted; the run goes on.
"""

from __future__ import annotations

import logging
import os
import pickle
import re
import threading
import time
import warnings
from contextlib import contextmanager

from medlink.batch.driver import pickled_chunks, run_ordered, take
from medlink.batch.job import AnnotateJob
from medlink.batch.resume import Progress, StreamOutput
from medlink.errors import MedlinkError

CHUNK_BATCHES = 2  # documents Ray Data hands an actor at once, in --batch-size batches: fewer, larger tasks cost less
TASKS_PER_ACTOR = 2  # chunks given to an actor ahead: the actor that starts first does not take a small corpus whole
QUEUED_CHUNKS = 4  # chunks waiting in the queue per actor: the actors never wait for the reader, the reader never runs far ahead


def run_ray(job: AnnotateJob, address: str | None, workers: int | None) -> int:
    def pipeline(held, rearm, index_dir, documents, output, progress):
        import ray

        if start_ray(address):
            held.callback(ray.shutdown)
        rearm()  # ray.init put Ray's own SIGTERM handler (a stack dump) in place of ours
        actors = workers or cpus_available()
        try:
            return run_pipeline(job, index_dir, documents, output, progress, actors, local=address is None), actors
        except ray.exceptions.RayError as error:  # an actor that could not start or died: said in a line, the progress kept
            raise MedlinkError(f"Ray stopped the run: {ray_reason(error)}") from error

    return run_ordered(job, "ray", pipeline)


def ray_reason(error: BaseException) -> str:
    """The line of a Ray error that says what went wrong (the first "SomeError: ..." of its remote traceback), else its
    first line: Ray's own message is a screenful of its internals."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    found = next(
        (line for line in lines if re.match(r"[A-Za-z_][\w.]*(Error|Exception|Interrupt): ", line) and not line.startswith("ray.")), None
    )
    return (found or (lines[0] if lines else type(error).__name__))[:500]


def start_ray(address: str | None) -> bool:
    """Ray for this run: the one this process already runs (left running), else a cluster's (``address``) or a new one
    on this machine, quiet; whether it was started here (and is to be stopped)."""
    import ray

    if ray.is_initialized():
        return False
    quiet = {"log_to_driver": False, "logging_level": logging.ERROR, "configure_logging": True}
    if address is not None:
        ray.init(address=address, **quiet)
    else:
        os.environ.setdefault(
            "RAY_worker_niceness", "0"
        )  # actors at this command's priority: Ray's default (15) yields every core to any other job
        # a new instance of this run's own, even where another Ray runs here (``ray.init()`` alone would join it)
        ray.init(address="local", num_cpus=os.cpu_count() or 1, include_dashboard=False, **quiet)
    logging.getLogger("ray").setLevel(logging.ERROR)
    return True


def cpus_available() -> int:
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def run_pipeline(
    job: AnnotateJob, index_dir, documents, output: StreamOutput, progress: Progress, actors: int, local: bool
) -> float | None:
    """Feed the documents not done yet to Ray Data and append the actors' output in order; when the first output came
    (``time.perf_counter()``: the actors' start, index loads included, is before it), or None when there was nothing to do."""
    import ray
    from ray.util.queue import Queue

    from medlink.batch.ray_worker import END, AnnotateActor, QueueFeed
    from medlink.progress import bar

    logging.getLogger("ray.data").setLevel(logging.ERROR)
    chunk = job.options.batch_documents * CHUNK_BATCHES
    queue = Queue(maxsize=QUEUED_CHUNKS * actors, actor_options={"num_cpus": 0})
    feeding = Feeder(documents, progress.documents, chunk, queue, END)
    environment = {key: value for key, value in os.environ.items() if key.startswith("MEDLINK_")}
    with data_context(), warnings.catch_warnings():  # max_restarts: Ray's own advice for turning restarts off, its keyword deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        dataset = ray.data.read_datasource(QueueFeed(queue), num_cpus=0, override_num_blocks=1).map_batches(
            AnnotateActor,
            fn_constructor_kwargs={"job": job, "index_dir": index_dir, "environment": environment},
            compute=ray.data.ActorPoolStrategy(size=actors, max_tasks_in_flight_per_actor=TASKS_PER_ACTOR),
            batch_size=1,  # one chunk
            batch_format="pyarrow",
            num_cpus=1,
            **({"max_restarts": 0} if local else {}),  # on one machine an actor that died dies again: the run stops, resumable
        )
    first = None
    feeding.start()
    with (
        queue_closed(queue),
        bar(enabled=not job.texts and not job.quiet, desc="annotate (ray)", unit="doc", initial=progress.documents) as shown,
        warnings.catch_warnings(),
    ):
        warnings.filterwarnings("ignore", message=".*minimum number of concurrent actors")  # one read task feeds them all: not so
        for batch in dataset.iter_batches(batch_size=None, batch_format="pyarrow"):
            first = first if first is not None else time.perf_counter()
            for first_seq, results in zip(batch.column("seq").to_pylist(), batch.column("results").to_pylist()):
                if first_seq != progress.documents:  # preserve_order broken: never write out of order
                    raise RuntimeError(f"Ray returned document {first_seq + 1} where document {progress.documents + 1} was due")
                rows = pickle.loads(results)
                for row in rows:
                    take(row, output, progress)
                shown.update(len(rows))
            output.save()
    feeding.finish()
    return first


@contextmanager
def data_context():
    """Ray Data's settings for this run's dataset (which takes a copy when it is made), the process's own put back after:
    output in input order, no progress bars of Ray's, and a target block size of one byte, so that each chunk the feed
    reads stays one block (Ray Data would merge small blocks up to 128 MB before passing any on, and split a lone read
    task's output into 200)."""
    import ray

    context = ray.data.DataContext.get_current()
    before = (context.execution_options.preserve_order, context.enable_progress_bars, context.target_max_block_size)
    context.execution_options.preserve_order, context.enable_progress_bars, context.target_max_block_size = True, False, 1
    try:
        yield
    finally:
        context.execution_options.preserve_order, context.enable_progress_bars, context.target_max_block_size = before


@contextmanager
def queue_closed(queue):
    """The feed's queue actor stopped when the run ends, however it ends."""
    try:
        yield
    finally:
        try:
            queue.shutdown(force=True)
        except Exception:  # noqa: BLE001 - Ray itself may be stopping
            pass


class Feeder(threading.Thread):
    """Reads the input in the driver and puts chunks of pickled documents in the queue, skipping the ``done`` first ones
    (written by an earlier run); an input error is kept and raised once the documents before it are written."""

    def __init__(self, documents, done: int, chunk: int, queue, end):
        super().__init__(name="medlink-feed", daemon=True)
        self.documents, self.done, self.chunk, self.queue, self.end = documents, done, chunk, queue, end
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for chunk in pickled_chunks(self.documents, self.done, self.chunk):
                self.queue.put(chunk)
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            self.error = error
        finally:
            try:
                self.queue.put(self.end)
            except Exception:  # noqa: BLE001 - the queue is gone: the run is stopping anyway
                pass

    def finish(self) -> None:
        self.join()
        if self.error is not None:
            raise self.error

"""What runs inside Ray: the feed Ray Data reads the driver's documents from, and the actor that annotates them.

Why a queue and one read task: the driver reads the input (any format, stdin, text arguments) with the same readers as
the local engine, and streams it; Ray Data takes the documents as they come, in order, from a queue actor the driver
fills, a chunk of documents a row, so a corpus is never held whole in the driver or the object store. Each actor loads
the index once and renders the documents it annotates, so the driver only appends text.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pyarrow as pa
from ray.data import Datasource, ReadTask
from ray.data.block import BlockMetadata

from medlink.batch.chunks import ChunkAnnotator
from medlink.batch.job import AnnotateJob

END = None  # what the driver puts in the queue after the last chunk


class QueueFeed(Datasource):
    """One read task taking the driver's chunks, ``(first document's number, pickled documents)``, from a Ray queue until
    ``END``: each chunk one row, and (``ray_engine`` sets the target block size to a byte) one block, so Ray Data neither
    merges chunks into a large block nor splits one."""

    def __init__(self, queue):
        super().__init__()
        self.queue = queue

    def estimate_inmemory_data_size(self) -> int | None:
        return None

    def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None, data_context=None) -> list[ReadTask]:
        queue = self.queue

        def read():
            while (chunk := queue.get()) is not END:
                yield pa.table({"seq": [chunk[0]], "chunk": [chunk[1]]})

        return [ReadTask(read, BlockMetadata(num_rows=None, size_bytes=None, exec_stats=None, input_files=None))]


class AnnotateActor:
    """One annotator per actor (``chunks.ChunkAnnotator``): a batch of chunks of pickled documents in, each chunk's
    pickled rows out."""

    def __init__(self, job: AnnotateJob, index_dir: Path, environment: dict[str, str]):
        os.environ.update(environment)  # the driver's MEDLINK_* settings (precision, home), as a local run would have them
        self.annotator = ChunkAnnotator(job, index_dir)

    def __call__(self, batch: pa.Table) -> pa.Table:
        chunks = batch.column("chunk").to_pylist()
        results = [pickle.dumps(self.annotator.chunk(chunk), protocol=pickle.HIGHEST_PROTOCOL) for chunk in chunks]
        return pa.table({"seq": batch.column("seq"), "results": results})

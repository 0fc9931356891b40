"""What runs inside Ray: the feed Ray Data reads the driver's documents from, and the actor that annotates them.

Why a queue and one read task: the driver reads the input (any format, stdin, text arguments) with the same readers as
the local engine, and streams it; Ray Data takes the documents as they come, in order, from a queue actor the driver
fills, so a corpus is never held whole in the driver or the object store. Each actor loads the index once and renders
the documents it annotates, so the driver only appends text.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pyarrow as pa
from ray.data import Datasource, ReadTask
from ray.data.block import BlockMetadata

from medlink.batch.job import AnnotateJob, finished, signature
from medlink.batch.render import Renderer
from medlink.core import Document
from medlink.errors import MedlinkError

END = None  # what the driver puts in the queue after the last chunk


class QueueFeed(Datasource):
    """One read task taking the driver's chunks of ``(number, pickled document)`` from a Ray queue until ``END``."""

    def __init__(self, queue):
        super().__init__()
        self.queue = queue

    def estimate_inmemory_data_size(self) -> int | None:
        return None

    def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None, data_context=None) -> list[ReadTask]:
        queue = self.queue

        def read():
            while (chunk := queue.get()) is not END:
                yield pa.table({"seq": [seq for seq, _ in chunk], "document": [data for _, data in chunk]})

        return [ReadTask(read, BlockMetadata(num_rows=None, size_bytes=None, exec_stats=None, input_files=None))]


class AnnotateActor:
    """One annotator per actor: a batch of pickled documents in, each one's output text (or why it failed) out."""

    def __init__(self, job: AnnotateJob, index_dir: Path, environment: dict[str, str]):
        os.environ.update(environment)  # the driver's MEDLINK_* settings (precision, home), as a local run would have them
        self.job, self.renderer, self.mark = job, Renderer(job.output_format), signature()
        self.annotator = job.load_annotator(index_dir)

    def __call__(self, batch: pa.Table) -> pa.Table:
        pickled = batch.column("document").to_pylist()
        documents = [pickle.loads(data) for data in pickled]
        rows: dict[str, list] = {
            "seq": batch.column("seq").to_pylist(),
            "doc_id": [document.doc_id for document in documents],
            "given": [len(document.annotations) for document in documents],
            "text": [],
            "error": [],
            "mentions": [],
            "linked": [],
        }
        try:
            annotated: list[Document | None] = list(self.annotator.annotate(documents))
        except Exception:  # one document failing fails the batch: each is then annotated alone, to name the one
            annotated = [None] * len(documents)
        for data, document in zip(pickled, annotated):
            try:
                document = document if document is not None else next(iter(self.annotator.annotate([pickle.loads(data)])))
                finished(document, self.job.prefer_prefix, self.mark)
                text = self.renderer.document(document)
                text.encode("utf-8")  # a lone surrogate fails here, as one document, not at the driver's write
                error = None
            except MedlinkError as failure:
                text, error = "", str(failure)
            except Exception as failure:
                text, error = "", f"{type(failure).__name__}: {failure}"
            rows["text"].append(text)
            rows["error"].append(error)
            rows["mentions"].append(len(document.annotations) if error is None else 0)
            rows["linked"].append(sum(bool(a.ids) for a in document.annotations) if error is None else 0)
        return pa.table(rows)

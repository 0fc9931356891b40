"""A chunk of documents annotated and rendered where the index is loaded: in a Ray actor or a worker process.

Why apart from the engines: both engines hand a worker pickled documents and take back, per document, its output text
or why it failed; the driver only appends text, in input order (``driver.take``).
"""

from __future__ import annotations

import pickle
from pathlib import Path

from medlink.batch.job import AnnotateJob, finished, signature
from medlink.batch.render import Renderer
from medlink.core import Document
from medlink.errors import MedlinkError

# per document, in order: (id, output text, error or None, mentions, linked, annotations it came with)
Row = tuple[str, str, str | None, int, int, int]


class ChunkAnnotator:
    """One loaded annotator: a chunk of pickled documents in, each one's row out."""

    def __init__(self, job: AnnotateJob, index_dir: Path):
        self.job, self.renderer, self.mark = job, Renderer(job.output_format), signature()
        self.annotator = job.load_annotator(index_dir)

    def chunk(self, pickled: list[bytes]) -> list[Row]:
        """The chunk's rows; where annotating the chunk fails, each document is annotated alone, to name the one."""
        documents = [pickle.loads(data) for data in pickled]
        heads = [(document.doc_id, len(document.annotations)) for document in documents]
        try:
            annotated: list[Document | None] = list(self.annotator.annotate(documents))
        except Exception:  # one document failing fails the batch
            annotated = [None] * len(documents)
        rows = []
        for (doc_id, given), data, document in zip(heads, pickled, annotated):
            try:
                document = document if document is not None else next(iter(self.annotator.annotate([pickle.loads(data)])))
                finished(document, self.job.prefer_prefix, self.mark)
                text = self.renderer.document(document)
                text.encode("utf-8")  # a lone surrogate fails here, as one document, not at the driver's write
                rows.append((doc_id, text, None, len(document.annotations), sum(bool(a.ids) for a in document.annotations), given))
            except MedlinkError as failure:
                rows.append((doc_id, "", str(failure), 0, 0, given))
            except Exception as failure:
                rows.append((doc_id, "", f"{type(failure).__name__}: {failure}", 0, 0, given))
        return rows

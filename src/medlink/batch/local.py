"""``medlink annotate`` in this process: the documents streamed through one annotator, the output written whole (a file
atomically: all of it or, on error, nothing)."""

from __future__ import annotations

import sys
from contextlib import ExitStack

from medlink.batch.job import AnnotateJob, finished, say_notes, signature, summary


def run_local(job: AnnotateJob) -> int:
    from medlink.batch.counts import AnnotationCounts
    from medlink.corpora.annotate_output import is_annotate_output
    from medlink.corpora.document_files import write_documents
    from medlink.corpora.document_io import NamedSkips
    from medlink.directories import output_lock, replaced_file
    from medlink.linking.index import resolve_index
    from medlink.linking.output import annotation_lines
    from medlink.progress import bar

    with ExitStack() as held:
        if job.out is not None:  # held from the start: a second run writing the same file is refused before it loads an index
            held.enter_context(output_lock(job.out))
            require_replaceable_output(job, is_annotate_output)
        annotator = job.load_annotator(resolve_index(job.index))
        say_notes(annotator, job)
        policy = NamedSkips(skip_invalid=job.skip_invalid)
        documents = job.documents(policy)
        counts = AnnotationCounts()
        replaced = [0]  # annotations the input carried, which found spans replace (unless --finder given links them)

        def counted(stream):
            for document in stream:
                replaced[0] += len(document.annotations)
                yield document

        mark = signature()
        with ExitStack() as stack:
            stream = (
                stack.enter_context(replaced_file(job.out)) if job.out is not None else sys.stdout
            )  # a killed run's temporary file goes
            progress = stack.enter_context(bar(enabled=not job.texts and not job.quiet, desc="annotate", unit="doc"))

            def annotated():
                for document in annotator.annotate(counted(documents), progress=not job.quiet):
                    finished(document, job.prefer_prefix, mark)
                    counts.add(document)
                    progress.update(1)
                    yield document

            if job.output_format == "text":
                for document in annotated():
                    for line in annotation_lines(document):
                        stream.write(line + "\n")
            else:
                write_documents(annotated(), stream, job.output_format)
    summary(job, counts, policy, replaced[0])
    return 0


def require_replaceable_output(job: AnnotateJob, signed) -> None:
    """``--out`` may be replaced only if 'medlink annotate' wrote it and it is not the input being read."""
    from medlink.directories import require_replaceable_file

    what = "an output of 'medlink annotate'" + (
        " (a PubTator file carries no mark of the program that wrote it: only an empty one is replaced)"
        if job.output_format == "pubtator"
        else ""
    )
    sources = [job.input_path] if job.input_path is not None and str(job.input_path) != "-" else []
    require_replaceable_file(job.out, what, signed, sources)

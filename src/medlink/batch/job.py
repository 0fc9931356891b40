"""What one ``medlink annotate`` run is asked to do, and the steps every engine shares: the documents read, the annotator
loaded (with the notes the command owes its user), each annotated document finished, and the summary at the end."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from medlink.batch.counts import AnnotationCounts
from medlink.core import Document
from medlink.errors import MedlinkError
from medlink.linking.annotator import AnnotateOptions, Annotator

ENGINES = ("local", "ray")
RAY_MISSING = (
    "--engine ray needs Ray: pip install 'medlink[ray]' (or 'ray[data]'); without it, --engine local (the default) runs in one process"
)


@dataclass(frozen=True)
class AnnotateJob:
    """Everything ``medlink annotate`` was given, checked by the command line: the engines read it, never change it."""

    index: str = "default"
    finder: str = "dictionary"
    tagger: Path | None = None
    options: AnnotateOptions = field(default_factory=AnnotateOptions)
    exclude_names: Path | None = None
    selector: Path | None = None
    nil_threshold: float | None = None
    texts: tuple[str, ...] = ()
    input_path: Path | None = None  # None: stdin (when there are no texts)
    input_format: str | None = None  # None: from the file's name
    output_format: str = "text"
    out: Path | None = None  # None: stdout
    prefer_prefix: tuple[str, ...] = ()
    skip_invalid: bool = False
    max_chars: int = 32 << 20
    quiet: bool = False
    types: tuple[str, ...] = ()  # entity types kept in the output (lower case, parse_types); none: every span

    @property
    def reads_stdin(self) -> bool:
        return not self.texts and (self.input_path is None or str(self.input_path) == "-")

    def documents(self, policy) -> Iterator[Document]:
        """The input's documents in order: the texts given, stdin, or the file; malformed records go to ``policy``."""
        from medlink.corpora.annotate_output import text_documents
        from medlink.corpora.document_files import guess_document_format, read_documents

        if self.texts:
            return text_documents(list(self.texts), policy, self.max_chars)
        if self.reads_stdin:
            if sys.stdin.isatty():
                raise MedlinkError("no text: give it as arguments, with --input FILE, or on stdin")
            return read_documents(sys.stdin, self.input_format or "text", policy=policy, max_chars=self.max_chars)
        fmt = self.input_format or guess_document_format(self.input_path)
        return read_documents(self.input_path, fmt, policy=policy, max_chars=self.max_chars)

    def load_annotator(self, index_dir: Path) -> Annotator:
        annotator = Annotator.load(index_dir, self.finder, self.tagger, self.options, self.exclude_names, self.selector, self.nil_threshold)
        if self.types:  # every engine loads its annotator here: each writes the same spans
            from medlink.linking.type_filter import TypeFilter

            return TypeFilter(annotator, frozenset(self.types))
        return annotator

    def settings(self, index_dir: Path) -> dict:
        """What decides the output, as JSON values: a resumed run must have been asked the same (engine settings aside)."""
        from medlink.versions import package_versions

        source: dict = (
            {"texts": list(self.texts)} if self.texts else {"stdin": True} if self.reads_stdin else file_identity(self.input_path)
        )
        chosen = {
            key: value for key, value in asdict(self).items() if key not in ("index", "texts", "input_path", "out", "quiet", "options")
        }
        options = {key: value for key, value in asdict(self.options).items() if key != "batch_documents"}
        return json_values(
            {
                "medlink": package_versions(["medlink"])["medlink"],
                "index": file_identity(index_dir / "manifest.json") | {"folder": str(Path(index_dir).resolve())},
                "input": source,
                **chosen,
                "options": options,
                "precision": os.environ.get("MEDLINK_PRECISION"),
            }
        )


def file_identity(path: Path) -> dict:
    """A file's path, size and modification time: a changed input is not resumed as if it were the same."""
    stat = Path(path).stat()
    return {"path": str(Path(path).resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def json_values(value):
    """``value`` with paths and tuples as JSON has them (strings, lists), so a saved copy compares equal."""
    if isinstance(value, dict):
        return {str(key): json_values(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_values(item) for item in value]
    if isinstance(value, Path):
        return str(value)
    return value


def say_notes(annotator: Annotator, job: AnnotateJob) -> None:
    """What the command says before it starts: a context that nothing reads, a linker without probabilities."""
    import typer

    from medlink.linking.calibration import say_if_uncalibrated
    from medlink.rerank.base import reads_context

    context = job.options.context
    if context and not any(reads_context(reranker) for reranker in annotator.linker.rerankers):
        typer.echo(
            f"note: --context {context} has no effect: this index has no reranker that reads context (a cross-encoder "
            "trained with 'medlink train cross-encoder --context'); its mentions are linked on their own",
            err=True,
        )
    if job.output_format == "text":
        say_if_uncalibrated(annotator.linker)


def signature() -> str:
    """The mark every written document carries (provenance, and what lets --out replace an earlier output)."""
    from medlink.versions import package_versions

    return f"medlink {package_versions(['medlink'])['medlink']}"


def finished(document: Document, prefer_prefix: tuple[str, ...], mark: str) -> Document:
    """An annotated document as it is written: ids under the preferred namespaces, and the mark."""
    from medlink.corpora.annotate_output import SIGNATURE
    from medlink.linking.output import with_preferred_document_ids

    with_preferred_document_ids(document, prefer_prefix)
    document.infons[SIGNATURE] = mark
    return document


def summary(job: AnnotateJob, counts: AnnotationCounts, policy, replaced: int, failed: int = 0) -> None:
    """The lines at the end of a run (stderr): what was done, what was skipped or failed, and why."""
    import typer

    skipped = f"; {policy.total_skipped} malformed record(s) skipped" if policy.total_skipped else ""
    failures = f"; {failed} record(s) failed" if failed else ""
    typer.echo(f"{counts.documents} document(s), {counts.mentions} mention(s), {counts.linked} linked{skipped}{failures}", err=True)
    for line in policy.report():
        typer.echo(f"  {line}", err=True)
    if job.finder == "given" and not replaced:
        typer.echo(
            "note: --finder given links the spans the input carries, and it carried none (PubTator, BioC and JSONL "
            "inputs can; plain text cannot)",
            err=True,
        )
    if replaced and job.finder != "given":
        typer.echo(
            f"note: the input's own {replaced} annotation(s) were replaced by the spans medlink found; --finder given "
            "links them as they are",
            err=True,
        )

"""What the document formats share (PubTator, BioC, JSONL, text): naming and opening inputs, writing outputs atomically,
and checking that annotations are spans of their document's text, so every reader reports damage the same way."""

from __future__ import annotations

import difflib
import io
import json
import logging
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from medlink import core
from medlink.directories import replaced_file
from medlink.errors import InputFormatError, MedlinkError
from medlink.kb.errors_policy import InvalidLinePolicy
from medlink.kb.readers.files import not_a_file, open_bytes, parse_json, raw_lines

log = logging.getLogger(__name__)
Source = Path | str | IO[bytes] | IO[str]  # a path ("-": stdin) or an open stream, binary or text
MAX_GAP = 100_000  # characters between passages; more is a damaged offset (and would fill memory with spaces)
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ufeff]")


@dataclass
class NamedSkips(InvalidLinePolicy):
    """An ``InvalidLinePolicy`` that also keeps what was wrong with the first ``kept`` skipped records (file, line,
    document), for the end-of-run report: a count alone leaves the user searching the file for them."""

    kept: int = 5
    reasons: list[str] = field(default_factory=list)

    def invalid(self, path: str | Path, line: int | None, message: str) -> None:
        super().invalid(path, line, message)  # raises unless skipping
        if len(self.reasons) < self.kept:
            self.reasons.append(str(InputFormatError(path, line, message)))

    def report(self) -> list[str]:
        """Lines for stderr: each kept reason, then how many more were skipped."""
        more = self.total_skipped - len(self.reasons)
        return [f"skipped {reason}" for reason in self.reasons] + ([f"skipped {more:,} more malformed record(s)"] if more > 0 else [])


MB = 1 << 20  # characters: the unit of a document's size limit (``--max-document-mb``)


def too_long(doc_id: str, size: int | None, max_chars: int) -> str:
    """Why a document is not read: its text (``size`` characters, None: more than the file can hold within the limit) is
    over ``max_chars``; the message says how to raise the limit."""
    measured = f"{size / MB:,.3g} MB of text ({size:,} characters)" if size is not None else f"more than {max_chars:,} characters of text"
    return (
        f"document {doc_id}: {measured}, over the limit of {max_chars / MB:,.3g} MB a document ({max_chars:,} characters); "
        f"raise it with --max-document-mb (medlink annotate), or split the document"
    )


def size_problem(document: core.Document, max_chars: int | None, place: str = "") -> str | None:
    """Why ``document`` is too long to be read (``too_long``; ``place`` follows its id), or None; None also when there
    is no limit."""
    size = max((passage.end for passage in document.passages), default=0)
    return too_long(f"{document.doc_id}{place}", size, max_chars) if max_chars is not None and size > max_chars else None


def source_name(source: Source) -> str:
    """How errors name an input: its path, or the stream's name (``<stdin>``)."""
    if isinstance(source, (str, Path)):
        return "<stdin>" if str(source) == "-" else str(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<stream>"


@contextmanager
def open_source(source: Source, what: str) -> Iterator[IO[bytes]]:
    """The input as bytes: a file (``.gz`` decompressed), ``-`` for stdin, or a stream (a text stream's buffer)."""
    if isinstance(source, (str, Path)) and str(source) != "-":
        path = Path(source)
        if not path.is_file():
            raise not_a_file(path, what)
        with open_bytes(path) as handle:
            yield handle
        return
    stream = sys.stdin if isinstance(source, (str, Path)) else source
    if isinstance(stream, io.TextIOBase):
        buffer = getattr(stream, "buffer", None)
        stream = buffer if buffer is not None else io.BytesIO(stream.read().encode("utf-8"))
    yield stream


def source_lines(
    source: Source, policy: InvalidLinePolicy, what: str, document_of: Callable[[str], str | None] | None = None
) -> Iterator[tuple[int, str]]:
    """(line number, text) of an input, LF / CRLF / CR, a BOM dropped; a line that is not UTF-8 goes to ``policy``
    with its line and byte, and its document where ``document_of`` reads one from the line (PubTator's leading id;
    ``decoded_lines`` for streams too: stdin works)."""
    where = source_name(source)
    with open_source(source, what) as handle:
        for lineno, raw in enumerate(raw_lines(handle), 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                document = document_of(raw.decode("utf-8", "replace")) if document_of is not None else None
                policy.invalid(
                    where,
                    lineno,
                    (f"document {document}: " if document else "")
                    + f"not valid UTF-8 at byte {error.start + 1} of the line (save the file as UTF-8)",
                )
                continue
            yield lineno, text.removeprefix("\ufeff") if lineno == 1 else text


@contextmanager
def open_text_target(target: Path | str | IO[str]) -> Iterator[IO[str]]:
    """Where a writer writes: a file, written atomically (complete or untouched; one writer at a time, a killed
    writer's temporary file removed), ``-`` for stdout, or a text stream."""
    if isinstance(target, (str, Path)) and str(target) != "-":
        with replaced_file(Path(target)) as out:
            yield out
    else:
        yield sys.stdout if isinstance(target, (str, Path)) else target


def flat(text: str, tabs: bool = True) -> str:
    """``text`` on one line (and ``tabs``: fields intact): line breaks (tabs) become spaces, and a lone surrogate (a
    command-line argument that was not UTF-8) U+FFFD, so the line can be encoded; same length, so offsets hold."""
    return _SURROGATE.sub("\ufffd", text.translate({9: 32, 10: 32, 13: 32} if tabs else {10: 32, 13: 32}))


def json_text(value: object) -> str:
    """``value`` as JSON, non-ASCII kept readable unless a lone surrogate forces escapes (it cannot be encoded)."""
    text = json.dumps(value, ensure_ascii=False)
    return json.dumps(value) if has_lone_surrogate(text) else text


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (from a command-line argument that was not UTF-8): it cannot be encoded."""
    return _SURROGATE.search(text) is not None


def is_int(value: object) -> bool:
    """A JSON integer (``True`` is an int to Python, not an offset)."""
    return isinstance(value, int) and not isinstance(value, bool)


def unknown_keys(obj: dict, known: frozenset[str], what: str) -> str | None:
    """What is wrong with ``obj``'s keys outside ``known``, or None: a misspelt or damaged key ("annotatons") would
    otherwise lose what it holds without a word."""
    unknown = [str(key)[:40] for key in obj if key not in known]
    if not unknown:
        return None
    return f"{what} has unknown key(s) {', '.join(map(repr, unknown[:3]))} (known: {', '.join(sorted(known))})"


def near_miss_key(obj: dict, known: Sequence[str], what: str) -> str | None:
    """What is wrong with a key of ``obj`` one slip away from a ``known`` one ("annotatons", "Passages"), or None: where
    other keys of one's own are allowed (PubTator3's pmid, journal), a damaged known key would read as none of its content."""
    for key in obj:
        if isinstance(key, str) and key not in known:
            close = difflib.get_close_matches(key.lower(), known, n=1, cutoff=0.8)
            if close:
                return f"{what} has unknown key {key[:40]!r} (did you mean {close[0]!r}?)"
    return None


def starts_like_json(handle: IO[bytes]) -> bool:
    """Does the file behind ``handle`` begin like JSON ("{" or "[")? For an error that names the format a file seems
    to be in; False for a stream that cannot go back to its start (stdin)."""
    try:
        handle.seek(0)
        return handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")
    except (OSError, ValueError):
        return False


def control_character(text: str) -> str | None:
    """The first control character of an id (a NUL byte of a damaged file, an escape), shown escaped, or None."""
    found = _CONTROL.search(text)
    return repr(found[0])[1:-1] if found else None


def passage_problem(passages: list[core.Passage]) -> str | None:
    """Why passages cannot be laid out as one text (overlap; a gap so large a damaged offset is likelier), or None."""
    at = 0
    for passage in sorted(passages, key=lambda p: p.offset):
        if passage.offset < at:
            return f"passage at offset {passage.offset} overlaps the one before (it ends at {at})"
        if passage.offset - at > MAX_GAP:
            return f"passage at offset {passage.offset} leaves {passage.offset - at} characters empty before it (at most {MAX_GAP})"
        at = passage.end
    return None


def document_text(document: core.Document) -> str:
    """The text a writer writes, after checking that its annotations index it (else they would not read back)."""
    try:
        text = document.text
    except ValueError as error:
        raise MedlinkError(str(error)) from None
    for annotation in document.annotations:
        problem = span_problem(annotation, text, 0, len(text))
        if problem:
            raise MedlinkError(f"document {document.doc_id}: {problem}; it cannot be written")
    return text


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:60] + "...")


def span_problem(annotation: core.Annotation, text: str, low: int, high: int) -> str | None:
    """Why ``annotation`` is not a span of ``text[low:high]`` whose text it gives (surrounding whitespace aside), or None."""
    start, end = annotation.start, annotation.end
    if not low <= start < end <= high:
        return f"span {start}..{end} is not a non-empty span within {low}..{high} (its passage or text)"
    actual = text[start:end]
    if annotation.text != actual and flat(annotation.text).strip() != flat(actual).strip():
        return f"mention {_short(annotation.text)} is not the text at {start}..{end} ({_short(actual)})"
    return None


@dataclass
class OverlapTally:
    """Overlapping or nested gold spans seen in one input: kept, and reported once per input as a count."""

    count: int = 0
    first: str | None = None

    def add(self, doc_id: str, located: list[tuple[int | None, core.Annotation]]) -> None:
        reach = -1
        for start, end, line in sorted((a.start, a.end, line or 0) for line, a in located):
            if start < reach:
                self.count += 1
                self.first = self.first or f"document {doc_id}" + (f", line {line}" if line else "")
            reach = max(reach, end)


def checked_annotations(
    doc_id: str,
    located: Iterable[tuple[int | None, str, core.Annotation | str, tuple[int, int]]],
    text: str,
    where: str,
    policy: InvalidLinePolicy,
) -> list[tuple[int | None, core.Annotation]]:
    """From (line, label, annotation or why it is none, the range it must lie in): the annotations that are spans of
    ``text`` giving its text, their text set to the exact slice; the others go to ``policy`` with file, line, document
    and label, in order."""
    kept = []
    for line, label, annotation, (low, high) in located:
        problem = annotation if isinstance(annotation, str) else span_problem(annotation, text, low, high)
        if problem:
            policy.invalid(where, line, f"document {doc_id}: {label}{problem}")
        else:
            annotation.text = text[annotation.start : annotation.end]
            kept.append((line, annotation))
    return kept


def report_overlaps(where: str, tally: OverlapTally) -> None:
    """One warning per input for its overlapping gold spans (kept: nested mentions are legitimate in some corpora)."""
    if tally.count:
        log.warning("%s: %d overlapping or nested annotation span(s) kept (first: %s)", where, tally.count, tally.first)


def json_lines(lines: Iterable[tuple[int, str]], where: str, policy: InvalidLinePolicy) -> Iterator[tuple[int, object]]:
    """(line number, value) of each non-blank JSON line; a line that is not JSON goes to ``policy`` with its line."""
    for lineno, line in lines:
        if not line.strip():
            continue
        try:
            yield lineno, parse_json(line, where, lineno)
        except InputFormatError as error:
            policy.invalid(where, lineno, error.message)

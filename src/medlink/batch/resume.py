"""A run's output written in order to ``OUT.partial`` and how far it got to ``OUT.progress.json``: a killed run, started
again with the same command, continues where it stopped, without duplicates or gaps.

The design: the driver appends each document's output to the partial file in input order, never out of it. Every
second or so it flushes the partial file to disk, then replaces the sidecar (written aside and renamed) with the count
of input documents done and the partial file's length after them. A restarted run cuts the partial file back to that
length (dropping what was appended after the last record), skips that many input documents, and goes on. The sidecar
also keeps the settings that decide the output (index, input file's size and time, options): a run asked something
else is refused, not mixed in. When the last document is in, the tail is written, the partial file is renamed to
``OUT`` and the sidecar removed: ``OUT`` appears whole or not at all, as with the local engine.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, BinaryIO

from medlink.batch.render import Renderer
from medlink.errors import MedlinkError

SAVE_EVERY = 1.0  # seconds between two sidecar updates (and flushes of the partial output to disk)
FAILURES_KEPT = 20  # failed records listed in full; the rest are counted
FORMAT = 1


@dataclass
class Progress:
    """How far a run got: input documents done (written or failed) and what they added up to."""

    documents: int = 0
    bytes: int = 0
    written: int = 0
    mentions: int = 0
    linked: int = 0
    given: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)
    complete: bool = False

    def fail(self, message: str) -> None:
        self.failed += 1
        if len(self.failures) < FAILURES_KEPT:
            self.failures.append(message)


def partial_path(out: Path) -> Path:
    return Path(out).with_name(Path(out).name + ".partial")


def progress_path(out: Path) -> Path:
    return Path(out).with_name(Path(out).name + ".progress.json")


class StreamOutput:
    """Output to a stream (stdout): written in order, nothing to resume."""

    def __init__(self, stream: IO[str], renderer: Renderer):
        self.stream, self.renderer, self.progress = stream, renderer, Progress()
        self.resumed_from = 0

    def open(self) -> Progress:
        self.stream.write(self.renderer.head())
        return self.progress

    def append(self, text: str) -> None:
        self.stream.write((self.renderer.separator if self.progress.written else "") + text)
        self.progress.written += 1

    def save(self, force: bool = False) -> None:
        self.stream.flush()

    def finish(self) -> None:
        self.stream.write(self.renderer.tail())
        self.stream.flush()

    def close(self) -> None:
        pass


class ResumableOutput(StreamOutput):
    """Output to ``OUT.partial`` with its sidecar, moved to ``OUT`` when the run completes (see the module docstring)."""

    def __init__(self, out: Path, settings: dict, renderer: Renderer):
        self.out, self.settings, self.renderer = Path(out), settings, renderer
        self.partial, self.sidecar = partial_path(out), progress_path(out)
        self.progress, self.saved_at, self.resumed_from = Progress(), 0.0, 0
        self.stream: BinaryIO | None = None

    def open(self) -> Progress:
        """The progress to continue from (none for a new run), the partial output open at its end."""
        recorded = self.recorded()
        if recorded is not None and not recorded.complete:
            self.progress, self.resumed_from = recorded, recorded.documents
            size = self.partial.stat().st_size if self.partial.is_file() else -1
            if size < recorded.bytes:
                raise MedlinkError(
                    f"cannot resume: {self.partial} is {'missing' if size < 0 else f'shorter ({size:,} bytes) than the {recorded.bytes:,} recorded'}; "
                    f"remove {self.sidecar} to start over"
                )
            self.stream = open(self.partial, "r+b")
            self.stream.truncate(recorded.bytes)  # what was appended after the last record is done again
            self.stream.seek(recorded.bytes)
            if not recorded.bytes:
                self.stream.write(self.renderer.head().encode("utf-8"))
            return self.progress
        if self.partial.exists() and recorded is None:
            raise MedlinkError(
                f"{self.partial} exists and no {self.sidecar.name} records a run that wrote it; it is left as it is: "
                "remove it or give --out another name (nothing was written)"
            )
        self.sidecar.unlink(missing_ok=True)  # a completed run's, left by a kill between its last two steps
        self.save(force=True)  # first: a partial file is only ever there with its record beside it
        self.stream = open(self.partial, "wb")
        self.stream.write(self.renderer.head().encode("utf-8"))
        self.save(force=True)
        return self.progress

    def recorded(self) -> Progress | None:
        """The sidecar's progress, or None; refused when it was recorded with other settings."""
        if not self.sidecar.is_file():
            return None
        try:
            saved = json.loads(self.sidecar.read_text(encoding="utf-8"))
            progress = Progress(**saved["progress"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise MedlinkError(f"{self.sidecar}: not a progress record medlink can read ({error}); remove it to start over") from None
        before = saved.get("settings") or {}
        if saved.get("format") != FORMAT or before != self.settings:
            then, now = flattened(before), flattened(self.settings)
            differ = sorted(key for key in set(then) | set(now) if then.get(key) != now.get(key))
            changes = "; ".join(f"{key}: {shown(then.get(key))} then, {shown(now.get(key))} now" for key in differ)
            raise MedlinkError(
                f"cannot resume: {self.sidecar} records an earlier 'medlink annotate --out {self.out}' with other settings "
                f"({changes or 'an older record format'}); run that command again to continue it, or remove "
                f"{self.sidecar} and {self.partial} to start over with this one"
            )
        return progress

    def append(self, text: str) -> None:
        self.stream.write(((self.renderer.separator if self.progress.written else "") + text).encode("utf-8"))
        self.progress.written += 1

    def save(self, force: bool = False) -> None:
        """Record the progress (at most every ``SAVE_EVERY`` seconds unless ``force``): the partial output on disk first."""
        if not force and time.monotonic() - self.saved_at < SAVE_EVERY:
            return
        if self.stream is not None:
            self.stream.flush()
            os.fsync(self.stream.fileno())
            self.progress.bytes = os.fstat(self.stream.fileno()).st_size
        from medlink.directories import atomic_file

        with atomic_file(self.sidecar) as record:
            json.dump({"format": FORMAT, "settings": self.settings, "progress": asdict(self.progress)}, record)
        self.saved_at = time.monotonic()

    def finish(self) -> None:
        """The tail written, the partial output moved to ``OUT``, the sidecar gone."""
        self.stream.write(self.renderer.tail().encode("utf-8"))
        self.progress.complete = True
        self.save(force=True)
        self.stream.close()
        self.stream = None
        os.replace(self.partial, self.out)
        self.sidecar.unlink(missing_ok=True)

    def close(self) -> None:
        """Keep what is done (an error or an interrupt): the next run with the same command continues from it."""
        if self.stream is not None:
            try:
                self.save(force=True)
            finally:
                self.stream.close()
                self.stream = None
            if self.progress.documents:
                print(
                    f"medlink: {self.progress.documents:,} document(s) done are kept in {self.partial}; "
                    "the same command continues from there",
                    file=sys.stderr,
                )


def shown(value, width: int = 80) -> str:
    """A setting as a refusal names it: quoted, cut to ``width`` characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def flattened(settings: dict, prefix: str = "") -> dict:
    """Nested settings as ``options.top_k``-style keys: a refusal names the one setting that changed, not a whole group."""
    out = {}
    for key, value in settings.items():
        if isinstance(value, dict) and value:
            out.update(flattened(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out

"""Line-by-line reading for dataset files: decoding errors become ``file:line`` errors, not tracebacks."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from medlink.kb.errors_policy import InvalidLinePolicy


def read_lines(path: Path, policy: InvalidLinePolicy, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """Yield (line number, text without line ending); a line that does not decode goes to ``policy``."""
    with open(path, "rb") as handle:
        for lineno, raw in enumerate(handle, 1):
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError as error:
                policy.invalid(path, lineno, f"not valid {encoding.upper()} at byte {error.start + 1} of the line (save the file as {encoding.upper()})")
                continue
            if lineno == 1:
                text = text.removeprefix("\ufeff")
            yield lineno, text.rstrip("\r\n")

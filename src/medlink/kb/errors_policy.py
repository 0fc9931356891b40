"""What a reader does with a malformed line: fail with its location, or count it and go on."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from medlink.errors import InputFormatError


@dataclass
class InvalidLinePolicy:
    """Fail on the first malformed line (default) or, with ``skip_invalid``, count skipped lines per file."""

    skip_invalid: bool = False
    skipped: Counter = field(default_factory=Counter)
    first_reasons: dict[str, str] = field(default_factory=dict)

    def invalid(self, path: str | Path, line: int | None, message: str) -> None:
        """Report a malformed line: raises unless skipping, in which case it is counted."""
        error = InputFormatError(path, line, message)
        if not self.skip_invalid:
            raise error
        self.skipped[str(path)] += 1
        self.first_reasons.setdefault(str(path), str(error))

    @property
    def total_skipped(self) -> int:
        return sum(self.skipped.values())

"""Progress a user can see wherever medlink runs: a bar on a terminal, a line every half minute in a log file (CI, nohup,
a service), and a line when each long phase starts and ends.

Why: tqdm on a pipe either stays silent (``disable=None``) or fills the log with carriage returns, so a two-minute index
build looked hung. Here tqdm writes through ``_Lines``, which turns each refresh into one line.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tqdm import tqdm

log = logging.getLogger("medlink")
LOG_EVERY = 30.0  # seconds between two progress lines when stderr is not a terminal
FIRST_LINE_AFTER = 5.0  # off a terminal, a bar writes nothing before this: a quick run's summary line says it all
_silenced = False  # a command's --quiet: no bar anywhere in this process until it ends (``silence_bars``)


class _Lines:
    """A file for tqdm that writes each refresh as a line of its own."""

    def write(self, text: str) -> None:
        text = text.replace("\r", "").strip()
        if text:
            sys.stderr.write(text + "\n")

    def flush(self) -> None:
        sys.stderr.flush()


def silence_bars(silent: bool) -> bool:
    """Turn every bar of this process off (or back on), whoever asks for one; returns the setting before, to restore.

    Why: a ``--quiet`` command should not have to thread a flag through every library call that may show a bar."""
    global _silenced
    before, _silenced = _silenced, silent
    return before


COUNT_ONLY = "{desc}: {n:,}{unit} [{elapsed}, {rate_fmt}{postfix}]"


def bar(enabled: bool = True, **options) -> tqdm:
    """A tqdm bar (``options`` as tqdm's); off when ``enabled`` is false or the bars are silenced. tqdm is imported here,
    not with the module: a warm ``medlink link`` shows no bar and need not pay for its import."""
    from tqdm import tqdm

    if options.get("total") is None and not hasattr(options.get("iterable"), "__len__"):
        options.setdefault("bar_format", COUNT_ONLY)  # no total: tqdm's scaled count reads "0.00 records", "25.0 records"
    if not enabled or _silenced:
        return tqdm(disable=True, **options)
    if sys.stderr.isatty():
        return tqdm(**options)
    return tqdm(
        file=_Lines(),
        mininterval=LOG_EVERY,
        maxinterval=LOG_EVERY,
        ascii=True,
        delay=min(FIRST_LINE_AFTER, LOG_EVERY),
        **{k: v for k, v in options.items() if k not in ("mininterval", "delay")},
    )


@contextmanager
def phase(what: str) -> Iterator[None]:
    """Log when a long step starts and how long it took (at INFO: the CLI shows it, a library user opts in)."""
    log.info("%s ...", what)
    started = time.perf_counter()
    yield
    log.info("%s: done in %.1f s", what, time.perf_counter() - started)

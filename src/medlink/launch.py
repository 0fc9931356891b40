"""The console entry point: the command line is imported inside the interrupt handling, so a Ctrl-C during start-up
(while the imports run) ends as one during a command does, with a line and exit 130, not a traceback of whatever
library was loading."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from medlink.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("interrupted while starting; nothing was written\n")
        sys.exit(130)
    run()

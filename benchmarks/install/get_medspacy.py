"""A virtual environment with medspaCy 1.3.1, the assertion benchmark's ConText peer (it pins spaCy < 3.8 on Python 3.11,
which the peers' extra cannot share: QuickUMLS's spaCy pipeline is 3.8's).

    python benchmarks/install/get_medspacy.py [--out DIR]      # then: assertion_status.py --medspacy-python DIR/bin/python

PyPI only. The environment is usable once ``DIR/.complete`` exists (written last), so an interrupted install is redone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import scratch  # noqa: E402
from benchmarks.install.peer_venv import peer_environment  # noqa: E402

PACKAGE = "medspacy==1.3.1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=scratch("medlink-bench-medspacy"))
    args = parser.parse_args()
    print(peer_environment(args.out, [PACKAGE]))


if __name__ == "__main__":
    main()

"""A virtual environment with scispaCy 0.6.2, the speed benchmark's peer (its spaCy and scipy pins are its own; on
Python 3.11 its HNSW library comes as ``nmslib-metabrainz``).

    python benchmarks/install/get_scispacy.py [--out DIR]      # then: speed.py --scispacy-python DIR/bin/python
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import scratch  # noqa: E402
from benchmarks.install.peer_venv import peer_environment  # noqa: E402

PACKAGES = ["nmslib-metabrainz==2.1.3", "scispacy==0.6.2"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=scratch("medlink-bench-scispacy"))
    print(peer_environment(parser.parse_args().out, PACKAGES))


if __name__ == "__main__":
    main()

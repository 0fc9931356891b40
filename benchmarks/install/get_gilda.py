"""A virtual environment with Gilda 1.6.1 and its web app, the service benchmark's peer (benchmarks/service/peer.py).

    python benchmarks/install/get_gilda.py [--out DIR]      # then: peer.py --gilda-python DIR/bin/python
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import scratch  # noqa: E402
from benchmarks.install.peer_venv import peer_environment  # noqa: E402

PACKAGES = ["gilda[ui]==1.6.1"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=scratch("medlink-bench-gilda"))
    print(peer_environment(parser.parse_args().out, PACKAGES))


if __name__ == "__main__":
    main()

"""Start ``medlink serve`` as its users do (a child process on a loopback port) and time it until /health answers."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def medlink_serve(index: str, *options: str, log: Path | None = None):
    """Yields (base URL, seconds from the command's start to the first healthy answer, the process)."""
    port = free_port()
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 (closed below)
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "medlink", "serve", "--index", index, "--port", str(port), *options], stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                raise RuntimeError(f"medlink serve --index {index} stopped ({process.returncode}); see {log}")
            time.sleep(0.05)
        yield url, time.perf_counter() - started, process
    finally:
        process.terminate()
        process.wait(timeout=60)
        if log:
            out.close()

"""What the service's tests share: a small calibrated index whose ids are in HP, ICD10CM and MESH, and a real uvicorn
server on a free loopback port, run in a thread and stopped cleanly.

The index is built once per test run, even when the two service test files run on two xdist workers (a lock, as the
default index's first use takes).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import uvicorn

from tests.conftest import FIXTURES
from tests.test_calibration import CONDITIONS, ORGANS

CLINIC = FIXTURES / "serve" / "clinic.jsonl"
NAMESPACES = (lambda i: f"HP:{9000000 + i:07d}", lambda i: f"ICD10CM:Q{i // 10:02d}.{i % 10}", lambda i: f"MESH:D{900000 + i:06d}")


def organ_concepts() -> list[dict]:
    """300 concepts "X of the ORGAN" (synonyms "ORGAN X", "ADJECTIVE X"), their ids spread over three namespaces:
    enough names for the index to fit its probabilities on."""
    pairs = ((organ, condition) for organ in ORGANS for condition in CONDITIONS)
    return [
        {"id": NAMESPACES[i % 3](i), "name": f"{c} of the {organ}", "synonyms": [f"{organ} {c}", f"{adjective} {c}"]}
        for i, ((organ, adjective), c) in enumerate(pairs)
    ]


def shared_folder(tmp_path_factory) -> Path:
    """A folder every xdist worker of this run sees (each worker's own basetemp has the run's folder as parent)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def clinic_index(tmp_path_factory) -> Path:
    """The index over the organ concepts and tests/fixtures/serve/clinic.jsonl (built once for the run)."""
    from medlink.kb.build import build_kb
    from medlink.linking.index import build_index
    from medlink.locks import build_once

    stamp = hashlib.sha256(CLINIC.read_bytes() + json.dumps(organ_concepts()).encode()).hexdigest()[:12]
    folder = shared_folder(tmp_path_factory) / f"serve-clinic-{stamp}"
    index = folder / "index"

    def build() -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "organs.jsonl").write_text("\n".join(json.dumps(c) for c in organ_concepts()) + "\n", encoding="utf-8")
        build_kb(folder / "kb.sqlite", [f"jsonl:{folder / 'organs.jsonl'}", f"jsonl:{CLINIC}"], progress=False)
        build_index(folder / "kb.sqlite", index)

    build_once(index, "the service tests' index", lambda: (index / "manifest.json").is_file(), build)
    return index


class ThreadServer:
    """uvicorn serving ``app`` in a thread, on a socket this process bound (no race for the port)."""

    def __init__(self, app, grace: float = 5.0):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP named: asyncio then turns Nagle off
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=grace, lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start (its index failed to load?)")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.socket.close()
        assert not self.thread.is_alive(), "the test server did not stop"


@contextlib.contextmanager
def serving(app) -> Iterator[ThreadServer]:
    server = ThreadServer(app).start()
    try:
        yield server
    finally:
        server.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]

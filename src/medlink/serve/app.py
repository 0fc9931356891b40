"""The app factory: one FastAPI app per worker, its index loaded before it takes a request, reloaded on SIGHUP.

``create_app()`` with no argument reads the settings ``medlink serve`` left in the environment: that is how uvicorn
starts each of several workers. ``run`` is what ``medlink serve`` calls.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool
from uvicorn.supervisors import Multiprocess

import medlink
from medlink.errors import MedlinkError
from medlink.serve import gilda, routes
from medlink.serve.engine import EngineHolder
from medlink.serve.errors import SafeJSON, install_handlers
from medlink.serve.limits import BodyLimit
from medlink.serve.page import page_router
from medlink.serve.settings import ENV, SUPERVISOR_ENV, ServeSettings, read_api_key

log = logging.getLogger(__name__)
GRACE_SECONDS = 30  # how long a stopping worker waits for requests in flight
DESCRIPTION = (
    "Link medical mentions to concepts: `/link` and `/annotate` answer with the JSON of `medlink link --json` and "
    "`medlink annotate --json`; `/ground` and `/ground_multi` answer as Gilda does. Bad input gets a 4xx with a message. "
    "Guide: docs/service.md."
)


def create_app(settings: ServeSettings | None = None) -> FastAPI:
    """The service for ``settings`` (default: those in ``MEDLINK_SERVE_SETTINGS``, else the defaults)."""
    settings = settings or ServeSettings.from_env()
    holder = EngineHolder(settings.index)
    api_key = read_api_key(Path(settings.api_key_file)) if settings.api_key_file else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(holder.load)  # before the first request: a worker serves only once its index is in memory
        on_hangup = _reload_on_hangup(holder)
        try:
            yield
        finally:
            if on_hangup:
                asyncio.get_running_loop().remove_signal_handler(signal.SIGHUP)

    app = FastAPI(
        title="medlink",
        version=medlink.__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # its own /docs page (page.py): FastAPI's loads Swagger UI from a CDN
        redoc_url=None,
        default_response_class=SafeJSON,
    )
    app.state.settings = settings
    app.state.holder = holder
    app.state.api_key = api_key
    install_handlers(app)
    app.include_router(routes.router)
    app.include_router(gilda.router)
    app.include_router(page_router(settings.page))
    app.add_middleware(BodyLimit, limit=settings.limits.max_body_bytes)
    return app


def _reload_on_hangup(holder: EngineHolder) -> bool:
    """SIGHUP reloads the index in the background (only a main thread can listen for signals: a server run in a
    test's thread does not)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGHUP"):
        return False
    loop = asyncio.get_running_loop()

    async def reload() -> None:
        try:
            engine = await run_in_threadpool(holder.reload)
            log.info("SIGHUP: reloaded index %s in %.2f s", holder.index, engine.load_seconds)
        except MedlinkError as error:
            log.error("SIGHUP: the index could not be reloaded, so the one loaded before still serves: %s", error)

    loop.add_signal_handler(signal.SIGHUP, lambda: loop.create_task(reload()))
    return True


def run(settings: ServeSettings, log_level: str = "info") -> None:
    """Serve until SIGINT or SIGTERM, then finish the requests in flight (up to ``GRACE_SECONDS``) and stop."""
    os.environ[ENV] = settings.to_env()
    options = dict(factory=True, host=settings.host, port=settings.port, workers=settings.workers, log_level=log_level)
    options.update(timeout_graceful_shutdown=GRACE_SECONDS, server_header=False)
    if settings.workers == 1:
        uvicorn.run("medlink.serve.app:create_app", **options)
        return
    os.environ[SUPERVISOR_ENV] = str(os.getpid())
    # a fresh worker loads its index before it answers the supervisor's health check
    config = TcpConfig("medlink.serve.app:create_app", **options, timeout_worker_healthcheck=600)
    Multiprocess(config, sockets=[config.bind_socket()]).run()


class TcpConfig(uvicorn.Config):
    """uvicorn's Config whose shared socket says it is TCP. uvicorn makes it with protocol 0, and asyncio turns Nagle's
    algorithm off only on connections of a socket that says so: without it, each answer of a worker waits out the
    client's delayed ACK (about 40 ms), as one worker, which binds its own socket, does not."""

    def bind_socket(self) -> socket.socket:
        sock = super().bind_socket()
        if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.proto == 0:
            return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
        return sock

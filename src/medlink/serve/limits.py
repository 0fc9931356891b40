"""The request limits: a body over the size limit is refused before it is parsed, and counts and lengths are checked
before any linking starts, each with a message that names the limit.

Why: one oversized request must not hold a worker's memory or CPU; a client learns what it may send instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from medlink.serve.settings import Limits

BODY_METHODS = {"POST", "PUT", "PATCH"}
DRAINED = 8  # a body over the limit is read (and dropped) up to this many limits, so its client reads the 413


def too_large(message: str) -> HTTPException:
    return HTTPException(status_code=413, detail=message)


def out_of_range(message: str) -> HTTPException:
    return HTTPException(status_code=422, detail=message)


class BodyLimit:
    """ASGI middleware: reads a request's whole body, up to ``limit`` bytes, before the app sees it; a longer one (by
    its Content-Length or by what arrives) is answered 413 without being kept. Its bytes are still read, up to
    ``DRAINED`` times the limit: a client that is still sending when the server closes gets a reset, not the 413."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        over = declared is not None and declared.isdigit() and int(declared) > self.limit
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            over = over or size > self.limit
            if over:
                chunks = []  # what is read past the limit is dropped, not kept
                if size > DRAINED * self.limit:
                    break  # a body this large is cut off: its client sees the connection close
            else:
                chunks.append(chunk)
            if not message.get("more_body", False):
                break
        if over:
            await self.refuse(send)
            return
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the client's disconnect, when it comes

        await self.app(scope, replay, send)

    async def refuse(self, send: Send) -> None:
        detail = f"the request body is over the limit of {self.limit:,} bytes: send less per request (the server's --max-body-bytes)"
        payload = json.dumps({"detail": detail}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


def check_count(count: int, limit: int, what: str, option: str) -> None:
    if count > limit:
        raise too_large(f"{count:,} {what} in one request, over the limit of {limit:,}: split them across requests (the server's {option})")


def check_lengths(texts: Iterable[tuple[str, str]], limit: int, option: str) -> None:
    """``texts``: (how to name it, text) pairs; the first over ``limit`` characters is refused, named."""
    for name, text in texts:
        if len(text) > limit:
            raise too_large(f"{name} has {len(text):,} characters, over the limit of {limit:,} (the server's {option})")


def check_candidates(k: int, limits: Limits) -> None:
    if k > limits.max_candidates:
        raise out_of_range(f"top_k {k} is over the limit of {limits.max_candidates} candidates per mention (the server's --max-candidates)")

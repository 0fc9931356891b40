"""How the service answers what goes wrong: bad input is a 4xx with a message in words; only a bug is a 500, and then
with a short message and nothing of the server's internals.

Also the JSON response every endpoint uses: strict JSON, which falls back to ASCII escapes (and null for a number JSON
cannot hold) rather than fail on a character or value the fast path refuses.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from medlink.errors import MedlinkError

log = logging.getLogger(__name__)
UNPARSED = "There was an error parsing the body"


class SafeJSON(JSONResponse):
    """UTF-8 JSON; a lone surrogate or a NaN somewhere becomes an escape or null instead of an exception."""

    def render(self, content: Any) -> bytes:
        try:
            return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        except (UnicodeEncodeError, ValueError):
            return json.dumps(_finite(content), ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def error(status: int, detail: str, **extra: Any) -> SafeJSON:
    return SafeJSON({"detail": detail, **extra}, status_code=status)


def field_problems(errors: list[dict]) -> tuple[str, list[dict]]:
    """Pydantic's errors as one sentence ("body.mentions.0: Input should be a valid string; ...") and as a list."""
    listed, said = [], []
    for problem in errors[:20]:
        where = ".".join(str(part) for part in problem.get("loc", ()) if "[" not in str(part))  # not pydantic's validator names
        message = str(problem.get("msg", "invalid"))
        if problem.get("type") == "json_invalid":  # FastAPI puts the character position where a field would be
            where, message = "body", f"not valid JSON ({(problem.get('ctx') or {}).get('error', message)})"
        listed.append({"where": where, "problem": message, "type": str(problem.get("type", ""))})
        said.append(f"{where}: {message}" if where else message)
    more = f" (and {len(errors) - 20} more)" if len(errors) > 20 else ""
    return "the request does not fit the schema (see /docs): " + "; ".join(said) + more, listed


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> SafeJSON:
        detail, listed = field_problems(list(exc.errors()))
        return error(422, detail, errors=listed)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> SafeJSON:
        detail = str(exc.detail)
        if exc.status_code == 400 and detail == UNPARSED:  # FastAPI's words when the body is not even text
            detail = "the body could not be read as JSON: it is not valid UTF-8 (send JSON encoded as UTF-8)"
        response = error(exc.status_code, detail)
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    @app.exception_handler(MedlinkError)
    async def library_error(_request: Request, exc: MedlinkError) -> SafeJSON:
        """The library refused the input (an unknown generator, a malformed document): the client's to fix."""
        return error(422, str(exc))

    @app.exception_handler(Exception)
    async def bug(request: Request, exc: Exception) -> SafeJSON:
        log.exception("internal error answering %s %s", request.method, request.url.path)
        return error(500, f"internal error ({type(exc).__name__}): a bug in medlink, logged by the server; please report it")

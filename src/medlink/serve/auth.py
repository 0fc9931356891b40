"""The optional API key: ``Authorization: Bearer KEY`` on every endpoint but the health check, the page and the API
reference, compared in constant time. Reloading the index always needs it.

Why constant time: a comparison that stops at the first wrong character tells a patient caller how much was right.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

bearer = HTTPBearer(auto_error=False, description="The key given to 'medlink serve --api-key-file' (only when it was started with one).")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def key_matches(given: str, key: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), key.encode("utf-8"))


def _configured_key(request: Request) -> str | None:
    return request.app.state.api_key


def require_key(request: Request, credentials: Credentials) -> None:
    """Passes when the service has no key, or the request carries it."""
    key = _configured_key(request)
    if key is None:
        return
    check(credentials, key)


def require_admin(request: Request, credentials: Credentials) -> None:
    """Passes only when the service has a key and the request carries it."""
    key = _configured_key(request)
    if key is None:
        raise HTTPException(
            status_code=403,
            detail="reloading over HTTP needs an API key: start the service with --api-key-file FILE (or send the process SIGHUP)",
        )
    check(credentials, key)


def check(credentials: HTTPAuthorizationCredentials | None, key: str) -> None:
    if credentials is None:
        raise HTTPException(
            status_code=401,
            detail="this service needs an API key: send 'Authorization: Bearer KEY'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not key_matches(credentials.credentials, key):
        raise HTTPException(status_code=401, detail="the API key is not this service's", headers={"WWW-Authenticate": "Bearer"})

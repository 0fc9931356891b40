"""What an endpoint reads of the running service: its settings and the Engine current when the request started."""

from __future__ import annotations

from fastapi import HTTPException, Request

from medlink.errors import MedlinkError
from medlink.serve.engine import Engine, EngineHolder
from medlink.serve.settings import ServeSettings


def settings_of(request: Request) -> ServeSettings:
    return request.app.state.settings


def holder_of(request: Request) -> EngineHolder:
    return request.app.state.holder


def engine_of(request: Request) -> Engine:
    """The current Engine; 503 while the index is still loading."""
    try:
        return holder_of(request).engine()
    except MedlinkError as error:
        raise HTTPException(status_code=503, detail=str(error)) from None

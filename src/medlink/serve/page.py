"""The web page at / and the API reference at /docs: plain HTML, CSS and a little JavaScript, read into memory when
the app is made and served from there.

Why from memory: a request's path names one of these few files or nothing; it never becomes a path on disk. Why
no CDN: the service runs offline, so everything the pages need comes from this process.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

STATIC = {  # file -> media type: all the pages use
    "index.html": "text/html; charset=utf-8",
    "page.js": "text/javascript; charset=utf-8",
    "page.css": "text/css; charset=utf-8",
    "docs.html": "text/html; charset=utf-8",
    "docs.js": "text/javascript; charset=utf-8",
}
HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}


def static_files() -> dict[str, bytes]:
    folder = files("medlink.serve") / "static"
    return {name: (folder / name).read_bytes() for name in STATIC}


def page_router(with_page: bool) -> APIRouter:
    """GET /docs (always), and / with its files when ``with_page``."""
    loaded = static_files()
    router = APIRouter(include_in_schema=False)

    def served(name: str) -> Response:
        return Response(loaded[name], media_type=STATIC[name], headers=HEADERS)

    @router.get("/docs")
    def docs() -> Response:
        return served("docs.html")

    @router.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in loaded or (name in ("index.html", "page.js", "page.css") and not with_page):
            raise HTTPException(status_code=404, detail=f"no file {name[:80]!r} here")
        return served(name)

    if with_page:

        @router.get("/")
        def page() -> Response:
            return served("index.html")

    return router

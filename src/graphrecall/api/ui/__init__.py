"""The web explorer at ``/ui``: static files of this package, served by the API process.

Every path under ``/ui/`` answers with the same page (``index.html``), which reads the
path and draws the matching view, so ``/ui/graph/{uuid}`` or ``/ui/search/{uuid}?q=...``
can be bookmarked and shared. The page talks to the server only through the public
APIs the SDKs use (Zep v4 under ``/api/v4``, the Memory Engine JSON-RPC), with the key
the person typed, so it sees exactly what that key's tenant may see. The key lives in
``sessionStorage`` (or arrives in the URL fragment, which browsers never send), never in
a query string, a cookie or a log line.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).parent / "static"
ASSETS_URL = "/ui/assets"
# Everything the page loads comes from this server; nothing inline but styles set by
# the graph library; no referrer leaves the page.
HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
        "frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


def install(app: FastAPI) -> None:
    app.mount(ASSETS_URL, StaticFiles(directory=STATIC_DIR), name="ui-assets")

    # The server's root leads a person who opens it in a browser to the explorer.
    @app.get("/", include_in_schema=False)
    @app.get("/ui", include_in_schema=False)
    async def ui_root() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)

    @app.get("/ui/{path:path}", include_in_schema=False)
    async def ui_page(path: str) -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers=HEADERS)

"""API docs that work offline: Swagger UI at ``/docs`` and ReDoc at ``/redoc``.

FastAPI's own pages load their JavaScript from a CDN, so on a machine with no internet
they are blank. The assets come from the ``fastapi-offline`` package (MIT), which ships
Swagger UI and ReDoc's bundles as package data; they are served from
``/docs-static/``. The OpenAPI document declares the two ways the API takes a key, so
Swagger UI's "Authorize" button sends it on every "Try it out".
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_URL = "/docs-static"
# Both are the ``Authorization`` header (deps.api_key_from): the Zep SDK sends
# ``Api-Key <key>``, the Memory Engine client ``Bearer <key>``. Bearer is listed first
# because Swagger UI then asks for the bare key and adds the scheme itself.
SECURITY_SCHEMES: dict[str, Any] = {
    "BearerKey": {
        "type": "http",
        "scheme": "bearer",
        "description": "The API key, sent as `Authorization: Bearer <key>`.",
    },
    "ApiKey": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "As the Zep SDK sends it: type `Api-Key <key>` (with the prefix).",
    },
}


# Nothing on these pages may reach past this server: ReDoc's footer logo is on a CDN
# (blocked here, ReDoc then drops it) and FastAPI's pages start the bundles with an
# inline script.
CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; worker-src 'self' blob:; "
    "connect-src 'self'; frame-ancestors 'none'"
)


def _offline(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = CSP
    return page


def _assets_dir() -> str:
    return str(files("fastapi_offline") / "static")


def install(app: FastAPI) -> None:
    """Serve ``/docs`` and ``/redoc`` from package files. ``app`` must have been created
    with ``docs_url=None`` and ``redoc_url=None`` (FastAPI's CDN pages)."""
    app.mount(STATIC_URL, StaticFiles(directory=_assets_dir()), name="docs-static")
    openapi_url = app.openapi_url or "/openapi.json"
    redirect_url = "/docs/oauth2-redirect"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _offline(
            get_swagger_ui_html(
                openapi_url=f"{root}{openapi_url}",
                title=f"{app.title} - API docs",
                oauth2_redirect_url=redirect_url,
                swagger_js_url=f"{root}{STATIC_URL}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{STATIC_URL}/swagger-ui.css",
                swagger_favicon_url=f"{root}{STATIC_URL}/favicon.png",
                # no badge fetched from the public validator
                swagger_ui_parameters={"validatorUrl": None},
            )
        )

    @app.get(redirect_url, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _offline(
            get_redoc_html(
                openapi_url=f"{root}{openapi_url}",
                title=f"{app.title} - API reference",
                redoc_js_url=f"{root}{STATIC_URL}/redoc.standalone.js",
                redoc_favicon_url=f"{root}{STATIC_URL}/favicon.png",
                with_google_fonts=False,
            )
        )

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                description=app.description,
                routes=app.routes,
                tags=app.openapi_tags,
                servers=app.servers,
            )
            schema.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
            schema["security"] = [{name: []} for name in SECURITY_SCHEMES]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

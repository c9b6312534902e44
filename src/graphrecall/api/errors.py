"""Every error leaves as ``{"error": {code, message, param, details, request_id}}``.

Validation errors become 400 (not FastAPI's 422, which the Zep SDK does not type) with
``param`` naming the field as a path such as ``messages[0].role``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from graphrecall.domain.errors import GraphRecallError, TooManyRequests
from graphrecall.wire.errors import param_path

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
    429: "too_many_requests",
    503: "unavailable",
    501: "not_implemented",
}


def error_response(
    request: Request,
    status: int,
    code: str,
    message: str,
    param: str | None = None,
    details: dict[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if param is not None:
        body["param"] = param
    if details:
        body["details"] = details
    request_id = getattr(request.state, "request_id", None)
    if request_id:
        body["request_id"] = request_id
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def _allowed(request: Request) -> list[str]:
    """The methods some route of this path answers (asked of the router method by method:
    an included router does not list its routes)."""
    routes = request.app.router.routes
    return [
        method
        for method in ("DELETE", "GET", "PATCH", "POST", "PUT")
        if any(r.matches({**request.scope, "method": method})[0] == Match.FULL for r in routes)
    ]


def install(app: FastAPI) -> None:
    @app.exception_handler(GraphRecallError)
    async def _domain(request: Request, exc: GraphRecallError) -> JSONResponse:
        headers = (
            {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, TooManyRequests) else None
        )
        return error_response(
            request, exc.status, exc.code, exc.message, exc.param, exc.details, headers
        )

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request"}
        if first.get("type") == "json_invalid":
            param, message = "body", "request body is not valid JSON"
        else:
            param = param_path(first.get("loc", ("body",)))
            message = f"{param}: {first.get('msg', 'invalid value')}"
        details = {
            "errors": [
                {"param": param_path(e.get("loc", ())), "message": str(e.get("msg"))}
                for e in errors[:20]
            ]
        }
        return error_response(request, 400, "bad_request", message, param, details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "error")
        headers = exc.headers
        if exc.status_code == 405:
            # RFC 9110 requires ``Allow``; Starlette names only the methods of the first
            # route of the path, while e.g. GET and PATCH /project are two routes.
            headers = {**(headers or {}), "Allow": ", ".join(_allowed(request))}
        return error_response(request, exc.status_code, code, str(exc.detail), headers=headers)

    # Unhandled errors are answered by api.middleware.RequestContext: a handler for
    # ``Exception`` here runs in Starlette's outermost middleware, which re-raises after
    # answering, so each 500 was logged twice and closed the keep-alive connection.

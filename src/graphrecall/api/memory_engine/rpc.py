"""The Memory Engine HTTP face: ``POST /api/v1/memory/rpc`` (JSON-RPC 2.0) and
``GET /api/v1/version``, speaking what the ``me`` 0.8 client sends and expects.

Before dispatch, as upstream: a body over 1 MiB is HTTP 413; a missing credential, an
unknown space or a bad key is HTTP 401 ``UNAUTHORIZED`` (the two look alike, so spaces
cannot be enumerated); a missing ``X-Me-Space`` is HTTP 400 ``MISSING_SPACE``; a key of
another project is HTTP 403; a client older than ``MIN_CLIENT_VERSION`` gets 426. After
that every answer is HTTP 200 with a JSON-RPC result or error: -32700 bad JSON, -32600 bad
envelope, -32601 unknown method, -32602 params of the wrong shape, -32000 application
errors with ``data.code`` (VALIDATION_ERROR, NOT_FOUND, CONFLICT, ...), -32603 a bug.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from graphrecall import __version__
from graphrecall.api.deps import api_key_from, get_ctx
from graphrecall.api.memory_engine.unsupported import UNSUPPORTED
from graphrecall.domain import validation
from graphrecall.domain.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    GraphRecallError,
    NotFound,
    TooManyRequests,
    Unauthorized,
)
from graphrecall.services.accounts import spaces
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services
from graphrecall.services.memory_engine.search import EmbeddingFailed, EmbeddingNotConfigured
from graphrecall.wire.memory_engine.methods import METHODS

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_048_576
# The Memory Engine release whose wire protocol this server speaks (``me`` 0.8 requires
# a server of at least 0.8.0), and the oldest client accepted (upstream's bound).
PROTOCOL_VERSION = "0.8.0"
MIN_CLIENT_VERSION = "0.4.0"
SPACE_HEADER = "x-me-space"
CLIENT_VERSION_HEADER = "x-client-version"

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR, APPLICATION_ERROR = -32603, -32000
_APP_CODES: tuple[tuple[type[GraphRecallError], str], ...] = (
    (EmbeddingNotConfigured, "EMBEDDING_NOT_CONFIGURED"),
    (EmbeddingFailed, "EMBEDDING_FAILED"),
    (NotFound, "NOT_FOUND"),
    (Conflict, "CONFLICT"),
    (Unauthorized, "UNAUTHORIZED"),
    (Forbidden, "FORBIDDEN"),
    (BadRequest, "VALIDATION_ERROR"),
    (TooManyRequests, "RATE_LIMITED"),
)

router = APIRouter(tags=["memory engine"])


class RpcError(Exception):
    """A JSON-RPC error object: ``code``, ``message`` and optional ``data``."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data:
            out["data"] = self.data
        return out


def call(ctx: Services, caller: Caller, method: str, params: Any) -> Any:
    """Run one method for ``caller``; raises :class:`RpcError` (also used by MCP)."""
    spec = METHODS.get(method)
    if spec is None:
        raise not_found(method)
    parsed = parse_params(spec.params, params)
    try:
        return spec.handler(ctx, caller, parsed)
    except GraphRecallError as exc:
        raise app_error(exc) from None


def not_found(method: str) -> RpcError:
    """-32601 for a method this server lacks; one of Memory Engine's that has no meaning
    here says so, rather than looking like a typo."""
    reason = UNSUPPORTED.get(method)
    if reason is None:
        return RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
    return RpcError(METHOD_NOT_FOUND, f"{method} is not supported by graphrecall: {reason}")


def parse_params(model: type[BaseModel], params: Any) -> Any:
    try:
        # Depth and number range first, once for every method (and every MCP tool).
        validation.check(params, param="", depth=1)
    except BadRequest as exc:
        raise RpcError(
            INVALID_PARAMS, f"Invalid params: {exc.message}", {"param": exc.param or "params"}
        ) from None
    try:
        return model.model_validate({} if params is None else params)
    except ValidationError as exc:
        raise RpcError(INVALID_PARAMS, *_invalid_params(exc)) from None


def app_error(exc: GraphRecallError) -> RpcError:
    code = next((c for kind, c in _APP_CODES if isinstance(exc, kind)), "INTERNAL_ERROR")
    data: dict[str, Any] = {"code": code}
    if exc.param:
        data["param"] = exc.param
    if isinstance(exc, TooManyRequests):
        data["retryAfter"] = exc.retry_after_s
    return RpcError(APPLICATION_ERROR, exc.message, data)


def _invalid_params(exc: ValidationError) -> tuple[str, dict[str, Any]]:
    issues, first = [], None
    for error in exc.errors()[:10]:
        path = ".".join(str(part) for part in error["loc"] if not _is_tag(part))
        first = first or path
        issues.append(f"{path}: {error['msg']}" if path else str(error["msg"]))
    return "Invalid params: " + "; ".join(issues), {"param": first or "params"}


def _is_tag(part: int | str) -> bool:
    return isinstance(part, str) and (
        part.startswith(("function-", "tagged-union", "constrained-")) or "[" in part
    )


def http_error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "code": code}}, status_code=status)


def _version(text: str) -> tuple[int, ...] | None:
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", text.strip())
    return tuple(int(x) for x in match.groups()) if match else None


def _too_old(client: str | None) -> bool:
    parsed = _version(client) if client else None
    minimum = _version(MIN_CLIENT_VERSION)
    return parsed is not None and minimum is not None and parsed < minimum


@router.get("/api/v1/version")
def version(clientVersion: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "serverVersion": PROTOCOL_VERSION,
        "minClientVersion": MIN_CLIENT_VERSION,
        "server": {"name": "graphrecall", "version": __version__},
    }
    if clientVersion is not None:
        parsed = _version(clientVersion)
        body["client"] = {
            "version": clientVersion,
            "compatible": parsed is not None and not _too_old(clientVersion),
        }
    return body


@router.post("/api/v1/memory/rpc")
async def memory_rpc(request: Request) -> JSONResponse:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return too_large()
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        return too_large()
    ctx = get_ctx(request)
    key = api_key_from(request.headers.get("authorization"))
    if not key:
        return http_error(401, "UNAUTHORIZED", "Authentication required (Authorization header)")
    slug = request.headers.get(SPACE_HEADER)
    if not slug:
        return http_error(400, "MISSING_SPACE", "Missing X-Me-Space header")
    client = request.headers.get(CLIENT_VERSION_HEADER)
    # The key is checked and the call answered in one trip through the thread pool.
    return await run_in_threadpool(_serve, ctx, key, slug, client, raw)


def _serve(ctx: Services, key: str, slug: str, client: str | None, raw: bytes) -> JSONResponse:
    try:
        caller = spaces.authenticate(ctx.store, key, slug)
    except GraphRecallError as exc:
        code = "FORBIDDEN" if isinstance(exc, Forbidden) else "UNAUTHORIZED"
        return http_error(exc.status, code, exc.message)
    if _too_old(client):
        message = (
            f"Client version {client} is below the minimum supported version"
            f" {MIN_CLIENT_VERSION}; upgrade your CLI"
        )
        data = {"code": "CLIENT_VERSION_INCOMPATIBLE", "minClientVersion": MIN_CLIENT_VERSION}
        error = RpcError(APPLICATION_ERROR, message, {**data, "clientVersion": client})
        return JSONResponse({"jsonrpc": "2.0", "error": error.body(), "id": None}, 426)
    return JSONResponse(_respond(ctx, caller, raw))


def too_large() -> JSONResponse:
    return http_error(
        413, "PAYLOAD_TOO_LARGE", f"Request body too large. Maximum size is {MAX_BODY_BYTES} bytes."
    )


def _respond(ctx: Services, caller: Caller, raw: bytes) -> dict[str, Any]:
    return respond(raw, lambda method, params: call(ctx, caller, method, params))


def respond(raw: bytes, dispatch: Callable[[str, Any], Any]) -> dict[str, Any]:
    """One JSON-RPC request body -> its response body; ``dispatch(method, params)``
    raises :class:`RpcError` for an error answer."""
    try:
        body = validation.parse(raw)
    except validation.InvalidJson:
        return _error(None, RpcError(PARSE_ERROR, "Parse error: invalid JSON"))
    except BadRequest as exc:
        return _error(None, RpcError(INVALID_REQUEST, f"Invalid request: {exc.message}"))
    problem = _envelope_problem(body)
    if problem:
        message, member = problem
        return _error(
            None, RpcError(INVALID_REQUEST, f"Invalid request: {message}", {"param": member})
        )
    request_id = body["id"]
    try:
        result = dispatch(body["method"], body.get("params"))
    except RpcError as exc:
        return _error(request_id, exc)
    except Exception:
        log.exception("rpc %s failed", body["method"])
        return _error(request_id, RpcError(INTERNAL_ERROR, "Internal error"))
    return {"jsonrpc": "2.0", "result": result, "id": request_id}


def _envelope_problem(body: Any) -> tuple[str, str] | None:
    """(what is wrong, the member at fault) for an envelope that is not a request."""
    if not isinstance(body, dict):
        return "request must be an object", "body"
    if body.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"', "jsonrpc"
    method = body.get("method")
    if not isinstance(method, str):
        return "method must be a string", "method"
    if problem := validation.text_problem(method):
        return f"method holds {problem}", "method"
    request_id = body.get("id")
    if request_id is None:
        return "id is required", "id"
    # The id is echoed back, so it must be one the response can carry: a string that is
    # text, or an integer a JSON reader keeps exactly (1e400 parses as infinity, 2**64
    # is read back rounded, 1.5 is a fraction the spec says ids should not have).
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return "id must be a string or an integer", "id"
    if isinstance(request_id, int):
        if not validation.INT64_MIN <= request_id <= validation.INT64_MAX:
            return "id must be an integer in the signed 64-bit range", "id"
    elif problem := validation.text_problem(request_id):
        return f"id holds {problem}", "id"
    return None


def _error(request_id: Any, error: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": error.body(), "id": request_id}

"""Who an MCP tool call acts as: over HTTP, the API key (and optional space) that
``/mcp`` authenticates before the SDK's transport sees the request; over stdio, the
caller ``graphrecall mcp`` was started as."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver.exceptions import ToolError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphrecall.api.deps import api_key_from
from graphrecall.api.memory_engine import rpc
from graphrecall.domain import validation
from graphrecall.domain.errors import BadRequest, GraphRecallError
from graphrecall.domain.models import Project
from graphrecall.services.accounts import projects, spaces
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services

STATE_KEY = "graphrecall_mcp"


@dataclass(frozen=True)
class Access:
    """What a tool call may touch: the service context, the project, and (for memory
    tools) the caller in a space."""

    ctx: Services
    project: Project
    caller: Caller | None


Resolver = Callable[["ToolContext[Any, Any]"], Access]


def http_access(tool: ToolContext[Any, Any]) -> Access:
    request = tool.request_context.request
    access = getattr(getattr(request, "state", None), STATE_KEY, None)
    if not isinstance(access, Access):  # pragma: no cover - the endpoint always sets it
        raise ToolError("unauthenticated")
    return access


class HttpEndpoint:
    """``/mcp``: authenticates the caller (API key, optional space), then hands the request
    to the SDK's streamable HTTP transport."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        ctx: Services = request.app.state.ctx
        key = api_key_from(request.headers.get("authorization"))
        slug = request.headers.get(rpc.SPACE_HEADER) or request.query_params.get("space")
        try:
            access = await run_in_threadpool(_authenticate, ctx, key, slug)
        except GraphRecallError as exc:
            response = JSONResponse(
                {"error": {"code": exc.code, "message": exc.message}}, status_code=exc.status
            )
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})[STATE_KEY] = access
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        # The body the request middleware buffered, checked as every face checks its
        # input; a refusal is a JSON-RPC error naming the field, as the transport's own.
        body = await request.body()
        try:
            validation.loads(body)
        except BadRequest as exc:
            code = (
                rpc.PARSE_ERROR if isinstance(exc, validation.InvalidJson) else rpc.INVALID_PARAMS
            )
            error = rpc.RpcError(code, exc.message, {"param": exc.param or "body"})
            response = JSONResponse({"jsonrpc": "2.0", "id": None, "error": error.body()}, 400)
            await response(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _authenticate(ctx: Services, key: str | None, slug: str | None) -> Access:
    project = projects.authenticate(ctx.store, key)
    caller = spaces.authenticate(ctx.store, key, slug) if slug else None
    return Access(ctx, project, caller)


def local_access(ctx: Services, slug: str | None, key: str | None) -> Access:
    """The caller of ``graphrecall mcp`` (stdio): a key's project, else the space's, else
    the default project; memory tools need a space."""
    if key:
        return _authenticate(ctx, key, slug)
    caller = spaces.local_caller(ctx.store, slug) if slug else None
    project = caller.project if caller else projects.get_or_create_project(ctx.store)
    return Access(ctx, project, caller)

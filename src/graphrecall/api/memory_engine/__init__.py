"""The Memory Engine face: JSON-RPC at ``/api/v1/memory/rpc`` and ``/api/v1/user/rpc``
(the account), ``/api/v1/version``, and the MCP tools over streamable HTTP at ``/mcp``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.routing import Route

from graphrecall.api.memory_engine import account, rpc


def install(app: FastAPI, host: str) -> None:
    """Add the routes, and run the MCP session manager for as long as the app runs."""
    from graphrecall.api import mcp

    app.include_router(rpc.router)
    app.include_router(account.router)
    server = mcp.build(mcp.http_access)
    # Stateless JSON responses: any process of a deployment can answer any request.
    server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True, host=host
    )
    manager = server.session_manager
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

    endpoint = mcp.HttpEndpoint(StreamableHTTPASGIApp(manager))
    app.router.routes.append(Route("/mcp", endpoint=endpoint, methods=["GET", "POST", "DELETE"]))
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async with manager.run(), outer(app) as state:
            yield state

    app.router.lifespan_context = lifespan

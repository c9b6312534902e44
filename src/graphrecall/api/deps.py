"""FastAPI dependencies shared by the routers: the service context and the caller's project."""

from __future__ import annotations

from fastapi import Header, Request
from fastapi.concurrency import run_in_threadpool

from graphrecall.domain.models import Project
from graphrecall.services.container import Services


def get_ctx(request: Request) -> Services:
    ctx: Services = request.app.state.ctx
    return ctx


async def ctx_dependency(request: Request) -> Services:
    """``get_ctx`` as a dependency. It blocks on nothing, so it runs on the event loop:
    a sync dependency costs each request a round trip through the thread pool."""
    return get_ctx(request)


def api_key_from(authorization: str | None) -> str | None:
    """Accept ``Api-Key <key>`` (the Zep SDK) and ``Bearer <key>`` (Memory Engine)."""
    if not authorization:
        return None
    scheme, _, key = authorization.strip().partition(" ")
    if scheme.lower() in ("api-key", "bearer") and key.strip():
        return key.strip()
    return None


async def current_project(
    request: Request, authorization: str | None = Header(default=None)
) -> Project:
    """The caller's project. A key seen a moment ago is answered from memory on the
    event loop; any other is looked up in the store in the thread pool (a sync
    dependency would cost every request that round trip)."""
    ctx = get_ctx(request)
    key = api_key_from(authorization)
    known = ctx.recent_keys.get(key)
    if known is not None:
        return known
    return await run_in_threadpool(ctx.recent_keys.authenticate, ctx.store, key)

"""FastAPI dependencies shared by the routers: the service context and the caller's project."""

from __future__ import annotations

from fastapi import Header, Request

from graphrecall.domain.models import Project
from graphrecall.services import projects
from graphrecall.services.context import Context


def get_ctx(request: Request) -> Context:
    ctx: Context = request.app.state.ctx
    return ctx


async def ctx_dependency(request: Request) -> Context:
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


def current_project(request: Request, authorization: str | None = Header(default=None)) -> Project:
    return projects.authenticate(get_ctx(request).store, api_key_from(authorization))

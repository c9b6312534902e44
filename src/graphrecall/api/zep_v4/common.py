"""Shared router plumbing for the Zep v4 face: route class, paging parameters."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from fastapi.routing import APIRoute
from pydantic import TypeAdapter

from graphrecall.api.deps import ctx_dependency, current_project
from graphrecall.domain import limits
from graphrecall.domain.models import Page, PageRequest, Project
from graphrecall.services.container import Services
from graphrecall.wire.zep_v4.paging import Paging


class WireRoute(APIRoute):
    """Leaves ``None`` fields out of responses, as the Zep API does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["response_model_exclude_none"] = True
        super().__init__(*args, **kwargs)


def make_router(tag: str) -> APIRouter:
    return APIRouter(route_class=WireRoute, tags=[tag])


@cache
def _adapter(model: Any) -> TypeAdapter[Any]:
    return TypeAdapter(model)


def serialized(model: Any, content: Any) -> Response:
    """``content`` validated as the route's ``model`` and written as :class:`WireRoute`
    writes it (``None`` fields left out), in the calling thread. FastAPI validates a sync
    handler's return value in the thread pool, one more round trip per request; a
    handler on the hot path (search, context) returns this instead, and FastAPI sends it
    as is."""
    adapter = _adapter(model)
    body = adapter.dump_json(adapter.validate_python(content), exclude_none=True, by_alias=True)
    return Response(body, media_type="application/json")


CtxDep = Depends(ctx_dependency)
ProjectDep = Depends(current_project)
__all__ = [
    "CtxDep",
    "Project",
    "ProjectDep",
    "Services",
    "make_router",
    "paging",
    "serialized",
    "wire_page",
]


def paging(spec: Paging) -> Callable[..., PageRequest]:
    """A dependency reading ``page_size``, ``cursor``, ``order_by`` and ``order`` by the
    list's rules (``wire/zep_v4/paging.py``, which the library reads too)."""

    def dependency(
        page_size: int = Query(limits.LIST_PAGE_SIZE_DEFAULT, ge=1, le=spec.max_size),
        cursor: str | None = Query(None, max_length=2048),
        order_by: str | None = Query(None, json_schema_extra={"enum": list(spec.allowed)}),
        order: Literal["asc", "desc"] | None = Query(None),
    ) -> PageRequest:
        return spec.request(page_size, cursor, order_by, order)

    return dependency


def wire_page(page: Page[Any], items: list[Any]) -> dict[str, Any]:
    return {"items": items, "next_cursor": page.next_cursor, "total_size": page.total_size}

"""The five search scopes: POST /graphs/{graph_uuid}/search/{scope}.

One route handler serves every scope; a scope differs only in how its records are turned
into wire items, which is the converter registered for it in ``wire/zep_v4/search.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Query

from graphrecall.api.zep_v4.common import (
    CtxDep,
    Project,
    ProjectDep,
    Services,
    make_router,
    serialized,
)
from graphrecall.services.graph import search
from graphrecall.services.graph.search import SEARCH_PAGE_MAX
from graphrecall.wire.zep_v4 import search as shapes
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.bodies import SearchBody

router = make_router("search")
PageSize = Query(SEARCH_PAGE_MAX, ge=1, le=SEARCH_PAGE_MAX)
CursorQ = Query(None, max_length=2048)


def _route(scope: str, item: type[Any], convert: shapes.Converter) -> Callable[..., Any]:
    page = wire.PageWire[item]  # type: ignore[valid-type]

    def handler(
        graph_uuid: str,
        body: SearchBody,
        page_size: int = PageSize,
        cursor: str | None = CursorQ,
        ctx: Services = CtxDep,
        project: Project = ProjectDep,
    ) -> Any:
        graph, found, next_cursor = search.search(
            ctx, project, graph_uuid, scope, shapes.params(body), page_size=page_size, cursor=cursor
        )
        return serialized(page, {"items": convert(ctx, graph, found), "next_cursor": next_cursor})

    handler.__name__ = f"search_{scope}"
    return handler


for _scope, (_segment, _item, _convert) in shapes.SCOPES.items():
    router.add_api_route(
        f"/graphs/{{graph_uuid}}/search/{_segment}",
        _route(_scope, _item, _convert),
        methods=["POST"],
        response_model=wire.PageWire[_item],  # type: ignore[valid-type]
        name=f"search_{_scope}",
    )

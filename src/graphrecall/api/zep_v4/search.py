"""The five search scopes: POST /graphs/{graph_uuid}/search/{scope}.

One route handler serves every scope; a scope differs only in how its records are turned
into wire items, which is the converter registered for it below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Query

from graphrecall.api.zep_v4 import wire
from graphrecall.api.zep_v4.bodies import SearchBody
from graphrecall.api.zep_v4.common import (
    CtxDep,
    Project,
    ProjectDep,
    Services,
    make_router,
    serialized,
)
from graphrecall.domain.models import Graph, Observation
from graphrecall.retrieval.engine import Hit
from graphrecall.services.graph import nodes, search
from graphrecall.services.graph.search import SEARCH_PAGE_MAX, SearchParams

router = make_router("search")
PageSize = Query(SEARCH_PAGE_MAX, ge=1, le=SEARCH_PAGE_MAX)
CursorQ = Query(None, max_length=2048)
Found = list[tuple[Any, Hit]]


def _params(body: SearchBody) -> SearchParams:
    return SearchParams(
        query=body.query,
        reranker=body.reranker,
        mmr_lambda=body.mmr_lambda,
        center_node_uuid=body.center_node_uuid,
        bfs_origin_node_uuids=tuple(body.bfs_origin_node_uuids or ()),
        filters=body.parsed(),
        filter_low_quality_results=bool(body.filter_low_quality_results),
    )


def _edges(ctx: Services, graph: Graph, found: Found) -> list[Any]:
    views = nodes.edge_views(ctx, [r for r, _ in found])
    for view, (_, hit) in zip(views, found, strict=True):
        view.score, view.relevance = hit.score, hit.relevance
    return [wire.edge(v, graph) for v in views]


def _nodes(ctx: Services, graph: Graph, found: Found) -> list[Any]:
    views = nodes.views(ctx, [r for r, _ in found])
    for view, (_, hit) in zip(views, found, strict=True):
        view.score, view.relevance = hit.score, hit.relevance
    return [wire.node(v, graph) for v in views]


def _episodes(ctx: Services, graph: Graph, found: Found) -> list[Any]:
    return [wire.episode(e, graph, h.score, h.relevance) for e, h in found]


def _observations(ctx: Services, graph: Graph, found: Found) -> list[Any]:
    provenance = ctx.store.episodes_of(Observation, graph.uuid, [o.uuid for o, _ in found])
    return [
        wire.observation(o, graph, provenance[o.uuid][0], h.score, h.relevance) for o, h in found
    ]


def _thread_summaries(ctx: Services, graph: Graph, found: Found) -> list[Any]:
    return [wire.thread_summary(t, h.score, h.relevance) for t, h in found]


Converter = Callable[[Services, Graph, Found], list[Any]]
SCOPES: dict[str, tuple[str, type[Any], Converter]] = {
    # scope: (path segment, wire item, converter)
    "edges": ("edges", wire.EdgeWire, _edges),
    "nodes": ("nodes", wire.NodeWire, _nodes),
    "episodes": ("episodes", wire.EpisodeWire, _episodes),
    "observations": ("observations", wire.ObservationWire, _observations),
    "thread_summaries": ("thread-summaries", wire.ThreadSummaryWire, _thread_summaries),
}


def _route(scope: str, item: type[Any], convert: Converter) -> Callable[..., Any]:
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
            ctx, project, graph_uuid, scope, _params(body), page_size=page_size, cursor=cursor
        )
        return serialized(page, {"items": convert(ctx, graph, found), "next_cursor": next_cursor})

    handler.__name__ = f"search_{scope}"
    return handler


for _scope, (_segment, _item, _convert) in SCOPES.items():
    router.add_api_route(
        f"/graphs/{{graph_uuid}}/search/{_segment}",
        _route(_scope, _item, _convert),
        methods=["POST"],
        response_model=wire.PageWire[_item],  # type: ignore[valid-type]
        name=f"search_{_scope}",
    )

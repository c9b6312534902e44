"""The five search scopes: POST /graphs/{graph_uuid}/search/{scope}."""

from __future__ import annotations

from typing import Any

from fastapi import Query

from graphrecall.api.zep_v4 import wire
from graphrecall.api.zep_v4.bodies import SearchBody
from graphrecall.api.zep_v4.common import Context, CtxDep, Project, ProjectDep, make_router
from graphrecall.domain.models import Edge, Episode, Node, Observation, ThreadSummary
from graphrecall.retrieval.engine import Hit
from graphrecall.services import nodes, search
from graphrecall.services.search import SEARCH_PAGE_MAX, SearchParams

router = make_router("search")
PageSize = Query(SEARCH_PAGE_MAX, ge=1, le=SEARCH_PAGE_MAX)
CursorQ = Query(None, max_length=2048)


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


def _run(
    ctx: Context,
    project: Project,
    graph_uuid: str,
    scope: str,
    body: SearchBody,
    page_size: int,
    cursor: str | None,
) -> tuple[Any, list[tuple[Any, Hit]], str | None]:
    return search.search(
        ctx, project, graph_uuid, scope, _params(body), page_size=page_size, cursor=cursor
    )


@router.post("/graphs/{graph_uuid}/search/edges", response_model=wire.PageWire[wire.EdgeWire])
def search_edges(
    graph_uuid: str,
    body: SearchBody,
    page_size: int = PageSize,
    cursor: str | None = CursorQ,
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph, found, next_cursor = _run(ctx, project, graph_uuid, "edges", body, page_size, cursor)
    edges: list[Edge] = [r for r, _ in found]
    views = nodes.edge_views(ctx, edges)
    items = []
    for view, (_, hit) in zip(views, found, strict=True):
        view.score, view.relevance = hit.score, hit.relevance
        items.append(wire.edge(view, graph))
    return {"items": items, "next_cursor": next_cursor}


@router.post("/graphs/{graph_uuid}/search/nodes", response_model=wire.PageWire[wire.NodeWire])
def search_nodes(
    graph_uuid: str,
    body: SearchBody,
    page_size: int = PageSize,
    cursor: str | None = CursorQ,
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph, found, next_cursor = _run(ctx, project, graph_uuid, "nodes", body, page_size, cursor)
    found_nodes: list[Node] = [r for r, _ in found]
    items = []
    for view, (_, hit) in zip(nodes.views(ctx, found_nodes), found, strict=True):
        view.score, view.relevance = hit.score, hit.relevance
        items.append(wire.node(view, graph))
    return {"items": items, "next_cursor": next_cursor}


@router.post("/graphs/{graph_uuid}/search/episodes", response_model=wire.PageWire[wire.EpisodeWire])
def search_episodes(
    graph_uuid: str,
    body: SearchBody,
    page_size: int = PageSize,
    cursor: str | None = CursorQ,
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph, found, next_cursor = _run(ctx, project, graph_uuid, "episodes", body, page_size, cursor)
    episodes: list[tuple[Episode, Hit]] = found
    items = [wire.episode(e, graph, h.score, h.relevance) for e, h in episodes]
    return {"items": items, "next_cursor": next_cursor}


@router.post(
    "/graphs/{graph_uuid}/search/observations",
    response_model=wire.PageWire[wire.ObservationWire],
)
def search_observations(
    graph_uuid: str,
    body: SearchBody,
    page_size: int = PageSize,
    cursor: str | None = CursorQ,
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph, found, next_cursor = _run(
        ctx, project, graph_uuid, "observations", body, page_size, cursor
    )
    observations: list[tuple[Observation, Hit]] = found
    provenance = ctx.store.episodes_of(Observation, [o.uuid for o, _ in observations])
    items = [
        wire.observation(o, graph, provenance[o.uuid][0], h.score, h.relevance)
        for o, h in observations
    ]
    return {"items": items, "next_cursor": next_cursor}


@router.post(
    "/graphs/{graph_uuid}/search/thread-summaries",
    response_model=wire.PageWire[wire.ThreadSummaryWire],
)
def search_thread_summaries(
    graph_uuid: str,
    body: SearchBody,
    page_size: int = PageSize,
    cursor: str | None = CursorQ,
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    _, found, next_cursor = _run(
        ctx, project, graph_uuid, "thread_summaries", body, page_size, cursor
    )
    summaries: list[tuple[ThreadSummary, Hit]] = found
    items = [wire.thread_summary(t, h.score, h.relevance) for t, h in summaries]
    return {"items": items, "next_cursor": next_cursor}

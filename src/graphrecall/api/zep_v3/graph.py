"""v3 graphs: ``/graph`` (add), ``/graph-batch``, ``/graph/search``, ``/graph/create``,
``/graph/list-all`` and ``/graph/{graph_id}``.

Literal paths (``search``, ``create``, ``list-all``) are registered before
``/graph/{graph_id}`` (tests/api/zep_v3 checks no two routes can match one request)."""

from __future__ import annotations

from typing import Any

from fastapi import Query

from graphrecall.api.zep_v3 import ids, search_filters
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.common import numbered, numbered_page, str_param, v3_fields
from graphrecall.api.zep_v3.payloads import EpisodeAddV3, EpisodeBatchV3, GraphCreateV3, SearchV3
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain import clock
from graphrecall.domain.inputs import GraphCreate, GraphUpdate
from graphrecall.retrieval.request import DEFAULT_RERANKER
from graphrecall.services.get_context.assembly import ContextRequest, graph_context
from graphrecall.services.graph import episodes, graphs, search
from graphrecall.services.graph.search import SearchParams
from graphrecall.wire.zep_v4 import search as v4search
from graphrecall.wire.zep_v4 import wire as v4

router = make_router("zep v3: graph")
GRAPH_ORDERS = ("created_at", "name", "uuid")
DEFAULT_LIMIT = 10  # v3's search limit when not given
# v4's names of what a v3 body says otherwise.
SEARCH_FIELDS = {r"^filters\.": "search_filters."}
TIME_FIELD = {r"^reference_time$": "created_at"}


@router.post("/graph", response_model=v3wire.EpisodeV3)
def add(body: EpisodeAddV3, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    graph = ids.target_graph(ctx, project, body.user_id, body.graph_id)
    with v3_fields(TIME_FIELD):
        episode, task = episodes.add_episode(ctx, project, graph.uuid, body)
    return v3wire.episode(v4.episode(episode, graph), task_id=task.uuid)


@router.post("/graph-batch", response_model=list[v3wire.EpisodeV3])
def add_batch(body: EpisodeBatchV3, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """Each episode is one ``graph.add`` (its own task); every time is read before the
    first is stored, so a bad one stores none."""
    graph = ids.target_graph(ctx, project, body.user_id, body.graph_id)
    for i, item in enumerate(body.episodes):
        clock.normalize(item.reference_time, param=f"episodes[{i}].created_at")
    out = []
    for item in body.episodes:
        episode, task = episodes.add_episode(ctx, project, graph.uuid, item)
        out.append(v3wire.episode(v4.episode(episode, graph), task_id=task.uuid))
    return out


@router.post("/graph/search", response_model=v3wire.SearchResultsV3)
def search_graph(body: SearchV3, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """One scope per call, as v3 answers it (one object, the scope's list set); ``auto``
    is the v4 graph context block."""
    graph = ids.target_graph(ctx, project, body.user_id, body.graph_id)
    filters = search_filters.to_v4(body.search_filters)
    scope = body.scope or "edges"
    if scope == "auto":
        request = ContextRequest(
            query=body.query, filters=filters, max_characters=body.max_characters
        )
        with v3_fields(SEARCH_FIELDS):
            found_context = graph_context(ctx, project, graph.uuid, request)
        return v3wire.SearchResultsV3(context=found_context.text)
    params = SearchParams(
        query=body.query,
        reranker=body.reranker or DEFAULT_RERANKER,
        mmr_lambda=body.mmr_lambda,
        center_node_uuid=body.center_node_uuid,
        bfs_origin_node_uuids=tuple(body.bfs_origin_node_uuids or ()),
        filters=filters,
    )
    with v3_fields(SEARCH_FIELDS):
        found_graph, found, _ = search.search(
            ctx,
            project,
            graph.uuid,
            scope,
            params,
            page_size=body.limit or DEFAULT_LIMIT,
            cursor=None,
        )
    _, _, convert = v4search.SCOPES[scope]
    items = convert(ctx, found_graph, found)
    if scope == "edges":
        return v3wire.SearchResultsV3(edges=[v3wire.edge(w) for w in items])
    if scope == "nodes":
        return v3wire.SearchResultsV3(nodes=[v3wire.node(w) for w in items])
    if scope == "observations":
        return v3wire.SearchResultsV3(observations=[v3wire.observation(w) for w in items])
    # Episodes and thread summaries carry their thread's developer id.
    thread_of = ids.thread_ids(ctx, project, {w.thread_uuid for w in items if w.thread_uuid})
    if scope == "thread_summaries":
        return v3wire.SearchResultsV3(
            thread_summaries=[v3wire.saga(w, thread_of.get(w.thread_uuid)) for w in items]
        )
    return v3wire.SearchResultsV3(
        episodes=[v3wire.episode(w, thread_of.get(w.thread_uuid or "")) for w in items]
    )


@router.post("/graph/create", response_model=v3wire.GraphV3)
def create_graph(body: GraphCreateV3, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    create = GraphCreate(name=body.name, description=body.description, time_zone=body.time_zone)
    return v3wire.graph(graphs.create_graph(ctx, project, create, body.graph_id))


@router.get("/graph/list-all", response_model=v3wire.GraphListV3)
def list_graphs(
    page_number: str | None = Query(None, alias="pageNumber"),
    page_size: str | None = Query(None, alias="pageSize"),
    search_text: str | None = Query(None, alias="search", max_length=500),
    order_by: str | None = Query(None),
    asc: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """The project's standard graphs (a user's graph is reached through its user, as in
    v3)."""
    wanted = numbered(
        page_number, page_size, order_by, asc, GRAPH_ORDERS, names=("pageNumber", "pageSize")
    )
    found, total = numbered_page(
        lambda page: graphs.list_graphs(
            ctx, project, page, str_param(search_text), graph_type="standard"
        ),
        wanted,
    )
    return v3wire.GraphListV3(
        graphs=[v3wire.graph(g) for g in found],
        page_number=wanted.number,
        page_size=wanted.size,
        row_count=len(found),
        total_count=total,
    )


@router.get("/graph/{graph_id}", response_model=v3wire.GraphV3)
def get_graph(graph_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return v3wire.graph(ids.graph(ctx, project, graph_id))


@router.patch("/graph/{graph_id}", response_model=v3wire.GraphV3)
def update_graph(
    graph_id: str, body: GraphUpdate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    found = ids.graph(ctx, project, graph_id)
    return v3wire.graph(graphs.update_graph(ctx, project, found.uuid, body))


@router.get("/graph/{graph_id}/warm", response_model=v3wire.SuccessV3)
def warm_graph(graph_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """Loads what the graph's searches read (v4's ``graph.warm``)."""
    graphs.warm_graph(ctx, project, ids.graph(ctx, project, graph_id).uuid)
    return v3wire.SuccessV3(message="warming")


@router.delete("/graph/{graph_id}", response_model=v3wire.SuccessV3)
def delete_graph(graph_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    graphs.delete_graph(ctx, project, ids.graph(ctx, project, graph_id).uuid)
    return v3wire.SuccessV3(message="deleted")

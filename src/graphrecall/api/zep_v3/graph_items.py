"""v3's graph item routes: a user's or graph's edges, nodes and episodes, and one edge,
node or episode by uuid (v3 names no graph there: ``ids.item_graph`` finds it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Body as BodyParam
from fastapi import Query

from graphrecall.api.zep_v3 import ids, search_filters
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.common import PAGE_SIZE_MAX, int_param
from graphrecall.api.zep_v3.payloads import EpisodeListV3, ItemListV3
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.ids import check_uuid
from graphrecall.domain.inputs import EdgeUpdate, EpisodeUpdate, NodeUpdate
from graphrecall.domain.models import (
    Edge,
    Episode,
    Graph,
    Node,
    Observation,
    PageRequest,
    ThreadSummary,
)
from graphrecall.domain.predicates import Column, Predicate, all_of
from graphrecall.retrieval import filters as filter_language
from graphrecall.retrieval.filters import Target
from graphrecall.services.graph import edges, episodes, nodes
from graphrecall.wire.zep_v4 import wire as v4

router = make_router("zep v3: graph items")
Owner = Callable[[Services, Project, str], Graph]


def _user_graph(ctx: Services, project: Project, user_id: str) -> Graph:
    return ids.target_graph(ctx, project, user_id, None)


def _graph(ctx: Services, project: Project, graph_id: str) -> Graph:
    return ids.graph(ctx, project, graph_id)


def item_page(body: ItemListV3 | None, target: Target) -> tuple[PageRequest, Predicate | None]:
    """v3 pages these lists by ``uuid_cursor``, the last uuid of the page before: the
    v4 keyset listing in uuid order, after that uuid; ``filters`` are v3's search
    filters, read as v4's for ``target`` (one it does not take is a 400)."""
    body = body or ItemListV3()
    size = min(body.limit or PAGE_SIZE_MAX, PAGE_SIZE_MAX)
    where = [filter_language.to_predicate(search_filters.to_v4(body.filters), target)]
    after = body.uuid_cursor or body.cursor
    if after:
        where.append(Column("uuid", "gt", check_uuid(after, param="uuid_cursor")))
    page = PageRequest(page_size=size, order_by="uuid", order="asc")
    return page, all_of([w for w in where if w is not None])


def _edge_list(ctx: Services, project: Project, graph: Graph, body: ItemListV3 | None) -> Any:
    page, where = item_page(body, "list:edges")
    found = edges.list_edges(ctx, project, graph.uuid, page, where).items
    return [v3wire.edge(v4.edge(v, graph)) for v in nodes.edge_views(ctx, found)]


def _node_list(ctx: Services, project: Project, graph: Graph, body: ItemListV3 | None) -> Any:
    page, where = item_page(body, "list:nodes")
    found = nodes.list_nodes(ctx, project, graph.uuid, page, where).items
    return [v3wire.node(v4.node(v, graph)) for v in nodes.views(ctx, found)]


def episode_wires(ctx: Services, project: Project, graph: Graph, found: list[Episode]) -> list[Any]:
    thread_of = ids.thread_ids(ctx, project, {e.thread_uuid for e in found if e.thread_uuid})
    return [v3wire.episode(v4.episode(e, graph), thread_of.get(e.thread_uuid or "")) for e in found]


def _recent(ctx: Services, project: Project, graph: Graph, lastn: str | None) -> Any:
    """The newest ``lastn`` episodes (v3's default and most: the last 100), oldest first."""
    count = int_param(lastn, "lastn", ge=1, le=PAGE_SIZE_MAX) or PAGE_SIZE_MAX
    page = episodes.list_episodes(
        ctx, project, graph.uuid, PageRequest(page_size=count, order_by="created_at")
    )
    return v3wire.EpisodesV3(
        episodes=episode_wires(ctx, project, graph, list(reversed(page.items)))
    )


def _episode_list(
    ctx: Services, project: Project, graph: Graph, body: EpisodeListV3 | None
) -> list[Any]:
    """The graph's episodes in uuid (time) order, ``direction`` desc unless asked, after
    ``cursor``; filtered by the v4 episode-list filters."""
    body = body or EpisodeListV3()
    order = body.direction or "desc"
    filters = search_filters.to_v4({"episode_metadata_filters": body.episode_metadata_filters})
    filters = filters.model_copy(update={"mentioned_node_uuids": body.mentioned_node_uuids})
    where = [filter_language.to_predicate(filters, "list:episodes")]
    if body.cursor:
        after = check_uuid(body.cursor, param="cursor")
        where.append(Column("uuid", "gt" if order == "asc" else "lt", after))
    page = PageRequest(
        page_size=min(body.limit or PAGE_SIZE_MAX, PAGE_SIZE_MAX), order_by="uuid", order=order
    )
    found = episodes.list_episodes(
        ctx,
        project,
        graph.uuid,
        page,
        mentioned_node_uuids=filter_language.mentioned_node_uuids(filters),
        where=all_of([w for w in where if w is not None]),
    )
    return episode_wires(ctx, project, graph, found.items)


def _observation_list(
    ctx: Services, project: Project, graph: Graph, body: ItemListV3 | None
) -> list[Any]:
    page, where = item_page(body, "list:observations")
    found = ctx.store.list_page(Observation, {"graph_uuid": graph.uuid}, page, where=where)
    provenance = ctx.store.episodes_of(Observation, graph.uuid, [o.uuid for o in found.items])
    return [
        v3wire.observation(v4.observation(o, graph, provenance[o.uuid][0])) for o in found.items
    ]


def _summary_list(
    ctx: Services, project: Project, graph: Graph, body: ItemListV3 | None
) -> list[Any]:
    page, where = item_page(body, "list:thread_summaries")
    found = ctx.store.list_page(ThreadSummary, {"graph_uuid": graph.uuid}, page, where=where)
    thread_of = ids.thread_ids(ctx, project, {t.thread_uuid for t in found.items})
    return [
        v3wire.thread_summary(v4.thread_summary(t), thread_of.get(t.thread_uuid))
        for t in found.items
    ]


def _register(segment: str, owner: Owner) -> None:
    """The list routes of one owner kind (``user/{user_id}`` or ``graph/{graph_id}``)."""
    param = f"{segment}_id"

    def edge_list(
        owner_id: str,
        body: ItemListV3 | None = BodyParam(default=None),
        ctx: Services = CtxDep,
        project: Project = ProjectDep,
    ) -> Any:
        return _edge_list(ctx, project, owner(ctx, project, owner_id), body)

    def node_list(
        owner_id: str,
        body: ItemListV3 | None = BodyParam(default=None),
        ctx: Services = CtxDep,
        project: Project = ProjectDep,
    ) -> Any:
        return _node_list(ctx, project, owner(ctx, project, owner_id), body)

    def episode_recent(
        owner_id: str,
        lastn: str | None = Query(None),
        ctx: Services = CtxDep,
        project: Project = ProjectDep,
    ) -> Any:
        return _recent(ctx, project, owner(ctx, project, owner_id), lastn)

    def episode_list(
        owner_id: str,
        body: EpisodeListV3 | None = BodyParam(default=None),
        ctx: Services = CtxDep,
        project: Project = ProjectDep,
    ) -> Any:
        return _episode_list(ctx, project, owner(ctx, project, owner_id), body)

    def observation_list(
        owner_id: str,
        body: ItemListV3 | None = BodyParam(default=None),
        ctx: Services = CtxDep,
        project: Project = ProjectDep,
    ) -> Any:
        return _observation_list(ctx, project, owner(ctx, project, owner_id), body)

    def summary_list(
        owner_id: str,
        body: ItemListV3 | None = BodyParam(default=None),
        ctx: Services = CtxDep,
        project: Project = ProjectDep,
    ) -> Any:
        return _summary_list(ctx, project, owner(ctx, project, owner_id), body)

    for handler, method, path, model in (
        (edge_list, "POST", "edge", list[v3wire.EdgeV3]),
        (node_list, "POST", "node", list[v3wire.NodeV3]),
        (episode_recent, "GET", "episodes", v3wire.EpisodesV3),
        (episode_list, "POST", "episodes", list[v3wire.EpisodeV3]),
        (observation_list, "POST", "observation", list[v3wire.ObservationV3]),
        (summary_list, "POST", "thread-summary", list[v3wire.ThreadSummaryV3]),
    ):
        router.add_api_route(
            f"/graph/{path}/{segment}/{{owner_id}}",
            handler,
            methods=[method],
            response_model=model,
            name=f"{handler.__name__}_by_{param}",
        )


_register("user", _user_graph)
_register("graph", _graph)


# -- one item by uuid ---------------------------------------------------------------------


def _edge(ctx: Services, project: Project, uuid: str) -> tuple[Edge, Graph]:
    record, graph = ids.item_graph(ctx, project, Edge, uuid)
    assert isinstance(record, Edge)
    return record, graph


def _node(ctx: Services, project: Project, uuid: str) -> tuple[Node, Graph]:
    record, graph = ids.item_graph(ctx, project, Node, uuid)
    assert isinstance(record, Node)
    return record, graph


def _episode(ctx: Services, project: Project, uuid: str) -> tuple[Episode, Graph]:
    record, graph = ids.item_graph(ctx, project, Episode, uuid)
    assert isinstance(record, Episode)
    return record, graph


@router.get("/graph/edge/{uuid}", response_model=v3wire.EdgeV3)
def get_edge(uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    edge, graph = _edge(ctx, project, uuid)
    return v3wire.edge(v4.edge(nodes.edge_views(ctx, [edge])[0], graph))


@router.patch("/graph/edge/{uuid}", response_model=v3wire.EdgeV3)
def update_edge(
    uuid: str, body: EdgeUpdate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    edge, graph = _edge(ctx, project, uuid)
    updated = edges.update_edge(ctx, project, graph.uuid, edge.uuid, body)
    return v3wire.edge(v4.edge(nodes.edge_views(ctx, [updated])[0], graph))


@router.delete("/graph/edge/{uuid}", response_model=v3wire.SuccessV3)
def delete_edge(uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    edge, graph = _edge(ctx, project, uuid)
    edges.delete_edge(ctx, project, graph.uuid, edge.uuid)
    return v3wire.SuccessV3(message="deleted")


@router.get("/graph/node/{uuid}", response_model=v3wire.NodeV3)
def get_node(uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    node, graph = _node(ctx, project, uuid)
    return v3wire.node(v4.node(nodes.views(ctx, [node])[0], graph))


@router.patch("/graph/node/{uuid}", response_model=v3wire.NodeV3)
def update_node(
    uuid: str, body: NodeUpdate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    node, graph = _node(ctx, project, uuid)
    updated = nodes.update_node(ctx, project, graph.uuid, node.uuid, body)
    return v3wire.node(v4.node(nodes.views(ctx, [updated])[0], graph))


@router.delete("/graph/node/{uuid}", response_model=v3wire.SuccessV3)
def delete_node(uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    node, graph = _node(ctx, project, uuid)
    nodes.delete_node(ctx, project, graph.uuid, node.uuid)
    return v3wire.SuccessV3(message="deleted")


@router.get("/graph/node/{uuid}/entity-edges", response_model=list[v3wire.EdgeV3])
def get_node_edges(uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    node, graph = _node(ctx, project, uuid)
    found = nodes.incident_edges(ctx, graph.uuid, [node.uuid], "both")
    return [v3wire.edge(v4.edge(v, graph)) for v in nodes.edge_views(ctx, found)]


@router.get("/graph/node/{uuid}/episodes", response_model=v3wire.EpisodesV3)
def get_node_episodes(uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    node, graph = _node(ctx, project, uuid)
    linked, _ = ctx.store.episodes_of(Node, graph.uuid, [node.uuid]).get(node.uuid, ([], False))
    found = [e for u in linked if (e := ctx.store.get(Episode, u, {"graph_uuid": graph.uuid}))]
    return v3wire.EpisodesV3(episodes=episode_wires(ctx, project, graph, found))


@router.get("/graph/episodes/{uuid}", response_model=v3wire.EpisodeV3)
def get_episode(uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    episode, graph = _episode(ctx, project, uuid)
    return episode_wires(ctx, project, graph, [episode])[0]


@router.patch("/graph/episodes/{uuid}", response_model=v3wire.EpisodeV3)
def update_episode(
    uuid: str, body: EpisodeUpdate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    episode, graph = _episode(ctx, project, uuid)
    updated = episodes.update_episode(ctx, project, graph.uuid, episode.uuid, body)
    return episode_wires(ctx, project, graph, [updated])[0]


@router.delete("/graph/episodes/{uuid}", response_model=v3wire.SuccessV3)
def delete_episode(uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    episode, graph = _episode(ctx, project, uuid)
    episodes.delete_episode(ctx, project, graph.uuid, episode.uuid)
    return v3wire.SuccessV3(message="deleted")


@router.get("/graph/episodes/{uuid}/mentions", response_model=v3wire.MentionsV3)
def get_episode_mentions(uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """The nodes an episode mentions and the facts it supports."""
    episode, graph = _episode(ctx, project, uuid)
    node_uuids = ctx.store.linked_to_episodes(Node, graph.uuid, [episode.uuid])
    edge_uuids = ctx.store.linked_to_episodes(Edge, graph.uuid, [episode.uuid])
    found_nodes = [
        n for u in node_uuids if (n := ctx.store.get(Node, u, {"graph_uuid": graph.uuid}))
    ]
    found_edges = [
        e for u in edge_uuids if (e := ctx.store.get(Edge, u, {"graph_uuid": graph.uuid}))
    ]
    return v3wire.MentionsV3(
        nodes=[v3wire.node(v4.node(v, graph)) for v in nodes.views(ctx, found_nodes)],
        edges=[v3wire.edge(v4.edge(v, graph)) for v in nodes.edge_views(ctx, found_edges)],
    )


@router.get("/graph/observation/{uuid}", response_model=v3wire.ObservationV3)
def get_observation(uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    found, graph = ids.item_graph(ctx, project, Observation, uuid)
    assert isinstance(found, Observation)
    provenance = ctx.store.episodes_of(Observation, graph.uuid, [found.uuid])
    return v3wire.observation(v4.observation(found, graph, provenance[found.uuid][0]))

"""The Zep v4 answers that take more than one service call and a converter, written once
for the two faces that give them: the HTTP routes (``api/zep_v4``) and the library
(``library/``). A face checks its inputs into the bodies of ``bodies.py`` and calls these;
the one-call answers (get a user, delete an edge) each face writes as that call and its
converter."""

from __future__ import annotations

from typing import Any

from graphrecall.domain.errors import BadRequest, NotFound
from graphrecall.domain.ids import check_uuid
from graphrecall.domain.inputs import MessagesAdd
from graphrecall.domain.models import Observation, Page, PageRequest, Project, ThreadSummary
from graphrecall.retrieval import filters as filter_language
from graphrecall.services.accounts import projects
from graphrecall.services.container import Services
from graphrecall.services.episode_errors import processing_errors
from graphrecall.services.get_context.assembly import ContextRequest, graph_context, thread_context
from graphrecall.services.graph import episodes, graphs, nodes, threads, users
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.bodies import (
    FilteredListBody,
    NeighborsBody,
    ProjectUpdateBody,
    SubgraphBody,
)
from graphrecall.wire.zep_v4.context import GraphContextBody, GraphContextResponse, results

Listed = tuple[Page[Any], list[Any]]


def user_node(ctx: Services, project: Project, user_uuid: str) -> wire.NodeWire:
    node = users.user_node(ctx, project, user_uuid)
    graph = graphs.resolve(ctx, project, node.graph_uuid)
    return wire.node(nodes.views(ctx, [node])[0], graph)


def list_episodes(
    ctx: Services, project: Project, graph_uuid: str, body: FilteredListBody, page: PageRequest
) -> Listed:
    filters = body.parsed()
    graph = graphs.resolve(ctx, project, graph_uuid)
    found = episodes.list_episodes(
        ctx,
        project,
        graph.uuid,
        page,
        mentioned_node_uuids=filter_language.mentioned_node_uuids(filters),
        where=filter_language.to_predicate(filters, "list:episodes"),
    )
    errors = processing_errors(ctx, project.uuid, found.items)
    return found, [wire.episode(e, graph, error=errors.get(e.uuid)) for e in found.items]


def list_neighbors(
    ctx: Services,
    project: Project,
    graph_uuid: str,
    node_uuid: str,
    body: NeighborsBody,
    page: PageRequest,
) -> Listed:
    where = body.predicate("graph:edges")
    graph = graphs.resolve(ctx, project, graph_uuid)
    found, by_neighbor = nodes.list_neighbors(
        ctx, project, graph.uuid, node_uuid, body.direction, page, where
    )
    all_edges = [e for n in found.items for e in by_neighbor[n.uuid]]
    edge_wires = {v.edge.uuid: wire.edge(v, graph) for v in nodes.edge_views(ctx, all_edges)}
    entries = [
        wire.NeighborEntry(
            node=wire.node(v, graph),
            edges=[edge_wires[e.uuid] for e in by_neighbor[v.node.uuid]],
        )
        for v in nodes.views(ctx, found.items)
    ]
    return found, entries


def subgraph(
    ctx: Services, project: Project, graph_uuid: str, body: SubgraphBody
) -> wire.SubgraphResponse:
    where = body.predicate("graph:edges")
    graph = graphs.resolve(ctx, project, graph_uuid)
    found_nodes, found_edges, reason = nodes.get_subgraph(
        ctx,
        project,
        graph.uuid,
        body.seed_node_uuids,
        depth=body.depth,
        direction=body.direction,
        max_nodes=body.max_nodes,
        max_edges=body.max_edges,
        where=where,
    )
    return wire.SubgraphResponse(
        nodes=[wire.node(v, graph) for v in nodes.views(ctx, found_nodes)],
        edges=[wire.edge(v, graph) for v in nodes.edge_views(ctx, found_edges)],
        truncated=reason is not None,
        truncation_reason=reason,
    )


def list_observations(
    ctx: Services, project: Project, graph_uuid: str, body: FilteredListBody, page: PageRequest
) -> Listed:
    where = body.predicate("list:observations")
    graph = graphs.resolve(ctx, project, graph_uuid)
    found = ctx.store.list_page(Observation, {"graph_uuid": graph.uuid}, page, where=where)
    provenance = ctx.store.episodes_of(Observation, graph.uuid, [o.uuid for o in found.items])
    return found, [wire.observation(o, graph, provenance[o.uuid][0]) for o in found.items]


def get_observation(
    ctx: Services, project: Project, graph_uuid: str, observation_uuid: str
) -> wire.ObservationWire:
    graph = graphs.resolve(ctx, project, graph_uuid)
    uuid = check_uuid(observation_uuid, param="observation_uuid")
    found = ctx.store.get(Observation, uuid, {"graph_uuid": graph.uuid})
    if found is None:
        raise NotFound("observation", uuid, param="observation_uuid")
    return wire.observation(
        found, graph, ctx.store.episodes_of(Observation, graph.uuid, [uuid])[uuid][0]
    )


def list_thread_summaries(
    ctx: Services, project: Project, graph_uuid: str, body: FilteredListBody, page: PageRequest
) -> Listed:
    where = body.predicate("list:thread_summaries")
    graph = graphs.resolve(ctx, project, graph_uuid)
    found = ctx.store.list_page(ThreadSummary, {"graph_uuid": graph.uuid}, page, where=where)
    return found, [wire.thread_summary(t) for t in found.items]


def thread_summary(ctx: Services, project: Project, thread_uuid: str) -> wire.ThreadSummaryWire:
    thread = threads.get_thread(ctx, project, thread_uuid)
    found = ctx.store.find(ThreadSummary, {"thread_uuid": thread.uuid}, limit=1)
    if not found:
        raise NotFound("thread summary", thread.uuid, param="thread_uuid")
    return wire.thread_summary(found[0])


def thread_episodes(ctx: Services, project: Project, thread_uuid: str, page: PageRequest) -> Listed:
    thread = threads.get_thread(ctx, project, thread_uuid)
    graph = graphs.resolve(ctx, project, thread.graph_uuid)
    found = threads.list_messages(ctx, project, thread.uuid, page)
    errors = processing_errors(ctx, project.uuid, found.items)
    return found, [wire.episode(e, graph, error=errors.get(e.uuid)) for e in found.items]


def add_messages(
    ctx: Services, project: Project, thread_uuid: str, body: MessagesAdd
) -> wire.AddMessagesResult:
    added, task = threads.add_messages(ctx, project, thread_uuid, body)
    context = thread_context(ctx, project, thread_uuid).text if body.return_context else None
    return wire.AddMessagesResult(
        messages=[wire.message(m) for m in added], task=wire.task(task), context=context
    )


def update_project(ctx: Services, project: Project, body: ProjectUpdateBody) -> Project:
    """The project after ``body``; only its time zone changes anything."""
    # Hyperedges are always on (``hyperedges_enabled`` is reported true; either value is
    # accepted and changes nothing).
    if body.include_policy_violating_episodes:
        # A 400, not a 501: the route is built, and this value of the field is not.
        raise BadRequest(
            "content policies are not built; only false is accepted",
            param="include_policy_violating_episodes",
        )
    if "default_time_zone" not in body.model_fields_set:
        return project
    updated = projects.update_project(ctx.store, project, body.default_time_zone)
    ctx.recent_keys.clear()  # the keys' remembered project is the old one
    return updated


def get_graph_context(
    ctx: Services, project: Project, graph_uuid: str, body: GraphContextBody
) -> GraphContextResponse:
    request = ContextRequest(
        query=body.query,
        filters=body.parsed(),
        max_characters=body.max_characters,
        recency_bias=body.recency_bias,
        template_uuid=body.template_uuid,
    )
    found = graph_context(ctx, project, graph_uuid, request)
    listed = results(ctx, found.graph, found.items) if body.include_results else None
    return GraphContextResponse(context=found.text, truncated=found.truncated, results=listed)

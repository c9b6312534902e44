"""Hyperedges: one fact over three or more nodes, stored as member edges (one per node
pair) that share the hyperedge's uuid, fact and timestamps. The members are ordinary
edges, so every edge search, list, filter and context block finds them as it finds any
fact; a ``Hyperedge`` record keeps the identity (for paging) while it has a member."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from graphrecall.domain import clock, limits
from graphrecall.domain.errors import BadRequest, NotFound, UnsupportedFilter
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.inputs import HyperedgeAdd, HyperedgeMember, HyperedgeUpdate
from graphrecall.domain.models import (
    Edge,
    Graph,
    Hyperedge,
    HyperedgeView,
    Node,
    Page,
    PageRequest,
    Project,
    Task,
)
from graphrecall.graph_model import graph_writes
from graphrecall.services import erasure, tasks
from graphrecall.services.container import Services
from graphrecall.services.graph import edges, graphs

ADD_TASK = "graph.hyperedge.add"
ADD_EDGE_TASK = "graph.hyperedge.create_edge"
# A hyperedge relates more than two nodes (two are an ordinary edge: graph.edge.add).
MIN_NODES = 3
FILTERS = ("edge_uuids", "episode_uuids", "node_uuids")

Member = tuple[Edge, Node, Node]


def _member(
    ctx: Services,
    graph: Graph,
    item: HyperedgeMember,
    created: dict[str, Node],
    prefix: str,
    shared: Edge,
) -> Member:
    source = edges.resolve_ref(ctx, graph, item.source_node, created, f"{prefix}source_node")
    target = edges.resolve_ref(ctx, graph, item.target_node, created, f"{prefix}target_node")
    edge = shared.model_copy(
        update={
            "uuid": new_id(),
            "name": item.name,
            "source_node_uuid": source.uuid,
            "target_node_uuid": target.uuid,
        }
    )
    return edge, source, target


def add_hyperedge(
    ctx: Services, project: Project, graph_uuid: str, body: HyperedgeAdd
) -> tuple[Hyperedge, list[Member], Task]:
    graph = graphs.resolve(ctx, project, graph_uuid)
    stamp = clock.now()
    hyperedge = Hyperedge(uuid=new_id(), graph_uuid=graph.uuid, created_at=stamp)
    shared = Edge(
        uuid=hyperedge.uuid,  # replaced per member
        graph_uuid=graph.uuid,
        name="MEMBER",  # replaced per member
        fact=body.fact,
        source_node_uuid=hyperedge.uuid,
        target_node_uuid=hyperedge.uuid,
        attributes=body.attributes,
        metadata=body.metadata,
        created_at=stamp,
        updated_at=stamp,
        valid_at=clock.normalize(body.valid_at, param="valid_at"),
        invalid_at=clock.normalize(body.invalid_at, param="invalid_at"),
        expired_at=clock.normalize(body.expired_at, param="expired_at"),
        hyperedge_uuid=hyperedge.uuid,
    )
    created: dict[str, Node] = {}
    with ctx.store.transaction():
        members = [
            _member(ctx, graph, item, created, f"edges[{i}].", shared)
            for i, item in enumerate(body.edges)
        ]
        spanned = {n.uuid for _, s, t in members for n in (s, t)}
        if len(spanned) < MIN_NODES:
            raise BadRequest(
                f"a hyperedge's members must span at least {MIN_NODES} distinct nodes"
                f" (these span {len(spanned)}); one node pair is an edge: graph.edge.add",
                param="edges",
            )
        ctx.store.insert([hyperedge])
        graph_writes.insert_nodes(ctx.store, list(created.values()))
        graph_writes.insert_edges(ctx.store, [e for e, _, _ in members])
        task = tasks.enqueue(
            ctx,
            project.uuid,
            graph.uuid,
            ADD_TASK,
            {
                "edges": [e.uuid for e, _, _ in members],
                "nodes": [n.uuid for n in created.values()],
                "hyperedge_uuid": hyperedge.uuid,
            },
        )
    ctx.wake_worker()
    return hyperedge, members, task


def _members(ctx: Services, graph_uuid: str, uuids: Collection[str]) -> dict[str, list[Edge]]:
    found = ctx.store.find(Edge, {"graph_uuid": graph_uuid, "hyperedge_uuid": list(uuids)})
    out: dict[str, list[Edge]] = {u: [] for u in uuids}
    for edge in sorted(found, key=lambda e: e.uuid):
        assert edge.hyperedge_uuid is not None
        out[edge.hyperedge_uuid].append(edge)
    return out


def get_hyperedge(
    ctx: Services, project: Project, graph_uuid: str, hyperedge_uuid: str
) -> HyperedgeView:
    graph = graphs.resolve(ctx, project, graph_uuid)
    uuid = check_uuid(hyperedge_uuid, param="hyperedge_uuid")
    record = ctx.store.get(Hyperedge, uuid, {"graph_uuid": graph.uuid})
    members = _members(ctx, graph.uuid, [uuid])[uuid] if record else []
    if record is None or not members:
        raise NotFound("hyperedge", uuid, param="hyperedge_uuid")
    return HyperedgeView(hyperedge=record, members=members)


def _uuid_list(filters: dict[str, Any], key: str) -> list[str] | None:
    value = filters.get(key)
    if value is None:
        return None
    param = f"filters.{key}"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequest(f"{param} must be a list of UUIDs", param=param)
    if len(value) > limits.MAX_UUID_LIST:
        raise BadRequest(f"{param} holds at most {limits.MAX_UUID_LIST} UUIDs", param=param)
    return [check_uuid(v, param=f"{param}[{i}]") for i, v in enumerate(value)]


def _matching(ctx: Services, graph_uuid: str, filters: dict[str, Any]) -> set[str] | None:
    """The hyperedges having a member that matches each list given (any member, each
    list), or None when no filter is given."""
    for key in filters:
        if key not in FILTERS:
            raise UnsupportedFilter(
                f"hyperedge lists take only {', '.join(FILTERS)} filters", param=f"filters.{key}"
            )
    store = ctx.store
    scope = {"graph_uuid": graph_uuid}
    found: list[set[str]] = []
    if (edge_uuids := _uuid_list(filters, "edge_uuids")) is not None:
        found.append(_owners(store.find(Edge, {**scope, "uuid": edge_uuids})))
    if (node_uuids := _uuid_list(filters, "node_uuids")) is not None:
        touching = store.find(Edge, {**scope, "source_node_uuid": node_uuids})
        touching += store.find(Edge, {**scope, "target_node_uuid": node_uuids})
        found.append(_owners(touching))
    if (episode_uuids := _uuid_list(filters, "episode_uuids")) is not None:
        linked = store.linked_to_episodes(Edge, graph_uuid, episode_uuids)
        found.append(_owners(store.find(Edge, {**scope, "uuid": linked})))
    if not found:
        return None
    return set.intersection(*found)


def _owners(members: list[Edge]) -> set[str]:
    return {e.hyperedge_uuid for e in members if e.hyperedge_uuid is not None}


def list_hyperedges(
    ctx: Services,
    project: Project,
    graph_uuid: str,
    page: PageRequest,
    filters: dict[str, Any] | None,
) -> tuple[Page[HyperedgeView], Graph]:
    graph = graphs.resolve(ctx, project, graph_uuid)
    scope: dict[str, Any] = {"graph_uuid": graph.uuid}
    wanted = _matching(ctx, graph.uuid, filters or {})
    if wanted is not None:
        scope["uuid"] = sorted(wanted)
    result = ctx.store.list_page(Hyperedge, scope, page)
    members = _members(ctx, graph.uuid, [h.uuid for h in result.items])
    views = [HyperedgeView(hyperedge=h, members=members[h.uuid]) for h in result.items]
    return Page(items=views, next_cursor=result.next_cursor, total_size=result.total_size), graph


def update_hyperedge(
    ctx: Services, project: Project, graph_uuid: str, hyperedge_uuid: str, body: HyperedgeUpdate
) -> HyperedgeView:
    view = get_hyperedge(ctx, project, graph_uuid, hyperedge_uuid)
    if body.fact is None:
        return view
    members = edges.rewrite_fact(ctx, view.members, body.fact)
    return view.model_copy(update={"members": members})


def delete_hyperedge(ctx: Services, project: Project, graph_uuid: str, hyperedge_uuid: str) -> Task:
    view = get_hyperedge(ctx, project, graph_uuid, hyperedge_uuid)
    graph = view.hyperedge.graph_uuid
    with ctx.store.transaction():
        graph_writes.delete_edges(ctx.store, graph, {"hyperedge_uuid": view.hyperedge.uuid})
        erasure.mark(ctx, erasure.GRAPH_KINDS)
    return erasure.completed(
        ctx, project.uuid, graph, "graph.hyperedge.delete", "hyperedge", view.hyperedge.uuid
    )


def create_member(
    ctx: Services, project: Project, graph_uuid: str, hyperedge_uuid: str, body: HyperedgeMember
) -> tuple[Member, Task]:
    """A new member edge with the hyperedge's fact, timestamps, attributes and episodes."""
    view = get_hyperedge(ctx, project, graph_uuid, hyperedge_uuid)
    graph = graphs.resolve(ctx, project, view.hyperedge.graph_uuid)
    first = view.members[0]
    shared = first.model_copy(update={"updated_at": clock.now()})
    created: dict[str, Node] = {}
    with ctx.store.transaction():
        member = _member(ctx, graph, body, created, "", shared)
        edge = member[0]
        graph_writes.insert_nodes(ctx.store, list(created.values()))
        graph_writes.insert_edges(ctx.store, [edge])
        provenance = ctx.store.episodes_of(Edge, graph.uuid, [e.uuid for e in view.members])
        episodes = sorted({u for uuids, _ in provenance.values() for u in uuids})
        if episodes:
            graph_writes.link_facts(ctx.store, graph.uuid, edge.uuid, episodes)
        task = tasks.enqueue(
            ctx,
            project.uuid,
            graph.uuid,
            ADD_EDGE_TASK,
            {
                "edges": [edge.uuid],
                "nodes": [n.uuid for n in created.values()],
                "hyperedge_uuid": view.hyperedge.uuid,
            },
        )
    ctx.wake_worker()
    return member, task


def delete_member(
    ctx: Services, project: Project, graph_uuid: str, hyperedge_uuid: str, edge_uuid: str
) -> Task:
    """Remove one member; the last one's removal removes the hyperedge."""
    view = get_hyperedge(ctx, project, graph_uuid, hyperedge_uuid)
    edge_uuid = check_uuid(edge_uuid, param="edge_uuid")
    graph = view.hyperedge.graph_uuid
    if all(e.uuid != edge_uuid for e in view.members):
        raise NotFound("hyperedge member edge", edge_uuid, param="edge_uuid")
    with ctx.store.transaction():
        graph_writes.delete_edges(ctx.store, graph, {"uuid": edge_uuid})
        erasure.mark(ctx, erasure.GRAPH_KINDS)
    return erasure.completed(
        ctx, project.uuid, graph, "graph.hyperedge.delete_edge", "edge", edge_uuid
    )

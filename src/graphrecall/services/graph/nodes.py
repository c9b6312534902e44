"""Entity nodes: add (no LLM needed), read, change, delete, neighbours, subgraph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrecall.domain import clock, limits
from graphrecall.domain.errors import BadRequest, NotFound
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.inputs import Direction, NodesAdd, NodeUpdate
from graphrecall.domain.models import (
    Edge,
    EdgeView,
    Graph,
    Node,
    NodeView,
    Page,
    PageRequest,
    Project,
    Task,
)
from graphrecall.domain.predicates import Predicate
from graphrecall.graph_model import graph_writes
from graphrecall.graph_model.embedding import embed_records
from graphrecall.services import erasure, tasks
from graphrecall.services.container import Services
from graphrecall.services.graph import graphs

ENTITY_LABEL = "Entity"


def labels_for(label: str | None, extra: Sequence[str] | None = None) -> list[str]:
    """Every entity node carries ``Entity`` plus its type labels, without duplicates."""
    out = [ENTITY_LABEL]
    for item in [label, *(extra or [])]:
        if item and item not in out:
            out.append(item)
    return out


def episodes_of(
    ctx: Services,
    kind: type[Node] | type[Edge],
    records: Sequence[Node] | Sequence[Edge],
    *,
    limit: int | None = None,
) -> dict[str, tuple[list[str], bool]]:
    """The store's ``episodes_of`` for records of any graphs, asked graph by graph."""
    out: dict[str, tuple[list[str], bool]] = {}
    for graph_uuid in dict.fromkeys(r.graph_uuid for r in records):
        uuids = [r.uuid for r in records if r.graph_uuid == graph_uuid]
        out.update(ctx.store.episodes_of(kind, graph_uuid, uuids, limit=limit))
    return out


def views(ctx: Services, nodes: Sequence[Node], *, with_degree: bool = False) -> list[NodeView]:
    provenance = episodes_of(ctx, Node, nodes, limit=limits.NODE_EPISODE_UUIDS_MAX)
    degrees: dict[str, int] = {}
    if with_degree and nodes:
        degrees = ctx.store.node_degrees(nodes[0].graph_uuid, [n.uuid for n in nodes])
    return [
        NodeView(
            node=n,
            episode_uuids=provenance[n.uuid][0],
            episode_uuids_truncated=provenance[n.uuid][1],
            degree=degrees.get(n.uuid) if with_degree else None,
        )
        for n in nodes
    ]


def add_nodes(
    ctx: Services, project: Project, graph_uuid: str, body: NodesAdd
) -> tuple[list[Node], Task]:
    graph = graphs.resolve(ctx, project, graph_uuid)
    nodes = []
    for item in body.nodes:
        stamp = clock.now()
        nodes.append(
            Node(
                uuid=new_id(),
                graph_uuid=graph.uuid,
                name=item.name,
                labels=labels_for(item.label),
                summary=item.summary,
                attributes=item.attributes,
                metadata=item.metadata,
                created_at=stamp,
                updated_at=stamp,
            )
        )
    with ctx.store.transaction():
        nodes = graph_writes.insert_nodes(ctx.store, nodes)
        task = tasks.enqueue(
            ctx, project.uuid, graph.uuid, "graph.add_nodes", {"nodes": [n.uuid for n in nodes]}
        )
    ctx.wake_worker()
    return nodes, task


def get_node(ctx: Services, project: Project, graph_uuid: str, node_uuid: str) -> Node:
    graph = graphs.resolve(ctx, project, graph_uuid)
    return node_in(ctx, graph, node_uuid)


def node_in(ctx: Services, graph: Graph, node_uuid: str, *, param: str = "node_uuid") -> Node:
    node_uuid = check_uuid(node_uuid, param=param)
    node = ctx.store.get(Node, node_uuid, {"graph_uuid": graph.uuid})
    if node is None:
        raise NotFound("node", node_uuid, param=param)
    return node


def list_nodes(
    ctx: Services,
    project: Project,
    graph_uuid: str,
    page: PageRequest,
    where: Predicate | None = None,
) -> Page[Node]:
    graph = graphs.resolve(ctx, project, graph_uuid)
    return ctx.store.list_page(Node, {"graph_uuid": graph.uuid}, page, where=where)


def update_node(
    ctx: Services, project: Project, graph_uuid: str, node_uuid: str, body: NodeUpdate
) -> Node:
    node = get_node(ctx, project, graph_uuid, node_uuid)
    changes: dict[str, Any] = body.model_dump(exclude_unset=True, exclude_none=True)
    if not changes:
        return node
    updated = node.model_copy(update={**changes, "updated_at": clock.now()})
    with ctx.store.transaction():
        ctx.store.update(updated)
        if "name" in changes or "summary" in changes:
            embed_records(ctx.store, ctx.embedder, [updated])
    return updated


def delete_node(ctx: Services, project: Project, graph_uuid: str, node_uuid: str) -> Task:
    """Delete a node and every edge that touches it."""
    node = get_node(ctx, project, graph_uuid, node_uuid)
    with ctx.store.transaction():
        for end in ("source_node_uuid", "target_node_uuid"):
            graph_writes.delete_edges(ctx.store, node.graph_uuid, {end: node.uuid})
        ctx.store.delete(Node, {"uuid": node.uuid, "graph_uuid": node.graph_uuid})
        erasure.mark(ctx, erasure.GRAPH_KINDS)
    return erasure.completed(
        ctx, project.uuid, node.graph_uuid, "graph.node.delete", "node", node.uuid
    )


def incident_edges(
    ctx: Services,
    graph_uuid: str,
    node_uuids: Sequence[str],
    direction: Direction,
    where: Predicate | None = None,
) -> list[Edge]:
    edges: dict[str, Edge] = {}
    if direction in ("out", "both"):
        for e in ctx.store.find(
            Edge, {"graph_uuid": graph_uuid, "source_node_uuid": list(node_uuids)}, where=where
        ):
            edges[e.uuid] = e
    if direction in ("in", "both"):
        for e in ctx.store.find(
            Edge, {"graph_uuid": graph_uuid, "target_node_uuid": list(node_uuids)}, where=where
        ):
            edges[e.uuid] = e
    return sorted(edges.values(), key=lambda e: e.uuid)


def list_neighbors(
    ctx: Services,
    project: Project,
    graph_uuid: str,
    node_uuid: str,
    direction: Direction,
    page: PageRequest,
    where: Predicate | None = None,
) -> tuple[Page[Node], dict[str, list[Edge]]]:
    """Neighbour nodes (paged) and, for each, the edges that connect it to the node;
    ``where`` filters the connecting edges."""
    node = get_node(ctx, project, graph_uuid, node_uuid)
    by_neighbor: dict[str, list[Edge]] = {}
    for edge in incident_edges(ctx, node.graph_uuid, [node.uuid], direction, where):
        if edge.source_node_uuid == node.uuid and direction in ("out", "both"):
            by_neighbor.setdefault(edge.target_node_uuid, []).append(edge)
        if edge.target_node_uuid == node.uuid and direction in ("in", "both"):
            by_neighbor.setdefault(edge.source_node_uuid, []).append(edge)
    result = ctx.store.list_page(
        Node, {"graph_uuid": node.graph_uuid, "uuid": sorted(by_neighbor)}, page
    )
    return result, by_neighbor


def get_subgraph(
    ctx: Services,
    project: Project,
    graph_uuid: str,
    seed_node_uuids: Sequence[str],
    *,
    depth: int,
    direction: Direction,
    max_nodes: int,
    max_edges: int,
    where: Predicate | None = None,
) -> tuple[list[Node], list[Edge], str | None]:
    """Breadth-first expansion from the seeds; returns nodes, edges and why it stopped
    early (``max_nodes`` / ``max_edges``), or None when the whole neighbourhood fit."""
    graph = graphs.resolve(ctx, project, graph_uuid)
    if not seed_node_uuids:
        raise BadRequest("seed_node_uuids must not be empty", param="seed_node_uuids")
    if len(seed_node_uuids) > limits.MAX_UUID_LIST:
        raise BadRequest(f"at most {limits.MAX_UUID_LIST} seeds", param="seed_node_uuids")
    seeds = [
        node_in(ctx, graph, u, param=f"seed_node_uuids[{i}]") for i, u in enumerate(seed_node_uuids)
    ]
    nodes: dict[str, Node] = {n.uuid: n for n in seeds[:max_nodes]}
    truncation = "max_nodes" if len(seeds) > max_nodes else None
    edges: dict[str, Edge] = {}
    frontier = list(nodes)
    for _ in range(depth):
        if not frontier or truncation:
            break
        next_frontier: list[str] = []
        for edge in incident_edges(ctx, graph.uuid, frontier, direction, where):
            if edge.uuid in edges:
                continue
            new = [
                o
                for o in dict.fromkeys((edge.source_node_uuid, edge.target_node_uuid))
                if o not in nodes and o not in next_frontier
            ]
            if len(nodes) + len(next_frontier) + len(new) > max_nodes:
                truncation = "max_nodes"
                break
            if len(edges) >= max_edges:
                truncation = "max_edges"
                break
            edges[edge.uuid] = edge
            next_frontier.extend(new)
        for found in ctx.store.find(Node, {"graph_uuid": graph.uuid, "uuid": next_frontier}):
            nodes[found.uuid] = found
        frontier = next_frontier
    return list(nodes.values()), list(edges.values()), truncation


def edge_views(ctx: Services, edges: Sequence[Edge]) -> list[EdgeView]:
    """Hydrate edges with their endpoints (read now, so renamed nodes show new names)."""
    if not edges:
        return []
    node_uuids = sorted({e.source_node_uuid for e in edges} | {e.target_node_uuid for e in edges})
    nodes = {
        n.uuid: n
        for n in ctx.store.find(Node, {"graph_uuid": edges[0].graph_uuid, "uuid": node_uuids})
    }
    provenance = episodes_of(ctx, Edge, edges)
    return [
        EdgeView(
            edge=e,
            source=nodes.get(e.source_node_uuid),
            target=nodes.get(e.target_node_uuid),
            episode_uuids=provenance[e.uuid][0],
        )
        for e in edges
    ]

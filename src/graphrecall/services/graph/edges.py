"""Fact edges between nodes: add (the v4 replacement for fact triples), read, change, delete."""

from __future__ import annotations

from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.errors import NotFound
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.inputs import EdgesAdd, EdgeUpdate, NodeRef
from graphrecall.domain.models import Edge, Graph, Node, Page, PageRequest, Project, Task
from graphrecall.domain.predicates import Predicate
from graphrecall.graph_model import graph_writes
from graphrecall.graph_model.embedding import embed_records
from graphrecall.services import erasure, tasks
from graphrecall.services.container import Services
from graphrecall.services.graph import graphs, nodes


def resolve_ref(
    ctx: Services, graph: Graph, ref: NodeRef, created: dict[str, Node], param: str
) -> Node:
    """An endpoint by uuid (must exist) or by name (reused case-insensitively, else new)."""
    if ref.uuid:
        return nodes.node_in(ctx, graph, ref.uuid, param=f"{param}.uuid")
    assert ref.name is not None  # NodeRef guarantees a uuid or a name
    key = ref.name.casefold()
    if key in created:
        return created[key]
    existing = ctx.store.nodes_named(graph.uuid, ref.name)
    if existing:
        return existing[0]
    stamp = clock.now()
    node = Node(
        uuid=new_id(),
        graph_uuid=graph.uuid,
        name=ref.name,
        labels=nodes.labels_for(None, ref.labels),
        summary=ref.summary,
        attributes=ref.attributes,
        created_at=stamp,
        updated_at=stamp,
    )
    created[key] = node
    return node


def add_edges(
    ctx: Services, project: Project, graph_uuid: str, body: EdgesAdd
) -> tuple[list[tuple[Edge, Node, Node]], Task]:
    graph = graphs.resolve(ctx, project, graph_uuid)
    created_nodes: dict[str, Node] = {}
    out: list[tuple[Edge, Node, Node]] = []
    new_edges: list[Edge] = []
    with ctx.store.transaction():
        for i, item in enumerate(body.edges):
            source = resolve_ref(
                ctx, graph, item.source_node, created_nodes, f"edges[{i}].source_node"
            )
            target = resolve_ref(
                ctx, graph, item.target_node, created_nodes, f"edges[{i}].target_node"
            )
            if body.deduplicate:
                existing = _same_fact(ctx, graph, item.fact_name, item.fact, source, target)
                existing = existing or next(
                    (
                        e
                        for e in new_edges
                        if _is_same(e, item.fact_name, item.fact, source, target)
                    ),
                    None,
                )
                if existing is not None:
                    out.append((existing, source, target))
                    continue
            stamp = clock.now()
            edge = Edge(
                uuid=new_id(),
                graph_uuid=graph.uuid,
                name=item.fact_name,
                fact=item.fact,
                source_node_uuid=source.uuid,
                target_node_uuid=target.uuid,
                attributes=item.attributes,
                metadata=item.metadata,
                created_at=stamp,
                updated_at=stamp,
                valid_at=clock.normalize(item.valid_at, param=f"edges[{i}].valid_at"),
                invalid_at=clock.normalize(item.invalid_at, param=f"edges[{i}].invalid_at"),
                expired_at=clock.normalize(item.expired_at, param=f"edges[{i}].expired_at"),
            )
            new_edges.append(edge)
            out.append((edge, source, target))
        graph_writes.insert_nodes(ctx.store, list(created_nodes.values()))
        graph_writes.insert_edges(ctx.store, new_edges)
        task = tasks.enqueue(
            ctx,
            project.uuid,
            graph.uuid,
            "graph.add_edges",
            {
                "edges": [e.uuid for e in new_edges],
                "nodes": [n.uuid for n in created_nodes.values()],
            },
        )
    ctx.wake_worker()
    return out, task


def _is_same(edge: Edge, name: str, fact: str, source: Node, target: Node) -> bool:
    return (
        edge.name == name
        and edge.source_node_uuid == source.uuid
        and edge.target_node_uuid == target.uuid
        and edge.fact.strip().casefold() == fact.strip().casefold()
    )


def _same_fact(
    ctx: Services, graph: Graph, name: str, fact: str, source: Node, target: Node
) -> Edge | None:
    candidates = ctx.store.find(
        Edge,
        {
            "graph_uuid": graph.uuid,
            "source_node_uuid": source.uuid,
            "target_node_uuid": target.uuid,
            "name": name,
        },
    )
    return next((e for e in candidates if _is_same(e, name, fact, source, target)), None)


def get_edge(ctx: Services, project: Project, graph_uuid: str, edge_uuid: str) -> Edge:
    graph = graphs.resolve(ctx, project, graph_uuid)
    edge_uuid = check_uuid(edge_uuid, param="edge_uuid")
    edge = ctx.store.get(Edge, edge_uuid, {"graph_uuid": graph.uuid})
    if edge is None:
        raise NotFound("edge", edge_uuid, param="edge_uuid")
    return edge


def list_edges(
    ctx: Services,
    project: Project,
    graph_uuid: str,
    page: PageRequest,
    where: Predicate | None = None,
) -> Page[Edge]:
    graph = graphs.resolve(ctx, project, graph_uuid)
    return ctx.store.list_page(Edge, {"graph_uuid": graph.uuid}, page, where=where)


def update_edge(
    ctx: Services, project: Project, graph_uuid: str, edge_uuid: str, body: EdgeUpdate
) -> Edge:
    edge = get_edge(ctx, project, graph_uuid, edge_uuid)
    changes: dict[str, Any] = body.model_dump(exclude_unset=True, exclude_none=True)
    if not changes:
        return edge
    updated = edge.model_copy(update={**changes, "updated_at": clock.now()})
    with ctx.store.transaction():
        graph_writes.update_edge(ctx.store, updated)
        if "fact" in changes:
            embed_records(ctx.store, ctx.embedder, [updated])
            if edge.hyperedge_uuid is not None:  # the fact is shared: every member gets it
                others = ctx.store.find(
                    Edge, {"graph_uuid": edge.graph_uuid, "hyperedge_uuid": edge.hyperedge_uuid}
                )
                rewrite_fact(ctx, [e for e in others if e.uuid != edge.uuid], changes["fact"])
    return updated


def rewrite_fact(ctx: Services, members: list[Edge], fact: str) -> list[Edge]:
    """Give edges a new fact and its vector, in one transaction (a hyperedge's members)."""
    stamp = clock.now()
    updated = [e.model_copy(update={"fact": fact, "updated_at": stamp}) for e in members]
    with ctx.store.transaction():
        for edge in updated:
            graph_writes.update_edge(ctx.store, edge)
        embed_records(ctx.store, ctx.embedder, updated)
    return updated


def delete_edge(ctx: Services, project: Project, graph_uuid: str, edge_uuid: str) -> Task:
    edge = get_edge(ctx, project, graph_uuid, edge_uuid)
    with ctx.store.transaction():
        graph_writes.delete_edges(ctx.store, edge.graph_uuid, {"uuid": edge.uuid})
        erasure.mark(ctx, erasure.GRAPH_KINDS)
    return erasure.completed(
        ctx, project.uuid, edge.graph_uuid, "graph.edge.delete", "edge", edge.uuid
    )

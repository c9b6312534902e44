"""/graphs/{graph_uuid}/nodes: add, read, list, update, delete, neighbours."""

from __future__ import annotations

from typing import Any

from fastapi import Body as BodyParam
from fastapi import Depends

from graphrecall.api.zep_v4 import wire
from graphrecall.api.zep_v4.bodies import FilteredListBody, NeighborsBody
from graphrecall.api.zep_v4.common import (
    CtxDep,
    Project,
    ProjectDep,
    Services,
    make_router,
    paging,
    wire_page,
)
from graphrecall.domain.inputs import NodesAdd, NodeUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.services.graph import graphs, nodes

router = make_router("nodes")
_paging = paging(("uuid", "created_at", "degree"))
_neighbor_paging = paging(("uuid", "created_at"))


@router.post("/graphs/{graph_uuid}/nodes", response_model=wire.AddNodesResult)
def add_nodes(
    graph_uuid: str, body: NodesAdd, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    added, task = nodes.add_nodes(ctx, project, graph_uuid, body)
    return wire.AddNodesResult(nodes=[wire.added_node(n) for n in added], task=wire.task(task))


@router.post("/graphs/{graph_uuid}/nodes/list", response_model=wire.PageWire[wire.NodeWire])
def list_nodes(
    graph_uuid: str,
    body: FilteredListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    where = (body or FilteredListBody()).predicate("list:nodes")
    graph = graphs.resolve(ctx, project, graph_uuid)
    result = nodes.list_nodes(ctx, project, graph.uuid, page, where)
    views = nodes.views(ctx, result.items, with_degree=page.order_by == "degree")
    return wire_page(result, [wire.node(v, graph) for v in views])


@router.get("/graphs/{graph_uuid}/nodes/{node_uuid}", response_model=wire.NodeWire)
def get_node(
    graph_uuid: str, node_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    node = nodes.get_node(ctx, project, graph.uuid, node_uuid)
    return wire.node(nodes.views(ctx, [node])[0], graph)


@router.patch("/graphs/{graph_uuid}/nodes/{node_uuid}", response_model=wire.NodeWire)
def update_node(
    graph_uuid: str,
    node_uuid: str,
    body: NodeUpdate,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    node = nodes.update_node(ctx, project, graph.uuid, node_uuid, body)
    return wire.node(nodes.views(ctx, [node])[0], graph)


@router.delete("/graphs/{graph_uuid}/nodes/{node_uuid}", response_model=wire.AsyncResult)
def delete_node(
    graph_uuid: str, node_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return wire.AsyncResult(task=wire.task(nodes.delete_node(ctx, project, graph_uuid, node_uuid)))


@router.post(
    "/graphs/{graph_uuid}/nodes/{node_uuid}/neighbors",
    response_model=wire.PageWire[wire.NeighborEntry],
)
def list_neighbors(
    graph_uuid: str,
    node_uuid: str,
    body: NeighborsBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_neighbor_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    body = body or NeighborsBody()
    where = body.predicate("graph:edges")
    graph = graphs.resolve(ctx, project, graph_uuid)
    result, by_neighbor = nodes.list_neighbors(
        ctx, project, graph.uuid, node_uuid, body.direction, page, where
    )
    all_edges = [e for n in result.items for e in by_neighbor[n.uuid]]
    edge_wires = {v.edge.uuid: wire.edge(v, graph) for v in nodes.edge_views(ctx, all_edges)}
    entries = [
        wire.NeighborEntry(
            node=wire.node(v, graph),
            edges=[edge_wires[e.uuid] for e in by_neighbor[v.node.uuid]],
        )
        for v in nodes.views(ctx, result.items)
    ]
    return wire_page(result, entries)

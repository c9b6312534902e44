"""/graphs/{graph_uuid}/nodes: add, read, list, update, delete, neighbours."""

from __future__ import annotations

from typing import Any

from fastapi import Body as BodyParam
from fastapi import Depends

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
from graphrecall.wire.zep_v4 import answers, wire
from graphrecall.wire.zep_v4 import paging as pages
from graphrecall.wire.zep_v4.bodies import FilteredListBody, NeighborsBody

router = make_router("nodes")
_paging = paging(pages.NODES)
_neighbor_paging = paging(pages.NEIGHBORS)


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
    found, entries = answers.list_neighbors(
        ctx, project, graph_uuid, node_uuid, body or NeighborsBody(), page
    )
    return wire_page(found, entries)

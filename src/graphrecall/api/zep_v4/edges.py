"""/graphs/{graph_uuid}/edges: add (fact triples), read, list, update, delete."""

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
from graphrecall.domain.inputs import EdgesAdd, EdgeUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.services.graph import edges, graphs, nodes
from graphrecall.wire.zep_v4 import paging as pages
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.bodies import FilteredListBody

router = make_router("edges")
_paging = paging(pages.EDGES)


@router.post("/graphs/{graph_uuid}/edges", response_model=wire.AddEdgesResult)
def add_edges(
    graph_uuid: str, body: EdgesAdd, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    added, task = edges.add_edges(ctx, project, graph_uuid, body)
    return wire.AddEdgesResult(
        edges=[wire.added_edge(e, s, t) for e, s, t in added], task=wire.task(task)
    )


@router.post("/graphs/{graph_uuid}/edges/list", response_model=wire.PageWire[wire.EdgeWire])
def list_edges(
    graph_uuid: str,
    body: FilteredListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    where = (body or FilteredListBody()).predicate("list:edges")
    graph = graphs.resolve(ctx, project, graph_uuid)
    result = edges.list_edges(ctx, project, graph.uuid, page, where)
    return wire_page(result, [wire.edge(v, graph) for v in nodes.edge_views(ctx, result.items)])


@router.get("/graphs/{graph_uuid}/edges/{edge_uuid}", response_model=wire.EdgeWire)
def get_edge(
    graph_uuid: str, edge_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    edge = edges.get_edge(ctx, project, graph.uuid, edge_uuid)
    return wire.edge(nodes.edge_views(ctx, [edge])[0], graph)


@router.patch("/graphs/{graph_uuid}/edges/{edge_uuid}", response_model=wire.EdgeWire)
def update_edge(
    graph_uuid: str,
    edge_uuid: str,
    body: EdgeUpdate,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    edge = edges.update_edge(ctx, project, graph.uuid, edge_uuid, body)
    return wire.edge(nodes.edge_views(ctx, [edge])[0], graph)


@router.delete("/graphs/{graph_uuid}/edges/{edge_uuid}", response_model=wire.AsyncResult)
def delete_edge(
    graph_uuid: str, edge_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return wire.AsyncResult(task=wire.task(edges.delete_edge(ctx, project, graph_uuid, edge_uuid)))

"""/graphs: create, read, list, update, delete, lookup, clone, warm, subgraph."""

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
from graphrecall.domain.inputs import GraphCreate, GraphUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.services.graph import graphs
from graphrecall.wire.zep_v4 import answers, wire
from graphrecall.wire.zep_v4 import paging as pages
from graphrecall.wire.zep_v4.bodies import LookupBody, SearchListBody, SubgraphBody

router = make_router("graphs")
_paging = paging(pages.GRAPHS)


@router.post("/graphs", response_model=wire.GraphWire)
def create_graph(body: GraphCreate, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.graph(graphs.create_graph(ctx, project, body))


@router.post("/graphs/list", response_model=wire.PageWire[wire.GraphWire])
def list_graphs(
    body: SearchListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = graphs.list_graphs(ctx, project, page, body.search if body else None)
    return wire_page(result, [wire.graph(g) for g in result.items])


@router.post("/graphs/lookup", response_model=wire.GraphWire)
def lookup_graph(body: LookupBody, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.graph(
        graphs.lookup_graph(
            ctx, project, graph_id=body.graph_id, thread_id=body.thread_id, user_id=body.user_id
        )
    )


@router.get("/graphs/{graph_uuid}", response_model=wire.GraphWire)
def get_graph(graph_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.graph(graphs.resolve(ctx, project, graph_uuid))


@router.patch("/graphs/{graph_uuid}", response_model=wire.GraphWire)
def update_graph(
    graph_uuid: str, body: GraphUpdate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return wire.graph(graphs.update_graph(ctx, project, graph_uuid, body))


@router.delete("/graphs/{graph_uuid}", response_model=wire.AsyncResult)
def delete_graph(graph_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.AsyncResult(task=wire.task(graphs.delete_graph(ctx, project, graph_uuid)))


class CloneGraphResult(wire.Wire):
    graph: wire.GraphWire
    task: wire.TaskWire


@router.post("/graphs/{graph_uuid}/clone", response_model=CloneGraphResult)
def clone_graph(
    graph_uuid: str,
    body: dict[str, Any] | None = BodyParam(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """The request has no fields (Zep's ``CloneGraphRequest`` is an open object)."""
    graph, task = graphs.clone_graph(ctx, project, graph_uuid)
    return CloneGraphResult(graph=wire.graph(graph), task=wire.task(task))


@router.post("/graphs/{graph_uuid}/warm", response_model=wire.AsyncResult, status_code=202)
def warm_graph(graph_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """Zep's hint to make the graph's searches fast; here it loads what they read."""
    return wire.AsyncResult(task=wire.task(graphs.warm_graph(ctx, project, graph_uuid)))


@router.post("/graphs/{graph_uuid}/subgraph", response_model=wire.SubgraphResponse)
def get_subgraph(
    graph_uuid: str, body: SubgraphBody, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return answers.subgraph(ctx, project, graph_uuid, body)

"""/graphs/{graph_uuid}/hyperedges: one fact over three or more nodes (services/hyperedges.py),
with the wire shapes only these routes use."""

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
from graphrecall.domain import models as m
from graphrecall.domain.inputs import HyperedgeAdd, HyperedgeMember, HyperedgeUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.services.graph import graphs, hyperedges
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.bodies import Body
from graphrecall.wire.zep_v4.paging import Paging

router = make_router("hyperedges")
_paging = paging(Paging(("uuid", "created_at")))


class HyperedgeEdgeWire(wire.Wire):
    uuid: str
    name: str
    source_node_uuid: str
    target_node_uuid: str


class HyperedgeWire(wire.Wire):
    uuid: str
    fact: str
    edges: list[HyperedgeEdgeWire]
    created_at: str
    valid_at: str | None = None
    invalid_at: str | None = None
    expired_at: str | None = None
    graph_uuid: str
    user_uuid: str | None = None


class AddedHyperedgeEdgeWire(wire.Wire):
    uuid: str
    name: str
    source_node: wire.EdgeNodeRefWire
    target_node: wire.EdgeNodeRefWire


class AddedHyperedgeWire(wire.Wire):
    uuid: str
    fact: str
    edges: list[AddedHyperedgeEdgeWire]
    attributes: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    valid_at: str | None = None
    invalid_at: str | None = None
    expired_at: str | None = None


class AddHyperedgeResult(wire.Wire):
    hyperedge: AddedHyperedgeWire
    task: wire.TaskWire


class AddHyperedgeEdgeResult(wire.Wire):
    edge: wire.AddedEdgeWire
    task: wire.TaskWire


class HyperedgeListBody(Body):
    # Checked by the service: an unknown key is a 400 ``unsupported_filter`` naming it.
    filters: dict[str, Any] | None = None


def _hyperedge(v: m.HyperedgeView, g: m.Graph) -> HyperedgeWire:
    first = v.members[0]
    return HyperedgeWire(
        uuid=v.hyperedge.uuid,
        fact=first.fact,
        edges=[
            HyperedgeEdgeWire(
                uuid=e.uuid,
                name=e.name,
                source_node_uuid=e.source_node_uuid,
                target_node_uuid=e.target_node_uuid,
            )
            for e in v.members
        ],
        created_at=v.hyperedge.created_at,
        valid_at=first.valid_at,
        invalid_at=first.invalid_at,
        expired_at=first.expired_at,
        graph_uuid=v.hyperedge.graph_uuid,
        user_uuid=g.user_uuid,
    )


@router.post("/graphs/{graph_uuid}/hyperedges", response_model=AddHyperedgeResult)
def add_hyperedge(
    graph_uuid: str, body: HyperedgeAdd, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    hyperedge, members, task = hyperedges.add_hyperedge(ctx, project, graph_uuid, body)
    return AddHyperedgeResult(
        hyperedge=AddedHyperedgeWire(
            uuid=hyperedge.uuid,
            fact=body.fact,
            edges=[
                AddedHyperedgeEdgeWire(
                    uuid=e.uuid,
                    name=e.name,
                    source_node=wire.node_ref(s),
                    target_node=wire.node_ref(t),
                )
                for e, s, t in members
            ],
            attributes=members[0][0].attributes,
            metadata=members[0][0].metadata,
            valid_at=members[0][0].valid_at,
            invalid_at=members[0][0].invalid_at,
            expired_at=members[0][0].expired_at,
        ),
        task=wire.task(task),
    )


@router.post("/graphs/{graph_uuid}/hyperedges/list", response_model=wire.PageWire[HyperedgeWire])
def list_hyperedges(
    graph_uuid: str,
    body: HyperedgeListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    filters = (body or HyperedgeListBody()).filters
    result, graph = hyperedges.list_hyperedges(ctx, project, graph_uuid, page, filters)
    return wire_page(result, [_hyperedge(v, graph) for v in result.items])


@router.get("/graphs/{graph_uuid}/hyperedges/{hyperedge_uuid}", response_model=HyperedgeWire)
def get_hyperedge(
    graph_uuid: str, hyperedge_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    return _hyperedge(hyperedges.get_hyperedge(ctx, project, graph.uuid, hyperedge_uuid), graph)


@router.patch("/graphs/{graph_uuid}/hyperedges/{hyperedge_uuid}", response_model=HyperedgeWire)
def update_hyperedge(
    graph_uuid: str,
    hyperedge_uuid: str,
    body: HyperedgeUpdate,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    view = hyperedges.update_hyperedge(ctx, project, graph.uuid, hyperedge_uuid, body)
    return _hyperedge(view, graph)


@router.delete("/graphs/{graph_uuid}/hyperedges/{hyperedge_uuid}", response_model=wire.AsyncResult)
def delete_hyperedge(
    graph_uuid: str, hyperedge_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    task = hyperedges.delete_hyperedge(ctx, project, graph_uuid, hyperedge_uuid)
    return wire.AsyncResult(task=wire.task(task))


@router.post(
    "/graphs/{graph_uuid}/hyperedges/{hyperedge_uuid}/edges",
    response_model=AddHyperedgeEdgeResult,
)
def create_member(
    graph_uuid: str,
    hyperedge_uuid: str,
    body: HyperedgeMember,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    (edge, source, target), task = hyperedges.create_member(
        ctx, project, graph_uuid, hyperedge_uuid, body
    )
    return AddHyperedgeEdgeResult(edge=wire.added_edge(edge, source, target), task=wire.task(task))


@router.delete(
    "/graphs/{graph_uuid}/hyperedges/{hyperedge_uuid}/edges/{edge_uuid}",
    response_model=wire.AsyncResult,
)
def delete_member(
    graph_uuid: str,
    hyperedge_uuid: str,
    edge_uuid: str,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    task = hyperedges.delete_member(ctx, project, graph_uuid, hyperedge_uuid, edge_uuid)
    return wire.AsyncResult(task=wire.task(task))

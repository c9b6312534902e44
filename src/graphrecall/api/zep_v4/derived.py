"""Observations and thread summaries: read-only (the ingestion pipeline derives them)."""

from __future__ import annotations

from typing import Any

from fastapi import Body as BodyParam
from fastapi import Depends

from graphrecall.api.zep_v4 import wire
from graphrecall.api.zep_v4.bodies import FilteredListBody
from graphrecall.api.zep_v4.common import (
    CtxDep,
    Project,
    ProjectDep,
    Services,
    make_router,
    paging,
    wire_page,
)
from graphrecall.domain.errors import NotFound
from graphrecall.domain.ids import check_uuid
from graphrecall.domain.models import Observation, PageRequest, ThreadSummary
from graphrecall.services.graph import graphs

router = make_router("observations")
_paging = paging(("uuid", "created_at"))


@router.post(
    "/graphs/{graph_uuid}/observations/list", response_model=wire.PageWire[wire.ObservationWire]
)
def list_observations(
    graph_uuid: str,
    body: FilteredListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    where = (body or FilteredListBody()).predicate("list:observations")
    graph = graphs.resolve(ctx, project, graph_uuid)
    result = ctx.store.list_page(Observation, {"graph_uuid": graph.uuid}, page, where=where)
    provenance = ctx.store.episodes_of(Observation, graph.uuid, [o.uuid for o in result.items])
    return wire_page(
        result, [wire.observation(o, graph, provenance[o.uuid][0]) for o in result.items]
    )


@router.get(
    "/graphs/{graph_uuid}/observations/{observation_uuid}", response_model=wire.ObservationWire
)
def get_observation(
    graph_uuid: str, observation_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    uuid = check_uuid(observation_uuid, param="observation_uuid")
    found = ctx.store.get(Observation, uuid, {"graph_uuid": graph.uuid})
    if found is None:
        raise NotFound("observation", uuid, param="observation_uuid")
    return wire.observation(
        found, graph, ctx.store.episodes_of(Observation, graph.uuid, [uuid])[uuid][0]
    )


@router.post(
    "/graphs/{graph_uuid}/thread-summaries/list",
    response_model=wire.PageWire[wire.ThreadSummaryWire],
)
def list_thread_summaries(
    graph_uuid: str,
    body: FilteredListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    where = (body or FilteredListBody()).predicate("list:thread_summaries")
    graph = graphs.resolve(ctx, project, graph_uuid)
    result = ctx.store.list_page(ThreadSummary, {"graph_uuid": graph.uuid}, page, where=where)
    return wire_page(result, [wire.thread_summary(t) for t in result.items])

"""Observations and thread summaries: read-only (the ingestion pipeline derives them)."""

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
from graphrecall.domain.models import PageRequest
from graphrecall.wire.zep_v4 import answers, wire
from graphrecall.wire.zep_v4 import paging as pages
from graphrecall.wire.zep_v4.bodies import FilteredListBody

router = make_router("observations")
_paging = paging(pages.DERIVED)


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
    found, items = answers.list_observations(
        ctx, project, graph_uuid, body or FilteredListBody(), page
    )
    return wire_page(found, items)


@router.get(
    "/graphs/{graph_uuid}/observations/{observation_uuid}", response_model=wire.ObservationWire
)
def get_observation(
    graph_uuid: str, observation_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return answers.get_observation(ctx, project, graph_uuid, observation_uuid)


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
    found, items = answers.list_thread_summaries(
        ctx, project, graph_uuid, body or FilteredListBody(), page
    )
    return wire_page(found, items)

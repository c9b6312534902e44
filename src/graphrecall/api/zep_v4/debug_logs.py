"""Debug logs and ingestion traces (services/debug_logs.py)."""

from __future__ import annotations

from typing import Any

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
from graphrecall.domain.models import EpisodeDebugLog, IngestionTrace, PageRequest
from graphrecall.ingest import trace
from graphrecall.services.graph import debug_logs as service
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.paging import Paging

router = make_router("debug logs")
# Traces are read oldest first, as the steps ran (the SDK sends no ordering).
_paging = paging(Paging(("seq",), default_order_by="seq", default_order="asc"))


class DebugLoggingEnablementWire(wire.Wire):
    duration_seconds: int
    ingestion_trace_enabled: bool


class DebugLogEntryWire(wire.Wire):
    level: str
    logged_at: str
    message: str


class EpisodeDebugLogWire(wire.Wire):
    status: str
    started_at: str
    completed_at: str | None = None
    error: str | None = None
    entries: list[DebugLogEntryWire]


class IngestionTraceWire(wire.Wire):
    uuid: str
    step: str
    status: str
    input: dict[str, Any]
    output: dict[str, Any]
    error: str | None = None
    created_at: str


def _log(found: EpisodeDebugLog) -> EpisodeDebugLogWire:
    return EpisodeDebugLogWire(
        status=found.status,
        started_at=found.started_at,
        completed_at=found.completed_at,
        error=found.error_message,
        entries=[DebugLogEntryWire(**e) for e in found.entries],
    )


def _trace(t: IngestionTrace) -> IngestionTraceWire:
    fields = t.model_dump(exclude={"graph_uuid", "episode_uuid", "seq", "error_message"})
    return IngestionTraceWire(**fields, error=t.error_message)


@router.post("/debug-logs/enable", response_model=DebugLoggingEnablementWire)
def enable(ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    service.enable(ctx, project)
    return DebugLoggingEnablementWire(
        duration_seconds=trace.DURATION_SECONDS, ingestion_trace_enabled=True
    )


@router.get(
    "/graphs/{graph_uuid}/episodes/{episode_uuid}/debug-logs",
    response_model=EpisodeDebugLogWire,
)
def get_debug_logs(
    graph_uuid: str, episode_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return _log(service.get_debug_log(ctx, project, graph_uuid, episode_uuid))


@router.get(
    "/graphs/{graph_uuid}/episodes/{episode_uuid}/ingestion-traces",
    response_model=wire.PageWire[IngestionTraceWire],
)
def list_ingestion_traces(
    graph_uuid: str,
    episode_uuid: str,
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = service.list_traces(ctx, project, graph_uuid, episode_uuid, page)
    return wire_page(result, [_trace(t) for t in result.items])

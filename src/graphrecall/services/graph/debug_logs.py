"""Debug logs and ingestion traces (``debug_log.enable``, ``graph.episode.get_debug_logs``,
``graph.episode.list_ingestion_traces``): what ingestion did with an episode, recorded by
ingest/trace.py while the project's debug logging is on."""

from __future__ import annotations

from datetime import timedelta

from graphrecall.domain import clock
from graphrecall.domain.errors import NotFound
from graphrecall.domain.models import (
    DebugLogging,
    EpisodeDebugLog,
    IngestionTrace,
    Page,
    PageRequest,
    Project,
)
from graphrecall.ingest import trace
from graphrecall.services.container import Services
from graphrecall.services.graph import episodes


def enable(ctx: Services, project: Project) -> DebugLogging:
    """Turn debug logging (and ingestion tracing) on for ``trace.DURATION_SECONDS`` from
    now; a repeated call starts the duration again."""
    now = clock.now_dt()
    switch = DebugLogging(
        uuid=project.uuid,
        project_uuid=project.uuid,
        enabled_until=clock.to_iso(now + timedelta(seconds=trace.DURATION_SECONDS)),
        updated_at=clock.to_iso(now),
    )
    with ctx.store.transaction():
        ctx.store.delete(DebugLogging, {"uuid": project.uuid, "project_uuid": project.uuid})
        ctx.store.insert([switch])
    return switch


def get_debug_log(
    ctx: Services, project: Project, graph_uuid: str, episode_uuid: str
) -> EpisodeDebugLog:
    episode = episodes.get_episode(ctx, project, graph_uuid, episode_uuid)
    found = ctx.store.get(EpisodeDebugLog, episode.uuid, {"graph_uuid": episode.graph_uuid})
    if found is not None:
        return found
    if not episode.processed and trace.enabled(ctx.store, project.uuid):
        # Queued or being processed while logging is on: its log is written when done.
        return EpisodeDebugLog(
            uuid=episode.uuid,
            graph_uuid=episode.graph_uuid,
            status="running",
            started_at=episode.created_at,
        )
    missing = NotFound("debug log", episode.uuid, param="episode_uuid")
    missing.message = (
        f"episode {episode.uuid} has no debug log: debug logging was off when it was"
        " ingested (POST /debug-logs/enable turns it on for an hour)"
    )
    raise missing


def list_traces(
    ctx: Services, project: Project, graph_uuid: str, episode_uuid: str, page: PageRequest
) -> Page[IngestionTrace]:
    """The episode's traces, oldest first (an episode without any: an empty page)."""
    episode = episodes.get_episode(ctx, project, graph_uuid, episode_uuid)
    scope = {"graph_uuid": episode.graph_uuid, "episode_uuid": episode.uuid}
    return ctx.store.list_page(IngestionTrace, scope, page)

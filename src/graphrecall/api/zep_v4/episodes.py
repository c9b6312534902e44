"""/graphs/{graph_uuid}/episodes: add, read, list, update, delete."""

from __future__ import annotations

from typing import Any

from fastapi import Body as BodyParam
from fastapi import Depends

from graphrecall.api.zep_v4 import wire
from graphrecall.api.zep_v4.bodies import FilteredListBody
from graphrecall.api.zep_v4.common import (
    Context,
    CtxDep,
    Project,
    ProjectDep,
    make_router,
    paging,
    wire_page,
)
from graphrecall.domain.inputs import EpisodeCreate, EpisodeUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.retrieval import filters as filter_language
from graphrecall.services import episodes, graphs
from graphrecall.services.episode_errors import processing_errors

router = make_router("episodes")
_paging = paging(("created_at", "uuid"))


@router.post("/graphs/{graph_uuid}/episodes", response_model=wire.AddEpisodeResult)
def add_episode(
    graph_uuid: str, body: EpisodeCreate, ctx: Context = CtxDep, project: Project = ProjectDep
) -> Any:
    episode, task = episodes.add_episode(ctx, project, graph_uuid, body)
    graph = graphs.resolve(ctx, project, episode.graph_uuid)
    return wire.AddEpisodeResult(episode=wire.episode(episode, graph), task=wire.task(task))


@router.post("/graphs/{graph_uuid}/episodes/list", response_model=wire.PageWire[wire.EpisodeWire])
def list_episodes(
    graph_uuid: str,
    body: FilteredListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    body = body or FilteredListBody()
    filters = body.parsed()
    where = filter_language.to_predicate(filters, "list:episodes")
    graph = graphs.resolve(ctx, project, graph_uuid)
    result = episodes.list_episodes(
        ctx,
        project,
        graph.uuid,
        page,
        mentioned_node_uuids=filter_language.mentioned_node_uuids(filters),
        where=where,
    )
    errors = processing_errors(ctx, project.uuid, result.items)
    return wire_page(
        result, [wire.episode(e, graph, error=errors.get(e.uuid)) for e in result.items]
    )


@router.get("/graphs/{graph_uuid}/episodes/{episode_uuid}", response_model=wire.EpisodeWire)
def get_episode(
    graph_uuid: str, episode_uuid: str, ctx: Context = CtxDep, project: Project = ProjectDep
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    found = episodes.get_episode(ctx, project, graph.uuid, episode_uuid)
    errors = processing_errors(ctx, project.uuid, [found])
    return wire.episode(found, graph, error=errors.get(found.uuid))


@router.patch("/graphs/{graph_uuid}/episodes/{episode_uuid}", response_model=wire.EpisodeWire)
def update_episode(
    graph_uuid: str,
    episode_uuid: str,
    body: EpisodeUpdate,
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    return wire.episode(
        episodes.update_episode(ctx, project, graph.uuid, episode_uuid, body), graph
    )


@router.delete("/graphs/{graph_uuid}/episodes/{episode_uuid}", response_model=wire.AsyncResult)
def delete_episode(
    graph_uuid: str, episode_uuid: str, ctx: Context = CtxDep, project: Project = ProjectDep
) -> Any:
    return wire.AsyncResult(
        task=wire.task(episodes.delete_episode(ctx, project, graph_uuid, episode_uuid))
    )

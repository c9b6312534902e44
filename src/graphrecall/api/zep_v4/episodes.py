"""/graphs/{graph_uuid}/episodes: add, read, list, update, delete."""

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
from graphrecall.domain.inputs import EpisodeCreate, EpisodeUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.services.episode_errors import processing_errors
from graphrecall.services.graph import episodes, graphs
from graphrecall.wire.zep_v4 import answers, wire
from graphrecall.wire.zep_v4 import paging as pages
from graphrecall.wire.zep_v4.bodies import FilteredListBody

router = make_router("episodes")
_paging = paging(pages.EPISODES)


@router.post("/graphs/{graph_uuid}/episodes", response_model=wire.AddEpisodeResult)
def add_episode(
    graph_uuid: str, body: EpisodeCreate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    episode, task = episodes.add_episode(ctx, project, graph_uuid, body)
    graph = graphs.resolve(ctx, project, episode.graph_uuid)
    return wire.AddEpisodeResult(episode=wire.episode(episode, graph), task=wire.task(task))


@router.post("/graphs/{graph_uuid}/episodes/list", response_model=wire.PageWire[wire.EpisodeWire])
def list_episodes(
    graph_uuid: str,
    body: FilteredListBody | None = BodyParam(default=None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    found, items = answers.list_episodes(ctx, project, graph_uuid, body or FilteredListBody(), page)
    return wire_page(found, items)


@router.get("/graphs/{graph_uuid}/episodes/{episode_uuid}", response_model=wire.EpisodeWire)
def get_episode(
    graph_uuid: str, episode_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
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
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph = graphs.resolve(ctx, project, graph_uuid)
    return wire.episode(
        episodes.update_episode(ctx, project, graph.uuid, episode_uuid, body), graph
    )


@router.delete("/graphs/{graph_uuid}/episodes/{episode_uuid}", response_model=wire.AsyncResult)
def delete_episode(
    graph_uuid: str, episode_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return wire.AsyncResult(
        task=wire.task(episodes.delete_episode(ctx, project, graph_uuid, episode_uuid))
    )

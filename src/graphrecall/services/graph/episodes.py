"""Episodes: raw input added to a graph, persisted at once and processed by the worker."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest, NotFound
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.inputs import EpisodeCreate, EpisodeUpdate, _check_metadata
from graphrecall.domain.models import (
    Edge,
    Episode,
    Node,
    Page,
    PageRequest,
    Project,
    Task,
)
from graphrecall.domain.predicates import Predicate
from graphrecall.graph_model import graph_writes
from graphrecall.services import erasure, tasks
from graphrecall.services.container import Services
from graphrecall.services.graph import graphs


def add_episode(
    ctx: Services, project: Project, graph_uuid: str, body: EpisodeCreate
) -> tuple[Episode, Task]:
    graph = graphs.resolve(ctx, project, graph_uuid)
    stamp = clock.now()
    episode = Episode(
        uuid=new_id(),
        graph_uuid=graph.uuid,
        content=body.data,
        source=body.type,
        source_description=body.source_description,
        metadata=body.metadata,
        reference_time=clock.normalize(body.reference_time, param="reference_time") or stamp,
        created_at=stamp,
        document_id=body.document_id,
    )
    with ctx.store.transaction():
        episode = graph_writes.insert_episodes(ctx.store, [episode])[0]
        task = tasks.enqueue(
            ctx,
            project.uuid,
            graph.uuid,
            "graph.add",
            {"episodes": [episode.uuid], "strict_ontology": bool(body.strict_ontology)},
        )
    ctx.wake_worker()
    return episode, task


def get_episode(ctx: Services, project: Project, graph_uuid: str, episode_uuid: str) -> Episode:
    graph = graphs.resolve(ctx, project, graph_uuid)
    episode_uuid = check_uuid(episode_uuid, param="episode_uuid")
    episode = ctx.store.get(Episode, episode_uuid, {"graph_uuid": graph.uuid})
    if episode is None:
        raise NotFound("episode", episode_uuid, param="episode_uuid")
    return episode


def list_episodes(
    ctx: Services,
    project: Project,
    graph_uuid: str,
    page: PageRequest,
    *,
    mentioned_node_uuids: Sequence[str] = (),
    where: Predicate | None = None,
) -> Page[Episode]:
    """``mentioned_node_uuids`` (already validated): episodes that mention any of the nodes;
    an episode UUID in the list matches itself."""
    graph = graphs.resolve(ctx, project, graph_uuid)
    scope: dict[str, Any] = {"graph_uuid": graph.uuid}
    if mentioned_node_uuids:
        mentioning = ctx.store.episodes_of(Node, graph.uuid, list(mentioned_node_uuids))
        scope["uuid"] = sorted(
            {e for eps, _ in mentioning.values() for e in eps} | set(mentioned_node_uuids)
        )
    return ctx.store.list_page(Episode, scope, page, where=where)


def merge_metadata(
    current: dict[str, Any] | None, patch: dict[str, Any] | None, *, param: str
) -> dict[str, Any] | None:
    """Merge ``patch`` onto ``current``; a key set to null is removed."""
    if patch is None:
        return current
    merged = dict(current or {})
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    try:
        _check_metadata(merged)
    except ValueError as exc:
        raise BadRequest(f"{param}: {exc}", param=param) from None
    return merged or None


def update_episode(
    ctx: Services, project: Project, graph_uuid: str, episode_uuid: str, body: EpisodeUpdate
) -> Episode:
    episode = get_episode(ctx, project, graph_uuid, episode_uuid)
    updated = episode.model_copy(
        update={"metadata": merge_metadata(episode.metadata, body.metadata, param="metadata")}
    )
    ctx.store.update(updated)
    return updated


def delete_episode(ctx: Services, project: Project, graph_uuid: str, episode_uuid: str) -> Task:
    """Delete an episode and whatever only it supported: edges whose sole source it was,
    and nodes it alone mentioned that no remaining edge touches."""
    episode = get_episode(ctx, project, graph_uuid, episode_uuid)
    graph_uuid = episode.graph_uuid
    with ctx.store.transaction():
        orphan_edges = _sole_supported(ctx, Edge, graph_uuid, episode.uuid)
        orphan_nodes = _sole_supported(ctx, Node, graph_uuid, episode.uuid)
        graph_writes.delete_episodes(ctx.store, graph_uuid, [episode.uuid])
        graph_writes.delete_edges(ctx.store, graph_uuid, {"uuid": orphan_edges})
        if orphan_nodes:
            degrees = ctx.store.node_degrees(graph_uuid, orphan_nodes)
            ctx.store.delete(
                Node, {"uuid": [n for n, d in degrees.items() if d == 0], "graph_uuid": graph_uuid}
            )
        erasure.mark(ctx, erasure.GRAPH_KINDS)
    return erasure.completed(
        ctx,
        project.uuid,
        graph_uuid,
        "graph.episode.delete",
        "episode",
        episode.uuid,
        {"episode_uuid": episode.uuid},
    )


def _sole_supported(
    ctx: Services, kind: type[Edge] | type[Node], graph_uuid: str, episode_uuid: str
) -> list[str]:
    linked = ctx.store.linked_to_episodes(kind, graph_uuid, [episode_uuid])
    sources = ctx.store.episodes_of(kind, graph_uuid, linked)
    return [uuid for uuid, (eps, _) in sources.items() if eps == [episode_uuid]]

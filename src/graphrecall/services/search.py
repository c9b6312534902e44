"""Graph search for the Zep face: one function for all five scopes, on the retrieval core."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from graphrecall.domain.errors import BadRequest
from graphrecall.domain.ids import check_uuid
from graphrecall.domain.models import Graph, Project, Record
from graphrecall.retrieval import cursors, engine
from graphrecall.retrieval.engine import Hit, SearchOptions
from graphrecall.retrieval.filters import Filters, to_predicate
from graphrecall.services import graphs
from graphrecall.services.context import Context

MAX_BFS_ORIGINS = 5
SEARCH_PAGE_MAX = 50
RANKED_SET = 100  # "Search ranks a limited set of results": the top 100 are kept


@dataclass(frozen=True)
class SearchParams:
    query: str
    reranker: str = "rrf"
    mmr_lambda: float | None = None
    center_node_uuid: str | None = None
    bfs_origin_node_uuids: tuple[str, ...] = ()
    filters: Filters = field(default_factory=Filters)
    filter_low_quality_results: bool = False


def options(params: SearchParams, scope: str) -> SearchOptions:
    """Validate the request for ``scope`` and build engine options."""
    if len(params.bfs_origin_node_uuids) > MAX_BFS_ORIGINS:
        raise BadRequest(f"at most {MAX_BFS_ORIGINS} BFS origins", param="bfs_origin_node_uuids")
    origins = tuple(
        check_uuid(u, param=f"bfs_origin_node_uuids[{i}]")
        for i, u in enumerate(params.bfs_origin_node_uuids)
    )
    center = (
        check_uuid(params.center_node_uuid, param="center_node_uuid")
        if params.center_node_uuid
        else None
    )
    where = to_predicate(params.filters, f"search:{scope}")  # type: ignore[arg-type]
    return SearchOptions(
        query=params.query,
        reranker=params.reranker,
        mmr_lambda=params.mmr_lambda,
        center_node_uuid=center,
        bfs_origins=origins,
        where=where,
        mention_episodes=tuple(params.filters.episode_uuids or ()),
        filter_low_quality=params.filter_low_quality_results,
        limit=RANKED_SET,
    )


def search(
    ctx: Context,
    project: Project,
    graph_uuid: str,
    scope: str,
    params: SearchParams,
    *,
    page_size: int,
    cursor: str | None,
) -> tuple[Graph, list[tuple[Any, Hit]], str | None]:
    """One page of ranked results of ``scope`` as (record, hit) pairs, and the next cursor."""
    graph = graphs.resolve(ctx, project, graph_uuid)
    spec = engine.SCOPES[scope]
    opts = options(params, scope)
    fp = cursors.fingerprint(
        scope, graph.uuid, params.__dict__ | {"filters": params.filters.model_dump()}
    )
    if cursor:
        hits, next_cursor = cursors.next_page(ctx.store, project.uuid, fp, cursor, page_size)
    else:
        run = engine.search(ctx.store, ctx.embedder, ctx.cross_encoder, spec, graph.uuid, opts)
        hits, next_cursor = cursors.first_page(ctx.store, project.uuid, fp, run.hits, page_size)
    records = hydrate(ctx, spec.kind, graph.uuid, [h.uuid for h in hits])
    return graph, [(records[h.uuid], h) for h in hits if h.uuid in records], next_cursor


def hydrate(
    ctx: Context, kind: type[Record], graph_uuid: str, uuids: Sequence[str]
) -> dict[str, Any]:
    """Records by uuid (ones deleted since ranking are simply absent)."""
    return {
        r.uuid: r for r in ctx.store.find(kind, {"graph_uuid": graph_uuid, "uuid": list(uuids)})
    }

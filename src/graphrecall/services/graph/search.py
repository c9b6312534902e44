"""Graph search for the Zep face: one function for all five scopes, on the retrieval core.

A calendar phrase in the query ("on 19 August, 2023", "last week") is read in the user's
or graph's time zone (``services.get_context.relative_time``, as get_context reads it) and given to
the core as the period of its time leg: episodes and facts of that period rank higher.
Unlike get_context's window it filters nothing; explicit ``date_filters`` do that.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from graphrecall.domain import clock, scopes
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.ids import check_uuid
from graphrecall.domain.models import Graph, Project, Record
from graphrecall.retrieval import cursors, engine
from graphrecall.retrieval.engine import Hit, SearchOptions
from graphrecall.retrieval.filters import Filters, to_predicate
from graphrecall.retrieval.request import DEFAULT_RERANKER
from graphrecall.services.admission import admitted
from graphrecall.services.container import Services
from graphrecall.services.get_context.relative_time import interpret, names_a_time
from graphrecall.services.graph import graphs

MAX_BFS_ORIGINS = 5
SEARCH_PAGE_MAX = 50
RANKED_SET = 100  # "Search ranks a limited set of results": the top 100 are kept
_PAGES = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphrecall-page")


@dataclass(frozen=True)
class SearchParams:
    query: str
    reranker: str = DEFAULT_RERANKER
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


@admitted
def search(
    ctx: Services,
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
    spec = scopes.SCOPES[scope]
    opts = options(params, scope)
    if spec.time_fields and not cursor:
        period = query_period(ctx, project, graph, params.query)
        opts = dataclasses.replace(opts, time_window=period)
    fp = cursors.fingerprint(
        scope, graph.uuid, params.__dict__ | {"filters": params.filters.model_dump()}
    )
    if cursor:
        hits, next_cursor = cursors.next_page(ctx.store, project.uuid, fp, cursor, page_size)
        records = hydrate(ctx, spec.kind, graph.uuid, [h.uuid for h in hits])
    else:
        run = engine.search(ctx.store, ctx.embedder, ctx.cross_encoder, spec, graph.uuid, opts)
        # The page's records are read while its cursor is saved: two round trips at once.
        page = [h.uuid for h in run.hits[:page_size]]
        found = engine.beside(_PAGES, ctx.store, partial(hydrate, ctx, spec.kind, graph.uuid, page))
        hits, next_cursor = cursors.first_page(ctx.store, project.uuid, fp, run.hits, page_size)
        records = found.result()
    return graph, [(records[h.uuid], h) for h in hits if h.uuid in records], next_cursor


def query_period(
    ctx: Services, project: Project, graph: Graph, query: str, *, now: datetime | None = None
) -> tuple[datetime | None, datetime | None] | None:
    """The period a calendar phrase of ``query`` names, in the graph's time zone."""
    return period(query, lambda: graphs.time_zone_of(ctx, project, graph), now=now)


def period(
    query: str, zone: Callable[[], str], *, now: datetime | None = None
) -> tuple[datetime | None, datetime | None] | None:
    """The period a calendar phrase of ``query`` names, in the IANA zone ``zone()`` gives;
    ``zone`` is asked only when the query names a time (most do not, and a graph's zone
    is a user look-up)."""
    if not names_a_time(query):
        return None
    window = interpret(query, now=now or clock.now_dt(), time_zone=zone()).window
    return None if window is None else (window.start, window.end)


def hydrate(
    ctx: Services, kind: type[Record], graph_uuid: str, uuids: Sequence[str]
) -> dict[str, Any]:
    """Records by uuid (ones deleted since ranking are simply absent)."""
    return {
        r.uuid: r for r in ctx.store.find(kind, {"graph_uuid": graph_uuid, "uuid": list(uuids)})
    }

"""Zep Cloud v2 / CE 2.x search under ``/api/v2``: ``POST /sessions/{session_id}/search``
(one session; a bare array) and ``POST /sessions/search`` (a user's sessions, or the
sessions named; ``{results}``).

Each scope is a v4 search of the user's graph: ``messages`` the episode search,
``facts`` the edge search, ``summary`` the thread-summary search. A session's messages
and summary are those of its thread: the graph's ranked results (v4 ranks at most
``services.search.RANKED_SET``) are read in order and those of other threads left out.
``similarity`` ranks with the cross-encoder scorer, so ``score`` is a relevance in
[0, 1] (what ``min_score`` and ``min_fact_rating`` compare to); ``mmr`` with v4's MMR."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fastapi import Query

from graphrecall.api.zep_v2 import v2_wire as v2
from graphrecall.api.zep_v2.sessions import session
from graphrecall.api.zep_v2.v2_payloads import MemorySearchV2
from graphrecall.api.zep_v3 import ids
from graphrecall.api.zep_v3.common import int_param
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Thread
from graphrecall.retrieval.request import Hit
from graphrecall.services.graph import graphs, search
from graphrecall.services.graph.search import SEARCH_PAGE_MAX, SearchParams
from graphrecall.wire.zep_v4 import search as v4search

router = make_router("zep v2: search")
DEFAULT_LIMIT = 10
# v2 scope -> v4 search scope
SCOPES = {"messages": "episodes", "facts": "edges", "summary": "thread_summaries"}
Found = list[tuple[Any, Hit]]


def _params(body: MemorySearchV2) -> SearchParams:
    if body.search_type == "mmr":
        return SearchParams(query=body.query(), reranker="mmr", mmr_lambda=body.mmr_lambda)
    return SearchParams(query=body.query(), reranker="cross_encoder")


def _score(hit: Hit) -> float:
    return hit.relevance if hit.relevance is not None else hit.score


def _ranked(
    ctx: Services,
    project: Project,
    graph_uuid: str,
    scope: str,
    params: SearchParams,
    keep: Callable[[Any], bool],
    limit: int,
) -> Found:
    """The best ``limit`` results of ``scope`` that ``keep`` accepts, best first: the
    ranked pages are read until enough are found or the ranking ends."""
    out: Found = []
    cursor: str | None = None
    while True:
        _, found, cursor = search.search(
            ctx, project, graph_uuid, scope, params, page_size=SEARCH_PAGE_MAX, cursor=cursor
        )
        out.extend(pair for pair in found if keep(pair[0]))
        if len(out) >= limit or cursor is None:
            return out[:limit]


def _search(
    ctx: Services,
    project: Project,
    body: MemorySearchV2,
    graph_uuid: str,
    thread_uuids: set[str] | None,
    limit: int,
) -> list[v2.SessionSearchResultV2]:
    """One graph's results: a session search result each, session named, best first.
    ``thread_uuids``: the sessions whose messages and summaries count (None: any)."""
    body.check()
    scope = body.search_scope or "messages"
    v4scope = SCOPES[scope]

    names: dict[str, str | None] = {}  # thread uuid -> session_id (None: deleted)

    def keep(record: Any) -> bool:
        """Facts are the user's; a message or summary counts when its session does (a
        deleted session's messages stay in the graph as episodes, not as a session's)."""
        if scope == "facts":
            return True
        owner = getattr(record, "thread_uuid", None)
        if owner is None or (thread_uuids is not None and owner not in thread_uuids):
            return False
        if owner not in names:
            names.update(ids.thread_ids(ctx, project, {owner}))
        return names[owner] is not None

    found = _ranked(ctx, project, graph_uuid, v4scope, _params(body), keep, limit)
    floors = [body.min_score, body.min_fact_rating if scope == "facts" else None]
    given = [f for f in floors if f is not None]
    if given:
        found = [pair for pair in found if _score(pair[1]) >= max(given)]
    if scope == "facts":
        graph = graphs.resolve(ctx, project, graph_uuid)
        _, _, convert = v4search.SCOPES["edges"]
        wires = convert(ctx, graph, found)
        return [
            v2.SessionSearchResultV2(fact=v2.fact(w, _score(h)), score=_score(h))
            for w, (_, h) in zip(wires, found, strict=True)
        ]
    out = []
    for record, hit in found:
        item = v2.SessionSearchResultV2(session_id=names.get(record.thread_uuid), score=_score(hit))
        if scope == "messages":
            item.message = v2.message(record)
        else:
            item.summary = v2.summary(record)
        out.append(item)
    return out


def _limit(limit: str | None) -> int:
    return int_param(limit, "limit", ge=1, le=SEARCH_PAGE_MAX) or DEFAULT_LIMIT


@router.post("/sessions/search", response_model=v2.SessionSearchV2)
def search_sessions(
    body: MemorySearchV2,
    limit: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """The sessions of ``user_id``, or the sessions ``session_ids`` names (both: those of
    the user's named). Zep searched a whole project when given neither; graphrecall
    searches one user's graph at a time, so that is a 400."""
    size = _limit(limit)
    named: list[Thread] = [
        ids.thread(ctx, project, s, param="session_ids") for s in body.session_ids or ()
    ]
    targets: dict[str, set[str] | None] = {}  # graph uuid -> the threads that count
    if body.user_id:
        user = ids.user(ctx, project, body.user_id)
        mine = {t.uuid for t in named if t.user_uuid == user.uuid}
        if named and not mine:
            raise BadRequest("none of session_ids is a session of user_id", param="session_ids")
        targets[user.graph_uuid] = mine or None
    else:
        for thread in named:
            chosen = targets.setdefault(thread.graph_uuid, set())
            assert chosen is not None
            chosen.add(thread.uuid)
    if not targets:
        raise BadRequest("give user_id or session_ids: graphrecall searches a user's sessions")
    results = _merged(
        (_search(ctx, project, body, g, only, size) for g, only in targets.items()), size
    )
    return v2.SessionSearchV2(results=results)


def _merged(
    lists: Iterable[list[v2.SessionSearchResultV2]], size: int
) -> list[v2.SessionSearchResultV2]:
    everything = [r for results in lists for r in results]
    return sorted(everything, key=lambda r: -(r.score or 0.0))[:size]


@router.post("/sessions/{session_id}/search", response_model=list[v2.MemorySearchResultV2])
def search_session(
    session_id: str,
    body: MemorySearchV2,
    limit: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """A bare array. A fact (scope ``facts``) comes as ``fact``, which zep-cloud 1.x's
    ``MemorySearchResult`` does not declare but keeps (its models take extra fields)."""
    thread = session(ctx, project, session_id)
    found = _search(ctx, project, body, thread.graph_uuid, {thread.uuid}, _limit(limit))
    return [
        v2.MemorySearchResultV2(message=r.message, summary=r.summary, fact=r.fact, score=r.score)
        for r in found
    ]

"""Zep Cloud v2 / CE 2.x memory under ``/api/v2``: ``/sessions/{session_id}/memory``
(add, get, delete) and ``/facts/{fact_uuid}``.

``memory.add`` is v4 ``add_messages`` on the session's thread; ``memory.get`` is the
thread's newest messages, its context block (``context``), its summary, and the facts
an edge search of the user's graph finds for the newest messages (``relevant_facts``,
each rated by its relevance in [0, 1]; ``facts`` are their texts); ``memory.delete`` is
v4's thread delete (the session and its messages; what was learned stays in the
user's graph, as in Zep)."""

from __future__ import annotations

from typing import Any

from fastapi import Query

from graphrecall.api.zep_v2 import v2_wire as v2
from graphrecall.api.zep_v2.sessions import session
from graphrecall.api.zep_v2.v2_payloads import MemoryAddV2
from graphrecall.api.zep_v3 import ids
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.common import PAGE_SIZE_MAX, int_param, str_param, v3_fields
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Edge, Episode, PageRequest, Thread, ThreadSummary
from graphrecall.services.get_context.assembly import THREAD_QUERY_MESSAGES, thread_context
from graphrecall.services.graph import edges, nodes, search, threads
from graphrecall.services.graph.search import SearchParams
from graphrecall.wire.zep_v4 import search as v4search
from graphrecall.wire.zep_v4 import wire as v4

router = make_router("zep v2: memory")
# Zep CE's default message window: the messages memory.get answers without ``lastn``.
DEFAULT_LASTN = 12
# How many facts memory.get rates and answers (Zep Cloud answered up to 10 by default).
FACT_LIMIT = 10
MEMORY_TYPES = ("perpetual", "summary_retriever", "message_window")
# Facts are rated by the same scorer as the context block's (relevance in [0, 1]).
FACT_RERANKER = "cross_encoder"


def float_param(value: str | None, name: str) -> float | None:
    """A number in the query; an empty one (``?minRating=``) is absent."""
    if value is None or not value.strip():
        return None
    try:
        return float(value)
    except ValueError:
        raise BadRequest(f"{name} must be a number; got {value!r}", param=name) from None


def newest(ctx: Services, project: Project, thread: Thread, size: int) -> list[Episode]:
    """The thread's newest ``size`` messages, oldest first."""
    page = threads.list_messages(
        ctx, project, thread.uuid, PageRequest(page_size=size, order_by="created_at")
    )
    return list(reversed(page.items))


def rated_facts(
    ctx: Services, project: Project, graph_uuid: str, query: str, limit: int
) -> list[v2.FactV2]:
    """The facts an edge search of the graph finds for ``query``, best first, each rated
    by its relevance (the cross-encoder scorer's, in [0, 1])."""
    params = SearchParams(query=query, reranker=FACT_RERANKER)
    graph, found, _ = search.search(
        ctx, project, graph_uuid, "edges", params, page_size=limit, cursor=None
    )
    _, _, convert = v4search.SCOPES["edges"]
    return [
        v2.fact(w, w.relevance if w.relevance is not None else w.score)
        for w in convert(ctx, graph, found)
    ]


def relevant_facts(
    ctx: Services, project: Project, thread: Thread, floor: float | None
) -> list[v2.FactV2]:
    """The facts found for what the conversation is about now: its newest messages (as
    many as the context block's query reads, whatever ``lastn``); those rated ``floor``
    or more when given."""
    messages = newest(ctx, project, thread, THREAD_QUERY_MESSAGES)
    query = "\n".join(m.content for m in messages)
    facts = rated_facts(ctx, project, thread.graph_uuid, query, FACT_LIMIT) if query else []
    if floor is not None:
        facts = [f for f in facts if f.rating is not None and f.rating >= floor]
    return facts


@router.post("/sessions/{session_id}/memory", response_model=v2.AddMemoryV2)
def add_memory(
    session_id: str, body: MemoryAddV2, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    thread = session(ctx, project, session_id)
    with v3_fields({r"\.reference_time$": ".created_at"}):
        threads.add_messages(ctx, project, thread.uuid, body.as_v4())
    context = thread_context(ctx, project, thread.uuid).text if body.return_context else None
    return v2.AddMemoryV2(message="OK", context=context)


@router.get("/sessions/{session_id}/memory", response_model=v2.MemoryV2)
def get_memory(
    session_id: str,
    lastn: str | None = Query(None),
    min_rating: str | None = Query(None, alias="minRating"),
    memory_type: str | None = Query(None, alias="memoryType"),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """Every ``memoryType`` answers the same memory: messages, facts, summary, context."""
    kind = str_param(memory_type)
    if kind is not None and kind not in MEMORY_TYPES:
        raise BadRequest(
            f"memoryType must be one of {', '.join(MEMORY_TYPES)}; got {kind!r}",
            param="memoryType",
        )
    thread = session(ctx, project, session_id)
    size = int_param(lastn, "lastn", ge=1, le=PAGE_SIZE_MAX) or DEFAULT_LASTN
    messages = newest(ctx, project, thread, size)
    facts = relevant_facts(ctx, project, thread, float_param(min_rating, "minRating"))
    summaries = ctx.store.find(ThreadSummary, {"thread_uuid": thread.uuid}, limit=1)
    return v2.MemoryV2(
        messages=[v2.message(e) for e in messages],
        facts=[f.fact for f in facts],
        relevant_facts=facts,
        summary=v2.summary(summaries[0]) if summaries else None,
        context=thread_context(ctx, project, thread.uuid).text if messages else None,
    )


@router.get("/sessions/{session_id}/facts", response_model=v2.FactsV2)
def get_session_facts(
    session_id: str,
    min_rating: str | None = Query(None, alias="minRating"),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """The facts memory.get answers as ``relevant_facts``."""
    thread = session(ctx, project, session_id)
    floor = float_param(min_rating, "minRating")
    return v2.FactsV2(facts=relevant_facts(ctx, project, thread, floor))


@router.get("/sessions/{session_id}/summary", response_model=v2.SummaryListV2)
def get_summaries(session_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """The thread's summary (v4 keeps one per thread, rewritten as it grows)."""
    thread = session(ctx, project, session_id)
    found = ctx.store.find(ThreadSummary, {"thread_uuid": thread.uuid}, limit=1)
    summaries = [v2.summary(s) for s in found]
    return v2.SummaryListV2(summaries=summaries, row_count=len(found), total_count=len(found))


@router.delete("/sessions/{session_id}/memory", response_model=v3wire.SuccessV3)
def delete_memory(session_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    threads.delete_thread(ctx, project, session(ctx, project, session_id).uuid)
    return v3wire.SuccessV3(message="deleted")


def _fact_edge(ctx: Services, project: Project, fact_uuid: str) -> tuple[Edge, Any]:
    record, graph = ids.item_graph(ctx, project, Edge, fact_uuid, param="fact_uuid")
    assert isinstance(record, Edge)
    return record, graph


@router.get("/facts/{fact_uuid}", response_model=v2.FactResponseV2)
def get_fact(fact_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """A fact is an edge; one read by uuid has no query to be rated against."""
    edge, graph = _fact_edge(ctx, project, fact_uuid)
    return v2.FactResponseV2(fact=v2.fact(v4.edge(nodes.edge_views(ctx, [edge])[0], graph)))


@router.delete("/facts/{fact_uuid}", response_model=v3wire.SuccessV3)
def delete_fact(fact_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    edge, graph = _fact_edge(ctx, project, fact_uuid)
    edges.delete_edge(ctx, project, graph.uuid, edge.uuid)
    return v3wire.SuccessV3(message="deleted")

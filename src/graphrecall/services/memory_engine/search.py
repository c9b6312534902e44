"""``memory.search`` on the shared retrieval core: semantic, fulltext (BM25), hybrid
(weighted RRF) or filter-only, with tree, meta, temporal and grep filters.

Scores are mapped to 0..1 with 1 the best match (the spec's promise, which upstream never
kept); docs/memory-engine.md explains each mode's mapping:
- semantic: the cosine similarity, clamped at 0 (the scale ``semanticThreshold`` uses);
- fulltext: BM25 relative to the best match of the query (the top result scores 1);
- hybrid: the weighted RRF score relative to its maximum, a memory ranked first by
  every leg that ran (so 1 = both legs agree it is the best match);
- filter-only: 1 for every result (each matches every filter; nothing is ranked).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from graphrecall.domain import predicates as p
from graphrecall.domain import safe_regex, scopes
from graphrecall.domain.errors import BadRequest, GraphRecallError
from graphrecall.domain.models import Memory
from graphrecall.retrieval import engine
from graphrecall.retrieval.engine import SearchOptions
from graphrecall.retrieval.memory_filters import (
    TemporalFilter,
    grep_filter,
    meta_filter,
    meta_predicate_filter,
    temporal_filter,
    tree_filter,
)
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.admission import admitted
from graphrecall.services.container import Services

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 10
DEFAULT_CANDIDATES = 30
MAX_LIMIT = 1000
MAX_SEMANTIC_QUERY_CHARS = 8192
SPEC = scopes.SCOPES["memories"]


class EmbeddingNotConfigured(GraphRecallError):
    status = 400
    code = "embedding_not_configured"


class EmbeddingFailed(GraphRecallError):
    status = 503
    code = "embedding_failed"


@dataclass(frozen=True)
class MemoryQuery:
    semantic: str | None = None
    fulltext: str | None = None
    grep: str | None = None
    meta: dict[str, Any] | None = None
    meta_predicate: str | None = None
    tree: str | None = None
    temporal: TemporalFilter | None = None
    weight_semantic: float = 1.0
    weight_fulltext: float = 1.0
    candidate_limit: int | None = None
    semantic_threshold: float | None = None
    limit: int = DEFAULT_LIMIT
    order_by: Literal["asc", "desc"] = "desc"


@dataclass
class MemoryResults:
    hits: list[tuple[Memory, float]]
    total: int
    limit: int


@admitted
def search(ctx: Services, caller: Caller, q: MemoryQuery) -> MemoryResults:
    semantic = (q.semantic or "").strip()[:MAX_SEMANTIC_QUERY_CHARS]
    fulltext = (q.fulltext or "").strip()
    has_tree = bool(q.tree and q.tree.strip())
    has_meta = q.meta is not None or q.meta_predicate is not None
    if q.grep and not (semantic or fulltext or has_tree or has_meta or q.temporal):
        raise BadRequest(
            "grep cannot be used alone; combine it with semantic, fulltext, tree, meta or temporal",
            param="grep",
        )
    # Cheapest first: SQLite tests the terms in this order, and meta is parsed from JSON.
    parts = [
        tree_filter(q.tree, caller.home) if q.tree else None,
        temporal_filter(q.temporal) if q.temporal else None,
        meta_filter(q.meta),
        meta_predicate_filter(q.meta_predicate) if q.meta_predicate is not None else None,
        grep_filter(q.grep) if q.grep else None,
    ]
    where = p.all_of([part for part in parts if part is not None])
    param = "grep" if q.grep else "metaPredicate" if q.meta_predicate is not None else "tree"
    try:
        if q.grep or q.meta_predicate is not None:
            # Tested row by row (on SQLite in worker processes, store/sqlite/
            # pattern_workers.py): one such search per project at a time, so that no
            # tenant's patterns take the workers or the process from the others.
            with ctx.regex_gate.slot(caller.space.project_uuid, param):
                return _search(ctx, caller, q, semantic, fulltext, where)
        return _search(ctx, caller, q, semantic, fulltext, where)
    except safe_regex.BudgetExceeded as exc:
        raise safe_regex.BudgetExceeded(
            exc.message.replace("filter:", f"{param}:", 1), param=param
        ) from None


def _search(
    ctx: Services,
    caller: Caller,
    q: MemoryQuery,
    semantic: str,
    fulltext: str,
    where: p.Predicate | None,
) -> MemoryResults:
    scope = {"space_uuid": caller.space.uuid}
    if not semantic and not fulltext:
        # Browsing: newest (UUIDv7 = creation order) first unless asc; every result
        # matches every filter, so each scores 1.
        items = ctx.store.find(
            Memory, scope, where=where, limit=q.limit, descending=q.order_by == "desc"
        )
        full = len(items) == q.limit
        total = ctx.store.count(Memory, scope, where) if full else len(items)
        return MemoryResults([(m, 1.0) for m in items], total, q.limit)
    return _ranked(ctx, caller, q, semantic, fulltext, where)


def _ranked(
    ctx: Services,
    caller: Caller,
    q: MemoryQuery,
    semantic: str,
    fulltext: str,
    where: p.Predicate | None,
) -> MemoryResults:
    legs: tuple[str, ...] = ()
    if fulltext:
        legs += ("bm25",)
    if semantic:
        if ctx.embedder is None and not fulltext:
            raise EmbeddingNotConfigured(
                "semantic search needs an embedding model; this server runs without one"
                " (GRAPHRECALL_EMBEDDER=none)",
                param="semantic",
            )
        legs += ("vector",)
    hybrid = len(legs) == 2
    weights = {"bm25": q.weight_fulltext, "vector": q.weight_semantic}
    if hybrid and not (q.weight_fulltext > 0 or q.weight_semantic > 0):
        raise BadRequest("weights: at least one weight must be above 0", param="weights")
    run = engine.search(
        ctx.store,
        ctx.embedder,
        None,
        SPEC,
        caller.space.uuid,
        SearchOptions(
            query=fulltext or semantic,
            vector_query=semantic or None,
            where=where,
            limit=q.limit,
            candidates=max(q.candidate_limit or DEFAULT_CANDIDATES, q.limit),
            legs=legs,
            weights=weights if hybrid else None,
            min_similarity=q.semantic_threshold,
        ),
    )
    if semantic and "vector" not in run.legs_used:
        if not fulltext:
            raise EmbeddingFailed("the query could not be embedded", param="semantic")
        log.warning("memory search: no query vector, ranking by fulltext only")
    found = {
        m.uuid: m
        for m in ctx.store.find(
            Memory, {"space_uuid": caller.space.uuid, "uuid": [h.uuid for h in run.hits]}
        )
    }
    scores = _normalise(run, weights if len(run.legs_used) == 2 else None)
    hits = [(found[h.uuid], scores[h.uuid]) for h in run.hits if h.uuid in found]
    total = len({u for leg in run.leg_scores.values() for u in leg})
    return MemoryResults(hits, total, q.limit)


def _normalise(run: engine.SearchRun, weights: dict[str, float] | None) -> dict[str, float]:
    """Each hit's score in 0..1 (see the module docstring)."""
    if weights is not None:
        best = sum(weights[leg] for leg in run.legs_used) / (scopes.SCOPES["memories"].rrf_k + 1)
        return {h.uuid: min(1.0, h.score / best) for h in run.hits}
    if "vector" in run.legs_used:
        sims = run.leg_scores["vector"]
        return {h.uuid: min(1.0, max(0.0, sims.get(h.uuid, 0.0))) for h in run.hits}
    bm25 = run.leg_scores.get("bm25", {})
    top = max(bm25.values(), default=0.0)
    return {h.uuid: (bm25.get(h.uuid, 0.0) / top if top > 0 else 0.0) for h in run.hits}

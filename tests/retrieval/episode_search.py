"""Episode search as the leg tests ask it: the lexical leg alone (no embedder), with the
shipped leg weights changed as a test says."""

from __future__ import annotations

from collections.abc import Mapping

from graphrecall.domain import predicates as p
from graphrecall.domain import scopes
from graphrecall.retrieval import engine
from graphrecall.retrieval.engine import Reranker, SearchOptions, SearchRun
from graphrecall.store import Store


def search(
    store: Store,
    graph: str,
    query: str,
    *,
    weights: Mapping[str, float] | None = None,
    reranker: Reranker = "rrf",
    where: p.Predicate | None = None,
) -> SearchRun:
    changed = None if weights is None else {**engine.DEFAULT_LEG_WEIGHTS, **weights}
    opts = SearchOptions(
        query=query, legs=("bm25",), weights=changed, reranker=reranker, where=where
    )
    return engine.search(store, None, None, scopes.SCOPES["episodes"], graph, opts)


def order(run: SearchRun) -> list[str]:
    return [h.uuid for h in run.hits]

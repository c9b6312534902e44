"""``rrf``: the fused order as it stands (the default)."""

from __future__ import annotations

from graphrecall.retrieval.request import DEFAULT_RERANKER, Hit
from graphrecall.retrieval.rerank.base import GRAPH_SCOPES, Reranker, RerankInput


def rank(given: RerankInput) -> list[Hit]:
    return [Hit(u, s) for u, s in given.fused]


RERANKER = Reranker(DEFAULT_RERANKER, rank, GRAPH_SCOPES | {"memories"})

"""The rerankers, one module each, registered here once. The API's accepted values, the
CLI's choices, each scope's accepted set and the docs table are all read from
:data:`REGISTRY`: a new reranker is one module and one line below."""

from __future__ import annotations

from graphrecall.retrieval.request import InvalidRequest
from graphrecall.retrieval.rerank import (
    cross_encoder,
    episode_mentions,
    mmr,
    node_distance,
    rrf,
)
from graphrecall.retrieval.rerank.base import Reranker, RerankInput

REGISTRY: dict[str, Reranker] = {
    r.name: r
    for r in (
        rrf.RERANKER,
        mmr.RERANKER,
        node_distance.RERANKER,
        episode_mentions.RERANKER,
        cross_encoder.RERANKER,
    )
}
NAMES: tuple[str, ...] = tuple(REGISTRY)


def accepted_by(scope: str) -> tuple[str, ...]:
    return tuple(name for name, r in REGISTRY.items() if scope in r.scopes)


def get(name: str, scope: str) -> Reranker:
    """The reranker ``name`` if ``scope`` accepts it; else 400 naming ``reranker``."""
    found = REGISTRY.get(name)
    if found is None or scope not in found.scopes:
        raise InvalidRequest(
            f"reranker {name!r} is not accepted by {scope} search"
            f" (accepted: {', '.join(sorted(accepted_by(scope)))})",
            param="reranker",
        )
    return found


__all__ = ["NAMES", "REGISTRY", "RerankInput", "Reranker", "accepted_by", "get"]

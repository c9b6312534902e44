"""``episode_mentions``: facts ordered by how many of the asked episodes mention them."""

from __future__ import annotations

from graphrecall.retrieval.request import Hit, SearchOptions
from graphrecall.retrieval.rerank.base import Reranker, RerankInput, by_key_then_rank


def rank(given: RerankInput) -> list[Hit]:
    order = [u for u, _ in given.fused]
    wanted = set(given.opts.mention_episodes)
    mentioned = given.store.episodes_of(given.spec.kind, given.owner_uuid, order)
    counts = {u: float(len(wanted.intersection(eps))) for u, (eps, _) in mentioned.items()}
    ranked = by_key_then_rank(order, counts, descending=True)
    return [Hit(u, counts.get(u, 0.0)) for u in ranked]


def _requires(opts: SearchOptions) -> tuple[str, str] | None:
    if opts.mention_episodes:
        return None
    return ("a non-empty filters.episode_uuids", "filters.episode_uuids")


RERANKER = Reranker("episode_mentions", rank, frozenset({"edges"}), _requires)

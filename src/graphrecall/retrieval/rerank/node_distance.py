"""``node_distance``: results ordered by hops from a centre node (closer first)."""

from __future__ import annotations

from graphrecall.domain.errors import NotFound
from graphrecall.domain.models import Edge, Node
from graphrecall.retrieval import graph
from graphrecall.retrieval.request import Hit, SearchOptions
from graphrecall.retrieval.rerank.base import Reranker, RerankInput, by_key_then_rank


def rank(given: RerankInput) -> list[Hit]:
    store, spec, graph_uuid = given.store, given.spec, given.owner_uuid
    order = [u for u, _ in given.fused]
    center = given.opts.center_node_uuid
    assert center is not None
    if store.get(Node, center, {"graph_uuid": graph_uuid}) is None:
        raise NotFound("node", center, param="center_node_uuid")
    if spec.kind is Edge:
        edges = store.find(Edge, {"graph_uuid": graph_uuid, "uuid": order})
        ends = {e.uuid: (e.source_node_uuid, e.target_node_uuid) for e in edges}
        wanted = {n for pair in ends.values() for n in pair}
    else:
        ends = {u: (u, u) for u in order}
        wanted = set(order)
    distances = graph.hop_distances(
        store, graph_uuid, [center], max_depth=64, stop_when_found=wanted
    )
    hops = {
        u: float(min(distances.get(a, 10**9), distances.get(b, 10**9)))
        for u, (a, b) in ends.items()
    }
    hops = {u: d for u, d in hops.items() if d < 10**9}
    ranked = by_key_then_rank(order, hops, descending=False)
    # Closer is better: score 1 / (1 + hops); unreachable results score 0 and come last.
    return [Hit(u, 1.0 / (1.0 + hops[u]) if u in hops else 0.0) for u in ranked]


def _requires(opts: SearchOptions) -> tuple[str, str] | None:
    return None if opts.center_node_uuid else ("center_node_uuid", "center_node_uuid")


RERANKER = Reranker("node_distance", rank, frozenset({"edges", "nodes"}), _requires)

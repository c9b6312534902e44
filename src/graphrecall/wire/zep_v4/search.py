"""The search scopes' wire items: each scope's records turned into its wire item by the
converter registered for it, and a search body turned into the service's parameters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphrecall.domain.models import Graph, Observation
from graphrecall.retrieval.engine import Hit
from graphrecall.services.container import Services
from graphrecall.services.graph import nodes
from graphrecall.services.graph.search import SearchParams
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.bodies import SearchBody

Found = list[tuple[Any, Hit]]


def params(body: SearchBody) -> SearchParams:
    return SearchParams(
        query=body.query,
        reranker=body.reranker,
        mmr_lambda=body.mmr_lambda,
        center_node_uuid=body.center_node_uuid,
        bfs_origin_node_uuids=tuple(body.bfs_origin_node_uuids or ()),
        filters=body.parsed(),
        filter_low_quality_results=bool(body.filter_low_quality_results),
    )


def _edges(ctx: Services, graph: Graph, found: Found) -> list[Any]:
    views = nodes.edge_views(ctx, [r for r, _ in found])
    for view, (_, hit) in zip(views, found, strict=True):
        view.score, view.relevance = hit.score, hit.relevance
    return [wire.edge(v, graph) for v in views]


def _nodes(ctx: Services, graph: Graph, found: Found) -> list[Any]:
    views = nodes.views(ctx, [r for r, _ in found])
    for view, (_, hit) in zip(views, found, strict=True):
        view.score, view.relevance = hit.score, hit.relevance
    return [wire.node(v, graph) for v in views]


def _episodes(ctx: Services, graph: Graph, found: Found) -> list[Any]:
    return [wire.episode(e, graph, h.score, h.relevance) for e, h in found]


def _observations(ctx: Services, graph: Graph, found: Found) -> list[Any]:
    provenance = ctx.store.episodes_of(Observation, graph.uuid, [o.uuid for o, _ in found])
    return [
        wire.observation(o, graph, provenance[o.uuid][0], h.score, h.relevance) for o, h in found
    ]


def _thread_summaries(ctx: Services, graph: Graph, found: Found) -> list[Any]:
    return [wire.thread_summary(t, h.score, h.relevance) for t, h in found]


Converter = Callable[[Services, Graph, Found], list[Any]]
SCOPES: dict[str, tuple[str, type[Any], Converter]] = {
    # scope: (path segment, wire item, converter)
    "edges": ("edges", wire.EdgeWire, _edges),
    "nodes": ("nodes", wire.NodeWire, _nodes),
    "episodes": ("episodes", wire.EpisodeWire, _episodes),
    "observations": ("observations", wire.ObservationWire, _observations),
    "thread_summaries": ("thread-summaries", wire.ThreadSummaryWire, _thread_summaries),
}

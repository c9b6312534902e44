"""Context assembly's wire shapes: the graph and thread context responses, the template
wire model and bodies, and the selected items as typed arrays (``include_results``)."""

from __future__ import annotations

from typing import Literal

from graphrecall.domain.inputs import SearchQuery
from graphrecall.domain.models import (
    ContextTemplate,
    Edge,
    Episode,
    Graph,
    Node,
    Observation,
    ThreadSummary,
)
from graphrecall.services.container import Services
from graphrecall.services.get_context.block import Item
from graphrecall.services.graph import nodes
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.bodies import Body, FilteredListBody

# -- wire models ---------------------------------------------------------------------------


class ContextEdgeWire(wire.EdgeWire):
    selection_rank: int


class ContextNodeWire(wire.NodeWire):
    selection_rank: int


class ContextEpisodeWire(wire.EpisodeWire):
    selection_rank: int


class ContextObservationWire(wire.ObservationWire):
    selection_rank: int


class ContextThreadSummaryWire(wire.ThreadSummaryWire):
    selection_rank: int


class ContextResultsWire(wire.Wire):
    edges: list[ContextEdgeWire]
    nodes: list[ContextNodeWire]
    episodes: list[ContextEpisodeWire]
    observations: list[ContextObservationWire]
    thread_summaries: list[ContextThreadSummaryWire]


class GraphContextResponse(wire.Wire):
    context: str
    truncated: bool
    results: ContextResultsWire | None = None


class ThreadContextResponse(wire.Wire):
    context: str


class ContextTemplateWire(wire.Wire):
    uuid: str
    name: str
    template: str
    created_at: str


def template_wire(t: ContextTemplate) -> ContextTemplateWire:
    return ContextTemplateWire(
        uuid=t.uuid, name=t.name, template=t.template, created_at=t.created_at
    )


# -- bodies --------------------------------------------------------------------------------


class GraphContextBody(FilteredListBody):
    query: SearchQuery
    include_results: bool | None = None
    max_characters: int | None = None
    recency_bias: Literal["off", "mild", "strong"] | None = None
    template_uuid: str | None = None


class TemplateBody(Body):
    # Checked by services/context_templates.py (lengths and the template's cost caps).
    name: str | None = None
    template: str | None = None


class TemplateCreateBody(Body):
    """Both fields are required to create (the document says so; the service checks)."""

    name: str
    template: str


class TemplateListBody(Body):
    name: str | None = None


def results(ctx: Services, graph: Graph, items: list[Item]) -> ContextResultsWire:
    """The selected items as typed arrays; ``selection_rank`` is the position in the block
    among them (a template's user summary is the user's node summary and is not listed)."""
    listed = [i for i in items if i.kind != "user_summary"]
    rank = {(i.kind, i.uuid): n for n, i in enumerate(listed, start=1)}
    by_kind: dict[str, list[Item]] = {}
    for item in listed:
        by_kind.setdefault(item.kind, []).append(item)
    out = ContextResultsWire(edges=[], nodes=[], episodes=[], observations=[], thread_summaries=[])
    edge_items = by_kind.get("edge", [])
    edges = [i.record for i in edge_items if isinstance(i.record, Edge)]
    for view, item in zip(nodes.edge_views(ctx, edges), edge_items, strict=True):
        view.score, view.relevance = item.score, item.relevance
        dumped = wire.edge(view, graph).model_dump()
        out.edges.append(ContextEdgeWire(**dumped, selection_rank=rank[("edge", item.uuid)]))
    node_items = by_kind.get("node", [])
    found = [i.record for i in node_items if isinstance(i.record, Node)]
    for node_view, item in zip(nodes.views(ctx, found), node_items, strict=True):
        node_view.score, node_view.relevance = item.score, item.relevance
        dumped = wire.node(node_view, graph).model_dump()
        out.nodes.append(ContextNodeWire(**dumped, selection_rank=rank[("node", item.uuid)]))
    observation_items = by_kind.get("observation", [])
    provenance = ctx.store.episodes_of(Observation, graph.uuid, [i.uuid for i in observation_items])
    for item in observation_items:
        assert isinstance(item.record, Observation)
        dumped = wire.observation(
            item.record, graph, provenance[item.uuid][0], item.score, item.relevance
        ).model_dump()
        out.observations.append(
            ContextObservationWire(**dumped, selection_rank=rank[("observation", item.uuid)])
        )
    for item in by_kind.get("thread_summary", []):
        assert isinstance(item.record, ThreadSummary)
        dumped = wire.thread_summary(item.record, item.score, item.relevance).model_dump()
        out.thread_summaries.append(
            ContextThreadSummaryWire(**dumped, selection_rank=rank[("thread_summary", item.uuid)])
        )
    for item in by_kind.get("episode", []):
        assert isinstance(item.record, Episode)
        dumped = wire.episode(item.record, graph, item.score, item.relevance).model_dump()
        out.episodes.append(
            ContextEpisodeWire(**dumped, selection_rank=rank[("episode", item.uuid)])
        )
    return out

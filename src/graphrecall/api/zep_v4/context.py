"""Context assembly on the wire: ``POST /graphs/{graph_uuid}/context``,
``GET /threads/{thread_uuid}/context`` and the ``/context-templates`` CRUD."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import Depends, Query

from graphrecall.api.zep_v4 import wire
from graphrecall.api.zep_v4.bodies import Body, FilteredListBody
from graphrecall.api.zep_v4.common import (
    CtxDep,
    Project,
    ProjectDep,
    Services,
    make_router,
    paging,
    serialized,
    wire_page,
)
from graphrecall.domain.inputs import SearchQuery
from graphrecall.domain.models import (
    ContextTemplate,
    Edge,
    Episode,
    Graph,
    Node,
    Observation,
    PageRequest,
    ThreadSummary,
)
from graphrecall.services.get_context import templates as context_templates
from graphrecall.services.get_context.assembly import ContextRequest, graph_context, thread_context
from graphrecall.services.get_context.block import Item
from graphrecall.services.graph import nodes

router = make_router("context")
_paging = paging(("uuid", "created_at"))


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
    # Checked by services/get_context/templates.py (lengths and the template's cost caps).
    name: str | None = None
    template: str | None = None


class TemplateCreateBody(Body):
    """Both fields are required to create (the document says so; the service checks)."""

    name: str
    template: str


class TemplateListBody(Body):
    name: str | None = None


# -- graph and thread context --------------------------------------------------------------


@router.post("/graphs/{graph_uuid}/context", response_model=GraphContextResponse)
def get_graph_context(
    graph_uuid: str, body: GraphContextBody, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    request = ContextRequest(
        query=body.query,
        filters=body.parsed(),
        max_characters=body.max_characters,
        recency_bias=body.recency_bias,
        template_uuid=body.template_uuid,
    )
    result = graph_context(ctx, project, graph_uuid, request)
    results = _results(ctx, result.graph, result.items) if body.include_results else None
    return serialized(
        GraphContextResponse,
        GraphContextResponse(context=result.text, truncated=result.truncated, results=results),
    )


@router.get("/threads/{thread_uuid}/context", response_model=ThreadContextResponse)
def get_thread_context(
    thread_uuid: str,
    template_uuid: str | None = Query(None, max_length=64),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    text = thread_context(ctx, project, thread_uuid, template_uuid or None).text
    return serialized(ThreadContextResponse, ThreadContextResponse(context=text))


def _results(ctx: Services, graph: Graph, items: list[Item]) -> ContextResultsWire:
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


# -- context templates ---------------------------------------------------------------------


@router.post("/context-templates", response_model=ContextTemplateWire, status_code=201)
def create_template(
    body: TemplateCreateBody, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return template_wire(context_templates.create_template(ctx, project, body.name, body.template))


@router.post("/context-templates/list", response_model=wire.PageWire[ContextTemplateWire])
def list_templates(
    body: TemplateListBody | None = None,
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = context_templates.list_templates(ctx, project, page, body.name if body else None)
    return wire_page(result, [template_wire(t) for t in result.items])


@router.get("/context-templates/{template_uuid}", response_model=ContextTemplateWire)
def get_template(template_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return template_wire(context_templates.get_template(ctx, project, template_uuid))


@router.put("/context-templates/{template_uuid}", response_model=ContextTemplateWire)
def update_template(
    template_uuid: str, body: TemplateBody, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return template_wire(
        context_templates.update_template(ctx, project, template_uuid, body.name, body.template)
    )


@router.delete("/context-templates/{template_uuid}")
def delete_template(
    template_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> dict[str, str]:
    """The SDK parses no body here; a small JSON one keeps every 2xx a JSON response."""
    context_templates.delete_template(ctx, project, template_uuid)
    return {"message": "context template deleted", "uuid": template_uuid}

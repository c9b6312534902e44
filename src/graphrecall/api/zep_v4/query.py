"""/graphs/query: ``graph.query`` in its fast mode, without a model (services/query.py)."""

from __future__ import annotations

from typing import Any

from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.models import Graph
from graphrecall.services.graph import nodes, query
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.bodies import GraphQueryBody

router = make_router("graphs")


class GraphQueryResults(wire.Wire):
    edges: list[wire.EdgeWire]
    nodes: list[wire.NodeWire]
    episodes: list[wire.EpisodeWire]


class GraphQueryCitations(wire.Wire):
    edge_uuids: list[str]
    episode_uuids: list[str]
    node_uuids: list[str]


class GraphQueryResponse(wire.Wire):
    results: GraphQueryResults
    truncated: bool
    citations: GraphQueryCitations  # empty: there is no answer to cite from


def _by_graph(pairs: list[tuple[Graph, Any]]) -> dict[str, tuple[Graph, list[Any]]]:
    grouped: dict[str, tuple[Graph, list[Any]]] = {}
    for graph, record in pairs:
        grouped.setdefault(graph.uuid, (graph, []))[1].append(record)
    return grouped


@router.post("/graphs/query", response_model=GraphQueryResponse)
def query_graph(body: GraphQueryBody, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    query.check_request(
        mode=body.mode,
        generate_answer=bool(body.generate_answer),
        guidance=body.guidance,
        stream=bool(body.stream),
    )
    found = query.query_graphs(ctx, project, body.graph_uuids, body.query)
    # Views are read per graph (endpoints, provenance), then put back in found order.
    edges: dict[str, wire.EdgeWire] = {}
    for graph, records in _by_graph(found.edges).values():
        edges |= {v.edge.uuid: wire.edge(v, graph) for v in nodes.edge_views(ctx, records)}
    node_wires: dict[str, wire.NodeWire] = {}
    for graph, records in _by_graph(found.nodes).values():
        node_wires |= {v.node.uuid: wire.node(v, graph) for v in nodes.views(ctx, records)}
    return GraphQueryResponse(
        results=GraphQueryResults(
            edges=[edges[e.uuid] for _, e in found.edges],
            nodes=[node_wires[n.uuid] for _, n in found.nodes],
            episodes=[wire.episode(e, g) for g, e in found.episodes],
        ),
        truncated=found.truncated,
        citations=GraphQueryCitations(edge_uuids=[], episode_uuids=[], node_uuids=[]),
    )

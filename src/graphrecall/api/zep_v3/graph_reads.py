"""v3's graph reads beyond search and the item lists: ``/graph/subgraph``, a node's
neighbours, a document's episodes and the document summaries (v4's, on the graph v3
names)."""

from __future__ import annotations

from typing import Any

from fastapi import Body as BodyParam
from fastapi import Query, Response

from graphrecall.api.zep_v3 import ids, search_filters
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.common import PAGE_SIZE_MAX
from graphrecall.api.zep_v3.graph_items import episode_wires, item_page
from graphrecall.api.zep_v3.payloads import ItemListV3, NeighborsV3, SubgraphV3
from graphrecall.api.zep_v4 import documents as v4documents
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.models import Node, PageRequest
from graphrecall.retrieval import filters as filter_language
from graphrecall.services.graph import documents, nodes
from graphrecall.wire.zep_v4 import wire as v4

router = make_router("zep v3: graph reads")
NEIGHBORS_MAX = 50  # v3 clamps an explicit limit to 50; unset, a page is 100
NEXT_CURSOR = "Zep-Next-Cursor"


@router.post("/graph/subgraph", response_model=v3wire.SubgraphV3)
def get_subgraph(body: SubgraphV3, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    graph = ids.target_graph(ctx, project, body.user_id, body.graph_id)
    filters = search_filters.to_v4(body.search_filters)
    found_nodes, found_edges, reason = nodes.get_subgraph(
        ctx,
        project,
        graph.uuid,
        body.seed_node_uuids,
        depth=body.depth,
        direction=body.direction or "both",
        max_nodes=body.max_nodes,
        max_edges=body.max_edges,
        where=filter_language.to_predicate(filters, "graph:edges"),
    )
    return v3wire.SubgraphV3(
        nodes=[v3wire.node(v4.node(v, graph)) for v in nodes.views(ctx, found_nodes)],
        edges=[v3wire.edge(v4.edge(v, graph)) for v in nodes.edge_views(ctx, found_edges)],
        truncated=reason is not None,
        truncation_reason=reason,
    )


@router.post("/graph/node/{node_uuid}/neighbors", response_model=list[v3wire.NeighborV3])
def get_neighbors(
    node_uuid: str,
    response: Response,
    body: NeighborsV3 | None = BodyParam(default=None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """The node's neighbours, each with the edges joining them; the next page's cursor
    is the ``Zep-Next-Cursor`` header, as v3 gives it."""
    body = body or NeighborsV3()
    node, graph = ids.item_graph(ctx, project, Node, node_uuid, param="node_uuid")
    where = filter_language.to_predicate(search_filters.to_v4(body.filters), "graph:edges")
    size = min(body.limit, NEIGHBORS_MAX) if body.limit else PAGE_SIZE_MAX
    page = PageRequest(
        page_size=size,
        cursor=body.cursor,
        order_by=body.order_by or "uuid",
        order=body.direction_sort or "desc",
    )
    result, by_neighbor = nodes.list_neighbors(
        ctx, project, graph.uuid, node.uuid, body.direction or "both", page, where
    )
    if result.next_cursor:
        response.headers[NEXT_CURSOR] = result.next_cursor
    joined = [e for n in result.items for e in by_neighbor[n.uuid]]
    edges = {v.edge.uuid: v3wire.edge(v4.edge(v, graph)) for v in nodes.edge_views(ctx, joined)}
    return [
        v3wire.NeighborV3(
            node=v3wire.node(v4.node(v, graph)),
            edges=[edges[e.uuid] for e in by_neighbor[v.node.uuid]],
        )
        for v in nodes.views(ctx, result.items)
    ]


# A document id may hold "/" (v4's route takes it the same way).
@router.get("/graph/documents/{document_id:path}/episodes", response_model=v3wire.EpisodesV3)
def get_episodes_for_document(
    document_id: str,
    graph_id: str = Query(max_length=500),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """The document's episodes (its chunks) in the order they were added."""
    graph = ids.graph(ctx, project, graph_id)
    page = PageRequest(page_size=PAGE_SIZE_MAX, order_by="created_at", order="asc")
    found = documents.list_document_episodes(ctx, project, graph.uuid, document_id, page)
    return v3wire.EpisodesV3(episodes=episode_wires(ctx, project, graph, found.items))


@router.post(
    "/graph/document-summary/graph/{graph_id}",
    response_model=list[v4documents.DocumentSummaryWire],  # the same fields in v3
)
def get_document_summaries(
    graph_id: str,
    body: ItemListV3 | None = BodyParam(default=None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    graph = ids.graph(ctx, project, graph_id)
    page, where = item_page(body, "list:document_summaries")
    found = documents.list_document_summaries(ctx, project, graph.uuid, page, where)
    return [
        v4documents.DocumentSummaryWire(**s.model_dump(exclude={"graph_uuid"})) for s in found.items
    ]

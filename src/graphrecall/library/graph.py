"""``gr.graph`` with ``.edge``, ``.node``, ``.episode``, ``.observation`` and
``.thread_summary``: the ``zep_cloud.Zep`` graph methods, in process, each calling the
route handler its SDK method reaches over HTTP (see ``zep.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fastapi.routing import APIRoute

from graphrecall.api.zep_v4 import bodies, context, derived, graphs, ontology, search, wire
from graphrecall.api.zep_v4 import edges as _edges
from graphrecall.api.zep_v4 import episodes as _episodes
from graphrecall.api.zep_v4 import nodes as _nodes
from graphrecall.api.zep_v4.context import GraphContextResponse
from graphrecall.domain import inputs
from graphrecall.domain.errors import BadRequest
from graphrecall.library.calls import OMIT, Pager, body, page, pager, result
from graphrecall.library.zep import Part
from graphrecall.services.graph.search import SEARCH_PAGE_MAX

if TYPE_CHECKING:
    from graphrecall.library.client import GraphRecall

_SEARCH_HANDLERS = {
    route.name.removeprefix("search_"): route.endpoint
    for route in search.router.routes
    if isinstance(route, APIRoute) and route.name.startswith("search_")
}


def _filtered(filters: Any) -> bodies.FilteredListBody:
    return body(bodies.FilteredListBody, filters=filters)


class EdgeClient(Part):
    def add(
        self, graph_uuid: str, *, edges: Sequence[Any], deduplicate: bool | None = OMIT
    ) -> wire.AddEdgesResult:
        made = body(inputs.EdgesAdd, edges=list(edges), deduplicate=deduplicate)
        return result(wire.AddEdgesResult, self._call(_edges.add_edges, graph_uuid, made))

    def list(
        self,
        graph_uuid: str,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
        filters: Any = None,
    ) -> Pager[wire.EdgeWire]:
        request = page(_edges._paging, page_size, cursor, order_by, order)
        found = self._call(_edges.list_edges, graph_uuid, _filtered(filters), request)
        return pager(
            wire.EdgeWire,
            found,
            lambda c: self.list(
                graph_uuid,
                page_size=page_size,
                cursor=c,
                order_by=order_by,
                order=order,
                filters=filters,
            ),
        )

    def get(self, graph_uuid: str, edge_uuid: str) -> wire.EdgeWire:
        return result(wire.EdgeWire, self._call(_edges.get_edge, graph_uuid, edge_uuid))

    def delete(self, graph_uuid: str, edge_uuid: str) -> wire.AsyncResult:
        return result(wire.AsyncResult, self._call(_edges.delete_edge, graph_uuid, edge_uuid))

    def update(
        self,
        graph_uuid: str,
        edge_uuid: str,
        *,
        attributes: dict[str, Any] | None = OMIT,
        fact: str | None = OMIT,
    ) -> wire.EdgeWire:
        changes = body(inputs.EdgeUpdate, attributes=attributes, fact=fact)
        found = self._call(_edges.update_edge, graph_uuid, edge_uuid, changes)
        return result(wire.EdgeWire, found)


class NodeClient(Part):
    def add(self, graph_uuid: str, *, nodes: Sequence[Any]) -> wire.AddNodesResult:
        made = body(inputs.NodesAdd, nodes=list(nodes))
        return result(wire.AddNodesResult, self._call(_nodes.add_nodes, graph_uuid, made))

    def list(
        self,
        graph_uuid: str,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
        filters: Any = None,
    ) -> Pager[wire.NodeWire]:
        request = page(_nodes._paging, page_size, cursor, order_by, order)
        found = self._call(_nodes.list_nodes, graph_uuid, _filtered(filters), request)
        return pager(
            wire.NodeWire,
            found,
            lambda c: self.list(
                graph_uuid,
                page_size=page_size,
                cursor=c,
                order_by=order_by,
                order=order,
                filters=filters,
            ),
        )

    def get(self, graph_uuid: str, node_uuid: str) -> wire.NodeWire:
        return result(wire.NodeWire, self._call(_nodes.get_node, graph_uuid, node_uuid))

    def delete(self, graph_uuid: str, node_uuid: str) -> wire.AsyncResult:
        return result(wire.AsyncResult, self._call(_nodes.delete_node, graph_uuid, node_uuid))

    def update(
        self,
        graph_uuid: str,
        node_uuid: str,
        *,
        attributes: dict[str, Any] | None = OMIT,
        name: str | None = OMIT,
        summary: str | None = OMIT,
    ) -> wire.NodeWire:
        changes = body(inputs.NodeUpdate, attributes=attributes, name=name, summary=summary)
        found = self._call(_nodes.update_node, graph_uuid, node_uuid, changes)
        return result(wire.NodeWire, found)

    def list_neighbors(
        self,
        graph_uuid: str,
        node_uuid: str,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
        direction: str | None = OMIT,
        filters: Any = None,
    ) -> Pager[wire.NeighborEntry]:
        request = page(_nodes._neighbor_paging, page_size, cursor, order_by, order)
        asked = body(bodies.NeighborsBody, direction=direction, filters=filters)
        found = self._call(_nodes.list_neighbors, graph_uuid, node_uuid, asked, request)
        return pager(
            wire.NeighborEntry,
            found,
            lambda c: self.list_neighbors(
                graph_uuid,
                node_uuid,
                page_size=page_size,
                cursor=c,
                order_by=order_by,
                order=order,
                direction=direction,
                filters=filters,
            ),
        )


class EpisodeClient(Part):
    def add(
        self,
        graph_uuid: str,
        *,
        data: str,
        document_id: str | None = OMIT,
        metadata: dict[str, Any] | None = OMIT,
        reference_time: str | None = OMIT,
        source_description: str | None = OMIT,
        strict_ontology: bool | None = OMIT,
        type: str | None = OMIT,
    ) -> wire.AddEpisodeResult:
        made = body(
            inputs.EpisodeCreate,
            data=data,
            document_id=document_id,
            metadata=metadata,
            reference_time=reference_time,
            source_description=source_description,
            strict_ontology=strict_ontology,
            type=type,
        )
        return result(wire.AddEpisodeResult, self._call(_episodes.add_episode, graph_uuid, made))

    def list(
        self,
        graph_uuid: str,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
        filters: Any = None,
    ) -> Pager[wire.EpisodeWire]:
        request = page(_episodes._paging, page_size, cursor, order_by, order)
        found = self._call(_episodes.list_episodes, graph_uuid, _filtered(filters), request)
        return pager(
            wire.EpisodeWire,
            found,
            lambda c: self.list(
                graph_uuid,
                page_size=page_size,
                cursor=c,
                order_by=order_by,
                order=order,
                filters=filters,
            ),
        )

    def get(self, graph_uuid: str, episode_uuid: str) -> wire.EpisodeWire:
        return result(wire.EpisodeWire, self._call(_episodes.get_episode, graph_uuid, episode_uuid))

    def delete(self, graph_uuid: str, episode_uuid: str) -> wire.AsyncResult:
        found = self._call(_episodes.delete_episode, graph_uuid, episode_uuid)
        return result(wire.AsyncResult, found)

    def update(
        self, graph_uuid: str, episode_uuid: str, *, metadata: dict[str, Any] | None = OMIT
    ) -> wire.EpisodeWire:
        changes = body(inputs.EpisodeUpdate, metadata=metadata)
        found = self._call(_episodes.update_episode, graph_uuid, episode_uuid, changes)
        return result(wire.EpisodeWire, found)


class ObservationClient(Part):
    def list(
        self,
        graph_uuid: str,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
        filters: Any = None,
    ) -> Pager[wire.ObservationWire]:
        request = page(derived._paging, page_size, cursor, order_by, order)
        found = self._call(derived.list_observations, graph_uuid, _filtered(filters), request)
        return pager(
            wire.ObservationWire,
            found,
            lambda c: self.list(
                graph_uuid,
                page_size=page_size,
                cursor=c,
                order_by=order_by,
                order=order,
                filters=filters,
            ),
        )

    def get(self, graph_uuid: str, observation_uuid: str) -> wire.ObservationWire:
        found = self._call(derived.get_observation, graph_uuid, observation_uuid)
        return result(wire.ObservationWire, found)


class ThreadSummaryClient(Part):
    def list(
        self,
        graph_uuid: str,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
        filters: Any = None,
    ) -> Pager[wire.ThreadSummaryWire]:
        request = page(derived._paging, page_size, cursor, order_by, order)
        found = self._call(derived.list_thread_summaries, graph_uuid, _filtered(filters), request)
        return pager(
            wire.ThreadSummaryWire,
            found,
            lambda c: self.list(
                graph_uuid,
                page_size=page_size,
                cursor=c,
                order_by=order_by,
                order=order,
                filters=filters,
            ),
        )


class GraphClient(Part):
    def __init__(self, gr: GraphRecall) -> None:
        super().__init__(gr)
        self.edge = EdgeClient(gr)
        self.node = NodeClient(gr)
        self.episode = EpisodeClient(gr)
        self.observation = ObservationClient(gr)
        self.thread_summary = ThreadSummaryClient(gr)

    def create(
        self,
        *,
        name: str | None = OMIT,
        description: str | None = OMIT,
        time_zone: str | None = OMIT,
        content_policy: Any = OMIT,
    ) -> wire.GraphWire:
        made = body(
            inputs.GraphCreate,
            name=name,
            description=description,
            time_zone=time_zone,
            content_policy=content_policy,
        )
        return result(wire.GraphWire, self._call(graphs.create_graph, made))

    def list(
        self,
        *,
        page_size: int | None = None,
        cursor: str | None = None,
        order_by: str | None = None,
        order: str | None = None,
        search: str | None = None,
    ) -> Pager[wire.GraphWire]:
        request = page(graphs._paging, page_size, cursor, order_by, order)
        found = self._call(graphs.list_graphs, body(bodies.SearchListBody, search=search), request)
        return pager(
            wire.GraphWire,
            found,
            lambda c: self.list(
                page_size=page_size, cursor=c, order_by=order_by, order=order, search=search
            ),
        )

    def lookup(
        self,
        *,
        graph_id: str | None = OMIT,
        thread_id: str | None = OMIT,
        user_id: str | None = OMIT,
    ) -> wire.GraphWire:
        ids = body(bodies.LookupBody, graph_id=graph_id, thread_id=thread_id, user_id=user_id)
        return result(wire.GraphWire, self._call(graphs.lookup_graph, ids))

    def get(self, graph_uuid: str) -> wire.GraphWire:
        return result(wire.GraphWire, self._call(graphs.get_graph, graph_uuid))

    def delete(self, graph_uuid: str) -> wire.AsyncResult:
        return result(wire.AsyncResult, self._call(graphs.delete_graph, graph_uuid))

    def update(
        self,
        graph_uuid: str,
        *,
        description: str | None = OMIT,
        name: str | None = OMIT,
        time_zone: str | None = OMIT,
    ) -> wire.GraphWire:
        changes = body(inputs.GraphUpdate, description=description, name=name, time_zone=time_zone)
        return result(wire.GraphWire, self._call(graphs.update_graph, graph_uuid, changes))

    def get_context(
        self,
        graph_uuid: str,
        *,
        query: str,
        filters: Any = None,
        include_results: bool | None = OMIT,
        max_characters: int | None = OMIT,
        recency_bias: str | None = OMIT,
        template_uuid: str | None = OMIT,
    ) -> GraphContextResponse:
        asked = body(
            context.GraphContextBody,
            query=query,
            filters=filters,
            include_results=include_results,
            max_characters=max_characters,
            recency_bias=recency_bias,
            template_uuid=template_uuid,
        )
        found = self._call(context.get_graph_context, graph_uuid, asked)
        return result(GraphContextResponse, found)

    def get_ontology(self, graph_uuid: str) -> Any:
        return self._call(ontology.get_graph_ontology, graph_uuid)

    def set_ontology(self, graph_uuid: str, **fields: Any) -> Any:
        from graphrecall.services.graph.ontology import OntologyIn

        return self._call(ontology.set_graph_ontology, graph_uuid, body(OntologyIn, **fields))

    def get_subgraph(
        self,
        graph_uuid: str,
        *,
        seed_node_uuids: Sequence[str],
        depth: int | None = OMIT,
        direction: str | None = OMIT,
        filters: Any = None,
        max_edges: int | None = OMIT,
        max_nodes: int | None = OMIT,
    ) -> wire.SubgraphResponse:
        asked = body(
            bodies.SubgraphBody,
            seed_node_uuids=list(seed_node_uuids),
            depth=depth,
            direction=direction,
            filters=filters,
            max_edges=max_edges,
            max_nodes=max_nodes,
        )
        return result(wire.SubgraphResponse, self._call(graphs.get_subgraph, graph_uuid, asked))

    # -- search: one method per scope, as the SDK has them ----------------------------------

    def _search(
        self, scope: str, item: type[Any], graph_uuid: str, asked: dict[str, Any]
    ) -> Pager[Any]:
        page_size, cursor = asked.pop("page_size"), asked.pop("cursor")
        size = SEARCH_PAGE_MAX if page_size is None else page_size
        if not 1 <= size <= SEARCH_PAGE_MAX:
            raise BadRequest(
                f"page_size must be between 1 and {SEARCH_PAGE_MAX}", param="page_size"
            )
        found = self._call(
            _SEARCH_HANDLERS[scope],
            graph_uuid,
            body(bodies.SearchBody, **asked),
            page_size=size,
            cursor=cursor,
        )
        return pager(
            item,
            found,
            lambda c: self._search(
                scope, item, graph_uuid, {**asked, "page_size": page_size, "cursor": c}
            ),
        )

    def search_edges(
        self,
        graph_uuid: str,
        *,
        query: str,
        page_size: int | None = None,
        cursor: str | None = None,
        bfs_origin_node_uuids: Sequence[str] | None = OMIT,
        center_node_uuid: str | None = OMIT,
        filter_low_quality_results: bool | None = OMIT,
        filters: Any = OMIT,
        mmr_lambda: float | None = OMIT,
        reranker: str | None = OMIT,
    ) -> Pager[wire.EdgeWire]:
        asked = dict(locals())
        return self._search("edges", wire.EdgeWire, graph_uuid, _args(asked))

    def search_nodes(
        self,
        graph_uuid: str,
        *,
        query: str,
        page_size: int | None = None,
        cursor: str | None = None,
        bfs_origin_node_uuids: Sequence[str] | None = OMIT,
        center_node_uuid: str | None = OMIT,
        filter_low_quality_results: bool | None = OMIT,
        filters: Any = OMIT,
        mmr_lambda: float | None = OMIT,
        reranker: str | None = OMIT,
    ) -> Pager[wire.NodeWire]:
        asked = dict(locals())
        return self._search("nodes", wire.NodeWire, graph_uuid, _args(asked))

    def search_episodes(
        self,
        graph_uuid: str,
        *,
        query: str,
        page_size: int | None = None,
        cursor: str | None = None,
        bfs_origin_node_uuids: Sequence[str] | None = OMIT,
        center_node_uuid: str | None = OMIT,
        filter_low_quality_results: bool | None = OMIT,
        filters: Any = OMIT,
        mmr_lambda: float | None = OMIT,
        reranker: str | None = OMIT,
    ) -> Pager[wire.EpisodeWire]:
        asked = dict(locals())
        return self._search("episodes", wire.EpisodeWire, graph_uuid, _args(asked))

    def search_observations(
        self,
        graph_uuid: str,
        *,
        query: str,
        page_size: int | None = None,
        cursor: str | None = None,
        bfs_origin_node_uuids: Sequence[str] | None = OMIT,
        center_node_uuid: str | None = OMIT,
        filter_low_quality_results: bool | None = OMIT,
        filters: Any = OMIT,
        mmr_lambda: float | None = OMIT,
        reranker: str | None = OMIT,
    ) -> Pager[wire.ObservationWire]:
        asked = dict(locals())
        return self._search("observations", wire.ObservationWire, graph_uuid, _args(asked))

    def search_thread_summaries(
        self,
        graph_uuid: str,
        *,
        query: str,
        page_size: int | None = None,
        cursor: str | None = None,
        bfs_origin_node_uuids: Sequence[str] | None = OMIT,
        center_node_uuid: str | None = OMIT,
        filter_low_quality_results: bool | None = OMIT,
        filters: Any = OMIT,
        mmr_lambda: float | None = OMIT,
        reranker: str | None = OMIT,
    ) -> Pager[wire.ThreadSummaryWire]:
        asked = dict(locals())
        return self._search("thread_summaries", wire.ThreadSummaryWire, graph_uuid, _args(asked))


def _args(local: dict[str, Any]) -> dict[str, Any]:
    """A search method's own arguments, less ``self`` and the graph."""
    return {k: v for k, v in local.items() if k not in ("self", "graph_uuid")}

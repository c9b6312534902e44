"""``gr.graph`` with ``.edge``, ``.node``, ``.episode``, ``.observation`` and
``.thread_summary``: the ``zep_cloud.Zep`` graph methods, in process, each calling the
services its SDK method reaches over HTTP, through the same body models and wire
converters (see ``zep.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Unpack

from graphrecall.domain import inputs
from graphrecall.domain.models import Edge, Graph, Node
from graphrecall.library.calls import OMIT, FilteredListArgs, ListArgs, Pager, body, listing
from graphrecall.library.graph_search import GraphSearch
from graphrecall.library.session import Part, Session
from graphrecall.services.graph import edges as edge_service
from graphrecall.services.graph import episodes as episode_service
from graphrecall.services.graph import graphs as graph_service
from graphrecall.services.graph import nodes as node_service
from graphrecall.services.graph import ontology as ontology_service
from graphrecall.services.graph.ontology import OntologyIn
from graphrecall.wire.zep_v4 import answers, bodies, wire
from graphrecall.wire.zep_v4 import paging as rules
from graphrecall.wire.zep_v4.context import GraphContextBody, GraphContextResponse


def _filtered(filters: Any) -> bodies.FilteredListBody:
    return body(bodies.FilteredListBody, filters=filters)


class GraphPart(Part):
    """A part whose methods read one graph's records, as wire models of that graph."""

    def _graph(self, graph_uuid: str) -> Graph:
        return graph_service.resolve(self._ctx, self._project, graph_uuid)

    def _edge(self, graph_uuid: str, read: Callable[[Graph], Edge]) -> wire.EdgeWire:
        graph = self._graph(graph_uuid)
        return wire.edge(node_service.edge_views(self._ctx, [read(graph)])[0], graph)

    def _node(self, graph_uuid: str, read: Callable[[Graph], Node]) -> wire.NodeWire:
        graph = self._graph(graph_uuid)
        return wire.node(node_service.views(self._ctx, [read(graph)])[0], graph)


class EdgeClient(GraphPart):
    def add(
        self, graph_uuid: str, *, edges: Sequence[Any], deduplicate: bool | None = OMIT
    ) -> wire.AddEdgesResult:
        made = body(inputs.EdgesAdd, edges=list(edges), deduplicate=deduplicate)
        added, task = edge_service.add_edges(self._ctx, self._project, graph_uuid, made)
        return wire.AddEdgesResult(
            edges=[wire.added_edge(e, s, t) for e, s, t in added], task=wire.task(task)
        )

    def list(
        self,
        graph_uuid: str,
        **args: Unpack[FilteredListArgs],
    ) -> Pager[wire.EdgeWire]:
        def read(request: Any) -> Any:
            where = _filtered(args.get("filters")).predicate("list:edges")
            graph = self._graph(graph_uuid)
            found = edge_service.list_edges(self._ctx, self._project, graph.uuid, request, where)
            return found, [
                wire.edge(v, graph) for v in node_service.edge_views(self._ctx, found.items)
            ]

        return listing(rules.EDGES, read, args)

    def get(self, graph_uuid: str, edge_uuid: str) -> wire.EdgeWire:
        return self._edge(
            graph_uuid, lambda g: edge_service.get_edge(self._ctx, self._project, g.uuid, edge_uuid)
        )

    def delete(self, graph_uuid: str, edge_uuid: str) -> wire.AsyncResult:
        task = edge_service.delete_edge(self._ctx, self._project, graph_uuid, edge_uuid)
        return wire.AsyncResult(task=wire.task(task))

    def update(
        self,
        graph_uuid: str,
        edge_uuid: str,
        *,
        attributes: dict[str, Any] | None = OMIT,
        fact: str | None = OMIT,
    ) -> wire.EdgeWire:
        changes = body(inputs.EdgeUpdate, attributes=attributes, fact=fact)
        return self._edge(
            graph_uuid,
            lambda g: edge_service.update_edge(
                self._ctx, self._project, g.uuid, edge_uuid, changes
            ),
        )


class NodeClient(GraphPart):
    def add(self, graph_uuid: str, *, nodes: Sequence[Any]) -> wire.AddNodesResult:
        made = body(inputs.NodesAdd, nodes=list(nodes))
        added, task = node_service.add_nodes(self._ctx, self._project, graph_uuid, made)
        return wire.AddNodesResult(nodes=[wire.added_node(n) for n in added], task=wire.task(task))

    def list(
        self,
        graph_uuid: str,
        **args: Unpack[FilteredListArgs],
    ) -> Pager[wire.NodeWire]:
        def read(request: Any) -> Any:
            where = _filtered(args.get("filters")).predicate("list:nodes")
            graph = self._graph(graph_uuid)
            found = node_service.list_nodes(self._ctx, self._project, graph.uuid, request, where)
            degree = request.order_by == "degree"
            views = node_service.views(self._ctx, found.items, with_degree=degree)
            return found, [wire.node(v, graph) for v in views]

        return listing(rules.NODES, read, args)

    def get(self, graph_uuid: str, node_uuid: str) -> wire.NodeWire:
        return self._node(
            graph_uuid, lambda g: node_service.get_node(self._ctx, self._project, g.uuid, node_uuid)
        )

    def delete(self, graph_uuid: str, node_uuid: str) -> wire.AsyncResult:
        task = node_service.delete_node(self._ctx, self._project, graph_uuid, node_uuid)
        return wire.AsyncResult(task=wire.task(task))

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
        return self._node(
            graph_uuid,
            lambda g: node_service.update_node(
                self._ctx, self._project, g.uuid, node_uuid, changes
            ),
        )

    def list_neighbors(
        self,
        graph_uuid: str,
        node_uuid: str,
        *,
        direction: str | None = OMIT,
        **args: Unpack[FilteredListArgs],
    ) -> Pager[wire.NeighborEntry]:
        def read(request: Any) -> Any:
            filters = args.get("filters")
            asked = body(bodies.NeighborsBody, direction=direction, filters=filters)
            return answers.list_neighbors(
                self._ctx, self._project, graph_uuid, node_uuid, asked, request
            )

        return listing(rules.NEIGHBORS, read, args)


class EpisodeClient(GraphPart):
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
        episode, task = episode_service.add_episode(self._ctx, self._project, graph_uuid, made)
        graph = self._graph(episode.graph_uuid)
        return wire.AddEpisodeResult(episode=wire.episode(episode, graph), task=wire.task(task))

    def list(
        self,
        graph_uuid: str,
        **args: Unpack[FilteredListArgs],
    ) -> Pager[wire.EpisodeWire]:
        def read(request: Any) -> Any:
            asked = _filtered(args.get("filters"))
            return answers.list_episodes(self._ctx, self._project, graph_uuid, asked, request)

        return listing(rules.EPISODES, read, args)

    def get(self, graph_uuid: str, episode_uuid: str) -> wire.EpisodeWire:
        graph = self._graph(graph_uuid)
        found = episode_service.get_episode(self._ctx, self._project, graph.uuid, episode_uuid)
        return wire.episode(found, graph)

    def delete(self, graph_uuid: str, episode_uuid: str) -> wire.AsyncResult:
        task = episode_service.delete_episode(self._ctx, self._project, graph_uuid, episode_uuid)
        return wire.AsyncResult(task=wire.task(task))

    def update(
        self, graph_uuid: str, episode_uuid: str, *, metadata: dict[str, Any] | None = OMIT
    ) -> wire.EpisodeWire:
        changes = body(inputs.EpisodeUpdate, metadata=metadata)
        graph = self._graph(graph_uuid)
        found = episode_service.update_episode(
            self._ctx, self._project, graph.uuid, episode_uuid, changes
        )
        return wire.episode(found, graph)


class ObservationClient(GraphPart):
    def list(
        self,
        graph_uuid: str,
        **args: Unpack[FilteredListArgs],
    ) -> Pager[wire.ObservationWire]:
        def read(request: Any) -> Any:
            asked = _filtered(args.get("filters"))
            return answers.list_observations(self._ctx, self._project, graph_uuid, asked, request)

        return listing(rules.DERIVED, read, args)

    def get(self, graph_uuid: str, observation_uuid: str) -> wire.ObservationWire:
        return answers.get_observation(self._ctx, self._project, graph_uuid, observation_uuid)


class ThreadSummaryClient(GraphPart):
    def list(
        self,
        graph_uuid: str,
        **args: Unpack[FilteredListArgs],
    ) -> Pager[wire.ThreadSummaryWire]:
        def read(request: Any) -> Any:
            asked = _filtered(args.get("filters"))
            return answers.list_thread_summaries(
                self._ctx, self._project, graph_uuid, asked, request
            )

        return listing(rules.DERIVED, read, args)


class GraphClient(GraphPart, GraphSearch):
    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.edge = EdgeClient(session)
        self.node = NodeClient(session)
        self.episode = EpisodeClient(session)
        self.observation = ObservationClient(session)
        self.thread_summary = ThreadSummaryClient(session)

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
        return wire.graph(graph_service.create_graph(self._ctx, self._project, made))

    def list(
        self,
        *,
        search: str | None = None,
        **args: Unpack[ListArgs],
    ) -> Pager[wire.GraphWire]:
        def read(request: Any) -> Any:
            asked = body(bodies.SearchListBody, search=search).search
            found = graph_service.list_graphs(self._ctx, self._project, request, asked)
            return found, [wire.graph(g) for g in found.items]

        return listing(rules.GRAPHS, read, args)

    def lookup(
        self,
        *,
        graph_id: str | None = OMIT,
        thread_id: str | None = OMIT,
        user_id: str | None = OMIT,
    ) -> wire.GraphWire:
        ids = body(bodies.LookupBody, graph_id=graph_id, thread_id=thread_id, user_id=user_id)
        found = graph_service.lookup_graph(
            self._ctx,
            self._project,
            graph_id=ids.graph_id,
            thread_id=ids.thread_id,
            user_id=ids.user_id,
        )
        return wire.graph(found)

    def get(self, graph_uuid: str) -> wire.GraphWire:
        return wire.graph(self._graph(graph_uuid))

    def delete(self, graph_uuid: str) -> wire.AsyncResult:
        task = graph_service.delete_graph(self._ctx, self._project, graph_uuid)
        return wire.AsyncResult(task=wire.task(task))

    def update(
        self,
        graph_uuid: str,
        *,
        description: str | None = OMIT,
        name: str | None = OMIT,
        time_zone: str | None = OMIT,
    ) -> wire.GraphWire:
        changes = body(inputs.GraphUpdate, description=description, name=name, time_zone=time_zone)
        return wire.graph(graph_service.update_graph(self._ctx, self._project, graph_uuid, changes))

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
            GraphContextBody,
            query=query,
            filters=filters,
            include_results=include_results,
            max_characters=max_characters,
            recency_bias=recency_bias,
            template_uuid=template_uuid,
        )
        return answers.get_graph_context(self._ctx, self._project, graph_uuid, asked)

    def get_ontology(self, graph_uuid: str) -> Any:
        return ontology_service.get_graph_ontology(self._ctx, self._project, graph_uuid)

    def set_ontology(self, graph_uuid: str, **fields: Any) -> Any:
        asked = body(OntologyIn, **fields)
        return ontology_service.set_graph_ontology(self._ctx, self._project, graph_uuid, asked)

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
        return answers.subgraph(self._ctx, self._project, graph_uuid, asked)

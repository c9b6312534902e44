"""``graph.query`` in its fast mode, without a model: a read-only retrieval loop of at
most three rounds over each graph asked, on the search core (``services.graph.search``).

Zep's fast mode lets a decision model pick the searches of each round. Offline there is
no model, so the rounds are fixed: (1) the question against the graph's facts, entities
and episodes; (2) facts around the entities round 1 found (the edge search again, with
those entities as the origins of its graph-distance leg); (3) the episodes the facts
found so far were extracted from. Records are returned once each, in the order the
rounds first found them, at most ``MAX_RECORDS`` (``truncated`` says when more were
found). An answer (``generate_answer``), the deep mode, ``guidance`` for the model and
the event stream need a model: each is a 400 ``not_implemented`` naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from graphrecall.domain.errors import BadRequest, NotImplementedYet
from graphrecall.domain.models import Edge, Episode, Graph, Node, Project
from graphrecall.services.container import Services
from graphrecall.services.graph import graphs, search

MAX_GRAPHS = 10
MAX_RECORDS = 300  # as Zep's response holds at most
PER_SEARCH = 10  # results taken from each search of a round
MODES = ("fast", "deep")


@dataclass
class QueryResult:
    """The records found, each with its graph, in the order first found."""

    edges: list[tuple[Graph, Edge]] = field(default_factory=list)
    nodes: list[tuple[Graph, Node]] = field(default_factory=list)
    episodes: list[tuple[Graph, Episode]] = field(default_factory=list)
    truncated: bool = False


def check_request(
    *, mode: str | None, generate_answer: bool, guidance: str | None, stream: bool
) -> None:
    if mode is not None and mode not in MODES:
        raise BadRequest("mode must be fast or deep", param="mode")
    if mode == "deep":
        raise NotImplementedYet("the deep mode plans its searches with a model", param="mode")
    if generate_answer:
        raise NotImplementedYet("an answer is written by a model", param="generate_answer")
    if guidance:
        raise NotImplementedYet("guidance steers a model's choice of searches", param="guidance")
    if stream:
        raise NotImplementedYet("the event stream is not built", param="stream")


def query_graphs(
    ctx: Services, project: Project, graph_uuids: Sequence[str], query: str
) -> QueryResult:
    if not graph_uuids or len(graph_uuids) > MAX_GRAPHS:
        raise BadRequest(f"give 1 to {MAX_GRAPHS} graph uuids", param="graph_uuids")
    if not query.strip():
        raise BadRequest("query must not be empty", param="query")
    asked: dict[str, Graph] = {}
    for i, uuid in enumerate(graph_uuids):
        graph = graphs.resolve(ctx, project, uuid, param=f"graph_uuids[{i}]")
        asked.setdefault(graph.uuid, graph)
    found: list[tuple[str, Graph, Any]] = []
    seen: set[str] = set()

    def take(kind: str, graph: Graph, records: Sequence[Any]) -> None:
        for record in records:
            if record.uuid not in seen:
                seen.add(record.uuid)
                found.append((kind, graph, record))

    def ranked(graph: Graph, scope: str, params: search.SearchParams) -> list[Any]:
        _, hits, _ = search.search(
            ctx, project, graph.uuid, scope, params, page_size=PER_SEARCH, cursor=None
        )
        return [record for record, _ in hits]

    for graph in asked.values():
        question = search.SearchParams(query=query)
        for scope in ("edges", "nodes", "episodes"):  # round 1
            take(scope, graph, ranked(graph, scope, question))
        mine = [r for _, g, r in found if g is graph]
        origins: list[str] = []
        for record in mine:
            ends = [record.uuid] if isinstance(record, Node) else []
            if isinstance(record, Edge):
                ends = [record.source_node_uuid, record.target_node_uuid]
            origins += [u for u in ends if u not in origins]
        if origins:  # round 2
            around = search.SearchParams(
                query=query, bfs_origin_node_uuids=tuple(origins[: search.MAX_BFS_ORIGINS])
            )
            take("edges", graph, ranked(graph, "edges", around))
        facts = [r.uuid for _, g, r in found if g is graph and isinstance(r, Edge)]
        sources = ctx.store.episodes_of(Edge, graph.uuid, facts)  # round 3
        episode_uuids = list(
            dict.fromkeys(u for f in facts for u in sources.get(f, ([], False))[0])
        )
        if episode_uuids:
            by_uuid = search.hydrate(ctx, Episode, graph.uuid, episode_uuids)
            take("episodes", graph, [by_uuid[u] for u in episode_uuids if u in by_uuid])

    result = QueryResult(truncated=len(found) > MAX_RECORDS)
    for kind, graph, record in found[:MAX_RECORDS]:
        getattr(result, kind).append((graph, record))
    return result

"""Search through the real SDK: five scopes, five rerankers, the filter language, stable
pagination, and lexical-only operation without an embedder."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from zep_cloud import EdgeInput, EdgeNodeRef, NodeInput, Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.conftest import wait_for_task
from tests.inprocess import InProcess

UNKNOWN = "0190f0f0-0000-7000-8000-000000000000"


@dataclass
class World:
    graph: str
    nodes: dict[str, str]  # name -> uuid
    edges: dict[str, str]  # fact -> uuid
    episodes: dict[str, str]  # content -> uuid


FACTS = [
    # (source, fact_name, target, fact, attributes, valid_at)
    (
        "Alice",
        "WORKS_AT",
        "Acme",
        "Alice works at Acme as a senior engineer",
        {"level": 5, "department": "Engineering"},
        "2021-03-01T00:00:00Z",
    ),
    (
        "Alice",
        "LIVES_IN",
        "Berlin",
        "Alice lives in Berlin",
        {"since": 2019},
        "2019-06-01T00:00:00Z",
    ),
    ("Alice", "LIKES", "Green tea", "Alice likes green tea in the morning", {}, None),
    (
        "Bob",
        "WORKS_AT",
        "Globex",
        "Bob works at Globex in sales",
        {"level": 2, "department": "Sales"},
        "2022-01-15T00:00:00Z",
    ),
    ("Bob", "FRIEND_OF", "Alice", "Bob is a close friend of Alice", {}, None),
    ("Bob", "LIKES", "Coffee", "Bob drinks black coffee every day", {"cups": 3}, None),
    (
        "Carol",
        "MANAGES",
        "Bob",
        "Carol manages Bob at Globex",
        {"level": 7},
        "2023-05-01T00:00:00Z",
    ),
    ("Carol", "LIVES_IN", "Paris", "Carol moved to Paris last spring", {}, "2024-04-01T00:00:00Z"),
    ("Dave", "OWNS", "Bicycle", "Dave owns a red racing bicycle", {"tags": "red"}, None),
    ("Acme", "LOCATED_IN", "Berlin", "Acme has its headquarters in Berlin", {}, None),
]
LABELS = {
    "Alice": "Person",
    "Bob": "Person",
    "Carol": "Person",
    "Dave": "Person",
    "Acme": "Organization",
    "Globex": "Organization",
    "Berlin": "Location",
    "Paris": "Location",
    "Green tea": "Food",
    "Coffee": "Food",
    "Bicycle": "Product",
}
EPISODES = [
    ("Alice told me she is a senior engineer at Acme.", {"source": "chat", "topic": ["work"]}),
    ("Bob said he drinks far too much coffee.", {"source": "email", "topic": ["food", "health"]}),
    ("Carol mentioned moving to Paris.", {"source": "chat", "priority": 3}),
    ("Dave showed off his new bicycle at the park.", {"source": "sms"}),
]


@pytest.fixture(scope="module")
def world(zep: Zep) -> World:
    graph = zep.graph.create(name="search-world").uuid_
    added_nodes = zep.graph.node.add(
        graph,
        nodes=[
            NodeInput(name=name, label=label, summary=f"{name} is a {label.lower()}.")
            for name, label in LABELS.items()
        ],
    )
    nodes = {n.name: n.uuid_ for n in added_nodes.nodes}
    added = zep.graph.edge.add(
        graph,
        edges=[
            EdgeInput(
                fact=fact,
                fact_name=name,
                source_node=EdgeNodeRef(uuid_=nodes[src]),
                target_node=EdgeNodeRef(uuid_=nodes[dst]),
                attributes=attrs or None,
                valid_at=valid,
            )
            for src, name, dst, fact, attrs, valid in FACTS
        ],
    )
    edges = {e.fact: e.uuid_ for e in added.edges}
    episodes = {}
    for content, metadata in EPISODES:
        result = zep.graph.episode.add(graph, data=content, metadata=metadata)
        episodes[content] = result.episode.uuid_
        wait_for_task(zep, result.task.uuid_)
    wait_for_task(zep, added_nodes.task.uuid_)
    wait_for_task(zep, added.task.uuid_)
    return World(graph, nodes, edges, episodes)


@pytest.fixture(scope="module")
def linked(server: InProcess, world: World) -> World:
    """Provenance links (extraction would write them; here the store writes them)."""
    from graphrecall.domain.models import Edge, Node
    from graphrecall.store import open_store

    store = open_store(server.db)
    ep = world.episodes
    alice_ep = ep["Alice told me she is a senior engineer at Acme."]
    bob_ep = ep["Bob said he drinks far too much coffee."]
    store.link_episodes(
        Edge, world.graph, world.edges["Alice works at Acme as a senior engineer"], [alice_ep]
    )
    store.link_episodes(
        Edge, world.graph, world.edges["Bob drinks black coffee every day"], [bob_ep, alice_ep]
    )
    store.link_episodes(Edge, world.graph, world.edges["Bob works at Globex in sales"], [bob_ep])
    store.link_episodes(Node, world.graph, world.nodes["Alice"], [alice_ep])
    store.link_episodes(Node, world.graph, world.nodes["Bob"], [bob_ep])
    store.close()
    return world


def facts(items: Any) -> list[str]:
    return [e.fact for e in items]


# -- scopes ----------------------------------------------------------------------------


def test_edges_hybrid_finds_the_fact_and_scores_every_item(zep: Zep, world: World) -> None:
    page = zep.graph.search_edges(world.graph, query="Where does Alice work?", page_size=5)
    items = page.items or []
    assert items and items[0].fact == "Alice works at Acme as a senior engineer"
    assert all(isinstance(e.score, float) and e.score > 0 for e in items)
    assert [e.score for e in items] == sorted((e.score for e in items), reverse=True)
    assert items[0].source_node_name == "Alice" and items[0].target_node_name == "Acme"
    assert all(e.relevance is None for e in items)


def test_a_search_response_is_the_wire_page_without_null_fields(
    server: InProcess, world: World
) -> None:
    """Search responses are written by the handler itself (common.serialized): the same
    JSON the route's response model gives, None fields left out, as Zep's API does."""
    with server.http("/api/v4") as http:
        response = http.post(
            f"/graphs/{world.graph}/search/edges",
            params={"page_size": 2},
            json={"query": "Where does Alice work?"},
            headers={"Authorization": f"Api-Key {server.api_key}"},
        )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"items", "next_cursor"} and len(body["items"]) == 2
    assert body["items"][0]["fact"] == "Alice works at Acme as a senior engineer"

    def nulls(value: Any) -> int:
        if isinstance(value, dict):
            return sum((v is None) + nulls(v) for v in value.values())
        if isinstance(value, list):
            return sum(nulls(v) for v in value)
        return 0

    assert nulls(body) == 0 and "relevance" not in body["items"][0]
    assert {"uuid", "fact", "name", "score", "source_node_uuid", "episode_uuids"} <= set(
        body["items"][0]
    )


def test_semantic_match_without_shared_words(zep: Zep, world: World) -> None:
    items = zep.graph.search_edges(world.graph, query="espresso drinker", page_size=3).items
    assert "Bob drinks black coffee every day" in facts(items or [])


def test_nodes_episodes_scopes(zep: Zep, world: World) -> None:
    nodes = zep.graph.search_nodes(world.graph, query="Globex", page_size=3).items or []
    assert nodes[0].name == "Globex" and nodes[0].score is not None
    assert nodes[0].episode_uuids is not None and nodes[0].episode_uuids_truncated is False
    episodes = zep.graph.search_episodes(world.graph, query="bicycle park", page_size=2).items
    assert episodes and episodes[0].content == "Dave showed off his new bicycle at the park."


def test_observations_and_thread_summaries_search_empty_graph_data(zep: Zep, world: World) -> None:
    assert zep.graph.search_observations(world.graph, query="anything").items == []
    assert zep.graph.search_thread_summaries(world.graph, query="anything").items == []


# -- rerankers -------------------------------------------------------------------------


def test_mmr_reorders_and_requires_lambda(zep: Zep, world: World) -> None:
    rrf = facts(zep.graph.search_edges(world.graph, query="Alice", page_size=50).items or [])
    mmr = (
        zep.graph.search_edges(
            world.graph, query="Alice", reranker="mmr", mmr_lambda=0.3, page_size=50
        ).items
        or []
    )
    assert sorted(facts(mmr)) == sorted(rrf)  # never drops results
    assert all(e.score is not None for e in mmr)
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_edges(world.graph, query="Alice", reranker="mmr")
    assert info.value.body.error.param == "mmr_lambda"


def test_cross_encoder_adds_relevance_in_unit_interval(zep: Zep, world: World) -> None:
    items = (
        zep.graph.search_edges(
            world.graph, query="Who drinks coffee?", reranker="cross_encoder", page_size=5
        ).items
        or []
    )
    assert items[0].fact == "Bob drinks black coffee every day"
    rel = [e.relevance for e in items]
    assert all(r is not None and 0.0 <= r <= 1.0 for r in rel)
    assert rel == sorted(rel, reverse=True)  # monotone with the order
    low = zep.graph.search_edges(
        world.graph,
        query="Who drinks coffee?",
        reranker="cross_encoder",
        filter_low_quality_results=True,
    )
    assert 5 <= len(low.items or []) <= len(items) + 100
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_episodes(
            world.graph, query="x", reranker="cross_encoder", filter_low_quality_results=True
        )
    assert info.value.body.error.param == "filter_low_quality_results"
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_edges(world.graph, query="x", filter_low_quality_results=True)
    assert info.value.body.error.param == "filter_low_quality_results"


def test_filter_low_quality_cuts_the_tail_on_edges_and_nodes(zep: Zep, world: World) -> None:
    """The same ranking, cut at the knee of its relevance curve: a prefix of the
    unfiltered list, at least 5 long, keeping every result scored 0.9 or more."""
    from graphrecall.retrieval import quality

    searches: list[tuple[Callable[..., Any], str]] = [
        (zep.graph.search_edges, "Who drinks coffee?"),
        (zep.graph.search_nodes, "Globex"),
    ]
    cut = []
    for search, query in searches:
        every = search(world.graph, query=query, reranker="cross_encoder", page_size=50).items
        kept = search(
            world.graph,
            query=query,
            reranker="cross_encoder",
            filter_low_quality_results=True,
            page_size=50,
        ).items
        assert every and kept
        relevance = [float(i.relevance or 0.0) for i in every]
        assert [i.uuid_ for i in kept] == [i.uuid_ for i in every[: len(kept)]]
        assert len(kept) == quality.kept(relevance) >= min(5, len(every))
        assert all(r < 0.9 for r in relevance[len(kept) :])
        cut.append(len(every) - len(kept))
    assert cut[0] > 0  # one fact stands out: the tail of the others goes


def test_node_distance_uses_true_shortest_paths(zep: Zep, world: World) -> None:
    # Dave is isolated; Carol -> Bob -> Alice -> Acme: hops from Carol differ by fact.
    items = (
        zep.graph.search_edges(
            world.graph,
            query="works lives likes manages",
            reranker="node_distance",
            center_node_uuid=world.nodes["Carol"],
            page_size=50,
        ).items
        or []
    )
    by_fact = {e.fact: e.score for e in items}
    assert by_fact["Carol manages Bob at Globex"] == pytest.approx(1.0)  # 0 hops
    assert by_fact["Bob is a close friend of Alice"] == pytest.approx(0.5)  # Bob at 1 hop
    assert by_fact["Alice lives in Berlin"] == pytest.approx(1 / 3)  # Alice at 2 hops
    scores = [e.score for e in items]
    assert scores == sorted(scores, reverse=True)
    nodes = (
        zep.graph.search_nodes(
            world.graph,
            query="Berlin Acme Alice",
            reranker="node_distance",
            center_node_uuid=world.nodes["Acme"],
        ).items
        or []
    )
    assert nodes[0].name == "Acme"
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_edges(world.graph, query="x", reranker="node_distance")
    assert info.value.body.error.param == "center_node_uuid"
    with pytest.raises(NotFoundError):
        zep.graph.search_edges(
            world.graph, query="x", reranker="node_distance", center_node_uuid=UNKNOWN
        )


def test_episode_mentions(zep: Zep, linked: World) -> None:
    alice_ep = linked.episodes["Alice told me she is a senior engineer at Acme."]
    bob_ep = linked.episodes["Bob said he drinks far too much coffee."]
    items = (
        zep.graph.search_edges(
            linked.graph,
            query="work coffee",
            reranker="episode_mentions",
            filters={"episode_uuids": [alice_ep, bob_ep]},
        ).items
        or []
    )
    assert items[0].fact == "Bob drinks black coffee every day" and items[0].score == 2.0
    assert {e.fact for e in items} <= {
        "Bob drinks black coffee every day",
        "Alice works at Acme as a senior engineer",
        "Bob works at Globex in sales",
        # what extraction read from the two episodes themselves
        "Alice is a senior engineer at Acme",
        "Bob drinks far too much coffee",
    }
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_edges(linked.graph, query="x", reranker="episode_mentions")
    assert info.value.body.error.param == "filters.episode_uuids"
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_nodes(
            linked.graph,
            query="x",
            reranker="episode_mentions",
            filters={"episode_uuids": [alice_ep]},
        )
    assert info.value.body.error.param == "reranker"


@pytest.mark.parametrize("scope", ["episodes", "observations", "thread_summaries"])
def test_graph_rerankers_rejected_on_other_scopes(zep: Zep, world: World, scope: str) -> None:
    method: Callable[..., Any] = getattr(zep.graph, f"search_{scope}")
    with pytest.raises(BadRequestError) as info:
        method(world.graph, query="x", reranker="node_distance", center_node_uuid=UNKNOWN)
    assert info.value.body.error.param == "reranker"


def test_bfs_leg_biases_toward_origin(zep: Zep, world: World) -> None:
    items = (
        zep.graph.search_edges(
            world.graph, query="bicycle", bfs_origin_node_uuids=[world.nodes["Carol"]]
        ).items
        or []
    )
    found = facts(items)
    assert "Carol manages Bob at Globex" in found  # reached only through the graph leg
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_edges(world.graph, query="x", bfs_origin_node_uuids=[UNKNOWN] * 6)
    assert info.value.body.error.param == "bfs_origin_node_uuids"


# -- filters ---------------------------------------------------------------------------


def edge_facts(
    zep: Zep, world: World, filters: dict[str, Any], query: str = "Alice Bob Carol Dave"
) -> set[str]:
    return set(facts(zep.graph.search_edges(world.graph, query=query, filters=filters).items or []))


def test_type_and_label_filters(zep: Zep, world: World) -> None:
    assert edge_facts(zep, world, {"edge_types": ["WORKS_AT"]}) == {
        "Alice works at Acme as a senior engineer",
        "Bob works at Globex in sales",
    }
    excluded = edge_facts(zep, world, {"exclude_edge_types": ["WORKS_AT", "LIKES"]})
    assert excluded and not any("works at" in f or "likes" in f for f in excluded)
    people_only = edge_facts(zep, world, {"node_labels": ["Person"]})
    assert people_only == {"Bob is a close friend of Alice", "Carol manages Bob at Globex"}
    no_food = edge_facts(zep, world, {"exclude_node_labels": ["Food"]})
    assert "Alice likes green tea in the morning" not in no_food and no_food
    nodes = (
        zep.graph.search_nodes(
            world.graph, query="Alice Acme Berlin", filters={"node_labels": ["Location"]}
        ).items
        or []
    )
    assert nodes[0].name == "Berlin" and {n.name for n in nodes} <= {"Berlin", "Paris"}
    nodes = (
        zep.graph.search_nodes(
            world.graph, query="Alice Acme Berlin", filters={"exclude_node_labels": ["Person"]}
        ).items
        or []
    )
    assert "Alice" not in {n.name for n in nodes}


def test_node_anchor_filters(zep: Zep, world: World) -> None:
    n = world.nodes
    assert edge_facts(
        zep, world, {"source_node_uuids": [n["Bob"]], "target_node_uuids": [n["Alice"]]}
    ) == {"Bob is a close friend of Alice"}
    connected = edge_facts(zep, world, {"connected_node_uuids": [n["Berlin"]]}, query="Berlin")
    assert connected == {"Alice lives in Berlin", "Acme has its headquarters in Berlin"}
    assert edge_facts(zep, world, {"source_node_uuids": [UNKNOWN]}) == set()
    uuid = world.edges["Dave owns a red racing bicycle"]
    assert edge_facts(zep, world, {"edge_uuids": [uuid]}, query="Dave") == {
        "Dave owns a red racing bicycle"
    }
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_nodes(world.graph, query="x", filters={"source_node_uuids": [UNKNOWN]})
    assert info.value.body.error.code == "unsupported_filter"
    assert info.value.body.error.param == "filters.source_node_uuids"
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_edges(world.graph, query="x", filters={"edge_uuids": ["nope"]})
    assert info.value.body.error.param == "filters.edge_uuids[0]"
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_edges(
            world.graph, query="x", filters={"connected_node_uuids": [UNKNOWN] * 257}
        )
    assert info.value.body.error.param == "filters.connected_node_uuids"


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        ("eq", "Engineering", {"Alice works at Acme as a senior engineer"}),
        ("ne", "Engineering", None),  # everything else
        ("gt", 4, {"Alice works at Acme as a senior engineer", "Carol manages Bob at Globex"}),
        ("gte", 5, {"Alice works at Acme as a senior engineer", "Carol manages Bob at Globex"}),
        ("lt", 5, {"Bob works at Globex in sales"}),
        ("lte", 2, {"Bob works at Globex in sales"}),
        ("in", ["Sales", "Marketing"], {"Bob works at Globex in sales"}),
        ("is_null", None, None),
        (
            "is_not_null",
            None,
            {"Alice works at Acme as a senior engineer", "Bob works at Globex in sales"},
        ),
    ],
)
def test_property_filter_operators(
    zep: Zep, world: World, operator: str, value: Any, expected: set[str] | None
) -> None:
    name = "level" if isinstance(value, int) else "department"
    pf: dict[str, Any] = {"property_name": name, "operator": operator}
    if value is not None:
        pf["value"] = value
    got = edge_facts(
        zep, world, {"property_filters": [pf]}, query="Alice Bob Carol Dave Acme Berlin works lives"
    )
    if expected is None:
        assert got and "Alice works at Acme as a senior engineer" not in got
    else:
        assert got == expected


def test_property_filter_validation(zep: Zep, world: World) -> None:
    bad: list[tuple[dict[str, Any], str]] = [
        (
            {"property_name": "x", "operator": "contains", "value": "a"},
            "filters.property_filters[0].operator",
        ),
        ({"property_name": "x", "operator": "eq"}, "filters.property_filters[0].value"),
        (
            {"property_name": "x", "operator": "is_null", "value": 1},
            "filters.property_filters[0].value",
        ),
        (
            {"property_name": "x", "operator": "in", "value": "a"},
            "filters.property_filters[0].value",
        ),
        (
            {"property_name": "x", "operator": "in", "value": ["a,b"]},
            "filters.property_filters[0].value[0]",
        ),
        (
            {"property_name": "x", "operator": "in", "value": [" a"]},
            "filters.property_filters[0].value[0]",
        ),
    ]
    for pf, param in bad:
        with pytest.raises(BadRequestError) as info:
            zep.graph.search_edges(world.graph, query="x", filters={"property_filters": [pf]})
        assert info.value.body.error.param == param, pf


def test_date_filters_or_of_and_groups(zep: Zep, world: World) -> None:
    after_2022 = {"field": "valid_at", "operator": "gte", "value": "2022-01-01T00:00:00Z"}
    before_2024 = {"field": "valid_at", "operator": "lt", "value": "2024-01-01T00:00:00Z"}
    before_2020 = {"field": "valid_at", "operator": "lt", "value": "2020-01-01T00:00:00Z"}
    got = edge_facts(
        zep,
        world,
        {
            "date_filters": {
                "any_of": [{"all_of": [after_2022, before_2024]}, {"all_of": [before_2020]}]
            }
        },
        query="Alice Bob Carol works lives manages",
    )
    # Both groups apply (Graphiti lets the second overwrite the first).
    assert got == {
        "Bob works at Globex in sales",
        "Carol manages Bob at Globex",
        "Alice lives in Berlin",
    }
    no_valid = edge_facts(
        zep,
        world,
        {"date_filters": {"any_of": [{"all_of": [{"field": "valid_at", "operator": "is_null"}]}]}},
        query="Dave bicycle",
    )
    assert no_valid == {fact for _, _, _, fact, _, valid in FACTS if valid is None}
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_edges(
            world.graph,
            query="x",
            filters={
                "date_filters": {
                    "any_of": [
                        {"all_of": [{"field": "valid_at", "operator": "gt", "value": "soon"}]}
                    ]
                }
            },
        )
    assert info.value.body.error.param == "filters.date_filters.any_of[0].all_of[0].value"
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_nodes(
            world.graph,
            query="x",
            filters={
                "date_filters": {
                    "any_of": [{"all_of": [{"field": "valid_at", "operator": "is_null"}]}]
                }
            },
        )
    assert info.value.body.error.param == "filters.date_filters"


def meta(op: str, name: str, value: Any = None) -> dict[str, Any]:
    leaf: dict[str, Any] = {"property_name": name, "operator": op}
    if value is not None:
        leaf["value"] = value
    return leaf


def episode_hits(zep: Zep, world: World, group: dict[str, Any]) -> set[str]:
    items = (
        zep.graph.search_episodes(
            world.graph, query="Alice Bob Carol Dave", filters={"metadata_filters": group}
        ).items
        or []
    )
    return {e.content[:5] for e in items}


def test_metadata_filters_on_episodes(zep: Zep, world: World) -> None:
    assert episode_hits(zep, world, {"type": "and", "filters": [meta("eq", "source", "chat")]}) == {
        "Alice",
        "Carol",
    }
    # arrays match element-wise
    assert episode_hits(zep, world, {"filters": [meta("eq", "topic", "health")]}) == {"Bob s"}
    assert episode_hits(zep, world, {"filters": [meta("contains", "topic", "ealt")]}) == {"Bob s"}
    assert episode_hits(zep, world, {"filters": [meta("contains", "source", "CHAT")]}) == set()
    assert episode_hits(zep, world, {"filters": [meta("in", "source", ["sms", "email"])]}) == {
        "Bob s",
        "Dave ",
    }
    assert episode_hits(zep, world, {"filters": [meta("gte", "priority", 3)]}) == {"Carol"}
    assert episode_hits(zep, world, {"filters": [meta("is_null", "priority")]}) == {
        "Alice",
        "Bob s",
        "Dave ",
    }
    assert episode_hits(zep, world, {"filters": [meta("ne", "source", "chat")]}) == {
        "Bob s",
        "Dave ",
    }
    nested = {
        "type": "and",
        "filters": [meta("eq", "source", "chat")],
        "groups": [
            {"type": "or", "filters": [meta("gte", "priority", 3), meta("eq", "topic", "work")]}
        ],
    }
    assert episode_hits(zep, world, nested) == {"Alice", "Carol"}


def test_metadata_filters_project_onto_edges_and_nodes(zep: Zep, linked: World) -> None:
    group = {"filters": [meta("eq", "source", "email")]}
    got = edge_facts(zep, linked, {"metadata_filters": group}, query="coffee Globex work")
    # the two linked to the email episode, and the one extraction read from it
    assert got == {
        "Bob drinks black coffee every day",
        "Bob works at Globex in sales",
        "Bob drinks far too much coffee",
    }
    nodes = (
        zep.graph.search_nodes(
            linked.graph, query="Alice Bob", filters={"metadata_filters": group}
        ).items
        or []
    )
    assert {n.name for n in nodes} == {"Bob", "Coffee"}  # Coffee: extracted from it


def test_metadata_filter_limits(zep: Zep, world: World) -> None:
    eleven = {"filters": [meta("eq", f"k{i}", "v") for i in range(11)]}
    deep = {"groups": [{"groups": [{"groups": [{"filters": [meta("eq", "a", "b")]}]}]}]}
    wide = {"groups": [{"filters": [meta("eq", "a", "b")]} for _ in range(6)]}
    for group in (eleven, deep, wide):
        with pytest.raises(BadRequestError):
            episode_hits(zep, world, group)
    with pytest.raises(BadRequestError) as info:
        episode_hits(zep, world, {"filters": [meta("in", "a", [str(i) for i in range(101)])]})
    assert info.value.body.error.param == "filters.metadata_filters.filters[0].value"
    with pytest.raises(BadRequestError) as info:
        episode_hits(zep, world, {"filters": [meta("contains", "a", "")]})
    assert info.value.body.error.param == "filters.metadata_filters.filters[0].value"


def test_scope_filter_rules(zep: Zep, world: World) -> None:
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_observations(world.graph, query="x", filters={"node_labels": ["A"]})
    assert info.value.body.error.code == "unsupported_filter"
    for scope in ("episodes", "thread_summaries"):
        with pytest.raises(BadRequestError) as info:
            getattr(zep.graph, f"search_{scope}")(
                world.graph, query="x", filters={"episode_uuids": [UNKNOWN]}
            )
        assert info.value.body.error.param == "filters.episode_uuids"
    with pytest.raises(BadRequestError) as info:
        zep.graph.search_edges(world.graph, query="x", filters={"no_such_filter": 1})
    assert info.value.body.error.param == "filters.no_such_filter"


# -- pagination and the lexical-only fallback ------------------------------------------


def test_pages_concatenate_to_the_single_ranked_list(zep: Zep) -> None:
    graph = zep.graph.create(name="paged-search").uuid_
    added = zep.graph.edge.add(
        graph,
        edges=[
            EdgeInput(
                fact=f"Person {i} enjoys hiking trip number {i}",
                fact_name="ENJOYS",
                source_node=EdgeNodeRef(name=f"Person {i}"),
                target_node=EdgeNodeRef(name="Hiking"),
            )
            for i in range(60)
        ],
    )
    added2 = zep.graph.edge.add(
        graph,
        edges=[
            EdgeInput(
                fact=f"Walker {i} enjoys hiking in the Alps, outing {i}",
                fact_name="ENJOYS",
                source_node=EdgeNodeRef(name=f"Walker {i}"),
                target_node=EdgeNodeRef(name="Hiking"),
            )
            for i in range(60)
        ],
    )
    wait_for_task(zep, added.task.uuid_)
    wait_for_task(zep, added2.task.uuid_)
    single = zep.graph.search_edges(graph, query="hiking", page_size=50)
    all_items = list(zep.graph.search_edges(graph, query="hiking", page_size=7))
    uuids = [e.uuid_ for e in all_items]
    assert len(uuids) == len(set(uuids)) == 100  # the ranked set is the top 100
    assert uuids[:50] == [e.uuid_ for e in single.items or []]
    with pytest.raises(BadRequestError) as info:  # page size cap is 50 for search
        zep.graph.search_edges(graph, query="hiking", page_size=51)
    assert info.value.body.error.param == "page_size"
    cursor = zep.graph.search_edges(graph, query="hiking", page_size=10).response.next_cursor
    assert cursor
    token, offset, sig = cursor.split(".")
    for bad in (f"{token}.{int(offset) + 1}.{sig}", "garbage", f"{token}.{offset}.AAAA"):
        with pytest.raises(BadRequestError) as info:
            zep.graph.search_edges(graph, query="hiking", page_size=10, cursor=bad)
        assert info.value.body.error.param == "cursor"
    with pytest.raises(BadRequestError):  # a cursor belongs to its own request
        zep.graph.search_edges(graph, query="walking", page_size=10, cursor=cursor)


def test_a_calendar_phrase_ranks_that_periods_episodes_first(zep: Zep) -> None:
    """The time leg through the SDK: the query names a day, and the message of that day
    outranks better word matches of other days; without the phrase they come first."""
    graph = zep.graph.create(name="dated-search").uuid_
    texts = {
        "2023-06-19T10:00:00Z": "Erin baked bread, bread and more bread for the bread sale.",
        "2023-07-19T10:00:00Z": "Erin baked banana bread for the neighbours.",
        "2023-08-19T18:00:00Z": "Baked a little rye bread with some seeds on top today.",
    }
    uuids = {}
    for when, text in texts.items():
        added = zep.graph.episode.add(graph, data=text, type="text", reference_time=when)
        uuids[when] = added.episode.uuid_
        wait_for_task(zep, added.task.uuid_)
    plain = zep.graph.search_episodes(graph, query="What bread did Erin bake?")
    assert plain.items and plain.items[0].uuid_ != uuids["2023-08-19T18:00:00Z"]
    dated = zep.graph.search_episodes(graph, query="What bread did Erin bake on 19 August, 2023?")
    ranked = [e.uuid_ for e in dated.items or []]
    assert ranked[0] == uuids["2023-08-19T18:00:00Z"]
    assert sorted(ranked) == sorted(uuids.values())  # reordered, nothing dropped
    # Pages read the ranked list stored with the first page.
    first = zep.graph.search_episodes(
        graph, query="What bread did Erin bake on 19 August, 2023?", page_size=1
    )
    assert first.response.next_cursor
    rest = zep.graph.search_episodes(
        graph,
        query="What bread did Erin bake on 19 August, 2023?",
        page_size=10,
        cursor=first.response.next_cursor,
    )
    assert [e.uuid_ for e in [*(first.items or []), *(rest.items or [])]] == ranked


def test_lexical_only_without_embedder(make_app: Callable[..., InProcess]) -> None:
    server = make_app(env={"GRAPHRECALL_EMBEDDER": "none"})
    zep = server.client()
    graph = zep.graph.create(name="no-embedder").uuid_
    added = zep.graph.edge.add(
        graph,
        edges=[
            EdgeInput(
                fact="Erin plays the cello",
                fact_name="PLAYS",
                source_node=EdgeNodeRef(name="Erin"),
                target_node=EdgeNodeRef(name="Cello"),
            ),
            EdgeInput(
                fact="Frank repairs old motorcycles",
                fact_name="REPAIRS",
                source_node=EdgeNodeRef(name="Frank"),
                target_node=EdgeNodeRef(name="Motorcycle"),
            ),
        ],
    )
    wait_for_task(zep, added.task.uuid_)
    items = zep.graph.search_edges(graph, query="who plays cello?").items or []
    assert facts(items) == ["Erin plays the cello"]
    assert zep.graph.search_edges(graph, query="musical instrument").items == []
    mmr = zep.graph.search_edges(graph, query="cello", reranker="mmr", mmr_lambda=0.5).items
    assert facts(mmr or []) == ["Erin plays the cello"]


def test_list_endpoints_take_the_filter_language(zep: Zep, linked: World) -> None:
    listed = list(zep.graph.edge.list(linked.graph, filters={"edge_types": ["LIVES_IN"]}))
    assert {e.fact for e in listed} == {"Alice lives in Berlin", "Carol moved to Paris last spring"}
    nodes = list(zep.graph.node.list(linked.graph, filters={"node_labels": ["Food"]}))
    assert {n.name for n in nodes} == {"Green tea", "Coffee"}
    episodes = list(
        zep.graph.episode.list(
            linked.graph, filters={"metadata_filters": {"filters": [meta("eq", "source", "sms")]}}
        )
    )
    assert [e.content[:4] for e in episodes] == ["Dave"]
    mentioned = list(
        zep.graph.episode.list(
            linked.graph, filters={"mentioned_node_uuids": [linked.nodes["Bob"]]}
        )
    )
    assert [e.content[:3] for e in mentioned] == ["Bob"]
    neighbors = list(
        zep.graph.node.list_neighbors(
            linked.graph, linked.nodes["Alice"], filters={"edge_types": ["FRIEND_OF"]}
        )
    )
    assert [n.node.name for n in neighbors] == ["Bob"]
    sub = zep.graph.get_subgraph(
        linked.graph, seed_node_uuids=[linked.nodes["Alice"]], filters={"edge_types": ["LIVES_IN"]}
    )
    assert {n.name for n in sub.nodes} == {"Alice", "Berlin"}
    assert json.dumps([e.fact for e in sub.edges]) == json.dumps(["Alice lives in Berlin"])

"""Graphs, episodes, nodes and edges through the SDK, with no LLM anywhere."""

from __future__ import annotations

import json

import pytest
from zep_cloud import EdgeInput, EdgeNodeRef, NodeInput, Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.conftest import wait_for_task


def test_graph_crud(zep: Zep) -> None:
    graph = zep.graph.create(name="kb", description="product knowledge")
    assert graph.type == "standard" and graph.name == "kb"
    assert zep.graph.get(graph.uuid_).description == "product knowledge"
    assert zep.graph.update(graph.uuid_, name="kb2").name == "kb2"
    assert graph.uuid_ in [g.uuid_ for g in zep.graph.list()]
    assert zep.graph.lookup(graph_id=graph.graph_id).uuid_ == graph.uuid_
    zep.graph.delete(graph.uuid_)
    with pytest.raises(NotFoundError):
        zep.graph.get(graph.uuid_)


def test_episodes_text_and_json(zep: Zep) -> None:
    graph = zep.graph.create(name="episodes")
    text = zep.graph.episode.add(
        graph.uuid_,
        data="Alice likes green tea.",
        type="text",
        source_description="chat",
        metadata={"source": "chat"},
    )
    assert text.episode.processed is False and text.episode.content == "Alice likes green tea."
    doc = {"product": "Kettle", "price": 30}
    as_json = zep.graph.episode.add(
        graph.uuid_, data=json.dumps(doc), type="json", reference_time="2024-01-02T03:04:05Z"
    )
    assert as_json.episode.source == "json"
    assert as_json.episode.reference_time == "2024-01-02T03:04:05.000000Z"
    for added in (text, as_json):
        assert wait_for_task(zep, added.task.uuid_) == "succeeded"
        assert zep.graph.episode.get(graph.uuid_, added.episode.uuid_).processed is True

    task = zep.task.get(text.task.uuid_)
    assert task.type == "graph.add" and task.completed_at

    listed = [e.uuid_ for e in zep.graph.episode.list(graph.uuid_)]
    assert listed == [as_json.episode.uuid_, text.episode.uuid_]  # uuid desc = newest first

    updated = zep.graph.episode.update(
        graph.uuid_, text.episode.uuid_, metadata={"source": None, "lang": "en"}
    )
    assert updated.metadata == {"lang": "en"}

    with pytest.raises(BadRequestError) as info:
        zep.graph.episode.add(graph.uuid_, data="{not json", type="json")
    assert info.value.body.error.param == "data"
    with pytest.raises(BadRequestError) as info:
        zep.graph.episode.add(graph.uuid_, data="x", metadata={f"k{i}": i for i in range(11)})
    assert info.value.body.error.param == "metadata"
    with pytest.raises(BadRequestError) as info:
        zep.graph.episode.add(graph.uuid_, data="x", reference_time="yesterday-ish")
    assert info.value.body.error.param == "reference_time"

    zep.graph.episode.delete(graph.uuid_, text.episode.uuid_)
    with pytest.raises(NotFoundError):
        zep.graph.episode.get(graph.uuid_, text.episode.uuid_)


def test_nodes_and_edges(zep: Zep) -> None:
    graph = zep.graph.create(name="facts")
    added = zep.graph.node.add(
        graph.uuid_,
        nodes=[
            NodeInput(name="Alice", label="Person", summary="A software engineer."),
            NodeInput(name="Acme", label="Organization", attributes={"industry": "tools"}),
        ],
    )
    alice, acme = added.nodes
    assert alice.label == "Person" and acme.attributes == {"industry": "tools"}
    wait_for_task(zep, added.task.uuid_)

    edges = zep.graph.edge.add(
        graph.uuid_,
        edges=[
            # existing node by uuid -> existing node by name (case-insensitive)
            EdgeInput(
                fact="Alice works at Acme",
                fact_name="WORKS_AT",
                source_node=EdgeNodeRef(uuid_=alice.uuid_),
                target_node=EdgeNodeRef(name="acme"),
                valid_at="2023-01-01T00:00:00Z",
            ),
            # a new node, created from its name
            EdgeInput(
                fact="Alice lives in Berlin",
                fact_name="LIVES_IN",
                source_node=EdgeNodeRef(name="Alice"),
                target_node=EdgeNodeRef(name="Berlin", labels=["Location"]),
            ),
        ],
    )
    works, lives = edges.edges
    assert works.target_node_uuid == acme.uuid_ and works.source_node_uuid == alice.uuid_
    assert lives.source_node_uuid == alice.uuid_
    assert lives.target_node is not None and lives.target_node.labels == ["Entity", "Location"]
    assert wait_for_task(zep, edges.task.uuid_) == "succeeded"

    edge = zep.graph.edge.get(graph.uuid_, works.uuid_)
    assert (edge.name, edge.fact, edge.valid_at) == (
        "WORKS_AT",
        "Alice works at Acme",
        "2023-01-01T00:00:00.000000Z",
    )
    assert (edge.source_node_name, edge.target_node_name) == ("Alice", "Acme")
    assert edge.target_node_labels == ["Entity", "Organization"]

    names = sorted(n.name for n in zep.graph.node.list(graph.uuid_))
    assert names == ["Acme", "Alice", "Berlin"]
    by_degree = list(zep.graph.node.list(graph.uuid_, order_by="degree", order="desc"))
    assert by_degree[0].name == "Alice" and by_degree[0].degree == 2

    neighbors = list(zep.graph.node.list_neighbors(graph.uuid_, alice.uuid_, direction="out"))
    assert sorted(n.node.name for n in neighbors) == ["Acme", "Berlin"]
    assert all(len(n.edges) == 1 for n in neighbors)
    assert list(zep.graph.node.list_neighbors(graph.uuid_, alice.uuid_, direction="in")) == []

    sub = zep.graph.get_subgraph(graph.uuid_, seed_node_uuids=[acme.uuid_], depth=2)
    assert sorted(n.name for n in sub.nodes) == ["Acme", "Alice", "Berlin"]
    assert len(sub.edges) == 2 and sub.truncated is False
    small = zep.graph.get_subgraph(graph.uuid_, seed_node_uuids=[acme.uuid_], depth=2, max_nodes=2)
    assert small.truncated is True and small.truncation_reason == "max_nodes"
    assert len(small.nodes) == 2

    renamed = zep.graph.node.update(graph.uuid_, acme.uuid_, name="Acme Corp", summary="Tools.")
    assert renamed.name == "Acme Corp"
    assert zep.graph.edge.get(graph.uuid_, works.uuid_).target_node_name == "Acme Corp"
    changed = zep.graph.edge.update(graph.uuid_, works.uuid_, fact="Alice worked at Acme Corp")
    assert changed.fact == "Alice worked at Acme Corp"

    dedup = zep.graph.edge.add(
        graph.uuid_,
        deduplicate=True,
        edges=[
            EdgeInput(
                fact="alice worked at acme corp",
                fact_name="WORKS_AT",
                source_node=EdgeNodeRef(uuid_=alice.uuid_),
                target_node=EdgeNodeRef(uuid_=acme.uuid_),
            )
        ],
    )
    assert dedup.edges[0].uuid_ == works.uuid_

    zep.graph.node.delete(graph.uuid_, acme.uuid_)
    with pytest.raises(NotFoundError):
        zep.graph.edge.get(graph.uuid_, works.uuid_)  # its edges went with it
    zep.graph.edge.delete(graph.uuid_, lives.uuid_)
    assert list(zep.graph.edge.list(graph.uuid_)) == []


def test_edge_validation(zep: Zep) -> None:
    graph = zep.graph.create(name="edge-validation")
    with pytest.raises(BadRequestError) as info:
        zep.graph.edge.add(
            graph.uuid_,
            edges=[
                EdgeInput(
                    fact="x",
                    fact_name="not snake",
                    source_node=EdgeNodeRef(name="a"),
                    target_node=EdgeNodeRef(name="b"),
                )
            ],
        )
    assert info.value.body.error.param == "edges[0].fact_name"
    with pytest.raises(BadRequestError) as info:
        zep.graph.edge.add(
            graph.uuid_,
            edges=[
                EdgeInput(
                    fact="x",
                    fact_name="REL",
                    source_node=EdgeNodeRef(),
                    target_node=EdgeNodeRef(name="b"),
                )
            ],
        )
    assert info.value.body.error.param == "edges[0].source_node"
    with pytest.raises(NotFoundError) as missing:
        zep.graph.edge.add(
            graph.uuid_,
            edges=[
                EdgeInput(
                    fact="x",
                    fact_name="REL",
                    source_node=EdgeNodeRef(name="a"),
                    target_node=EdgeNodeRef(uuid_="0190f0f0-0000-7000-8000-000000000000"),
                )
            ],
        )
    assert missing.value.body.error.param == "edges[0].target_node.uuid"
    # The failed call created neither edges nor the node "a".
    assert list(zep.graph.node.list(graph.uuid_)) == []
    too_many = [
        EdgeInput(
            fact=f"f{i}",
            fact_name="REL",
            source_node=EdgeNodeRef(name="a"),
            target_node=EdgeNodeRef(name="b"),
        )
        for i in range(101)
    ]
    with pytest.raises(BadRequestError) as info:
        zep.graph.edge.add(graph.uuid_, edges=too_many)
    assert info.value.body.error.param == "edges"


def test_episode_mentions_filter_and_delete_cleanup(zep: Zep) -> None:
    graph = zep.graph.create(name="mentions")
    episode = zep.graph.episode.add(graph.uuid_, data="hello")
    listed = list(
        zep.graph.episode.list(
            graph.uuid_, filters={"mentioned_node_uuids": [episode.episode.uuid_]}
        )
    )
    assert [e.uuid_ for e in listed] == [episode.episode.uuid_]  # an episode matches itself

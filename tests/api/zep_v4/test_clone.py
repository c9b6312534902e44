"""graph.clone through the SDK: a new standard graph at once, then the same records with
new uuids, their embeddings (searchable) and provenance."""

from __future__ import annotations

import pytest
from zep_cloud import AddMessage, Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.conftest import wait_for_task


def test_clone_copies_a_user_graph_into_a_new_standard_graph(zep: Zep) -> None:
    user = zep.user.create(first_name="Rosa")
    thread = zep.thread.create(user_uuid=user.uuid_)
    added = zep.thread.add_messages(
        thread.uuid_,
        messages=[
            AddMessage(role="user", name="Rosa", content="I adopted a dog called Pepper."),
            AddMessage(role="user", name="Rosa", content="I work as a nurse in Madrid."),
        ],
    )
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"

    result = zep.graph.clone(user.uuid_, request={})  # a user's uuid names its graph
    copy = result.graph
    assert copy.type == "standard" and copy.uuid_ != user.graph_uuid
    assert copy.user_uuid is None
    assert result.task.type == "graph.clone"
    assert zep.graph.get(copy.uuid_).uuid_ == copy.uuid_  # readable at once
    assert wait_for_task(zep, result.task.uuid_) == "succeeded"

    def content(graph: str) -> tuple[list[str], list[str], list[str]]:
        nodes = sorted(n.name for n in zep.graph.node.list(graph))
        edges = sorted(e.fact for e in zep.graph.edge.list(graph))
        episodes = sorted(e.content for e in zep.graph.episode.list(graph))
        return nodes, edges, episodes

    assert content(copy.uuid_) == content(user.graph_uuid)
    source_nodes = {n.uuid_ for n in zep.graph.node.list(user.graph_uuid)}
    copied_edges = list(zep.graph.edge.list(copy.uuid_))
    assert copied_edges
    copied_nodes = {n.uuid_ for n in zep.graph.node.list(copy.uuid_)}
    assert not copied_nodes & source_nodes  # new uuids
    copied_episodes = {e.uuid_ for e in zep.graph.episode.list(copy.uuid_)}
    for edge in copied_edges:  # ends and provenance point into the copy
        assert {edge.source_node_uuid, edge.target_node_uuid} <= copied_nodes
        assert edge.episode_uuids and set(edge.episode_uuids) <= copied_episodes
    # Embeddings came along: the vector leg finds facts by meaning in the copy.
    hits = zep.graph.search_edges(copy.uuid_, query="What pet does Rosa have?").items
    assert hits and "Pepper" in hits[0].fact

    # The copy is independent: deleting it leaves the source whole.
    zep.graph.delete(copy.uuid_)
    assert content(user.graph_uuid)[1]


def test_clone_errors(zep: Zep) -> None:
    with pytest.raises(NotFoundError):
        zep.graph.clone("0190e3c2-0000-7000-8000-000000000000", request={})
    with pytest.raises(BadRequestError) as info:
        zep.graph.clone("nope", request={})
    assert info.value.body.error.param == "graph_uuid"

"""Ingestion through the real SDK with the offline extractor: scripted conversations in,
a bi-temporal graph out."""

from __future__ import annotations

from typing import Any

import pytest
from zep_cloud import AddMessage, Zep

from tests.conftest import wait_for_task


def say(zep: Zep, thread: str, *lines: tuple[str, str, str]) -> list[str]:
    """Add messages (name, text, reference_time) and wait until they are processed."""
    result = zep.thread.add_messages(
        thread,
        messages=[
            AddMessage(role="user", name=name, content=text, reference_time=at)
            for name, text, at in lines
        ],
    )
    assert wait_for_task(zep, result.task.uuid_) == "succeeded"
    return [m.uuid_ for m in result.messages]


def edges(zep: Zep, graph: str) -> list[Any]:
    return list(zep.graph.edge.list(graph))


@pytest.fixture()
def alice(zep: Zep) -> tuple[str, str, str]:
    user = zep.user.create(first_name="Alice", last_name="Moreau")
    thread = zep.thread.create(user_uuid=user.uuid_)
    return user.uuid_, user.graph_uuid, thread.uuid_


def test_a_move_invalidates_the_old_home(zep: Zep, alice: tuple[str, str, str]) -> None:
    user, graph, thread = alice
    say(zep, thread, ("Alice", "I live in Boston.", "2024-01-10T09:00:00Z"))
    say(zep, thread, ("Alice", "I moved to Lisbon last Tuesday.", "2024-06-13T09:00:00Z"))
    facts = {e.name: e for e in edges(zep, graph)}
    old, new = facts["LIVES_IN"], facts["MOVES_TO"]
    assert old.target_node_name == "Boston" and new.target_node_name == "Lisbon"
    # 13 June 2024 is a Thursday: "last Tuesday" is 11 June.
    assert new.valid_at == "2024-06-11T00:00:00.000000Z"
    assert old.invalid_at == new.valid_at and old.expired_at is not None
    assert new.invalid_at is None and new.expired_at is None
    user_node = zep.user.get_node(user)
    assert old.source_node_uuid == new.source_node_uuid == user_node.uuid_


def test_a_restatement_merges_into_one_edge(zep: Zep, alice: tuple[str, str, str]) -> None:
    _, graph, thread = alice
    first = say(zep, thread, ("Alice", "I work at Acme.", "2024-02-01T09:00:00Z"))
    second = say(zep, thread, ("Alice", "As I said, I work at Acme.", "2024-02-05T09:00:00Z"))
    works = [e for e in edges(zep, graph) if e.name == "WORKS_AT"]
    assert len(works) == 1
    assert sorted(works[0].episode_uuids or []) == sorted(first + second)


def test_an_unrelated_fact_invalidates_nothing(zep: Zep, alice: tuple[str, str, str]) -> None:
    _, graph, thread = alice
    say(zep, thread, ("Alice", "I live in Boston and I work at Acme.", "2024-01-10T09:00:00Z"))
    say(zep, thread, ("Alice", "I love green tea.", "2024-01-11T09:00:00Z"))
    say(zep, thread, ("Alice", "My friend Tom moved to Paris.", "2024-01-12T09:00:00Z"))
    live = {e.name: e for e in edges(zep, graph)}
    assert {"LIVES_IN", "WORKS_AT", "LOVES", "MOVES_TO"} <= set(live)
    assert all(e.invalid_at is None and e.expired_at is None for e in live.values())
    assert live["MOVES_TO"].source_node_name == "Tom"


def test_until_ends_a_fact(zep: Zep, alice: tuple[str, str, str]) -> None:
    _, graph, thread = alice
    say(zep, thread, ("Alice", "I worked at Google until 2020.", "2024-01-10T09:00:00Z"))
    worked = next(e for e in edges(zep, graph) if e.name == "WORKS_AT")
    assert worked.invalid_at == "2020-01-01T00:00:00.000000Z" and worked.expired_at is not None


def test_summaries_observations_and_mentions(zep: Zep, alice: tuple[str, str, str]) -> None:
    user, graph, thread = alice
    first = say(
        zep,
        thread,
        ("Alice", "I love hiking in the Alps.", "2024-03-01T09:00:00Z"),
        ("Alice", "My sister Jane lives in Boston.", "2024-03-01T09:01:00Z"),
    )
    second = say(zep, thread, ("Alice", "I love hiking in the Alps.", "2024-03-08T09:00:00Z"))
    jane = next(n for n in zep.graph.node.list(graph) if n.name == "Jane")
    assert jane.summary and "Boston" in jane.summary
    assert jane.episode_uuids == [first[1]]
    me = zep.user.get_node(user)
    assert me.summary and "hiking" in me.summary

    summary = zep.thread.get_summary(thread)
    assert summary.thread_uuid == thread and summary.summary
    assert (
        "Alice" in summary.summary and "hiking" in summary.summary and "Boston" in summary.summary
    )

    observations = list(zep.graph.observation.list(graph))
    hiking = next(
        o
        for o in observations
        if (o.name or "").endswith("loves hiking in the Alps") and o.labels == ["Preference"]
    )
    assert sorted(hiking.episode_uuids or []) == sorted([first[0], second[0]])
    assert "stated 2 times" in (hiking.summary or "")
    found = zep.graph.search_observations(graph, query="what does Alice enjoy?").items or []
    assert found and found[0].uuid_ == hiking.uuid_

    mentioning = list(zep.graph.episode.list(graph, filters={"mentioned_node_uuids": [jane.uuid_]}))
    assert [e.uuid_ for e in mentioning] == [first[1]]
    thread_summaries = zep.graph.search_thread_summaries(graph, query="hiking Alps").items or []
    assert thread_summaries and thread_summaries[0].thread_uuid == thread


def test_text_and_json_episodes_are_extracted(zep: Zep) -> None:
    graph = zep.graph.create(name="docs").uuid_
    text = zep.graph.episode.add(
        graph,
        data="Acme opened a new office in Berlin in 2021.",
        reference_time="2024-01-01T00:00:00Z",
    )
    doc = zep.graph.episode.add(
        graph, type="json", data='{"customer": "Globex", "plan": "enterprise"}'
    )
    for added in (text, doc):
        assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    names = {n.name for n in zep.graph.node.list(graph)}
    assert {"Acme", "Berlin"} <= names
    assert any(e.valid_at and e.valid_at.startswith("2021") for e in edges(zep, graph))


def test_ignored_roles_are_stored_not_extracted(zep: Zep) -> None:
    user = zep.user.create(first_name="Ivy")
    thread = zep.thread.create(user_uuid=user.uuid_)
    result = zep.thread.add_messages(
        thread.uuid_,
        ignore_roles=["assistant"],
        messages=[AddMessage(role="assistant", name="Bot", content="I live in Madrid.")],
    )
    wait_for_task(zep, result.task.uuid_)
    assert [m.processed for m in zep.thread.list_messages(thread.uuid_)] == [True]
    assert edges(zep, user.graph_uuid) == []


def test_ontology_maps_and_strict_drops(zep: Zep) -> None:
    graph = zep.graph.create(name="typed").uuid_
    zep.graph.set_ontology(
        graph,
        entity_types=[
            {"name": "City", "description": "A city or other Location"},
            {"name": "Company", "description": "An Organization"},
        ],
        edge_types=[{"name": "WORKS_AT", "description": "employment"}],
    )
    ontology = zep.graph.get_ontology(graph)
    assert [t.name for t in ontology.entity_types or []] == ["City", "Company"]
    added = zep.graph.episode.add(
        graph, data="Maria works at Initech in Lisbon. Maria likes jazz.", strict_ontology=True
    )
    wait_for_task(zep, added.task.uuid_)
    labels = {n.name: n.labels for n in zep.graph.node.list(graph)}
    assert labels.get("Initech") == ["Entity", "Company"]
    assert {e.name for e in edges(zep, graph)} <= {"WORKS_AT"}
    assert "jazz" not in labels  # strict: undeclared types are not kept

    project = zep.project.get_ontology()
    assert project.inherited is False


def test_one_statement_one_edge_dates_anywhere_and_every_home_ends(zep: Zep) -> None:
    """The issue-28 conversation: a sentence-initial date keeps its date, a restatement
    read another way merges into the edge (gains the episode), a move ends "lives near"
    too, and the user's summary says no sentence twice."""
    user = zep.user.create(first_name="Kofi", last_name="Mensah")
    thread = zep.thread.create(user_uuid=user.uuid_).uuid_
    graph = user.graph_uuid
    thursday = "2024-03-14T09:00:00Z"
    first = say(
        zep, thread, ("Kofi", "Last Tuesday I started a new job at Orbital Labs.", thursday)
    )
    again = say(
        zep, thread, ("Kofi", "I started a new job at Orbital Labs last Tuesday.", thursday)
    )
    say(zep, thread, ("Kofi", "I live near the university.", thursday))
    say(zep, thread, ("Kofi", "I love hiking in the Alps.", thursday))
    say(zep, thread, ("Kofi", "I love hiking in the Alps.", "2024-03-15T09:00:00Z"))
    say(zep, thread, ("Kofi", "I moved to Kumasi two weeks ago.", "2024-04-02T18:30:00Z"))
    found = edges(zep, graph)
    texts = [e.fact for e in found]
    assert len(texts) == len(set(texts))  # no fact text twice
    job = next(e for e in found if "Orbital Labs" in e.fact)
    assert job.valid_at == "2024-03-12T00:00:00.000000Z"
    assert sorted(job.episode_uuids or []) == sorted(first + again)
    near = next(e for e in found if e.name.startswith("LIVES_NEAR"))
    assert near.invalid_at == "2024-03-19T00:00:00.000000Z" and near.expired_at is not None
    summary = zep.user.get_node(user.uuid_).summary or ""
    sentences = [s for s in summary.split(". ") if s]
    assert len(sentences) == len(set(sentences))


def test_a_json_record_gives_facts_about_its_subject(zep: Zep) -> None:
    graph = zep.graph.create(name="crm").uuid_
    added = zep.graph.episode.add(
        graph,
        type="json",
        data='{"name":"Maria Lopez","city":"Paris","employer":"Acme Corp.","role":"CTO"}',
    )
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    facts = {(e.name, e.fact) for e in edges(zep, graph)}
    assert facts == {
        ("LIVES_IN", "Maria Lopez lives in Paris"),
        ("WORKS_FOR", "Maria Lopez works for Acme Corp"),
        ("HAS_ROLE", "Maria Lopez has the role CTO"),
    }
    nodes = {n.name: n.labels for n in zep.graph.node.list(graph)}
    assert set(nodes) == {"Maria Lopez", "Paris", "Acme Corp", "CTO"}
    assert "Organization" in (nodes["Acme Corp"] or []) and "Role" in (nodes["CTO"] or [])
